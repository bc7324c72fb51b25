"""BigCodeBench's reference check: every canonical solution of the standard-library tier judged
in the sandbox, separated (as every `boi run` judges), and the failing tasks written with the
reason to benchmarks/loaders/data/bigcodebench-reference.json, which `--dataset bigcodebench`
reads to leave those tasks out of a run (and say so).

    python scripts/bigcodebench_reference.py [data/bigcodebench/BigCodeBench.jsonl.gz]
    python scripts/bigcodebench_reference.py --single-process [FILE]   # compare; writes nothing

It prints the counts. A reference fails here when its tests need what separated judging does
not give: a directory the tests and the candidate share, a patch of a module in the candidate's
process, a value outside boi-plain/1, the network; or when it is wrong (upstream #107).
"""

from __future__ import annotations

import json
import sys
import time

from benchmarks.common.atomic import write_text_atomic
from benchmarks.execution import ExecutionConfig
from benchmarks.execution.reference_check import reference_failures
from benchmarks.loaders.bigcodebench import REFERENCE_FILE, load_bigcodebench
from benchmarks.upstream import dataset, sha256_of

RUNS = 3
"""Each reference runs this many times: one that fails in any run is left out (its tests
seed `random` on the trusted side, which the candidate's process does not see)."""


def main() -> None:
    args = sys.argv[1:]
    single = "--single-process" in args
    args = [a for a in args if a != "--single-process"]
    path = args[0] if args else "data/bigcodebench/BigCodeBench.jsonl.gz"
    loaded = load_bigcodebench(path, reference_check=False)
    started = time.perf_counter()
    # --single-process: the comparison only (the tests in the candidate's process, as
    # upstream runs them); nothing is written.
    config = ExecutionConfig(separate_candidate=not single)
    failures = reference_failures(loaded.problems, config, runs=1 if single else RUNS)
    seconds = time.perf_counter() - started
    passed = len(loaded.problems) - len(failures)
    judging = "single-process" if single else "separated"
    print(
        f"{passed} of {len(loaded.problems)} references pass, {len(failures)} fail "
        f"({judging}, {seconds:.0f} s)"
    )
    if single:
        return
    record = {
        "source_sha256": sha256_of(path),
        "pinned": sha256_of(path) == dataset("bigcodebench").files[0].sha256,
        "judging": judging,
        "runs": RUNS,
        "tier": "stdlib",
        "checked": len(loaded.problems),
        "failures": dict(sorted(failures.items(), key=lambda kv: int(kv[0].split("/")[1]))),
    }
    write_text_atomic(REFERENCE_FILE, json.dumps(record, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
