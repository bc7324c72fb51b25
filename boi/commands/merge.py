"""Merge the shards of one run (each run with --shard I/N into its own --out, by `boi run`,
`boi bias run` or `boi bias test`) into OUT: the whole run's files, generation cache and
results, and its report, equal to the unsharded run's. A missing, duplicated, incomplete or
foreign shard is refused by name; nothing in the shard directories is written."""

from __future__ import annotations

import argparse

from benchmarks.common.outputs import declare_output
from benchmarks.common.rundir import MANIFEST
from boi.studies import merge_runs

EXAMPLES = ("boi merge runs/paper runs/paper-shard-0 runs/paper-shard-1",)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help="the merged run directory (new or empty)")
    parser.add_argument(
        "shards", metavar="SHARD_DIR", nargs="+", help="the --out of every `--shard` run"
    )
    # The shards are this command's inputs, so OUT equal to one of them is refused.
    declare_output(parser, "out", "dir", ours=(MANIFEST,))


def run(args: argparse.Namespace) -> int:
    outcome = merge_runs(args.out, args.shards)
    print()
    print(outcome.table_markdown)
    print(outcome.summary_line)
    return 0
