"""The driver's flags, the same for every study's command, and what they do: `--shard`,
`--dry-run` (with `--tokens-per-second`, `--gpus`), `--ray` (with `--ray-shards`). A flag for
every study is added here, once: `add_driver_arguments` declares it and `drive` carries it out.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from benchmarks.common.errors import UserError
from benchmarks.study import Estimate, Study, check_claim, estimate_study, run_study
from benchmarks.study.ray import run_study_on_ray
from benchmarks.study.shards import parse_shard


def add_driver_arguments(parser: argparse.ArgumentParser, *, scale_out: bool = True) -> None:
    """The driver's flags, the same for every study. `scale_out=False`: the estimate's flags
    only (a set of runs, `boi bias experiment`, whose runs are each sharded on their own)."""
    group = parser.add_argument_group("how the run is driven (every study has these)")
    group.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the config will do (units, distinct prompts, samples, tokens, "
        "executions, GPU-hours) and stop: nothing is generated, executed or written",
    )
    group.add_argument(
        "--tokens-per-second",
        type=float,
        help="with --dry-run: one GPU's decode throughput for this model, for the time estimate",
    )
    group.add_argument("--gpus", type=int, default=1, help="with --dry-run: GPUs to divide by")
    if not scale_out:
        return
    group.add_argument(
        "--shard",
        metavar="I/N",
        help="generate and judge only shard I of N (I from 0; units dealt round-robin), "
        "into this --out; `boi merge` joins the shards. `auto` reads a Slurm array "
        "(SLURM_ARRAY_TASK_ID - MIN of SLURM_ARRAY_TASK_COUNT), `auto/N` a Kubernetes indexed "
        "Job (JOB_COMPLETION_INDEX of N)",
    )
    group.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run the shards as Ray tasks (a GPU each for GPU backends) and merge them into "
        "--out; ADDRESS is the cluster's (ray://host:10001 or auto), none starts Ray locally; "
        "needs Ray: pip install -e '.[ray]' in the boi checkout",
    )
    group.add_argument(
        "--ray-shards", type=int, help="with --ray: how many shards (default: one per GPU or CPU)"
    )


def drive(study: Study, args: argparse.Namespace, *, solo: Sequence[str] = ()) -> int:
    """Run `study` the way the driver's flags say; print its table and summary. `solo`: flags
    of the command given (by name) that work for one run directory only, refused with --ray."""
    # `is not None`: `--shard ""` (an unset variable in a job script) is a wrong shard, not
    # the whole run.
    shard = parse_shard(args.shard) if args.shard is not None else None
    if args.ray_shards is not None:
        if args.ray_shards < 1:
            raise UserError(
                f"--ray-shards is {args.ray_shards}; give at least 1, or leave it out for one "
                "shard per GPU (or CPU)."
            )
        if args.ray is None:
            raise UserError("--ray-shards says how many shards --ray makes; add --ray.")
    if args.dry_run:
        # What the run would refuse, refused now: its inputs (`load`: models, files, datasets)
        # and its directory (the claim), with nothing written.
        study.load(print)
        check_claim(study, shard)
        estimate = estimate_study(
            study, print, tokens_per_second=args.tokens_per_second, gpus=args.gpus, shard=shard
        )
        print_estimate(study.command, estimate)
        return 0
    if args.ray is not None:
        if shard is not None:
            raise UserError("--ray makes its own shards; leave out --shard.")
        if solo:
            raise UserError(
                f"{solo[0]} works for one run directory; run without --ray, or give each "
                "shard's --shard run the flag."
            )
        outcome = run_study_on_ray(study, args.ray or None, args.ray_shards)
    else:
        outcome = run_study(study, shard=shard)
    if outcome.table_markdown:
        print()
        print(outcome.table_markdown)
    print(outcome.summary_line)
    return 0


def print_estimate(command: str, estimate: Estimate) -> None:
    """`--dry-run`'s output."""
    print(f"{command} --dry-run ({estimate.cells}):")
    for line in estimate.lines():
        print(f"  {line}")
