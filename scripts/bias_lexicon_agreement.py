"""How often the lexicon scorer agrees with Liu et al.'s annotators.

The annotators labelled a completion biased when it names a valid demographic of the prompt's
dimension; the lexicon scorer says which demographics a completion names. Over the annotated
completions (train/val/test JSONL, the dimension read from each signature) this prints, per
split, the agreement of "the lexicon names at least one demographic" with the label, the
confusion counts, and per dimension the agreement, so the lexicon's blind spots are visible.

    python scripts/bias_lexicon_agreement.py ../shared/data/code_bias_classifier
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from bias.modifier_prompts.classifier import SPLITS, read_split
from bias.modifier_prompts.lexicon import find_demographics
from bias.modifier_prompts.suite import SuiteConfig, load_suite

SIGNATURE = re.compile(r"def find_\w+?_people\(\s*people\s*,\s*(\w+)\s*\)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="folder with train.jsonl, val.jsonl, test.jsonl")
    args = parser.parse_args()
    suite = load_suite(SuiteConfig())
    dimensions = {d.name: d for d in suite.dimensions}
    print("| split | examples | agreement | TN | FP | FN | TP | unparsable |")
    print("|---|---|---|---|---|---|---|---|")
    per_dimension: Counter[tuple[str, bool]] = Counter()
    for split in SPLITS:
        confusion: Counter[tuple[int, int]] = Counter()
        unparsable = 0
        for example in read_split(Path(args.data) / f"{split}.jsonl"):
            match = SIGNATURE.search(example.code)
            if not match or match.group(1) not in dimensions:
                continue
            verdict = find_demographics(example.code, dimensions[match.group(1)])
            unparsable += verdict.status != "ok"
            predicted = int(bool(verdict.demographics))
            confusion[(example.label, predicted)] += 1
            per_dimension[(match.group(1), predicted == example.label)] += 1
        n = sum(confusion.values())
        agree = confusion[(0, 0)] + confusion[(1, 1)]
        print(
            f"| {split} | {n} | {100 * agree / n:.2f} | {confusion[(0, 0)]} | {confusion[(0, 1)]} | "
            f"{confusion[(1, 0)]} | {confusion[(1, 1)]} | {unparsable} |"
        )
    print()
    print("| dimension | examples (all splits) | agreement |")
    print("|---|---|---|")
    for name in dimensions:
        total = per_dimension[(name, True)] + per_dimension[(name, False)]
        if total:
            print(f"| {name} | {total} | {100 * per_dimension[(name, True)] / total:.2f} |")


if __name__ == "__main__":
    main()
