"""Precision, recall and F1 of the droppable-keyword pipeline against the hand-labelled set
(tests/data/keyword_labels: 60 problems over HumanEval, MBPP and CodeContests, rules in
RULES.md), per dataset; or, for a set annotated twice independently (--second-labels, or --dev
for the two-annotator development set, DEV.md), the annotators' agreement, the consensus recall
(share of the words both chose that the pipeline picks) and the precision against the union
(share of the picked words that at least one chose). Words are compared per problem,
lower-cased: a droppable bigram counts as its two words; a label lists each droppable word once.

    .venv/bin/python scripts/keyword_quality.py                       # the default pipeline
    .venv/bin/python scripts/keyword_quality.py --dev --errors         # two annotators
    .venv/bin/python scripts/keyword_quality.py --labels A.jsonl --second-labels B.jsonl \
        --extracted keywords.jsonl                  # score `boi keywords extract` output
    .venv/bin/python scripts/keyword_quality.py --embedder DIR         # another embedder
    .venv/bin/python scripts/keyword_quality.py --code-threshold 0.35 --errors

Needs ../shared/data for MBPP and CodeContests (or --mbpp / --code-contests paths).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common.jsonl import iter_jsonl  # noqa: E402
from perturb.keyword_quality import (  # noqa: E402
    droppable_by_task,
    format_quality_table,
    format_two_annotator_table,
    labelled_problems,
    scored_against_labels,
    two_annotator_quality,
)
from perturb.keywords import (  # noqa: E402
    KeywordConfig,
    analyze_keywords,
    sentence_transformer_embedder,
)

DATA = ROOT.parent / "shared" / "data"
LABEL_DIR = ROOT / "tests" / "data" / "keyword_labels"
LABELS = LABEL_DIR / "labels.jsonl"
DEV = (LABEL_DIR / "dev_annotator_a.jsonl", LABEL_DIR / "dev_annotator_b.jsonl")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", default=None, help=f"default: {LABELS.relative_to(ROOT)}")
    parser.add_argument(
        "--second-labels",
        help="an independent annotation of the same problems: report agreement, consensus "
        "recall and precision against the union",
    )
    parser.add_argument(
        "--dev",
        action="store_true",
        help="the two-annotator development set (dev_annotator_a/b.jsonl)",
    )
    parser.add_argument(
        "--extracted",
        help="score this `boi keywords extract` JSONL instead of running the pipeline",
    )
    parser.add_argument("--mbpp", default=str(DATA / "mbpp" / "mbpp.jsonl"))
    parser.add_argument(
        "--code-contests",
        default=str(DATA / "code_contests" / "code_contests_sample_train_short.jsonl"),
    )
    parser.add_argument("--embedder", default=None, help="default: the pipeline's own")
    parser.add_argument("--code-threshold", type=float, default=None)
    parser.add_argument("--context-threshold", type=float, default=None)
    parser.add_argument("--top-n", type=int, default=None)
    parser.add_argument("--errors", action="store_true", help="list each problem's misses")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    overrides = {
        name: value
        for name, value in (
            ("embedder", args.embedder),
            ("code_threshold", args.code_threshold),
            ("context_threshold", args.context_threshold),
            ("top_n", args.top_n),
        )
        if value is not None
    }
    config = dataclasses.replace(KeywordConfig(), **overrides)
    if args.dev and (args.labels or args.second_labels):
        parser.error("--dev names both annotations; leave out --labels / --second-labels")
    first, second = DEV if args.dev else (args.labels or LABELS, args.second_labels)
    data = {"mbpp": args.mbpp, "code_contests": args.code_contests}
    problems, labels = labelled_problems(first, data)
    if args.extracted:
        predicted = {
            row["task_id"]: list(row.get("droppable_words", row.get("droppable", [])))
            for _, row in iter_jsonl(args.extracted)
        }
        print(f"scoring {args.extracted}")
    else:
        analyses = analyze_keywords(
            problems, config, sentence_transformer_embedder(config.embedder)
        )
        predicted = droppable_by_task(analyses)
        print(
            f"embedder {config.embedder}, code_threshold {config.code_threshold}, "
            f"context_threshold {config.context_threshold}, top_n {config.top_n}"
        )
    result: object
    if second:
        _, second_labels = labelled_problems(second, data)
        quality2 = two_annotator_quality(labels, second_labels, predicted)
        print(format_two_annotator_table(quality2))
        if args.errors:
            for row2 in quality2.problems:
                if row2.missed or row2.unsupported:
                    print(
                        f"{row2.task_id}: picked {sorted(row2.predicted)} missed "
                        f"{sorted(row2.missed)} neither chose {sorted(row2.unsupported)}"
                    )
        result = quality2.to_json()
    else:
        quality = scored_against_labels(labels, predicted)
        print(format_quality_table(quality))
        if args.errors:
            for row in quality.problems:
                if row.false_positives or row.false_negatives:
                    print(
                        f"{row.task_id}: extra {sorted(row.false_positives)} missed {sorted(row.false_negatives)}"
                    )
        result = quality.to_json()
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
