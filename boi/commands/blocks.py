"""Split a dataset into Blocks of Influence, write one JSON object per problem and print a
coverage summary (problems, how many have each block, failures with reasons)."""

from __future__ import annotations

import argparse

from benchmarks.common.outputs import declare_output
from benchmarks.loaders import dataset_help, load_benchmark
from benchmarks.problem import write_problems
from perturb.blocks import format_coverage, split_dataset

EXAMPLES = (
    "boi blocks humaneval",
    "boi blocks mbpp --data path/to/mbpp.jsonl --out blocks.jsonl",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", help=dataset_help("a path to a HumanEval-format JSONL file"))
    parser.add_argument(
        "--data",
        help="where to read the named dataset from (MBPP JSONL, CodeContests JSONL/Parquet)",
    )
    parser.add_argument("--out", help="output JSONL (default: print the summary only)")
    declare_output(parser, "out", "file")


def run(args: argparse.Namespace) -> int:
    loaded = load_benchmark(args.dataset, args.data)
    split = split_dataset(loaded.problems)
    if args.out:
        write_problems(args.out, split.problems)
    print(format_coverage(args.dataset, loaded, split))
    if args.out:
        print(f"wrote {len(split.problems)} problems to {args.out}")
    return 0
