"""`boi execute` end to end: reference solutions, bad input, summaries, resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.problem import Problem, write_problems
from boi.cli import main
from tests.sandbox_helpers import EXPECTED_LEVEL, INC

FAST = ["--quiet"]


def write_samples(path: Path, samples: list[dict]) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return path


def read_results(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def run_references(tmp_path: Path, problems, name: str, data=None) -> list[dict]:
    samples = write_samples(
        tmp_path / f"{name}.jsonl",
        [{"task_id": p.task_id, "completion": p.canonical_solution} for p in problems],
    )
    out = tmp_path / f"{name}_results.jsonl"
    args = [name, str(samples), "--out", str(out), *FAST]
    if data is not None:
        args += ["--data", str(data)]
    assert main(["execute", *args]) == 0
    return read_results(out)


def test_humaneval_reference_solutions_all_pass(tmp_path, humaneval):
    results = run_references(tmp_path, humaneval.problems, "humaneval")
    assert len(results) == 164
    failed = [(r["task_id"], r["result"]) for r in results if not r["passed"]]
    assert not failed
    summary = json.loads((tmp_path / "humaneval_results.summary.json").read_text())
    assert summary["pass_at_k"]["overall"] == {"pass@1": 1.0}
    assert summary["isolation"]["level"] == EXPECTED_LEVEL
    limits = summary["limits"]
    assert limits["calibrated_timeout"] >= 3.0 and limits["memory_mb"] == 2048
    assert not limits["reference_failures"]


def test_mbpp_reference_solutions_all_pass(tmp_path, mbpp, mbpp_path):
    results = run_references(tmp_path, mbpp.problems, "mbpp", data=mbpp_path)
    assert len(results) == 974
    failed = [(r["task_id"], r["result"]) for r in results if not r["passed"]]
    assert not failed


PROBLEMS = [
    INC,
    Problem(
        task_id="t/nocheck",
        benchmark="test",
        prompt="def f(x):\n",
        entry_point="f",
        test="def test(candidate):\n    assert candidate(1) == 1\n",
    ),
]


def test_bad_samples_get_clear_per_sample_results(tmp_path):
    problems = tmp_path / "problems.jsonl"
    write_problems(problems, PROBLEMS)
    lines = [
        json.dumps({"task_id": "t/inc", "completion": "    return x + 1\n", "seed": 7}),
        json.dumps({"task_id": "t/typo", "completion": "    return x + 1\n"}),
        json.dumps({"task_id": "t/inc", "completion": ""}),
        json.dumps({"task_id": "t/inc", "completion": "    return x + 1\x00\n"}),
        b'{"task_id": "t/inc", "completion": "    return x + 1  # caf\xe9\\n"}',
        json.dumps({"task_id": "t/inc", "completion": "    return 2\n" + "#" * 10_000_000 + "\n"}),
        "this is not json",
        json.dumps({"task_id": "t/nocheck", "completion": "    return x\n"}),
        json.dumps({"task_id": "t/inc", "completion": None}),
    ]
    samples = tmp_path / "samples.jsonl"
    samples.write_bytes(
        b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n"
    )
    out = tmp_path / "results.jsonl"
    assert main(["execute", str(problems), str(samples), "--out", str(out), *FAST]) == 0
    results = read_results(out)
    assert len(results) == len(lines)
    verdicts = [(r["passed"], r["result"]) for r in results]
    assert verdicts[0] == (True, "passed") and results[0]["seed"] == 7
    assert verdicts[1] == (False, "failed: unknown task_id 't/typo' (not in the problems)")
    assert [r["status"] for r in results[:2]] == ["passed", "failed"]
    assert verdicts[2][0] is False and "IndentationError" in verdicts[2][1]  # empty body
    assert verdicts[3][0] is False and "null bytes" in verdicts[3][1]
    assert verdicts[4][0] is False and "not valid UTF-8 (byte 0xe9" in verdicts[4][1]
    assert verdicts[5] == (True, "passed")  # 10 MB of comment is still a correct program
    assert verdicts[6][0] is False and "line 7 is not valid JSON" in verdicts[6][1]
    assert verdicts[7][0] is False and "does not define check(candidate)" in verdicts[7][1]
    assert verdicts[8][0] is False and "'completion' must be a string" in verdicts[8][1]
    summary = json.loads((tmp_path / "results.summary.json").read_text())
    assert summary["counts"]["unknown_task_ids"] == ["t/typo"]
    assert summary["unusable_problems"] == {
        "t/nocheck": "its test does not define check(candidate)"
    }
    # pass@1 covers the judged samples of t/inc only: 2 of 6 passed.
    assert summary["pass_at_k"]["tasks"]["t/inc"]["n"] == 6
    assert summary["pass_at_k"]["overall"]["pass@1"] == pytest.approx(2 / 6)


def test_results_for_another_samples_file_are_refused(tmp_path, capsys):
    problems = tmp_path / "problems.jsonl"
    write_problems(problems, PROBLEMS[:1])
    out = tmp_path / "results.jsonl"
    first = write_samples(
        tmp_path / "a.jsonl", [{"task_id": "t/inc", "completion": "    return 0\n"}]
    )
    second = write_samples(
        tmp_path / "b.jsonl", [{"task_id": "t/inc", "completion": "    return 1\n"}]
    )
    assert main(["execute", str(problems), str(first), "--out", str(out), *FAST]) == 0
    assert main(["execute", str(problems), str(second), "--out", str(out), *FAST]) == 2
    assert "different sample" in capsys.readouterr().err


def test_resume_after_kill_gives_identical_results(tmp_path):
    problems = tmp_path / "problems.jsonl"
    write_problems(problems, PROBLEMS[:1])
    samples = [
        {
            "task_id": "t/inc",
            "completion": (f"    import time\n    time.sleep(0.02)\n    return x + {i % 3 == 0}\n"),
            "index": i,
        }
        for i in range(240)
    ]
    samples_path = write_samples(tmp_path / "samples.jsonl", samples)

    def command(out: Path) -> list[str]:
        return [
            sys.executable, "-m", "boi", "execute", str(problems), str(samples_path),
            "--out", str(out), "--quiet",
        ]  # fmt: skip

    out = tmp_path / "killed.jsonl"
    proc = subprocess.Popen(command(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and out.read_bytes().count(b"\n") >= 60:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = out.read_bytes().count(b"\n")
    assert 60 <= written < len(samples), "the run was not killed midway"
    with open(out, "ab") as handle:  # what a writer killed mid-line leaves
        handle.write(b'{"task_id": "t/inc", "completion": "    imp')
    resumed = subprocess.run(command(out), capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    clean = tmp_path / "clean.jsonl"
    subprocess.run(command(clean), check=True, capture_output=True, timeout=120)

    def strip(records: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "duration"} for r in records]

    killed_results, clean_results = read_results(out), read_results(clean)
    assert len(killed_results) == len(samples)
    assert [r["index"] for r in killed_results] == list(range(len(samples)))
    assert strip(killed_results) == strip(clean_results)
    assert sum(r["passed"] for r in clean_results) == 80
    # Nothing of the killed run survives it: no sandboxed process, no worker.
    leftovers = subprocess.run(
        ["pgrep", "-f", "benchmarks/execution/_zygote.py"], capture_output=True, text=True
    ).stdout.split()
    assert str(os.getpid()) not in leftovers
    own = [pid for pid in leftovers if _parent_is_dead_harness(int(pid), proc.pid)]
    assert not own


def _parent_is_dead_harness(pid: int, harness_pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return f'"harness_pid": {harness_pid}'.encode() in cmdline


def test_contest_problem_runs_under_its_own_time_limit(tmp_path):
    """A problem's own time limit (scaled by the calibration) replaces the generic timeout."""
    from benchmarks.execution import ExecutionConfig, execute_samples
    from benchmarks.problem import StdioTest

    def contest(task_id: str, limit: float | None) -> Problem:
        return Problem(
            task_id=task_id,
            benchmark="code_contests",
            prompt='"""Echo."""\n',
            entry_point=None,
            stdio_tests=(StdioTest("5\n", "5\n"),),
            metadata={"time_limit_seconds": limit},
        )

    problems = [contest("tight", 0.5), contest("generic", None)]
    slow = "import time\ntime.sleep(1.2)\nprint(input())\n"
    samples = [{"task_id": p.task_id, "completion": slow} for p in problems]
    config = ExecutionConfig(timeout=5.0, calibrate=False, reference_timing=False, workers=1)
    report = execute_samples(problems, samples, config, tmp_path / "results.jsonl")
    results = {r["task_id"]: r for r in report.results}
    assert results["tight"]["result"] == "timed out on test 0"
    assert results["tight"]["status"] == "timed out"  # data, not read from the text
    assert results["generic"]["passed"]
    assert report.summary["limits"]["task_timeouts"] == {"tight": 0.5}


def _sleeper(task_id: str, seconds: float) -> Problem:
    return Problem(
        task_id=task_id,
        benchmark="test",
        prompt="def f(x):\n",
        entry_point="f",
        test="def check(candidate):\n    assert candidate(1) == 1\n",
        canonical_solution=f"    import time\n    time.sleep({seconds})\n    return x\n",
    )


def test_reference_timed_only_where_a_sample_times_out(tmp_path):
    """A problem whose reference needs longer than the timeout gets reference_multiplier x the
    reference's time, and its timed-out samples run again; fast references never run; the
    limits file holds what a resumed run must use."""
    from benchmarks.execution import ExecutionConfig, execute_samples

    problems = [_sleeper("slow", 0.6), _sleeper("fast", 0.0), _sleeper("quick", 0.0)]
    spin = "    while True:\n        pass\n"
    samples = [
        {"task_id": "slow", "completion": problems[0].canonical_solution},  # passes on rerun
        {"task_id": "slow", "completion": spin},  # times out again, under the longer timeout
        {"task_id": "fast", "completion": spin},  # reference fast: the timeout stands
        {"task_id": "quick", "completion": "    return x\n"},  # no timeout: no reference run
        {"task_id": "slow", "completion": "    return x\n"},
    ]
    config = ExecutionConfig(
        timeout=0.3, calibrate=False, reference_multiplier=2.0, max_timeout=10.0, workers=2
    )
    out = tmp_path / "results.jsonl"
    report = execute_samples(problems, samples, config, out)
    assert [r["status"] for r in report.results] == [
        "passed",
        "timed out",
        "timed out",
        "passed",
        "passed",
    ]
    limits = report.summary["limits"]
    assert set(limits["reference_seconds"]) == {"slow", "fast"}
    assert limits["task_timeouts"]["slow"] >= 1.2 and "fast" not in limits["task_timeouts"]
    assert report.results[1]["duration"] >= 1.2  # the rerun's, under the raised timeout
    assert json.loads((tmp_path / "results.jsonl.limits.json").read_text()) == limits
    assert [json.loads(line)["status"] for line in out.read_text().splitlines()] == [
        r["status"] for r in report.results
    ]


def test_reference_that_fails_is_recorded_and_the_timeout_stands(tmp_path):
    from benchmarks.execution import ExecutionConfig, execute_samples

    broken = Problem(
        task_id="broken",
        benchmark="test",
        prompt="def f(x):\n",
        entry_point="f",
        test="def check(candidate):\n    assert candidate(1) == 1\n",
        canonical_solution="    return 2\n",
    )
    samples = [{"task_id": "broken", "completion": "    while True:\n        pass\n"}]
    config = ExecutionConfig(timeout=0.3, calibrate=False, workers=1)
    report = execute_samples([broken], samples, config, tmp_path / "results.jsonl")
    assert report.results[0]["status"] == "timed out"
    limits = report.summary["limits"]
    assert limits["reference_failures"]["broken"].startswith("failed: AssertionError")
    assert limits["task_timeouts"] == {}
