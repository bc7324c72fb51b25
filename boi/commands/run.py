"""pass@k under each transformation, end to end: perturb -> (critic gate) -> generate ->
execute -> report, for datasets x transformations x models x decoding settings. Resumable:
rerun the same command after an interruption. `--config` takes a YAML file or a bundled name
(demo, paper)."""

from __future__ import annotations

import argparse

from benchmarks.common.config import add_dataclass_arguments, overrides_from_args
from benchmarks.common.errors import UserError
from benchmarks.common.outputs import declare_output
from benchmarks.common.rundir import MANIFEST
from benchmarks.generation import model_flag_specs
from benchmarks.loaders import dataset_help
from boi.ray_run import run_on_ray
from boi.runner import (
    RunConfig,
    estimate_run,
    load_run_config,
    resolve_config_path,
    run_experiment,
)
from boi.shards import parse_shard

EXAMPLES = (
    "boi run --config demo --out runs/demo",
    "boi run --config demo --model Qwen/Qwen2.5-Coder-1.5B-Instruct --out runs/qwen",
    "boi run --config paper --model bigcode/starcoder2-3b --dry-run",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        help="YAML config file, or a bundled config: demo (small, CPU), paper (the paper's protocol), recode (ReCode's catalogue, small, CPU) or reference (each variant's own solution: the harness check)",
    )
    top = parser.add_argument_group("run config (RunConfig; a flag overrides the config file)")
    add_dataclass_arguments(top, RunConfig, flags={"out_dir": "--out"})
    declare_output(parser, "out_dir", "dir", ours=(MANIFEST,))
    parser.add_argument(
        "--model",
        action="append",
        help="model id to evaluate (HF id or path, 'embedded', or 'reference': each variant's own "
        "solution, the harness check); repeatable; overrides models",
    )
    parser.add_argument(
        "--dataset",
        action="append",
        help=f"{dataset_help()}; repeatable; overrides datasets",
    )
    parser.add_argument("--data", help="with one --dataset: where to read it from")
    parser.add_argument("--limit", type=int, help="with --dataset: only the first N problems")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the config will do (variants, distinct prompts, samples, tokens, "
        "executions, GPU-hours) and stop: nothing is generated, executed or written",
    )
    parser.add_argument(
        "--tokens-per-second",
        type=float,
        help="with --dry-run: one GPU's decode throughput for this model, for the time estimate",
    )
    parser.add_argument("--gpus", type=int, default=1, help="with --dry-run: GPUs to divide by")
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run the shards as Ray tasks (a GPU each for GPU backends) and merge them into "
        "--out; ADDRESS is the cluster's (ray://host:10001 or auto), none starts Ray locally; "
        "needs Ray: pip install -e '.[ray]' in the boi checkout",
    )
    parser.add_argument(
        "--ray-shards", type=int, help="with --ray: how many shards (default: one per GPU or CPU)"
    )
    parser.add_argument(
        "--reuse-generations",
        nargs="+",
        default=[],
        metavar="FILE",
        help="other runs' generations.jsonl: their samples of the same model, prompt and "
        "decoding are taken instead of generated again (e.g. a HumanEval run reused by a run "
        "over HumanEval and HumanEval+)",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="generate and execute only shard I of N (I from 0; problems dealt round-robin), "
        "into this --out; `boi merge` joins the shards. `auto` reads a Slurm array "
        "(SLURM_ARRAY_TASK_ID - MIN of SLURM_ARRAY_TASK_COUNT), `auto/N` a Kubernetes indexed "
        "Job (JOB_COMPLETION_INDEX of N)",
    )


def run(args: argparse.Namespace) -> int:
    overrides = overrides_from_args(args, RunConfig)
    if args.model:
        overrides["models"] = model_flag_specs(args.model)
    if args.dataset:
        overrides["datasets"] = [
            {"name": d, "data": args.data if len(args.dataset) == 1 else None, "limit": args.limit}
            for d in args.dataset
        ]
    shard = parse_shard(args.shard) if args.shard else None
    config = load_run_config(resolve_config_path(args.config), overrides)
    if args.dry_run:
        estimate = estimate_run(config, tokens_per_second=args.tokens_per_second, gpus=args.gpus)
        print(f"boi run --dry-run ({len(config.models)} models x {len(config.settings)} settings x {len(config.seeds)} seeds):")  # fmt: skip
        for line in estimate.lines():
            print(f"  {line}")
        return 0
    if args.ray is not None:
        if shard is not None:
            raise UserError("--ray makes its own shards; leave out --shard.")
        if args.reuse_generations:
            raise UserError(
                "--reuse-generations works for one run directory; run without --ray, or give "
                "each shard's --shard run the flag."
            )
        outcome = run_on_ray(config, args.ray or None, args.ray_shards)
    else:
        outcome = run_experiment(config, shard=shard, reuse_generations=args.reuse_generations)
    if outcome.table_markdown:
        print()
        print(outcome.table_markdown)
    print(outcome.summary_line)
    return 0
