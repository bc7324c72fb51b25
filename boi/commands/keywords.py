"""Droppable keywords: `boi keywords extract DATASET --out FILE` writes every candidate's
decision per problem; `boi keywords finetune-embedder --corpus DIR_OR_DATASET --out DIR`
fine-tunes KeyBERT's sentence embedder on code (use it with `--embedder DIR`)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="keywords_command", metavar="ACTION", required=True)
    extract = sub.add_parser("extract", help="keyword decisions per problem")
    extract.add_argument(
        "dataset", help="humaneval, mbpp, code_contests, or a HumanEval-format JSONL path"
    )
    extract.add_argument("--data", help="where to read the named dataset from")
    extract.add_argument("--out", required=True, help="JSONL of decisions, one problem per line")
    extract.add_argument(
        "--embedder", default="embedded", help="sentence-transformers name or path"
    )
    extract.add_argument(
        "--no-context-filter", action="store_true", help="disable the context-aware filter"
    )
    tune = sub.add_parser(
        "finetune-embedder", help="fine-tune the sentence embedder on a code corpus"
    )
    tune.add_argument(
        "--corpus",
        default="stdlib",
        help="folder of .py files, 'stdlib' (default), or an HF dataset id with a 'content' column",
    )
    tune.add_argument("--out", required=True, help="new folder for the fine-tuned model")
    tune.add_argument(
        "--base",
        default="embedded",
        help="model to start from (default: embedded all-MiniLM-L6-v2)",
    )
    tune.add_argument(
        "--max-pairs",
        type=int,
        default=4000,
        help="(docstring, code) pairs to train on (default 4000)",
    )
    tune.add_argument("--epochs", type=int, default=1)
    tune.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    if args.keywords_command == "finetune-embedder":
        from perturb.embedder_finetune import EmbedderFinetuneConfig, finetune_embedder

        config = EmbedderFinetuneConfig(
            corpus=args.corpus,
            base_model=args.base,
            max_pairs=args.max_pairs,
            epochs=args.epochs,
            seed=args.seed,
        )
        summary = finetune_embedder(config, args.out)
        print(
            f"fine-tuned on {summary['pairs']} pairs, {summary['steps']} steps, loss {summary['train_loss']}; saved to {summary['out']}"
        )
        print(
            f"use it with: boi perturb DATASET --embedder {summary['out']} (recalibrate thresholds: see README)"
        )
        return 0

    import statistics
    from collections import Counter

    from benchmarks.jsonl import write_jsonl
    from benchmarks.loaders import load_benchmark
    from perturb.blocks import split_dataset
    from perturb.keywords import KeywordConfig, analyze_keywords

    loaded = load_benchmark(args.dataset, args.data)
    split = split_dataset(loaded.problems)
    usable = [p for p in split.problems if p.task_id not in split.failures]
    analyses = analyze_keywords(
        usable, KeywordConfig(embedder=args.embedder, context_aware=not args.no_context_filter)
    )
    write_jsonl(args.out, (a.to_json() for a in analyses))
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
