"""Child process that runs MBPP reference solutions on their test inputs.

Run as `python -m benchmarks.loaders._reference_runner RESULT_FD`: reads jobs (one JSON object
per line: task_id, setup, code, calls) from stdin and writes one JSON line per job to RESULT_FD,
a descriptor the solutions do not know about, so nothing they print can pose as a result.
The parent runs this under resource limits in a scratch directory and restarts it past any job
that kills the process.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys


class _CallTimeout(Exception):
    pass


def _on_alarm(signum: int, frame: object) -> None:
    raise _CallTimeout


def _run_job(job: dict, seconds: float) -> dict:
    namespace: dict = {"__name__": "__mbpp__"}
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        exec(compile(job["code"] + "\n" + job["setup"], "<solution>", "exec"), namespace)
        outputs = []
        for call in job["calls"]:
            outputs.append(repr(eval(compile(call, "<call>", "eval"), namespace)))
        return {"task_id": job["task_id"], "outputs": outputs}
    except _CallTimeout:
        return {"task_id": job["task_id"], "error": f"timed out after {seconds:g} s"}
    except BaseException as err:  # SystemExit and KeyboardInterrupt from the solution too
        return {"task_id": job["task_id"], "error": f"{type(err).__name__}: {err}"[:300]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main() -> None:
    result = os.fdopen(int(sys.argv[1]), "w", encoding="utf-8")
    seconds = float(sys.argv[2])
    signal.signal(signal.SIGALRM, _on_alarm)
    jobs = [json.loads(line) for line in sys.stdin]
    sys.stdin = io.StringIO()
    sys.stdout = sys.stderr = io.StringIO()  # solutions' prints are not results
    for job in jobs:
        result.write(json.dumps(_run_job(job, seconds)) + "\n")
        result.flush()
        sys.stdout.seek(0)
        sys.stdout.truncate()


if __name__ == "__main__":
    main()
