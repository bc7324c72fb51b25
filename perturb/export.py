"""Export perturbed problems for trainers: a Hugging Face `datasets.Dataset`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from benchmarks.problem import Problem

# Nested fields vary in shape between transformations (lineage changes, metadata), which an
# Arrow schema cannot hold row by row; they travel as JSON strings.
JSON_COLUMNS = ("stdio_tests", "blocks", "absent_blocks", "lineage", "metadata")


def to_hf_dataset(problems: Sequence[Problem]) -> Any:
    """A `datasets.Dataset` with one row per problem; nested fields as JSON strings."""
    from datasets import Dataset  # heavy; only this export needs it

    rows = []
    for problem in problems:
        row = problem.to_json()
        for column in JSON_COLUMNS:
            row[column] = json.dumps(row[column], ensure_ascii=False)
        rows.append(row)
    return Dataset.from_list(rows)


def from_hf_dataset(dataset: Any) -> list[Problem]:
    """Problems back from `to_hf_dataset` output (or its `load_from_disk`)."""
    problems = []
    for row in dataset:
        row = dict(row)
        for column in JSON_COLUMNS:
            row[column] = json.loads(row[column])
        problems.append(Problem.from_json(row))
    return problems
