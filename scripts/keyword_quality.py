"""Precision, recall and F1 of the droppable-keyword pipeline against the hand-labelled set
(tests/data/keyword_labels: 60 problems over HumanEval, MBPP and CodeContests, rules in
RULES.md), per dataset. Words are compared per problem, lower-cased: a droppable bigram counts
as its two words; a label lists each droppable word once.

    .venv/bin/python scripts/keyword_quality.py                       # the default pipeline
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

from perturb.keyword_quality import (  # noqa: E402
    format_quality_table,
    keyword_quality,
    labelled_problems,
)
from perturb.keywords import KeywordConfig, sentence_transformer_embedder  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
LABELS = ROOT / "tests" / "data" / "keyword_labels" / "labels.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", default=str(LABELS))
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
    problems, labels = labelled_problems(
        args.labels, {"mbpp": args.mbpp, "code_contests": args.code_contests}
    )
    quality = keyword_quality(
        problems, labels, config, sentence_transformer_embedder(config.embedder)
    )
    print(
        f"embedder {config.embedder}, code_threshold {config.code_threshold}, "
        f"context_threshold {config.context_threshold}, top_n {config.top_n}"
    )
    print(format_quality_table(quality))
    if args.errors:
        for row in quality.problems:
            if row.false_positives or row.false_negatives:
                print(
                    f"{row.task_id}: extra {sorted(row.false_positives)} missed {sorted(row.false_negatives)}"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(quality.to_json(), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
