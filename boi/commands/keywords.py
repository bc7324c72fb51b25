"""Droppable keywords: `boi keywords extract DATASET --out FILE` writes every candidate's
decision per problem; `boi keywords finetune-embedder --corpus DIR_OR_DATASET --out DIR`
fine-tunes KeyBERT's sentence embedder on code (use it with `--embedder DIR`)."""

from __future__ import annotations

import argparse
import statistics
from collections import Counter

from benchmarks.common.config import add_dataclass_arguments, from_mapping, overrides_from_args
from benchmarks.common.jsonl import write_jsonl
from benchmarks.common.outputs import declare_output
from benchmarks.loaders import dataset_help, load_benchmark
from boi.commands.perturb import KEYWORD_FLAGS
from perturb.blocks import split_dataset
from perturb.keyword_embedder import EmbedderFinetuneConfig, finetune_embedder
from perturb.keyword_file import analysis_record
from perturb.keywords import KeywordConfig, analyze_keywords

EXAMPLES = (
    "boi keywords extract humaneval --out keywords.jsonl",
    "boi keywords finetune-embedder --corpus code.jsonl --out models/embedder",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="keywords_command", metavar="ACTION", required=True)
    extract = sub.add_parser("extract", help="keyword decisions per problem")
    extract.add_argument("dataset", help=dataset_help())
    extract.add_argument("--data", help="where to read the named dataset from")
    extract.add_argument("--out", required=True, help="JSONL of decisions, one problem per line")
    declare_output(extract, "out", "file")
    add_dataclass_arguments(
        extract.add_argument_group("keywords (KeywordConfig)"), KeywordConfig, flags=KEYWORD_FLAGS
    )
    tune = sub.add_parser(
        "finetune-embedder", help="fine-tune the sentence embedder on a code corpus"
    )
    tune.add_argument("--out", required=True, help="new folder for the fine-tuned model")
    declare_output(tune, "out", "dir")  # a new or empty folder
    add_dataclass_arguments(
        tune.add_argument_group("fine-tuning (EmbedderFinetuneConfig)"),
        EmbedderFinetuneConfig,
        flags={"base_model": "--base"},
    )


def run(args: argparse.Namespace) -> int:
    if args.keywords_command == "finetune-embedder":
        config = from_mapping(
            EmbedderFinetuneConfig, overrides_from_args(args, EmbedderFinetuneConfig), "flags"
        )
        summary = finetune_embedder(config, args.out)
        print(
            f"fine-tuned on {summary['pairs']} pairs, {summary['steps']} steps, loss {summary['train_loss']}; saved to {summary['out']}"
        )
        print(
            f"use it with: boi perturb DATASET --embedder {summary['out']} (recalibrate thresholds: docs/explanation/blocks-and-keywords.md, 'Keyword quality')"
        )
        return 0

    loaded = load_benchmark(args.dataset, args.data)
    split = split_dataset(loaded.problems)
    usable = [p for p in split.problems if p.task_id not in split.failures]
    keywords = from_mapping(KeywordConfig, overrides_from_args(args, KeywordConfig), "flags")
    analyses = analyze_keywords(usable, keywords)
    # With each prompt's sha256, so the file pins these picks (`keyword_file`) safely.
    write_jsonl(args.out, (analysis_record(a, p) for a, p in zip(analyses, usable, strict=True)))
    counts = [len(a.droppable) for a in analyses]
    rules = Counter(d.rule for a in analyses for d in a.decisions)
    print(
        f"{args.dataset}: {len(analyses)} problems, mean droppable keywords {statistics.mean(counts):.2f} (min {min(counts)}, max {max(counts)})"
    )
    print("  decisions: " + ", ".join(f"{rule} {count}" for rule, count in rules.most_common()))
    skipped = [a for a in analyses if a.skipped]
    for a in skipped:
        print(f"  skipped {a.task_id}: {a.skipped}")
    for task_id, reason in split.failures.items():
        print(f"  skipped {task_id}: {reason}")
    print(f"wrote {args.out}")
    return 0
