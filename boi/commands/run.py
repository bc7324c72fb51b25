"""pass@k under each transformation, end to end: perturb -> (critic gate) -> generate ->
execute -> report, for datasets x transformations x models x decoding settings. Resumable:
rerun the same command after an interruption. `--config` takes a YAML file or a bundled name
(demo, paper)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        help="YAML config file, or a bundled config: demo (small, CPU) or paper (the paper's protocol)",
    )
    parser.add_argument("--out", dest="out_dir", help="run directory (overrides out_dir)")
    parser.add_argument(
        "--model",
        action="append",
        help="model to evaluate (HF id or path, or 'embedded'); repeatable; overrides models",
    )
    parser.add_argument(
        "--dataset",
        action="append",
        help="dataset name or HumanEval-format JSONL; repeatable; overrides datasets",
    )
    parser.add_argument("--data", help="with one --dataset: where to read it from")
    parser.add_argument("--limit", type=int, help="with --dataset: only the first N problems")
    parser.add_argument("--seeds", type=int, nargs="+", help="sampling seeds (overrides seeds)")


def run(args: argparse.Namespace) -> int:
    from boi.runner import load_run_config, resolve_config_path, run_experiment

    overrides: dict = {"out_dir": args.out_dir, "seeds": args.seeds}
    if args.model:
        overrides["models"] = [{"kind": "hf", "model": m} for m in args.model]
    if args.dataset:
        overrides["datasets"] = [
            {"name": d, "data": args.data if len(args.dataset) == 1 else None, "limit": args.limit}
            for d in args.dataset
        ]
    config = load_run_config(resolve_config_path(args.config), overrides)
    outcome = run_experiment(config)
    print()
    print(outcome.table_markdown)
    print(outcome.summary_line)
    return 0
