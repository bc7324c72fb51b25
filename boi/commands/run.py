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
from benchmarks.generation.given import GivenCompletionsBackend
from benchmarks.loaders import dataset_help
from benchmarks.study.cli import add_driver_arguments, drive
from boi.runner import RobustnessStudy, RunConfig, load_run_config, resolve_config_path
from perturb.catalogue import PerturbConfig

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
    perturbation = parser.add_argument_group(
        "perturbation (the config's perturb: PerturbConfig; a flag overrides that key only)"
    )
    add_dataclass_arguments(perturbation, PerturbConfig, flags={"seed": "--perturb-seed"})
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
        "--released-after",
        metavar="DATE",
        help="with --dataset: only problems whose contest date is after DATE (YYYY-MM-DD), "
        "e.g. the model's training cut-off (LiveCodeBench); recorded in the run's config",
    )
    parser.add_argument(
        "--released-before",
        metavar="DATE",
        help="with --dataset: only problems whose contest date is before DATE (YYYY-MM-DD)",
    )
    parser.add_argument(
        "--candidate-libraries",
        nargs="+",
        metavar="MODULE",
        help="installed libraries a candidate may import in the sandbox, read-only (import "
        "names: numpy pandas); sets execution.candidate_libraries; BigCodeBench then judges the "
        "installed-tier tasks that need only these",
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
        "--completions",
        metavar="FILE",
        help="judge the completions of this JSONL (one {task_id or prompt, completion, "
        "model?, sample_index?} per line, made by any harness) instead of a model's: the "
        "`completions` backend, one model per `model` in the file; overrides models (give one "
        "seed, and n no larger than the file's samples per prompt)",
    )
    add_driver_arguments(parser)


def run(args: argparse.Namespace) -> int:
    overrides = overrides_from_args(args, RunConfig)
    perturb = overrides_from_args(args, PerturbConfig)  # its fields that have a flag
    if perturb:
        overrides["perturb"] = perturb
    if args.model:
        overrides["models"] = model_flag_specs(args.model)
    if args.completions:
        if args.model:
            raise UserError("--completions replaces the models; leave out --model.")
        overrides["models"] = GivenCompletionsBackend.specs_of_file(args.completions)
    if args.candidate_libraries:
        overrides["execution"] = {"candidate_libraries": args.candidate_libraries}
    window = {"released_after": args.released_after, "released_before": args.released_before}
    if args.dataset:
        overrides["datasets"] = [
            {
                "name": d,
                "data": args.data if len(args.dataset) == 1 else None,
                "limit": args.limit,
                **{k: v for k, v in window.items() if v is not None},
            }
            for d in args.dataset
        ]
    elif any(window.values()):
        raise UserError(
            "--released-after / --released-before select problems of a --dataset; name it "
            "(e.g. --dataset livecodebench), or set datasets[].released_after in the config."
        )
    config = load_run_config(resolve_config_path(args.config), overrides)
    study = RobustnessStudy(config, args.reuse_generations)
    return drive(study, args, solo=["--reuse-generations"] if args.reuse_generations else [])
