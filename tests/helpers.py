"""Test helpers: run trusted reference programs in a child process, or variants' reference
solutions in the sandbox; a reference `boi run` config."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.problem import Problem

_RUNNER = r"""
import json, sys, io, contextlib
results = {}
for job in json.loads(sys.stdin.read()):
    ns = {"__name__": "__test__"}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(job["program"], job["id"], "exec"), ns)
            out = [repr(eval(e, ns)) for e in job.get("evals", [])]
        results[job["id"]] = {"ok": True, "evals": out}
    except BaseException as err:
        results[job["id"]] = {"ok": False, "error": f"{type(err).__name__}: {err}"}
sys.__stdout__.write(json.dumps(results))
"""


def run_programs(jobs: list[dict], timeout: float = 600) -> dict[str, dict]:
    """Run {"id", "program", "evals"} jobs (trusted code only) in one child; results by id."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def reference_run_config(*data: str | Path | dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """A `boi run` config (the mapping `load_run_config` takes; as JSON, a YAML config file) of
    the reference backend, each problem judged by its own solution (no model): the datasets
    (`data`: each a name or path, or a whole `datasets` entry), the original prompts, one greedy
    setting with pass@1, seed 0, no name-only probe and no critic. `overrides` replace keys."""
    return {
        "datasets": [d if isinstance(d, dict) else {"name": str(d)} for d in data],
        "transforms": ["original"],
        "models": [{"kind": "reference"}],
        "settings": [{"label": "g", "ks": [1], "decoding": {"temperature": 0.0}}],
        "seeds": [0],
        "name_only_probe": False,
        "critic": {"enabled": False},
        **overrides,
    }


def failing_references(variants: Sequence[Problem], out: Path) -> dict[str, str]:
    """Task id -> result of each variant whose reference solution (`canonical_solution`) fails
    its tests in the sandbox, the results written to `out`: {} when every variant kept its
    problem's meaning.

    Single-process judging: these are reference solutions, and the check is of meaning, not
    of the sandbox (its own suites test every judging mode); it keeps CI in budget. Reference
    timing on, as in a run: a variant that times out only by the machine's load (MBPP/123's
    reference takes about 21 s under CI's parallel load) is judged again with a limit from its
    reference's own time."""
    from benchmarks.execution import ExecutionConfig, execute_samples

    execution = ExecutionConfig(separate_candidate=False, timeout=10.0, max_timeout=60.0)
    samples = [{"task_id": v.task_id, "completion": v.canonical_solution} for v in variants]
    report = execute_samples(list(variants), samples, execution, out)
    return {r["task_id"]: r["result"] for r in report.results if not r["passed"]}
