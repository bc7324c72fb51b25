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
import os
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.problem import Problem
from benchmarks.upstream import fetched_path

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
        _boi_lines = _boi_trace.strip().splitlines()
        raise AssertionError(f"{{_boi_test.id()}}: {{_boi_lines[-1] if _boi_lines else ''}}")
    for _boi_test, _boi_why in _boi_result.skipped:
        raise AssertionError(f"{{_boi_test.id()}} was skipped ({{_boi_why}})")
    if _boi_result.unexpectedSuccesses:
        raise AssertionError(f"{{_boi_result.unexpectedSuccesses[0].id()}} passed unexpectedly")
    if _boi_result.testsRun == 0:
        raise AssertionError("no test ran")
'''


def imported_modules(source: str) -> set[str]:
    """The top-level modules `source` imports (absolute imports, anywhere in it)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
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


def test_classes(test: str) -> list[str]:
    """The names of the `TestCase` classes the tests define at their top level."""
    return [
        node.name
        for node in ast.parse(test).body
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).split(".")[-1] == "TestCase" for base in node.bases)
    ]


def _problem(path: Path, lineno: int, record: dict[str, Any]) -> tuple[Problem, set[str]]:
    require_fields(path, lineno, record, BCB_FIELDS)
    for name in ("task_id", "complete_prompt", "canonical_solution", "test"):
        if not isinstance(record[name], str):
            raise UserError(f"{path} line {lineno}: field {name!r} must be a string.")
    if record["entry_point"] != ENTRY_POINT:
        raise UserError(
            f"{path} line {lineno}: entry_point is {record['entry_point']!r}; every "
            f"BigCodeBench task's is {ENTRY_POINT!r} (is this the BigCodeBench file?)."
        )
    try:
        modules = task_modules(record)
        classes = test_classes(record["test"])
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


def load_bigcodebench_all(data: str | os.PathLike[str] | None = None) -> LoadResult:
    """Every BigCodeBench task, each with its tier in `metadata["tier"]`."""
    if data is not None:
        path = Path(data)
    else:
        found = fetched_path("bigcodebench")
        if found is None:
            raise UserError(
                "BigCodeBench is not in data/bigcodebench/; run `boi data fetch bigcodebench` "
                "(or pass the file with --data)."
            )
        path = found
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


def load_bigcodebench(data: str | os.PathLike[str] | None = None) -> LoadResult:
    """BigCodeBench's standard-library tier (the tasks the sandbox can judge); the other
    tiers are reported as left out, one issue per tier with its count and libraries."""
    everything = load_bigcodebench_all(data)
    kept = [p for p in everything.problems if p.metadata["tier"] == "stdlib"]
    issues = []
    for tier in TIERS[1:]:
        left = [p for p in everything.problems if p.metadata["tier"] == tier]
        if not left:
            continue
        libraries = Counter(
            m for p in left for m in p.metadata["modules"] if m not in sys.stdlib_module_names
        )
        common = ", ".join(name for name, _ in libraries.most_common(5))
        why = (
            "their libraries are installed here, but the sandbox lets a candidate import only "
            "the standard library"
            if tier == "installed"
            else "some of their libraries are not installed here"
        )
        issues.append(
            LoadIssue(
                f"{len(left)} tasks of tier {tier}",
                f"left out: {why} (most needed: {common})",
                dropped=True,
            )
        )
    return LoadResult(kept, issues)
