"""MBPP's prompts are the same on every machine (issue 44, item 1): the examples they show are
computed once and shipped for the upstream file, limited by CPU time (which load does not
stretch) for any other file, and a timeout is never cached."""

from __future__ import annotations

import hashlib
import json

import pytest

from benchmarks.common.provenance import prompts_sha256
from benchmarks.loaders import mbpp
from benchmarks.loaders.mbpp import load_mbpp

MBPP_UPSTREAM_SHA256 = "ccf64ceae9c5403bf50a044cb6d505bfd2a2963ee58338ba268fd65beab92a9f"


def _machine(monkeypatch, tmp_path, name, *, seconds):
    """A machine of its own: an empty cache, and `seconds` for each reference solution (the
    limit under which the solutions ran: a tiny one is a slow or loaded machine)."""
    monkeypatch.setenv("BOI_CACHE_DIR", str(tmp_path / name))
    monkeypatch.setattr(mbpp, "CALL_CPU_SECONDS", seconds, raising=False)
    monkeypatch.setattr(mbpp, "CALL_TIMEOUT_S", seconds, raising=False)  # the old wall limit


def test_two_machines_give_mbpp_the_same_prompts(mbpp_path, monkeypatch, tmp_path):
    assert hashlib.sha256(mbpp_path.read_bytes()).hexdigest() == MBPP_UPSTREAM_SHA256
    _machine(monkeypatch, tmp_path, "slow", seconds=1e-4)
    slow = load_mbpp(mbpp_path)
    _machine(monkeypatch, tmp_path, "fast", seconds=120.0)
    fast = load_mbpp(mbpp_path)
    digests = [prompts_sha256((p.task_id, p.prompt) for p in r.problems) for r in (slow, fast)]
    assert digests[0] == digests[1]
    # MBPP/123's reference takes seconds (about 21 s of wall time on a loaded 2-core machine):
    # it shows its examples on every machine.
    assert ">>> amicable_numbers_sum(" in next(
        p.prompt for p in slow.problems if p.task_id == "MBPP/123"
    )
    assert [i.task_id for i in slow.issues] == ["MBPP/945"]  # nondeterministic, on any machine


def test_the_shipped_outputs_belong_to_the_upstream_file_and_this_version():
    shipped = json.loads(mbpp.SHIPPED_EXAMPLES.read_text(encoding="utf-8"))
    assert shipped["mbpp_sha256"] == MBPP_UPSTREAM_SHA256
    assert shipped["version"] == mbpp.EXAMPLES_CACHE_VERSION  # bumped: run scripts/mbpp_examples.py
    assert mbpp._shipped_outputs(MBPP_UPSTREAM_SHA256) == shipped["outputs"]
    assert not any(mbpp.timed_out(r) for r in shipped["outputs"].values())


def test_damaged_shipped_outputs_are_refused(monkeypatch, tmp_path):
    shipped = json.loads(mbpp.SHIPPED_EXAMPLES.read_text(encoding="utf-8"))
    shipped["outputs"]["MBPP/1"]["outputs"][0] = "9"
    damaged = tmp_path / "mbpp-examples.json"
    damaged.write_text(json.dumps(shipped))
    monkeypatch.setattr(mbpp, "SHIPPED_EXAMPLES", damaged)
    with pytest.raises(RuntimeError, match="damaged"):
        mbpp._shipped_outputs(MBPP_UPSTREAM_SHA256)


def _record(task_id, code, calls):
    return {
        "task_id": task_id,
        "text": "Write a function to add one.",
        "code": code,
        "test_setup_code": "",
        "test_list": [f"assert {call} == {value}" for call, value in calls],
        "challenge_test_list": [],
    }


def _write(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# Busy for about 0.5 s of CPU time on the first call, whatever the machine's load.
BUSY = (
    "import time\n"
    "def add_one(x):\n"
    "    end = time.process_time() + 0.5\n"
    "    while time.process_time() < end:\n"
    "        pass\n"
    "    return x + 1\n"
)
# Waits 0.5 s of wall time (as a loaded machine stretches a call) but spends no CPU on it.
WAITING = "import time\ndef add_one(x):\n    time.sleep(0.5)\n    return x + 1\n"


def test_a_solution_that_waits_is_not_timed_out(monkeypatch, tmp_path):
    data = _write(tmp_path / "mine.jsonl", _record(1, WAITING, [("add_one(1)", 2)]))
    _machine(monkeypatch, tmp_path, "loaded", seconds=0.3)
    loaded = load_mbpp(data)
    assert loaded.issues == []
    assert ">>> add_one(1)\n    2\n" in loaded.problems[0].prompt


def test_a_timeout_is_never_cached(monkeypatch, tmp_path):
    data = _write(
        tmp_path / "mine.jsonl",
        _record(1, BUSY, [("add_one(1)", 2)]),
        _record(2, "def add_two(x):\n    return x + 2\n", [("add_two(1)", 3)]),
    )
    _machine(monkeypatch, tmp_path, "one", seconds=0.1)
    first = load_mbpp(data)
    assert [i.task_id for i in first.issues] == ["MBPP/1"]
    assert "timed out" in first.issues[0].reason
    # The same machine, less busy (here: a larger limit): the timeout was not kept.
    monkeypatch.setattr(mbpp, "CALL_CPU_SECONDS", 30.0, raising=False)
    monkeypatch.setattr(mbpp, "CALL_TIMEOUT_S", 30.0, raising=False)
    again = load_mbpp(data)
    assert again.issues == []
    assert [">>>" in p.prompt for p in again.problems] == [True, True]
