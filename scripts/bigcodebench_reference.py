"""BigCodeBench's reference check: every canonical solution of the standard-library tier judged
in the sandbox, separated (as every `boi run` judges), and the failing tasks written with the
reason to benchmarks/loaders/data/bigcodebench-reference.json, which `--dataset bigcodebench`
reads to leave those tasks out of a run (and say so).

    python scripts/bigcodebench_reference.py [data/bigcodebench/BigCodeBench.jsonl.gz]

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
from benchmarks.loaders.bigcodebench import REFERENCE_FILE, load_bigcodebench
from benchmarks.reference_check import reference_failures
from benchmarks.upstream import dataset, sha256_of

RUNS = 3
"""Each reference runs this many times: one that fails in any run is left out (its tests
seed `random` on the trusted side, which the candidate's process does not see)."""


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "data/bigcodebench/BigCodeBench.jsonl.gz"
    loaded = load_bigcodebench(path, reference_check=False)
    started = time.perf_counter()
    failures = reference_failures(loaded.problems, ExecutionConfig(), runs=RUNS)
    seconds = time.perf_counter() - started
    record = {
        "source_sha256": sha256_of(path),
        "pinned": sha256_of(path) == dataset("bigcodebench").files[0].sha256,
        "judging": "separated",
        "runs": RUNS,
        "tier": "stdlib",
        "checked": len(loaded.problems),
        "failures": dict(sorted(failures.items(), key=lambda kv: int(kv[0].split("/")[1]))),
    }
    write_text_atomic(REFERENCE_FILE, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    passed = len(loaded.problems) - len(failures)
    print(
        f"{passed} of {len(loaded.problems)} references pass, {len(failures)} fail ({seconds:.0f} s)"
    )


if __name__ == "__main__":
    main()
