"""Rank every transformation of one or more `boi run` directories by its effect: mean relative
drop of pass@k with each run's paired interval, ReCode's robust drop@k, and flips. Several run
directories (one per model) are ranked side by side."""

from __future__ import annotations

import argparse

from benchmarks.common.outputs import declare_output
from boi.severity import rank_runs

EXAMPLES = ("boi rank runs/model-a runs/model-b --out runs/severity",)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs", metavar="RUN_DIR", nargs="+", help="the --out of each `boi run` to rank"
    )
    parser.add_argument(
        "--out",
        help="also write severity.md, severity.json, severity.png and severity.html here",
    )
    declare_output(parser, "out", "dir", ours=("severity.json", "severity.md"))


def run(args: argparse.Namespace) -> int:
    ranking = rank_runs(args.runs, args.out)
    print(ranking.markdown)
    if ranking.out_dir is not None:
        print(f"written to {ranking.out_dir}/severity.{{md,json,png,html}}")
    return 0
