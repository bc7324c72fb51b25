"""A judged sample's status is data: set by the sandbox with the verdict, written into every
result row as `status`, and read from that field (older files without it included)."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

import benchmarks.execution._run as run_module
from benchmarks.common.errors import UserError
from benchmarks.execution import ExecutionConfig, Status, execute_samples, result_status
from benchmarks.execution._status import legacy_status
from tests.sandbox_helpers import INC

CONFIG = ExecutionConfig(timeout=1.0, calibrate=False, reference_timing=False, workers=1)
EXECUTION = Path(run_module.__file__).parent


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_outcome_carries_its_status_into_the_results_file(tmp_path):
    samples = [
        # A sample's own `status` field is replaced by the verdict's, like `passed`.
        {"task_id": "t/inc", "completion": "    return x + 1\n", "status": "draft"},
        {"task_id": "t/inc", "completion": "    return x\n"},  # the assert fails
        {"task_id": "t/inc", "completion": "    raise ValueError('boom')\n"},
        {"task_id": "t/inc", "completion": "    while True:\n        pass\n"},
        {"task_id": "t/typo", "completion": "    return x + 1\n"},  # cannot be judged
    ]
    out = tmp_path / "results.jsonl"
    report = execute_samples([INC], samples, CONFIG, out)
    written = _rows(out)
    assert report.results == written
    assert [r["status"] for r in written] == [
        "passed",
        "failed",
        "failed",
        "timed out",
        "failed",
    ]
    assert [r["passed"] for r in written] == [True, False, False, False, False]
    # The reason stays beside the status, for people.
    assert written[1]["result"].startswith("failed: AssertionError")
    assert "ValueError: boom" in written[2]["result"]
    assert written[3]["result"].startswith("timed out")
    assert "unknown task_id" in written[4]["result"]
    counts = report.summary["counts"]
    assert (counts["passed"], counts["failed"], counts["timed_out"], counts["errors"]) == (
        1,
        3,
        1,
        0,
    )


class _FailingPool:
    """A pool whose worker died twice on every job: what `WorkerPool` then reports."""

    isolation = type("Isolation", (), {"to_json": staticmethod(lambda: {"level": "fake"})})()

    def __init__(self, config: ExecutionConfig) -> None:
        pass

    def __enter__(self) -> _FailingPool:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def map(
        self, jobs: Iterable[tuple[int, dict[str, Any], float]]
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        for key, _job, _deadline in jobs:
            yield key, {"status": "error", "result": "error: the worker died", "duration": 0.0}


def test_a_sandbox_error_is_carried_as_error(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "WorkerPool", _FailingPool)
    samples = [{"task_id": "t/inc", "completion": "    return x + 1\n"}]
    report = execute_samples([INC], samples, CONFIG, tmp_path / "results.jsonl")
    (row,) = _rows(tmp_path / "results.jsonl")
    assert (row["status"], row["passed"]) == ("error", False)
    assert report.summary["counts"]["errors"] == 1


def test_an_unknown_status_from_the_worker_stops_the_run(tmp_path, monkeypatch):
    class Garbled(_FailingPool):
        def map(
            self, jobs: Iterable[tuple[int, dict[str, Any], float]]
        ) -> Iterator[tuple[int, dict[str, Any]]]:
            for key, _job, _deadline in jobs:
                yield key, {"status": "maybe", "result": "passed", "duration": 0.0}

    monkeypatch.setattr(run_module, "WorkerPool", Garbled)
    samples = [{"task_id": "t/inc", "completion": "    return x + 1\n"}]
    with pytest.raises(ValueError, match="'maybe' is not a valid Status"):
        execute_samples([INC], samples, CONFIG, tmp_path / "results.jsonl")


# Rows as results files written before rows carried `status` hold them.
OLD_ROWS = [
    ({"passed": True, "result": "passed"}, Status.PASSED),
    ({"passed": False, "result": "failed: AssertionError"}, Status.FAILED),
    ({"passed": False, "result": "timed out"}, Status.TIMED_OUT),
    ({"passed": False, "result": "timed out on test 3"}, Status.TIMED_OUT),
    ({"passed": False, "result": "timed out (CPU time limit)"}, Status.TIMED_OUT),
    ({"passed": False, "result": "error: the worker died"}, Status.ERROR),
    ({"passed": False}, Status.FAILED),
]


@pytest.mark.parametrize(("row", "expected"), OLD_ROWS)
def test_old_rows_without_status_are_read_from_their_text(row, expected):
    assert legacy_status(row) is expected
    assert result_status(row) is expected


def test_the_status_field_wins_over_the_text():
    row = {"passed": False, "status": "failed", "result": "timed out? no: a message"}
    assert result_status(row) is Status.FAILED


def test_a_row_with_an_unknown_status_is_refused():
    with pytest.raises(UserError, match="has status 'maybe'"):
        result_status({"task_id": "t/inc", "passed": False, "status": "maybe"})


def test_resuming_an_old_results_file_gives_every_row_a_status(tmp_path):
    samples = [
        {"task_id": "t/inc", "completion": "    return x + 1\n"},
        {"task_id": "t/inc", "completion": "    while True:\n        pass\n"},
        {"task_id": "t/inc", "completion": "    return x\n"},
    ]
    out = tmp_path / "results.jsonl"
    old = [
        {**samples[0], "passed": True, "result": "passed", "duration": 0.01},
        {**samples[1], "passed": False, "result": "timed out", "duration": 1.0},
    ]
    out.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    report = execute_samples([INC], samples, CONFIG, out)
    assert [r["status"] for r in report.results] == ["passed", "timed out", "failed"]
    # The file keeps its old rows as they were; the row run now carries its status.
    assert [r.get("status") for r in _rows(out)] == [None, None, "failed"]
    counts = report.summary["counts"]
    assert (counts["passed"], counts["failed"], counts["timed_out"]) == (1, 1, 1)


def test_resuming_a_file_with_an_unknown_status_is_refused_before_running(tmp_path):
    samples = [{"task_id": "t/inc", "completion": "    return x + 1\n"}] * 2
    out = tmp_path / "results.jsonl"
    row = {**samples[0], "passed": False, "status": "maybe", "result": "?", "duration": 0.0}
    out.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="has status 'maybe'"):
        execute_samples([INC], samples, CONFIG, out)
    assert len(_rows(out)) == 1


def _wire_statuses(path: Path) -> set[str]:
    """The status strings a module writes into `{"status": ...}` or compares `x["status"]` to."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value == "status"
                    and isinstance(value, ast.Constant)
                    and isinstance(value.value, str)
                ):
                    found.add(value.value)
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Subscript)
            and isinstance(node.left.slice, ast.Constant)
            and node.left.slice.value == "status"
        ):
            found.update(
                c.value
                for c in node.comparators
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            )
    return found


# The worker's modules (standard library only, loaded by the zygote from their files).
WORKER_MODULES = ("_zygote.py", "_spawner.py", "_candidate.py", "_tests_side.py", "_wire.py")


def test_the_worker_speaks_only_status_values():
    """The zygote imports only the standard library, so it writes statuses as plain strings;
    every one must be a `Status` value, or `execute_samples` would stop on it."""
    written = set().union(*(_wire_statuses(EXECUTION / name) for name in WORKER_MODULES))
    assert {"passed", "failed", "timed out", "error"} <= written
    assert written <= {s.value for s in Status}
    assert _wire_statuses(EXECUTION / "_pool.py") <= {s.value for s in Status}


def test_a_status_prints_as_its_value():
    assert f"{Status.TIMED_OUT}" == str(Status.TIMED_OUT) == "timed out"
    assert json.dumps({"status": Status.ERROR}) == '{"status": "error"}'
