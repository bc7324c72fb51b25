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

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from benchmarks.common.cache import cache_dir
from benchmarks.common.jsonl import KeyedLog, iter_jsonl
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.languages import language_named
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


# --------------------------------------------------------------------------- on this machine


def toolchain_identity(language: str) -> str:
    """What decides whether a language's references pass on this machine, beyond the problems
    themselves: the toolchain's programs as installed (path, size, modification time: an
    upgrade or another install changes it) and the sandbox's own version. Python: the
    interpreter. A digest, for the check's cache file name."""
    toolchain = language_named(language).toolchain
    programs = toolchain.programs if toolchain is not None else ()
    described = [language, REFERENCE_CHECK_VERSION, sys.version]
    for program in programs:
        found = shutil.which(program)
        if found is None:
            described.append(f"{program}: missing")
            continue
        real = os.path.realpath(found)
        stat = os.stat(real)
        described.append(f"{program}: {real} {stat.st_size} {stat.st_mtime_ns}")
    return hashlib.sha256("\0".join(described).encode("utf-8")).hexdigest()[:16]


# Bump when what a check decides changes (the judging of a language, the sandbox's limits):
# every machine then checks its references again.
REFERENCE_CHECK_VERSION = "1"


def problem_digest(problem: Problem) -> str:
    """What a problem's reference check depends on in the problem: its id, prompt, reference,
    tests and metadata (a Go problem's test set-up), as JSON."""
    fields = {
        "task_id": problem.task_id,
        "prompt": problem.prompt,
        "canonical_solution": problem.canonical_solution,
        "test": problem.test,
        "entry_point": problem.entry_point,
        "metadata": problem.to_json()["metadata"],
    }
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def machine_reference_failures(
    problems: Iterable[Problem],
    config: ExecutionConfig | None = None,
    *,
    log: Callable[[str], None] | None = None,
) -> dict[str, str]:
    """`reference_failures` as this machine decides it, remembered: task id -> reason for the
    problems among `problems` whose reference fails here. Each problem's verdict is kept in
    the machine's cache (`boi` cache dir, `reference-checks/LANGUAGE-TOOLCHAIN.jsonl`, one
    line a problem, appended) under its content digest, so only problems never checked with
    this toolchain are judged: a run's first use of a dataset on a machine checks it, later
    runs read the verdicts. Why per machine and not a shipped list: whether a reference passes
    depends on what is installed here (Boost for CPP/22, the npm package js-md5 for JS/162)."""
    by_language: dict[str, list[Problem]] = {}
    for problem in problems:
        by_language.setdefault(problem.language, []).append(problem)
    failures: dict[str, str] = {}
    for language, group in by_language.items():
        path = cache_dir("reference-checks") / f"{language}-{toolchain_identity(language)}.jsonl"
        with KeyedLog(
            path,
            lambda row: row.get("problem"),
            lambda row: row.get("reason"),
            what="a reference-check cache",
        ) as known:
            digests = {p.task_id: problem_digest(p) for p in group}
            unchecked = [p for p in group if digests[p.task_id] not in known]
            if unchecked:
                if log is not None:
                    log(
                        f"  reference check: judging the references of {len(unchecked)} "
                        f"{language} problems never checked on this machine ({path})"
                    )
                found = reference_failures(unchecked, config)
                for problem in unchecked:
                    reason = found.get(problem.task_id)
                    known.put(
                        digests[problem.task_id],
                        reason,
                        {
                            "problem": digests[problem.task_id],
                            "task_id": problem.task_id,
                            "reason": reason,
                        },
                    )
            for problem in group:
                reason = known.get(digests[problem.task_id])
                if reason is not None:
                    failures[problem.task_id] = reason
    return failures
