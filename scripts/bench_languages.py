"""Per-sample cost of judging another language in the sandbox against the same compile-and-run
outside it, side by side in one run (issue 46, "How fast").

For each language with a toolchain here (C++, Java, JavaScript, Go), the toolchain's known-good probe program is judged N
times by one sandbox worker (build jobs, as `execute_samples` sends them) and built and run N
times by plain subprocesses in a temporary directory (the same files, compile steps and run
step, no sandbox), alternating; the ratio is the sandbox's median over the plain median.

    python scripts/bench_languages.py --samples 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.execution import ExecutionConfig, WorkerPool
from benchmarks.execution._pool import build_job, probe_problem
from benchmarks.execution._run import _harness_deadline
from benchmarks.languages import LANGUAGES, language_named


def plain(job: dict) -> float:
    """Build and run the job's program with plain subprocesses; seconds, checked to pass."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for name, text in job["files"].items():
            Path(folder, name).write_text(text, encoding="utf-8")
        env = {**os.environ, **job["env"]}
        for argv in job["compile"]:
            subprocess.run(argv, cwd=folder, env=env, check=True, capture_output=True)
        out = subprocess.run(job["run"], cwd=folder, env=env, check=True, capture_output=True)
        if not out.stdout.decode().rstrip().endswith(job["end_marker"]):
            raise SystemExit(f"{job['toolchain']}: the plain run did not pass")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5, help="samples per language and side")
    args = parser.parse_args()
    languages = [
        name
        for name in LANGUAGES
        if name != "python"
        and (toolchain := language_named(name).toolchain) is not None
        and not toolchain.missing()
        # Go also needs its tests' testify (compiled once from HumanEval-X's vendored copy).
        and not (toolchain.unready is not None and toolchain.unready())
    ]
    config = ExecutionConfig(workers=1)
    with WorkerPool(config, languages=languages) as pool:
        print(f"isolation: {pool.isolation.level}; {args.samples} samples per side")
        print("language | sandbox s/sample (median) | plain s/sample (median) | ratio")
        for language in languages:
            problem, completion = probe_problem(language)
            boxed, bare = [], []
            for index in range(args.samples):
                job = build_job(problem, completion, 30.0, 120.0)
                started = time.perf_counter()
                [(_, outcome)] = list(
                    pool.map([(index, {**job, "id": index}, _harness_deadline(job))])
                )
                boxed.append(time.perf_counter() - started)
                if outcome["status"] != "passed":
                    raise SystemExit(f"{language}: the sandbox run failed: {outcome['result']}")
                bare.append(plain(job))
            sandbox, outside = statistics.median(boxed), statistics.median(bare)
            print(f"{language} | {sandbox:.3f} | {outside:.3f} | {sandbox / outside:.2f}")


if __name__ == "__main__":
    main()
