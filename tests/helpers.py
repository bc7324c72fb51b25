"""Test helpers: run trusted reference programs in a child process."""

from __future__ import annotations

import json
import subprocess
import sys

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
