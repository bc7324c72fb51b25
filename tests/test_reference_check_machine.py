"""The reference check as this machine decides it (issue 46): a language's problems whose own
reference fails in the sandbox are found once per machine, kept by content, and left out of a
`boi run` with the reason, instead of scoring every model zero on them."""

from __future__ import annotations

import json
import os

import pytest

from benchmarks.execution import ExecutionConfig
from benchmarks.execution import reference_check as check
from benchmarks.languages import language_named
from benchmarks.problem import Problem, write_problems

PROMPT = "/* Return the sum of a and b.\n>>> add(1, 2)\n3\n*/\nconst add = (a, b) => {\n"
TEST = "const testAdd = () => {\n  console.assert(add(2, 3) === 5)\n}\n\ntestAdd()\n"


def js_problem(task_id: str, solution: str) -> Problem:
    return Problem(
        task_id=task_id,
        benchmark="toy-js",
        prompt=PROMPT,
        entry_point="add",
        test=TEST,
        canonical_solution=solution,
        metadata={"language": "javascript"},
    )


GOOD = js_problem("JS/good", "  return a + b;\n}\n")
WRONG = js_problem("JS/wrong", "  return a - b;\n}\n")


@pytest.fixture(autouse=True)
def _node_and_a_cache_of_our_own(tmp_path, monkeypatch):
    toolchain = language_named("javascript").toolchain
    if toolchain.missing():
        if os.environ.get("BOI_REQUIRE_TOOLCHAINS") == "1":
            pytest.fail("node missing, but BOI_REQUIRE_TOOLCHAINS=1: install it")
        pytest.skip("no node here")
    monkeypatch.setenv("BOI_CACHE_DIR", str(tmp_path / "cache"))


CONFIG = ExecutionConfig(workers=1, calibrate=False, reference_timing=False)


def test_a_failing_reference_is_found_once_and_remembered_by_content(monkeypatch):
    failures = check.machine_reference_failures([GOOD, WRONG], CONFIG)
    assert list(failures) == ["JS/wrong"] and "wrong answer" in failures["JS/wrong"]
    (cache,) = (check.cache_dir("reference-checks")).glob("javascript-*.jsonl")
    rows = [json.loads(line) for line in cache.read_text().splitlines()]
    assert [(r["task_id"], r["reason"] is None) for r in rows] == [
        ("JS/good", True),
        ("JS/wrong", False),
    ]

    # Checked problems are not judged again; a changed one (its tests) is.
    judged: list[list[str]] = []

    def judge(problems, config=None, **_):
        judged.append([p.task_id for p in problems])
        return {}

    monkeypatch.setattr(check, "reference_failures", judge)
    assert check.machine_reference_failures([GOOD, WRONG], CONFIG) == failures
    assert judged == []
    changed = WRONG.replace(test=TEST.replace("(2, 3) === 5", "(2, 3) === -1"))
    assert check.machine_reference_failures([GOOD, changed], CONFIG) == {}
    assert judged == [["JS/wrong"]]


def test_another_toolchain_is_another_check(monkeypatch):
    before = check.toolchain_identity("javascript")
    monkeypatch.setattr(check, "REFERENCE_CHECK_VERSION", "another")
    assert check.toolchain_identity("javascript") != before


def test_boi_run_leaves_out_a_problem_whose_reference_fails_here(tmp_path, capsys):
    from boi.cli import main

    data = tmp_path / "toy.jsonl"
    write_problems(data, [GOOD, WRONG])
    out = tmp_path / "run"
    code = main(
        ["run", "--config", "reference", "--dataset", str(data), "--transforms", "original",
         "drop_examples", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    err = capsys.readouterr()
    assert "left out JS/wrong: its reference fails here" in err.out + err.err
    (row,) = [
        json.loads(line) for line in (out / "reference_failures.jsonl").read_text().splitlines()
    ]
    assert row["task_id"] == "JS/wrong" and "wrong answer" in row["reason"]
    sources = {json.loads(line)["source_task_id"] for line in (out / "problems.jsonl").open()}
    assert sources == {"JS/good"}
    table = json.loads((out / "report" / "table.json").read_text())
    assert table["rows"][0]["cells"][0]["pass_at_k"] == 1.0
