"""Run a dataset's trusted reference solutions in a child process, under resource limits.

Loaders that need the outputs of a dataset's own reference solutions (MBPP's examples,
HumanEval+'s expected outputs) call `run_jobs`: it starts this module as
`python -m benchmarks.loaders._reference_runner RESULT_FD SECONDS` in a scratch directory with
capped memory and CPU time, writes the jobs (one JSON object per line) to its stdin and reads
one JSON line per job from RESULT_FD, a descriptor the solutions do not know about, so nothing
they print can pose as a result. A job that kills the child is reported and the child is
restarted past it. The reference solutions are dataset data, not generated code; generated
code only ever runs in `benchmarks.execution`'s sandbox.

Two kinds of job, each with `task_id` and `code` (the solution's source):

- calls (MBPP): `setup` runs after the code, then each of `calls` (Python expressions) is
  evaluated; the result is `{"task_id", "outputs": [repr of each value]}`.
- inputs (HumanEval+): `entry_point` is called on each of `inputs` (argument lists, JSON data,
  a fresh copy per call) and each value is passed to `encode` (a "module:function" taking the
  value and the job, returning JSON data); the result is `{"task_id", "values": [...],
  "seconds": time spent in the calls}`.

Either way a job that raises, or runs past SECONDS in all, gives `{"task_id", "error": why}`.
SECONDS is wall-clock time, or with `clock="cpu"` the child's CPU time, which a loaded machine
does not stretch: a loader whose results must not depend on the machine's load (MBPP's prompts)
limits CPU time.
"""

from __future__ import annotations

import copy
import importlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[2]
_CLOCKS = {
    # clock name -> (interval timer, the signal it sends, how a timeout reads)
    "wall": (signal.ITIMER_REAL, signal.SIGALRM, "s"),
    "cpu": (signal.ITIMER_PROF, signal.SIGPROF, "s of CPU time"),
}


# ----------------------------------------------------------------------------- parent side


def run_jobs(
    jobs: list[dict[str, Any]],
    hash_seed: str,
    *,
    seconds: float,
    clock: str = "wall",
    memory_bytes: int = 4 << 30,
    cpu_seconds: int = 600,
    done: Callable[[], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run `jobs` in a child process (PYTHONHASHSEED=`hash_seed`); results by task id.

    Each job may take `seconds` of wall-clock time (`clock="wall"`) or of CPU time
    (`clock="cpu"`: the same on a loaded machine as on an idle one); the child gets
    `memory_bytes` of address space and `cpu_seconds` of CPU time in all. A job that kills the
    child gets an error result and the child is restarted with the jobs after it. `done` is
    called once per job as its result arrives (a progress bar)."""
    if clock not in _CLOCKS:
        raise ValueError(f"clock {clock!r} is not one of {sorted(_CLOCKS)}")

    def limit_resources() -> None:
        # Trusted data, but a slow or greedy solution must not take the machine.
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    results: dict[str, dict[str, Any]] = {}
    pending = list(jobs)
    with tempfile.TemporaryDirectory(prefix="boi-reference-") as scratch:
        while pending:
            read_fd, write_fd = os.pipe()
            env = {
                "PATH": os.environ.get("PATH", ""),
                "PYTHONHASHSEED": hash_seed,
                "PYTHONPATH": str(_ROOT),
            }
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.loaders._reference_runner",
                    str(write_fd),
                    str(seconds),
                    clock,
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(write_fd,),
                cwd=scratch,
                env=env,
                preexec_fn=limit_resources,
            )
            os.close(write_fd)
            with os.fdopen(read_fd, encoding="utf-8") as reader:
                assert proc.stdin is not None
                try:
                    proc.stdin.write("".join(json.dumps(j) + "\n" for j in pending).encode())
                    proc.stdin.close()
                except BrokenPipeError:
                    pass  # the child died before reading its jobs: the first one is blamed
                for line in reader:
                    result = json.loads(line)
                    results[result["task_id"]] = result
                    if done is not None:
                        done()
            proc.wait()
            finished = [j for j in pending if j["task_id"] in results]
            pending = pending[len(finished) :]
            if pending:  # the child died on pending[0]
                results[pending[0]["task_id"]] = {
                    "task_id": pending[0]["task_id"],
                    "error": f"the solution killed its process (exit code {proc.returncode})",
                }
                pending = pending[1:]
                if done is not None:
                    done()
    return results


# ------------------------------------------------------------------------------ child side


WAIT_GUARD = 20
"""Under the CPU clock, a job is also stopped after this many times its seconds of wall time."""
TIMED_OUT = "timed out after"
"""How a timed-out job's error begins (a caller may retry those rather than keep them)."""


class _CallTimeout(Exception):
    pass


def _on_alarm(signum: int, frame: object) -> None:
    raise _CallTimeout


def _resolve(name: str) -> Callable[[Any, dict], Any]:
    module, _, attribute = name.partition(":")
    resolved: Callable[[Any, dict], Any] = getattr(importlib.import_module(module), attribute)
    return resolved


def _run_calls(job: dict, namespace: dict) -> dict:
    exec(compile(job["code"] + "\n" + job["setup"], "<solution>", "exec"), namespace)
    outputs = []
    for call in job["calls"]:
        outputs.append(repr(eval(compile(call, "<call>", "eval"), namespace)))
    return {"task_id": job["task_id"], "outputs": outputs}


def _run_inputs(job: dict, namespace: dict) -> dict:
    encode = _resolve(job["encode"])
    exec(compile(job["code"], "<solution>", "exec"), namespace)
    function = namespace[job["entry_point"]]
    values = []
    spent = 0.0
    for args in job["inputs"]:
        args = copy.deepcopy(args)
        started = time.perf_counter()
        value = function(*args)
        spent += time.perf_counter() - started
        values.append(encode(value, job))
    return {"task_id": job["task_id"], "values": values, "seconds": round(spent, 6)}


def _run_job(job: dict, seconds: float, clock: str = "wall") -> dict:
    namespace: dict = {"__name__": "__reference__"}
    timer, _, unit = _CLOCKS[clock]
    signal.setitimer(timer, seconds)
    if timer != signal.ITIMER_REAL:
        # CPU time does not pass while a solution waits: a wall-clock guard, far above any
        # load's stretch, keeps a waiting one from hanging the load (its timeout is not kept).
        signal.setitimer(signal.ITIMER_REAL, seconds * WAIT_GUARD)
    try:
        return _run_inputs(job, namespace) if "inputs" in job else _run_calls(job, namespace)
    except _CallTimeout:
        return {"task_id": job["task_id"], "error": f"{TIMED_OUT} {seconds:g} {unit}"}
    except BaseException as err:  # SystemExit and KeyboardInterrupt from the solution too
        return {"task_id": job["task_id"], "error": f"{type(err).__name__}: {err}"[:300]}
    finally:
        signal.setitimer(timer, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)


def main() -> None:
    result = os.fdopen(int(sys.argv[1]), "w", encoding="utf-8")
    seconds = float(sys.argv[2])
    clock = sys.argv[3] if len(sys.argv) > 3 else "wall"
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGPROF, _on_alarm)
    jobs = [json.loads(line) for line in sys.stdin]
    sys.stdin = io.StringIO()
    sys.stdout = sys.stderr = io.StringIO()  # solutions' prints are not results
    for job in jobs:
        result.write(json.dumps(_run_job(job, seconds, clock)) + "\n")
        result.flush()
        sys.stdout.seek(0)
        sys.stdout.truncate()


if __name__ == "__main__":
    main()
