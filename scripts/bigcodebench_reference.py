"""BigCodeBench's reference check: every canonical solution of the standard-library tier judged
in the sandbox, separated (as every `boi run` judges), and the failing tasks written with the
reason to benchmarks/loaders/data/bigcodebench-reference.json, which `--dataset bigcodebench`
reads to leave those tasks out of a run (and say so).

    python scripts/bigcodebench_reference.py [data/bigcodebench/BigCodeBench.jsonl.gz]
    python scripts/bigcodebench_reference.py --single-process [FILE]   # compare; writes nothing
    python scripts/bigcodebench_reference.py --installed [--runs N] [--single-process] [FILE]

`--installed`: the installed tier's tasks that need only numpy and pandas, judged with those as
the run's candidate libraries (`execution.candidate_libraries`); written as the file's
`installed` section with the library versions they ran under (a run under other versions keeps
those tasks with their references unchecked, and says so), the standard-library part kept.

It prints the counts. A reference fails here when its tests need what separated judging does
not give: a directory the tests and the candidate share, a patch of a module in the candidate's
process, a value outside boi-plain/1, the network; or when it is wrong (upstream #107).
"""

from __future__ import annotations

import json
import platform
import sys
import time

from benchmarks.common.atomic import write_text_atomic
from benchmarks.execution import ExecutionConfig, resolve_libraries
from benchmarks.execution.reference_check import reference_failures
from benchmarks.loaders.bigcodebench import REFERENCE_FILE, load_bigcodebench
from benchmarks.upstream import dataset, sha256_of

RUNS = 3
"""Each reference runs this many times: one that fails in any run is left out (its tests
seed `random` on the trusted side, which the candidate's process does not see)."""


INSTALLED_LIBRARIES = ("numpy", "pandas")


def installed(path: str, runs: int, single: bool = False) -> None:
    """The installed tier's reference check (numpy and pandas), into REFERENCE_FILE's
    `installed` section (`single`: the single-process comparison, written nowhere)."""
    loaded = load_bigcodebench(path, reference_check=False, candidate_libraries=INSTALLED_LIBRARIES)
    problems = [p for p in loaded.problems if p.metadata["tier"] == "installed"]
    config = ExecutionConfig(candidate_libraries=INSTALLED_LIBRARIES, separate_candidate=not single)
    runs = 1 if single else runs
    started = time.perf_counter()
    failures = reference_failures(problems, config, runs=runs)
    seconds = time.perf_counter() - started
    judging = "single-process" if single else "separated"
    print(
        f"{len(problems) - len(failures)} of {len(problems)} installed-tier references pass, "
        f"{len(failures)} fail ({judging}, {', '.join(INSTALLED_LIBRARIES)}, {runs} run(s), "
        f"{seconds:.0f} s)"
    )
    if single:
        return
    record = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))
    if record["source_sha256"] != sha256_of(path):
        raise SystemExit(
            "the shipped check is of another file: run the standard-library check first"
        )
    record["installed"] = {
        "candidate_libraries": list(INSTALLED_LIBRARIES),
        "versions": resolve_libraries(INSTALLED_LIBRARIES).versions,
        "python": platform.python_version(),
        "runs": runs,
        "checked": sorted((p.task_id for p in problems), key=lambda t: int(t.split("/")[1])),
        "failures": dict(sorted(failures.items(), key=lambda kv: int(kv[0].split("/")[1]))),
    }
    write_text_atomic(REFERENCE_FILE, json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def main() -> None:
    args = sys.argv[1:]
    single = "--single-process" in args
    runs = RUNS
    if "--runs" in args:
        at = args.index("--runs")
        runs = int(args[at + 1])
        del args[at : at + 2]
    args = [a for a in args if a != "--single-process"]
    if "--installed" in args:
        args.remove("--installed")
        installed(args[0] if args else "data/bigcodebench/BigCodeBench.jsonl.gz", runs, single)
        return
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
