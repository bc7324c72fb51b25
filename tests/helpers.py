"""Test helpers: run trusted reference programs in a child process; a reference `boi run` config."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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
