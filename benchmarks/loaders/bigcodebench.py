"""BigCodeBench (Zhuo et al., ICLR 2025): library-heavy tasks with structured docstrings.

The upstream file (`bigcode-project/bigcodebench-annotation`, `hf_data/BigCodeBench.jsonl.gz`,
pinned in `benchmarks/upstream.py`) has 1,140 records. The prompt is `complete_prompt` (the
imports, `def task_func(...)` and a docstring with sections: the description, Parameters /
Args, Returns, Raises, Requirements, Notes, Example), the entry point is always `task_func`,
and the tests are `unittest.TestCase` classes.

**Tiers, computed.** A task's *modules* are every top-level module its prompt, its canonical
solution and its tests import, and every library its `libs` field names. The task is in the
`stdlib` tier when all of them are in the standard library (`sys.stdlib_module_names`); else
in `installed` when every one of them is importable here, else `unavailable`. The sandbox lets
a candidate import only the standard library (site-packages are out of its reach), so
`--dataset bigcodebench` loads the `stdlib` tier and reports the others as left out, in one
line each per tier (`LoadIssue`); `bigcodebench_tiers(path)` gives every task's tier.

**Judging.** The tests' `TestCase` classes run under `check(candidate)`, which this loader
appends to the upstream test code (`CHECK`): it runs every test method with `unittest`, and
raises on the first failure, error or skip, or when no test ran. In separated judging the
tests run on the trusted side and `task_func` there is the proxy whose calls cross to the
candidate as plain data (docs/explanation/sandbox.md), as for HumanEval. What that cannot do
(a test that patches a module inside the candidate, reads a file the candidate wrote, or
passes a callback) fails for the reference solution too: `reference_failures` lists those.

**The name is no hint.** Every task is called `task_func`, so anonymizing it tests nothing:
each problem carries `metadata["name_is_no_hint"]` (the reason), which Anonymize and its
chains report as NotApplicable.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import sys
import warnings
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields, require_strings
from benchmarks.execution import resolve_libraries
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.problem import Problem
from benchmarks.upstream import fetched_path, sha256_of

BCB_FIELDS = ("task_id", "complete_prompt", "canonical_solution", "test", "entry_point", "libs")
ENTRY_POINT = "task_func"
TIERS = ("stdlib", "installed", "unavailable")
NAME_IS_NO_HINT = (
    "every BigCodeBench task is called task_func: the name carries no hint, so there is "
    "nothing to anonymize"
)

# Appended to the upstream tests: `check(candidate)` is how every function-style problem is
# judged (`Problem.program`, the sandbox's tests side). `task_func` is already bound to the
# candidate (its proxy, in separated judging) where the tests run, so `candidate` is unused.
# The names are prefixed so that no test's own name is shadowed.
CHECK = '''

def check(candidate):
    """Run the task's TestCase classes; raise on the first failure, error or skip."""
    import io as _boi_io
    import unittest as _boi_unittest

    _boi_loader = _boi_unittest.TestLoader()
    _boi_suite = _boi_unittest.TestSuite(
        _boi_loader.loadTestsFromTestCase(_boi_case) for _boi_case in ({classes},)
    )
    _boi_result = _boi_unittest.TextTestRunner(stream=_boi_io.StringIO(), verbosity=0).run(
        _boi_suite
    )
    for _boi_test, _boi_trace in _boi_result.errors + _boi_result.failures:
        # The exception's first line: the first unindented line after the last frame.
        _boi_lines = _boi_trace.splitlines()
        _boi_frames = [i for i, line in enumerate(_boi_lines) if line.startswith("  File ")]
        _boi_after = _boi_lines[_boi_frames[-1] + 1 if _boi_frames else 0 :]
        _boi_why = next((line for line in _boi_after if line[:1].strip()), "")
        raise AssertionError(f"{{_boi_test.id()}}: {{_boi_why}}")
    for _boi_test, _boi_why in _boi_result.skipped:
        raise AssertionError(f"{{_boi_test.id()}} was skipped ({{_boi_why}})")
    if _boi_result.unexpectedSuccesses:
        raise AssertionError(f"{{_boi_result.unexpectedSuccesses[0].id()}} passed unexpectedly")
    if _boi_result.testsRun == 0:
        raise AssertionError("no test ran")
'''


def _parse(source: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # upstream regexes such as '\S' warn; they still parse
        return ast.parse(source)


def imported_modules(source: str) -> set[str]:
    """The top-level modules `source` imports (absolute imports, anywhere in it)."""
    found: set[str] = set()
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def task_modules(record: dict[str, Any]) -> set[str]:
    """Every module the task needs: its prompt's, its solution's and its tests' imports, and
    the libraries its `libs` field names."""
    libs = record["libs"]
    if isinstance(libs, str):  # the upstream file stores the list as its Python repr
        libs = ast.literal_eval(libs)
    modules = {str(lib).split(".")[0] for lib in libs}
    modules |= imported_modules(record["complete_prompt"] + record["canonical_solution"])
    return modules | imported_modules(record["test"])


def tier_of(modules: Iterable[str]) -> str:
    """`stdlib`, `installed` (every module importable here) or `unavailable`."""
    outside = [m for m in modules if m not in sys.stdlib_module_names]
    if not outside:
        return "stdlib"
    # find_spec locates without importing: nothing of the package runs.
    return "installed" if all(importlib.util.find_spec(m) for m in outside) else "unavailable"


def testcase_classes(test: str) -> list[str]:
    """The names of the `TestCase` classes the tests define at their top level."""
    return [
        node.name
        for node in _parse(test).body
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).split(".")[-1] == "TestCase" for base in node.bases)
    ]


def _problem(path: Path, lineno: int, record: dict[str, Any]) -> tuple[Problem, set[str]]:
    require_fields(path, lineno, record, BCB_FIELDS)
    require_strings(
        path, lineno, record, ("task_id", "complete_prompt", "canonical_solution", "test")
    )
    if record["entry_point"] != ENTRY_POINT:
        raise UserError(
            f"{path} line {lineno}: entry_point is {record['entry_point']!r}; every "
            f"BigCodeBench task's is {ENTRY_POINT!r} (is this the BigCodeBench file?)."
        )
    try:
        modules = task_modules(record)
        classes = testcase_classes(record["test"])
    except (SyntaxError, ValueError) as err:
        raise UserError(f"{path} line {lineno}: the task's code does not parse ({err}).") from None
    if not classes:
        raise UserError(f"{path} line {lineno}: the tests define no unittest.TestCase class.")
    problem = Problem(
        task_id=record["task_id"],
        benchmark="bigcodebench",
        prompt=record["complete_prompt"],
        entry_point=ENTRY_POINT,
        test=record["test"].rstrip("\n") + "\n" + CHECK.format(classes=", ".join(classes)),
        canonical_solution=record["canonical_solution"],
        metadata={
            "modules": sorted(modules),
            "tier": tier_of(modules),
            "name_is_no_hint": NAME_IS_NO_HINT,
        },
    )
    return problem, modules


def source_path(data: str | os.PathLike[str] | None = None) -> Path:
    """`data`, else the file `boi data fetch bigcodebench` put in data/bigcodebench/."""
    if data is not None:
        return Path(data)
    found = fetched_path("bigcodebench")
    if found is None:
        raise UserError(
            "BigCodeBench is not in data/bigcodebench/; run `boi data fetch bigcodebench` "
            "(or pass the file with --data)."
        )
    return found


def load_bigcodebench_all(data: str | os.PathLike[str] | None = None) -> LoadResult:
    """Every BigCodeBench task, each with its tier in `metadata["tier"]`."""
    path = source_path(data)
    problems, seen = [], set()
    for lineno, record in iter_jsonl(path):
        problem, _ = _problem(path, lineno, record)
        if problem.task_id in seen:
            raise UserError(f"{path} line {lineno}: task_id {problem.task_id!r} appears twice.")
        seen.add(problem.task_id)
        problems.append(problem)
    if not problems:
        raise UserError(f"{path} is empty; expected BigCodeBench records, one per line.")
    return LoadResult(problems)


def third_party(problem: Problem) -> set[str]:
    """The modules `problem` needs beyond the standard library."""
    return {m for m in problem.metadata["modules"] if m not in sys.stdlib_module_names}


def load_bigcodebench(
    data: str | os.PathLike[str] | None = None,
    *,
    reference_check: bool = True,
    candidate_libraries: Iterable[str] = (),
) -> LoadResult:
    """BigCodeBench's standard-library tier (the tasks the sandbox can judge) and, with
    `candidate_libraries` (the run's `execution.candidate_libraries`), the installed-tier tasks
    whose every third-party module is among them; without the tasks whose reference solution
    fails there (`REFERENCE_FILE`, for the pinned file; with `reference_check=False`, with
    them). What is left out is reported: one issue per tier with its count and libraries, one
    for the failing references."""
    path = source_path(data)
    allowed = set(candidate_libraries)
    everything = load_bigcodebench_all(path)

    def judged(problem: Problem) -> bool:
        tier = problem.metadata["tier"]
        return tier == "stdlib" or (tier == "installed" and third_party(problem) <= allowed)

    kept = [p for p in everything.problems if judged(p)]
    issues = []
    for tier in TIERS[1:]:
        left = [p for p in everything.problems if p.metadata["tier"] == tier and not judged(p)]
        if not left:
            continue
        libraries = Counter(m for p in left for m in third_party(p))
        common = ", ".join(name for name, _ in libraries.most_common(5))
        if tier == "unavailable":
            why = "some of their libraries are not installed here"
        elif allowed:
            why = (
                "their libraries are installed here, but not all of them are among the run's "
                f"candidate_libraries ({', '.join(sorted(allowed))})"
            )
        else:
            why = (
                "their libraries are installed here, but the sandbox lets a candidate import only "
                "the standard library (execution.candidate_libraries names the ones it may)"
            )
        issues.append(
            LoadIssue(
                f"{len(left)} tasks of tier {tier}",
                f"left out: {why} (most needed: {common})",
                dropped=True,
            )
        )
    failures: dict[str, str] = {}
    if reference_check:
        kept, found, failures = _without_failing_references(path, kept, tuple(sorted(allowed)))
        issues.extend(found)
    return LoadResult(kept, issues, reference_failures=failures)


REFERENCE_FILE = Path(__file__).parent / "data" / "bigcodebench-reference.json"
"""The standard-library tier's reference check, run once on the pinned file
(`scripts/bigcodebench_reference.py`): the tasks whose canonical solution fails in the sandbox
under separated judging, each with the reason."""


def _without_failing_references(
    path: Path, problems: list[Problem], allowed: tuple[str, ...] = ()
) -> tuple[list[Problem], list[LoadIssue], dict[str, str]]:
    """The problems whose reference passed, the issues that say what was left out or kept
    unchecked, and each left-out task's reason (which the run records). The installed tier's
    references count as checked only under the library versions they were checked with (the
    file's `installed.versions`)."""
    checked = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))
    if checked["source_sha256"] != sha256_of(path):
        return (
            problems,
            [
                LoadIssue(
                    f"{len(problems)} tasks",
                    "kept with their references unchecked: the reference check was run on the "
                    "pinned file, not this one (python scripts/bigcodebench_reference.py FILE "
                    "checks it)",
                )
            ],
            {},
        )
    failing = dict(checked["failures"])
    verified = {p.task_id for p in problems if p.metadata["tier"] == "stdlib"}
    issues = []
    installed = [p for p in problems if p.metadata["tier"] == "installed"]
    if installed:
        section = checked.get("installed") or {}
        here = _versions_here(section.get("candidate_libraries") or allowed)
        covered = set(section.get("checked") or ()) if section.get("versions") == here else set()
        failing.update(section.get("failures") or {} if covered else {})
        verified |= {p.task_id for p in installed if p.task_id in covered}
        unchecked = [p for p in installed if p.task_id not in covered]
        if unchecked:
            then = ", ".join(f"{k} {v}" for k, v in (section.get("versions") or {}).items())
            now = ", ".join(f"{k} {v}" for k, v in here.items())
            issues.append(
                LoadIssue(
                    f"{len(unchecked)} tasks of tier installed",
                    "kept with their references unchecked: "
                    + (
                        f"the shipped check ran under {then}; this environment has {now}"
                        if section.get("versions") and section.get("versions") != here
                        else "the shipped check did not judge them"
                    )
                    + " (python scripts/bigcodebench_reference.py --installed checks them)",
                )
            )
    kept = [p for p in problems if not (p.task_id in verified and p.task_id in failing)]
    reasons = {p.task_id: str(failing[p.task_id]) for p in problems if p not in kept}
    issues.insert(
        0,
        LoadIssue(
            f"{len(problems) - len(kept)} tasks whose reference solution fails in the sandbox",
            "left out: their tests need what separated judging withholds (a directory shared with "
            "the candidate, a patch inside its process, the network) or the reference is wrong; "
            f"each task's reason is in benchmarks/loaders/data/{REFERENCE_FILE.name}",
            dropped=True,
        ),
    )
    return kept, issues, reasons


def _versions_here(libraries: Iterable[str]) -> dict[str, str]:
    """The versions of `libraries` and what they require, as this environment has them (the
    sandbox's own resolution), or {} where one is not installed."""
    try:
        return resolve_libraries(tuple(libraries)).versions
    except UserError:
        return {}
