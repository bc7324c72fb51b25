"""The one reader of a run directory, any study's: `open_run(path) -> Run`.

A `Run` is a `benchmarks.study.reader.StudyDir`: every study's directory reads its manifest,
`study` and rows (`run.rows("verdicts/*/*/round*.jsonl")`, a `boi bias test`'s verdicts) the same
way. A `boi run` directory reads its data too, through the accessors below (asked of another
study's directory, they refuse in one sentence).

Every reader of a run directory (the Python API's `boi.open_run`, `boi report`, `boi rank`,
Table 4 and every `boi analyze` analysis) opens it here, through `RunDir.open`, and reads its
files through `Run`'s typed accessors instead of their own paths:

    run.config, .config_hash, .seeds, .versions, .timings, .completed   the manifest (RunDir)
    run.run_config                     the config as a RunConfig
    run.settings, run.models           its decoding settings and models (SettingSpec, BackendSpec)
    run.problems(), .problems_by_id()  originals and variants, with their lineage
    run.dataset_labels()               task id -> the dataset label its results carry
    run.results(model, setting)        executed samples (`results/<model>/<setting>.jsonl`)
    run.results_by_file(model, setting)  the same, per file
    run.outcomes(settings, seeds, models)  passed per sample, by (model, setting, task id)
    run.generation_records()           the generation cache (raw model outputs)
    run.critic_records(), .critic_similarities()  the critic's scores (critic.jsonl)
    run.report_table(), run.table()    the report's table.json, raw or as flat rows

A directory that is not a whole `boi run` this version can read (another command's, a newer
boi's, a shard of one, one without problems.jsonl) is refused in one sentence; old directories
(manifest format 1, results without `status`) read as they are.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar, cast

from benchmarks.common.config import from_mapping
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl
from benchmarks.common.rundir import path_slug, refuse_shard
from benchmarks.generation import BackendSpec
from benchmarks.problem import Problem, read_problems
from benchmarks.report import read_results, results_files
from benchmarks.study.reader import StudyDir
from boi.runner import RunConfig, SettingSpec
from critic.similarity import read_similarities

__all__ = ["Outcomes", "Run", "open_run", "refuse_shard"]

# The fields `Run.outcomes` needs of every result row.
RESULT_FIELDS = ("task_id", "passed", "model", "setting")


def open_run(path: str | os.PathLike[str] | Run) -> Run:
    """A run directory to read (finished or not), any study's: every one reads its rows and
    manifest (`benchmarks.study.reader.StudyDir`), a `boi run`'s its data too. One sentence when
    it is not one (not a run, a newer boi's, a shard of one), or when a `boi run` reading is asked
    of another study's. A `Run` is returned as it is."""
    if isinstance(path, Run):
        return path
    # RunDir.open builds its own class: a Run.
    # Any study's, though the sentences ask for what most readers want: a `boi run`.
    run = cast(
        Run,
        Run.open(path, what=ROBUSTNESS, hint="pass the --out of a `boi run`", any_study=True),
    )
    if run.study != ROBUSTNESS:
        return run
    if not run.problems_path.is_file() and not run.completed:
        # A run stopped before its perturbation wrote problems.jsonl (killed, or refused a
        # model or a file after its claim): nothing to read yet, and nothing incompatible.
        raise UserError(
            f"{run.path} is a `boi run` that stopped before it wrote problems.jsonl; rerun the "
            "same `boi run` command to finish it, then read it."
        )
    if not run.problems_path.is_file():
        raise UserError(
            f"{run.path} was written by an incompatible boi version (no problems.jsonl); rerun "
            "`boi run` into a new directory."
        )
    return run


ROBUSTNESS = "boi run"

_T = TypeVar("_T")


def _robustness(read: Callable[..., _T]) -> Callable[..., _T]:
    """A reading only a `boi run` directory has: another study's is refused in one sentence."""

    @functools.wraps(read)
    def checked(self: Run, *args: Any, **kwargs: Any) -> _T:
        if self.study != ROBUSTNESS:
            raise UserError(
                f"{self.path} is a `{self.study}` directory, not a `boi run` one; pass the --out "
                "of a `boi run`."
            )
        return read(self, *args, **kwargs)

    return checked


@dataclass(frozen=True)
class Outcomes:
    """Which samples passed, as the analyses judge a problem (`benchmarks.robustness.solved`)."""

    passed: dict[tuple[str, str, str], list[bool]]
    """(model, setting, task id) -> passed, one per sample, in file order."""
    datasets: dict[str, str]
    """task id -> the dataset label its results carry ("" where they carry none)."""


class Run(StudyDir):
    """A `boi run` directory, read only: the manifest's typed accessors (`config`,
    `config_hash`, `seeds`, `versions`, `timings`, `completed`, ...) plus its data. Open one
    with `open_run` (`boi.open_run`)."""

    # ------------------------------------------------------------------ files

    @property
    @_robustness
    def problems_path(self) -> Path:
        return self.path / "problems.jsonl"

    @property
    def generations_path(self) -> Path:
        """The run's generation cache (samples made for it, reused by analyses)."""
        return self.path / "generations.jsonl"

    @property
    @_robustness
    def critic_path(self) -> Path:
        return self.path / "critic.jsonl"

    @_robustness
    def results_files(self, model: str | None = None, setting: str | None = None) -> list[Path]:
        """The results files present (`results/<model>/<setting>.jsonl`), sorted, of one model
        and one setting (labels) when given."""
        root = self.path / "results"
        return [
            path
            for path in results_files(self.path)
            if (model is None or path.parent == root / model)
            and (setting is None or path.name == f"{path_slug(setting)}.jsonl")
        ]

    # ------------------------------------------------------------------ config

    @cached_property
    @_robustness
    def run_config(self) -> RunConfig:
        """The manifest's config as a RunConfig; one sentence when it does not load."""
        try:
            return from_mapping(RunConfig, self.config, "config")
        except UserError as err:
            raise UserError(
                f"{self.path} was written by an incompatible boi version (its manifest's config "
                f"does not load: {str(err).rstrip('.')}); rerun boi run into a new directory."
            ) from None

    @cached_property
    def _specs(self) -> tuple[list[SettingSpec], list[BackendSpec]]:
        incompatible = UserError(
            f"{self.path} was written by an incompatible boi version (its manifest's models or "
            "settings do not load); rerun `boi run` into a new directory."
        )
        config = self.config
        try:
            settings = [
                from_mapping(SettingSpec, s, f"settings[{i}]")
                for i, s in enumerate(config["settings"])
            ]
            models = [
                BackendSpec.from_mapping(m, f"models[{i}]") for i, m in enumerate(config["models"])
            ]
        except (KeyError, TypeError, AttributeError, UserError):
            raise incompatible from None
        if not settings or not models:
            raise incompatible
        return settings, models

    @property
    def settings(self) -> list[SettingSpec]:
        """The run's decoding settings, in config order (each read on its own, so a config key
        this version does not know elsewhere does not matter)."""
        return list(self._specs[0])

    @property
    def models(self) -> list[BackendSpec]:
        """The run's models, in config order."""
        return list(self._specs[1])

    def loadable(self, spec: BackendSpec, instead: str = "") -> BackendSpec:
        """`spec`, one of the run's models, once it can be loaded from here: a local model
        folder is recorded by its name only (a manifest keeps no machine's paths), so one that
        is not found from this working directory is one sentence (`instead`: another way the
        caller offers), not a hub download of that name that fails on the connection."""
        identity = str((self.manifest.get("model_identities") or {}).get(spec.label, ""))
        if f"{spec.model}#sha256:" in identity and not Path(str(spec.model)).expanduser().is_dir():
            raise UserError(
                f"{self.path} was generated by a local model folder recorded as {spec.model!r} "
                "(a manifest keeps no machine's path), and there is none here; run this from the "
                f"folder the run was made in{instead}."
            )
        return spec

    # ------------------------------------------------------------------ problems

    @cached_property
    @_robustness
    def _problems(self) -> tuple[Problem, ...]:
        return tuple(read_problems(self.problems_path))

    def problems(self) -> list[Problem]:
        """Every problem the run generated from: originals and variants, with their lineage."""
        return list(self._problems)

    def problems_by_id(self) -> dict[str, Problem]:
        """task id -> problem, in problems.jsonl order."""
        return {p.task_id: p for p in self._problems}

    def dataset_labels(self) -> dict[str, str]:
        """task id -> the label of the dataset it came from, as the run names it (the results'
        `dataset`; "" where problems.jsonl records none)."""
        return {
            str(row["task_id"]): str(row.get("dataset") or "")
            for _, row in iter_jsonl(self.problems_path)
        }

    # ------------------------------------------------------------------ results

    @_robustness
    def results(self, model: str | None = None, setting: str | None = None) -> list[dict[str, Any]]:
        """Every executed sample (`results/<model>/<setting>.jsonl`): task_id, transform,
        model, setting, seed, completion, passed, status, result, duration, ...; of one model
        and one setting (labels) when given. The whole run's are one sentence when it has none."""
        if model is None and setting is None:
            return read_results(self.path)
        return [row for rows in self.results_by_file(model, setting).values() for row in rows]

    @_robustness
    def results_by_file(
        self, model: str | None = None, setting: str | None = None
    ) -> dict[Path, list[dict[str, Any]]]:
        """The samples of each results file (`results_files`), each row given its `status`."""
        return {path: read_results(path) for path in self.results_files(model, setting)}

    @_robustness
    def outcomes(
        self, settings: Sequence[str] = (), seeds: Sequence[int] = (), models: Sequence[str] = ()
    ) -> Outcomes:
        """Passed per sample by (model, setting, task id), of `settings`, `seeds` and `models`
        only when given; a results file's torn last line (a killed run) is skipped. One
        sentence when the run has no results or they are not a version this one reads."""
        problems = self.problems_by_id()
        paths = results_files(self.path)
        if not paths:
            raise UserError(
                f"{self.path} has no results yet (results/<model>/<setting>.jsonl); finish its "
                "boi run first."
            )
        passed: dict[tuple[str, str, str], list[bool]] = {}
        datasets: dict[str, str] = {}
        for path in paths:
            for lineno, row in iter_jsonl(path, tolerate_torn_tail=True):
                missing = [f for f in RESULT_FIELDS if f not in row]
                if missing:
                    raise UserError(
                        f"{path} line {lineno} has no {missing[0]!r} field: the run directory "
                        "was written by an incompatible boi version; rerun boi run into a new one."
                    )
                if row["task_id"] not in problems:
                    raise UserError(
                        f"{path} line {lineno} names task {row['task_id']!r}, which its "
                        "problems.jsonl lacks; the run directory is damaged, rerun boi run into "
                        "a new one."
                    )
                if (
                    (settings and row["setting"] not in settings)
                    or (seeds and row.get("seed") not in seeds)
                    or (models and row["model"] not in models)
                ):
                    continue
                key = (str(row["model"]), str(row["setting"]), row["task_id"])
                passed.setdefault(key, []).append(bool(row["passed"]))
                datasets.setdefault(row["task_id"], str(row.get("dataset") or ""))
        return Outcomes(passed, datasets)

    # ------------------------------------------------------------------ generations, critic

    def generation_records(self) -> Iterator[dict[str, Any]]:
        """The generation cache's records (model identity, prompt hash, decoding, index, raw
        output, ...); none when the run has no cache. A torn last line is skipped."""
        if self.generations_path.is_file():
            for _, record in iter_jsonl(self.generations_path, tolerate_torn_tail=True):
                yield record

    @_robustness
    def critic_records(self) -> Iterator[dict[str, Any]]:
        """critic.jsonl's records (prompt, task id, critic scores, gate verdict); none when the
        run's critic was off. A torn last line is skipped."""
        if self.critic_path.is_file():
            for _, record in iter_jsonl(self.critic_path, tolerate_torn_tail=True):
                yield record

    def critic_similarities(self, measure: str = "similarity") -> dict[str, float]:
        """Variant task id -> critic similarity (percent) by `measure`; empty when the run's
        critic was off."""
        return read_similarities(self.critic_path, measure) if self.critic_path.is_file() else {}

    # ------------------------------------------------------------------ report

    @_robustness
    def report_table(self) -> dict[str, Any]:
        """The report's table (`report/table.json`) as written: columns, rows of cells, flips,
        ...; one sentence when the run has no report yet."""
        path = self.path / "report" / "table.json"
        if not path.is_file():
            raise UserError(
                f"{self.path} has no report yet (report/table.json); let its run finish, or "
                f"build it with `boi report {self.path}`."
            )
        table: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return table

    def table(self) -> list[dict[str, Any]]:
        """The report's table (`report/table.json`) as one flat row per transformation and
        column: dataset, model, setting, k, transform, label, pass_at_k, its interval, the drop
        relative to Original, ... (fractions, as in table.csv). `pandas.DataFrame(run.table())`
        gives the long-format frame."""
        table = self.report_table()
        return [
            {**column, "transform": row["transform"], "label": row["label"], **cell}
            for row in table["rows"]
            for column, cell in zip(table["columns"], row["cells"], strict=True)
            if cell is not None
        ]
