"""How well the droppable-keyword pipeline agrees with a careful annotator.

A labelled set (`tests/data/keyword_labels/labels.jsonl`, rules in its RULES.md) lists, per
problem, the description words a person marks droppable by the paper's definition. Words are
compared per problem, lower-cased: a droppable bigram counts as its two words. Each label row
carries the SHA-256 of the keyword-block text it was made on, so a splitter change that would
silently invalidate labels is refused instead.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.loaders import load_benchmark
from benchmarks.problem import Problem
from perturb.blocks import split_blocks
from perturb.keywords import Embedder, KeywordConfig, analyze_keywords


@dataclass(frozen=True)
class ProblemQuality:
    task_id: str
    dataset: str
    gold: frozenset[str]
    predicted: frozenset[str]

    @property
    def false_positives(self) -> frozenset[str]:
        return self.predicted - self.gold

    @property
    def false_negatives(self) -> frozenset[str]:
        return self.gold - self.predicted


@dataclass(frozen=True)
class Scores:
    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        predicted = self.true_positives + self.false_positives
        return self.true_positives / predicted if predicted else 0.0

    @property
    def recall(self) -> float:
        gold = self.true_positives + self.false_negatives
        return self.true_positives / gold if gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "tp": self.true_positives,
            "fp": self.false_positives,
            "fn": self.false_negatives,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


@dataclass(frozen=True)
class KeywordQuality:
    problems: tuple[ProblemQuality, ...]
    datasets: tuple[str, ...] = field(default=("humaneval", "mbpp", "code_contests"))

    def scores(self, dataset: str | None = None) -> Scores:
        """Micro-averaged over the problems of `dataset` (all when None)."""
        rows = [p for p in self.problems if dataset is None or p.dataset == dataset]
        return Scores(
            sum(len(p.gold & p.predicted) for p in rows),
            sum(len(p.false_positives) for p in rows),
            sum(len(p.false_negatives) for p in rows),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "per_dataset": {d: self.scores(d).to_json() for d in self.datasets},
            "all": self.scores().to_json(),
            "problems": [
                {
                    "task_id": p.task_id,
                    "gold": sorted(p.gold),
                    "predicted": sorted(p.predicted),
                }
                for p in self.problems
            ],
        }


def keyword_text(problem: Problem, config: KeywordConfig) -> str:
    """The keyword blocks' text, concatenated: what a label row was made on."""
    return "".join(b.text for b in problem.blocks or () if b.kind in config.keyword_blocks)


def labelled_problems(
    labels_path: str | os.PathLike[str],
    data: Mapping[str, str | os.PathLike[str] | None],
    config: KeywordConfig | None = None,
) -> tuple[list[Problem], dict[str, dict[str, Any]]]:
    """The labelled problems, split into blocks, and their label rows by task id. `data` gives
    each dataset's path (None: the loader's default). A label whose text hash no longer matches
    the splitter's output is refused with the task id."""
    config = config or KeywordConfig()
    rows: dict[str, dict[str, Any]] = {}
    for lineno, row in iter_jsonl(labels_path):
        require_fields(labels_path, lineno, row, ("task_id", "dataset", "droppable"), what="label")
        rows[row["task_id"]] = {**row, "_line": lineno}
    problems = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows.values()):
        by_id = {p.task_id: p for p in load_benchmark(dataset, data.get(dataset)).problems}
        for task_id, row in rows.items():
            if row["dataset"] != dataset:
                continue
            if task_id not in by_id:
                raise UserError(
                    f"{labels_path} line {row['_line']}: {task_id} is not in {dataset}; check the id."
                )
            problem = split_blocks(by_id[task_id])
            digest = hashlib.sha256(keyword_text(problem, config).encode("utf-8")).hexdigest()
            if row.get("description_sha256") not in (None, digest):
                raise UserError(
                    f"{labels_path} line {row['_line']}: the description of {task_id} is not the "
                    "text that was labelled (the splitter changed); relabel it and update its hash."
                )
            problems.append(problem)
    return problems, rows


def predicted_words(keywords: Sequence[str]) -> frozenset[str]:
    return frozenset(word.lower() for keyword in keywords for word in keyword.split())


def keyword_quality(
    problems: Sequence[Problem],
    labels: Mapping[str, Mapping[str, Any]],
    config: KeywordConfig,
    embedder: Embedder | None = None,
) -> KeywordQuality:
    """The pipeline's droppable words per problem against the labels."""
    analyses = analyze_keywords(problems, config, embedder)
    rows = []
    for problem, analysis in zip(problems, analyses, strict=True):
        label = labels[problem.task_id]
        rows.append(
            ProblemQuality(
                task_id=problem.task_id,
                dataset=label["dataset"],
                gold=frozenset(item["word"].lower() for item in label["droppable"]),
                predicted=predicted_words([d.keyword for d in analysis.droppable]),
            )
        )
    return KeywordQuality(tuple(rows))


def format_quality_table(quality: KeywordQuality) -> str:
    lines = [
        "| dataset | problems | labelled words | predicted words | precision | recall | F1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset in (*quality.datasets, None):
        rows = [p for p in quality.problems if dataset is None or p.dataset == dataset]
        s = quality.scores(dataset)
        lines.append(
            f"| {dataset or 'all'} | {len(rows)} | {s.true_positives + s.false_negatives} | "
            f"{s.true_positives + s.false_positives} | {s.precision:.2f} | {s.recall:.2f} | "
            f"{s.f1:.2f} |"
        )
    return "\n".join(lines)
