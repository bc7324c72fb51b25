"""Augmented fine-tuning (paper section 6): build-data writes training examples (NA: the
originals, A: plus the transformation catalogue's variants), train fine-tunes with Accelerate
(+ DeepSpeed ZeRO-3 under torchrun or accelerate launch; see docs/how-to/finetune-at-scale.md), compare evaluates
before / NA / A through boi run in the layout of the paper's Table 4."""

from __future__ import annotations

import argparse

from benchmarks.common.config import (
    add_dataclass_arguments,
    add_names_argument,
    overrides_from_args,
)
from benchmarks.common.outputs import declare_output
from benchmarks.loaders import DATASETS
from boi.compare import MODEL_HELP, compare_models
from finetune.build import build_data
from finetune.config import CONFIG_HELP, TrainConfig, load_train_config
from finetune.train import RUN_CONFIG, training_function

EXAMPLES = (
    "boi finetune build-data mbpp=path/to/mbpp.jsonl --flavour A --out data/mbpp_A.jsonl",
    "boi finetune train --model embedded --data data/mbpp_A.jsonl --output-dir runs/ft_A",
    "boi finetune compare --na runs/ft_NA/model --a runs/ft_A/model --out runs/compare",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="finetune_command", metavar="ACTION", required=True)

    build = sub.add_parser(
        "build-data",
        help="training examples (JSONL) with lineage, a grouped validation split, leakage check",
        description="Training examples: prompt + reference solution, loss on the solution only.",
    )
    build.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help=f"NAME, NAME=PATH or a HumanEval-format JSONL path (NAME: {', '.join(DATASETS)})",
    )
    build.add_argument(
        "--flavour", choices=("NA", "A"), default="NA", help="NA: originals; A: + variants"
    )
    add_names_argument(
        build, "--transforms", help="catalogue entries for flavour A (default: all but original)"
    )
    build.add_argument(
        "--variants-per-task",
        type=int,
        default=0,
        help="at most this many variants per task, drawn with --seed (0: all)",
    )
    build.add_argument("--seed", type=int, default=0, help="seed for the split and variant choice")
    build.add_argument(
        "--validation-fraction", type=float, default=0.1, help="share of source tasks in validation"
    )
    build.add_argument(
        "--eval-dataset",
        "--eval-benchmark",  # its old name, still accepted
        dest="eval_dataset",
        default="humaneval",
        help="dataset (NAME or NAME=PATH) the model will be evaluated on, for the leakage check "
        "('none' to skip)",
    )
    build.add_argument(
        "--leakage",
        choices=("refuse", "drop", "warn"),
        default="refuse",
        help="what to do with examples overlapping the evaluation dataset",
    )
    build.add_argument(
        "--limit", type=int, default=0, help="first N problems per source (toy runs)"
    )
    build.add_argument("--out", required=True, help="output JSONL")
    build.add_argument("--datasets-dir", help="also save a `datasets` DatasetDict folder here")
    declare_output(build, "out", "file")
    declare_output(build, "datasets_dir", "dir", ours=("dataset_dict.json",))

    train = sub.add_parser(
        "train",
        help="fine-tune (accelerate; DeepSpeed ZeRO-3 with --deepspeed or accelerate launch)",
        description="Fine-tune with early stopping; rerun the same command to resume after a kill.",
    )

    train.add_argument("--config", help=CONFIG_HELP)
    add_dataclass_arguments(train, TrainConfig)
    declare_output(train, "output_dir", "dir", ours=(RUN_CONFIG,))

    compare = sub.add_parser(
        "compare",
        help="evaluate before / NA / A models under the catalogue (paper Table 4)",
        description="Runs `boi run` on the three models (any backend: HF id, local folder, "
        "'embedded' or a backend mapping such as an OpenAI-compatible server; local folders are "
        "linked as before/NA/A under OUT/models; the run in OUT/run, resumable) and prints "
        "Table 4 per dataset and decoding setting (the run's Table 3 numbers).",
    )
    compare.add_argument(
        "--before", default="embedded", help=f"the model before fine-tuning: {MODEL_HELP}"
    )
    compare.add_argument("--na", required=True, help="the model fine-tuned without augmentation")
    compare.add_argument("--a", required=True, help="the model fine-tuned with augmentation")
    compare.add_argument(
        "--config",
        help="boi run config: datasets, transforms, settings (ks), seeds; a path or demo / paper "
        "(default: demo); its models and out_dir are replaced",
    )
    compare.add_argument("--out", required=True, help="output folder")
    declare_output(compare, "out", "dir", ours=("table4.json", "run", "models"))


def run(args: argparse.Namespace) -> int:
    if args.finetune_command == "build-data":
        print(
            build_data(
                args.sources,
                flavour=args.flavour,
                transforms=args.transforms,
                variants_per_task=args.variants_per_task,
                seed=args.seed,
                validation_fraction=args.validation_fraction,
                eval_benchmark=None if args.eval_dataset.lower() == "none" else args.eval_dataset,
                leakage=args.leakage,
                limit=args.limit,
                out=args.out,
                datasets_dir=args.datasets_dir,
            )
        )
        return 0
    if args.finetune_command == "train":
        training_function(load_train_config(args.config, overrides_from_args(args, TrainConfig)))
        return 0

    print(
        compare_models(before=args.before, na=args.na, a=args.a, config=args.config, out=args.out)
    )
    return 0
