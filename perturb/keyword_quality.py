"""How well the droppable-keyword pipeline agrees with careful annotators.

A labelled set (`tests/data/keyword_labels/labels.jsonl`, rules in its RULES.md) lists, per
problem, the description words a person marks droppable by the paper's definition. Words are
compared per problem, lower-cased: a droppable bigram counts as its two words. Each label row
carries the SHA-256 of the keyword-block text it was made on, so a splitter change that would
silently invalidate labels is refused instead.

A set annotated twice, independently (`dev_annotator_a.jsonl` / `dev_annotator_b.jsonl`), is
scored against both annotators at once, never against one (`two_annotator_quality`): their
agreement (F1 of one against the other), the *consensus recall* (the share of the words both
chose that the pipeline picks) and the *precision against the union* (the share of the picked
words that at least one of them chose).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.loaders import load_benchmark
from benchmarks.problem import Problem
from perturb.blocks import split_blocks
from perturb.keywords import Embedder, KeywordAnalysis, KeywordConfig, analyze_keywords


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


def label_words(row: Mapping[str, Any]) -> frozenset[str]:
    """A label row's droppable words, lower-cased: items are `{"word": ...}` objects (RULES.md)
    or plain strings (the two-annotator development set)."""
    return frozenset(
        (item if isinstance(item, str) else item["word"]).lower() for item in row["droppable"]
    )


def keyword_quality(
    problems: Sequence[Problem],
    labels: Mapping[str, Mapping[str, Any]],
    config: KeywordConfig,
    embedder: Embedder | None = None,
) -> KeywordQuality:
    """The pipeline's droppable words per problem against the labels."""
    analyses = analyze_keywords(problems, config, embedder)
    return scored_against_labels(labels, droppable_by_task(analyses))


def scored_against_labels(
    labels: Mapping[str, Mapping[str, Any]], predicted: Mapping[str, Sequence[str]]
) -> KeywordQuality:
    """Droppable keywords per task id (a phrase counts as its words) against one label set; a
    labelled problem missing from `predicted` counts as no words picked."""
    return KeywordQuality(
        tuple(
            ProblemQuality(
                task_id=task_id,
                dataset=label["dataset"],
                gold=label_words(label),
                predicted=predicted_words(predicted.get(task_id, ())),
            )
            for task_id, label in labels.items()
        )
    )


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


@dataclass(frozen=True)
class TwoAnnotatorProblem:
    """One problem of a set annotated twice: each annotator's words and the pipeline's."""

    task_id: str
    dataset: str
    first: frozenset[str]
    second: frozenset[str]
    predicted: frozenset[str]

    @property
    def consensus(self) -> frozenset[str]:
        return self.first & self.second

    @property
    def union(self) -> frozenset[str]:
        return self.first | self.second

    @property
    def missed(self) -> frozenset[str]:
        """Consensus words the pipeline does not pick."""
        return self.consensus - self.predicted

    @property
    def unsupported(self) -> frozenset[str]:
        """Picked words neither annotator chose."""
        return self.predicted - self.union


@dataclass(frozen=True)
class TwoAnnotatorScores:
    problems: int
    first_words: int
    second_words: int
    agreed_words: int
    consensus_found: int
    predicted_words: int
    predicted_in_union: int

    @property
    def agreement(self) -> float:
        """Pairwise F1 of the annotators (micro over the problems' words)."""
        total = self.first_words + self.second_words
        return 2 * self.agreed_words / total if total else 0.0

    @property
    def consensus_recall(self) -> float:
        return self.consensus_found / self.agreed_words if self.agreed_words else 0.0

    @property
    def precision_vs_union(self) -> float:
        return self.predicted_in_union / self.predicted_words if self.predicted_words else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "problems": self.problems,
            "words_first": self.first_words,
            "words_second": self.second_words,
            "words_both": self.agreed_words,
            "agreement_f1": round(self.agreement, 4),
            "predicted": self.predicted_words,
            "consensus_found": self.consensus_found,
            "predicted_in_union": self.predicted_in_union,
            "consensus_recall": round(self.consensus_recall, 4),
            "precision_vs_union": round(self.precision_vs_union, 4),
        }


@dataclass(frozen=True)
class TwoAnnotatorQuality:
    problems: tuple[TwoAnnotatorProblem, ...]

    @property
    def datasets(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.dataset for p in self.problems))

    def scores(self, dataset: str | None = None) -> TwoAnnotatorScores:
        """Micro-averaged over the problems of `dataset` (all when None)."""
        rows = [p for p in self.problems if dataset is None or p.dataset == dataset]
        return TwoAnnotatorScores(
            problems=len(rows),
            first_words=sum(len(p.first) for p in rows),
            second_words=sum(len(p.second) for p in rows),
            agreed_words=sum(len(p.consensus) for p in rows),
            consensus_found=sum(len(p.consensus & p.predicted) for p in rows),
            predicted_words=sum(len(p.predicted) for p in rows),
            predicted_in_union=sum(len(p.predicted & p.union) for p in rows),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "per_dataset": {d: self.scores(d).to_json() for d in self.datasets},
            "all": self.scores().to_json(),
            "problems": [
                {
                    "task_id": p.task_id,
                    "first": sorted(p.first),
                    "second": sorted(p.second),
                    "predicted": sorted(p.predicted),
                    "missed": sorted(p.missed),
                    "unsupported": sorted(p.unsupported),
                }
                for p in self.problems
            ],
        }


def two_annotator_quality(
    first: Mapping[str, Mapping[str, Any]],
    second: Mapping[str, Mapping[str, Any]],
    predicted: Mapping[str, Sequence[str]],
) -> TwoAnnotatorQuality:
    """Two independent label sets of the same problems against the pipeline's droppable
    keywords per task id (`predicted`; a phrase counts as its words). The sets must cover the
    same problems; a problem the pipeline did not analyze counts as no words picked."""
    if set(first) != set(second):
        only = sorted(set(first) ^ set(second))
        raise UserError(
            f"the two annotations do not cover the same problems ({', '.join(only[:5])} "
            "in one only); score a set annotated twice."
        )
    return TwoAnnotatorQuality(
        tuple(
            TwoAnnotatorProblem(
                task_id=task_id,
                dataset=row["dataset"],
                first=label_words(row),
                second=label_words(second[task_id]),
                predicted=predicted_words(predicted.get(task_id, ())),
            )
            for task_id, row in first.items()
        )
    )


def droppable_by_task(analyses: Iterable[KeywordAnalysis]) -> dict[str, list[str]]:
    """The droppable words per task id (each keyword's words and merged forms), as
    `two_annotator_quality` and `scored_against_labels` take them."""
    return {a.task_id: [w for d in a.droppable for w in d.words] for a in analyses}


def format_two_annotator_table(quality: TwoAnnotatorQuality) -> str:
    lines = [
        "| dataset | problems | words A / B / both | agreement F1 | picked words | "
        "consensus recall | precision vs union |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset in (*quality.datasets, None):
        s = quality.scores(dataset)
        lines.append(
            f"| {dataset or 'all'} | {s.problems} | {s.first_words} / {s.second_words} / "
            f"{s.agreed_words} | {s.agreement:.3f} | {s.predicted_words} | "
            f"{s.consensus_recall:.3f} | {s.precision_vs_union:.3f} |"
        )
    return "\n".join(lines)
