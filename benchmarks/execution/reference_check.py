"""The reference check: a dataset's own canonical solutions, judged in the sandbox as a sample.

A problem whose canonical solution fails here (its tests need what the sandbox withholds, a
library, a file the solution wrote, a patch inside the candidate's process; or the reference
is wrong: upstream BigCodeBench knows some are) would count every model's answer as failed for
reasons that are not the model's. `reference_failures` judges each reference exactly as a
sample is judged (`execute_samples`, the same judging mode and isolation) and returns the
problems whose reference did not pass, with the sandbox's reason: a run reports those apart.
It takes any problems with a `canonical_solution` (any dataset), so one check serves them all.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from benchmarks.common.jsonl import iter_jsonl
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.problem import Problem

NO_REFERENCE = "the problem has no canonical solution"


def reference_failures(
    problems: Iterable[Problem],
    config: ExecutionConfig | None = None,
    *,
    runs: int = 1,
    work_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, str]:
    """task id -> why its canonical solution failed in the sandbox (the result's reason), for
    every problem whose reference did not pass in every one of `runs` runs; a problem without
    one is listed as such. One that passed in some runs only is listed as flaky (its tests
    depend on what they do not control: a seed set on the tests' side, the clock).

    `config`: the sandbox's (default `ExecutionConfig()`: separated judging). `work_dir`:
    where the results files go (a temporary folder, removed after, by default)."""
    problems = list(problems)
    failures = {p.task_id: NO_REFERENCE for p in problems if p.canonical_solution is None}
    samples = [
        {"task_id": p.task_id, "completion": p.canonical_solution}
        for p in problems
        if p.canonical_solution is not None
    ]
    if not samples:
        return failures
    failed: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="boi-reference-", dir=work_dir) as scratch:
        for run in range(runs):
            out = Path(scratch) / f"reference-{run}.jsonl"
            execute_samples(problems, samples, config or ExecutionConfig(), out, progress=progress)
            for _, row in iter_jsonl(out):
                if not row.get("passed"):
                    reason = str(row.get("result") or row.get("status"))
                    failed.setdefault(str(row["task_id"]), []).append(reason)
    for task_id, reasons in failed.items():
        flaky = f"flaky, passed in {runs - len(reasons)} of {runs} runs: " * (len(reasons) < runs)
        failures[task_id] = flaky + reasons[0]
    return failures
