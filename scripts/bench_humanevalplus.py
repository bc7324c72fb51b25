"""What HumanEval+'s extra inputs cost in the sandbox: HumanEval vs HumanEval+, side by side.

Each dataset's own reference solutions are judged by `execute_samples` (the default
`boi execute` settings: separated judging, one worker per core, calibration, reference timing
where a sample times out) in one run per dataset: HumanEval's canonical solutions against
HumanEval's tests (7.7 asserts per problem), evalplus's canonical solutions against the
`humanevalplus` tests (1570 base + 122683 plus inputs, each a round trip through the plain-data
wire). Printed per dataset: wall time, samples per second, and the per-sample sandbox time
(`duration` of each result row: median, mean, 90th percentile, max), then the ratios and
HumanEval+'s slowest problems. Loading HumanEval+ (its expected outputs come from the machine
cache, computed on first use) is timed apart and not counted.

    .venv/bin/python scripts/bench_humanevalplus.py [--workers N] [--repeat R] [--single-process]
        [--out DIR]

`--repeat R` judges every reference solution R times (R samples per problem).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.loaders import load_benchmark
from benchmarks.problem import Problem


def judge(
    name: str, problems: list[Problem], repeat: int, config: ExecutionConfig, out: Path
) -> dict:
    samples = [
        {"task_id": p.task_id, "completion": p.canonical_solution}
        for p in problems
        for _ in range(repeat)
    ]
    started = time.perf_counter()
    report = execute_samples(problems, samples, config, out / f"{name}.jsonl")
    wall = time.perf_counter() - started
    durations = sorted(r["duration"] for r in report.results)
    by_task: dict[str, list[float]] = {}
    for row in report.results:
        by_task.setdefault(row["task_id"], []).append(row["duration"])
    return {
        "name": name,
        "samples": len(samples),
        "passed": sum(r["passed"] for r in report.results),
        "failed": sorted({r["task_id"] for r in report.results if not r["passed"]}),
        "wall": wall,
        "median": statistics.median(durations),
        "mean": statistics.fmean(durations),
        "p90": durations[int(0.9 * (len(durations) - 1))],
        "max": durations[-1],
        "by_task": {k: statistics.fmean(v) for k, v in by_task.items()},
        "raised": report.summary.get("limits", {}).get("task_timeouts", {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=0, help="sandbox workers (0: per core)")
    parser.add_argument("--repeat", type=int, default=1, help="samples per problem")
    parser.add_argument(
        "--single-process", action="store_true", help="judge with separate_candidate: false"
    )
    parser.add_argument("--out", default="", help="where the results files go (default: temp)")
    args = parser.parse_args()
    config = ExecutionConfig(workers=args.workers, separate_candidate=not args.single_process)

    started = time.perf_counter()
    plus = load_benchmark("humanevalplus")
    load_seconds = time.perf_counter() - started
    humaneval = load_benchmark("humaneval")
    inputs = sum(p.metadata["base_inputs"] + p.metadata["plus_inputs"] for p in plus.problems)
    print(
        f"HumanEval+ loaded in {load_seconds:.1f} s ({len(plus.problems)} problems, {inputs} "
        f"inputs, {sum(len(p.test) for p in plus.problems) / 1e6:.1f} MB of tests); "
        f"{config.resolved_workers()} workers, "
        f"{'separated' if config.separate_candidate else 'single-process'} judging"
    )
    with tempfile.TemporaryDirectory(prefix="bench-humanevalplus-") as scratch:
        out = Path(args.out) if args.out else Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        rows = [
            judge("humaneval", humaneval.problems, args.repeat, config, out),
            judge("humanevalplus", plus.problems, args.repeat, config, out),
        ]

    print()
    print(
        f"{'dataset':<15}{'samples':>8}{'passed':>8}{'wall s':>9}{'samples/s':>11}"
        f"{'median ms':>11}{'mean ms':>9}{'p90 ms':>9}{'max ms':>9}"
    )
    for row in rows:
        print(
            f"{row['name']:<15}{row['samples']:>8}{row['passed']:>8}{row['wall']:>9.1f}"
            f"{row['samples'] / row['wall']:>11.1f}{row['median'] * 1e3:>11.1f}"
            f"{row['mean'] * 1e3:>9.1f}{row['p90'] * 1e3:>9.1f}{row['max'] * 1e3:>9.0f}"
        )
    he, hep = rows
    print(
        f"\nHumanEval+ / HumanEval: wall x{hep['wall'] / he['wall']:.1f}, median per sample "
        f"x{hep['median'] / he['median']:.1f}, mean per sample x{hep['mean'] / he['mean']:.1f}"
    )
    slowest = sorted(hep["by_task"].items(), key=lambda item: -item[1])[:8]
    print(
        "HumanEval+'s slowest problems (s per sample): "
        + ", ".join(f"{task} {seconds:.2f}" for task, seconds in slowest)
    )
    if hep["raised"]:
        print(
            "timeouts raised by reference timing: "
            + ", ".join(f"{task} {seconds:g} s" for task, seconds in hep["raised"].items())
        )
    for row in rows:
        if row["failed"]:
            print(f"{row['name']}: not passed: {', '.join(row['failed'])}")


if __name__ == "__main__":
    main()
