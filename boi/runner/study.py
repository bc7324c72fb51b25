"""`boi run` as a study (`RobustnessStudy`, driven by `benchmarks.study`), and the calls that
run it (`run_robustness`) or count what it would do (`estimate_run`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.common.errors import UserError
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash, portable_config, prompts_sha256
from benchmarks.common.rundir import RunDir, path_slug
from benchmarks.execution import execute_samples
from benchmarks.generation import (
    Backend,
    BackendSpec,
    GenerationCache,
    Sample,
    SamplingTotals,
    unread_replies_warning,
)
from benchmarks.loaders import LoadResult
from benchmarks.problem import Problem
from benchmarks.report import results_files
from benchmarks.study import (
    GENERATIONS,
    Cell,
    ClaimSpec,
    Estimate,
    SampleCounts,
    Shard,
    Study,
    StudyOutcome,
    StudyRun,
    estimate_study,
    run_study,
)
from boi.runner.config import (
    RunConfig,
    content_digests,
    load_run_config,
    run_identity,
)
from boi.runner.report import build_run_report, read_run_report_inputs, summary_line
from boi.runner.stages import (
    _critic_gate,
    _perturb,
    check_run_models,
    load_datasets,
    prompt_groups,
)

__all__ = ["RobustnessStudy", "RunOutcome", "estimate_run", "run_robustness"]


class RobustnessStudy(Study):
    """`boi run` as a study (`benchmarks.study`): its units are source problems (every variant
    of a problem in one shard), its cells every model x setting, each sampled over the seeds,
    executed in the sandbox and reported as pass@k per transformation."""

    command: ClassVar[str] = "boi run"
    # Written by every shard for the whole run, so identical in every shard.
    whole_run_files: ClassVar[tuple[str, ...]] = (
        "problems.jsonl",
        "not_applied.jsonl",
        "reference_failures.jsonl",
        "critic_input.jsonl",
        "critic.jsonl",
    )
    split_files: ClassVar[tuple[str, ...]] = ("results/*/*.jsonl",)

    def __init__(
        self,
        config: RunConfig,
        reuse_generations: Sequence[str | os.PathLike[str]] = (),
        recorded: Mapping[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.reuse_generations = [Path(p) for p in reuse_generations]
        self._datasets: list[LoadResult] = []
        self._variants: list[Problem] = []
        self._dataset_of: dict[str, str] = {}
        self._identities: dict[str, str] = {}
        # The manifest this study was rebuilt from (a shard's, for the merge), or None.
        self._recorded = dict(recorded or {})

    @classmethod
    def from_config(
        cls, config_json: Mapping[str, Any], recorded: Mapping[str, Any] | None = None
    ) -> RobustnessStudy:
        return cls(load_run_config(None, dict(config_json)), recorded=recorded)

    def _digests(self) -> dict[str, Any]:
        """What the identity hashes of the files' content: as the manifest this study was
        rebuilt from recorded it (its config names files outside the working directory by
        their last part only, so reading a file by that name could read another one), else
        read from the files."""
        recorded = self._recorded.get("content_digests")
        return dict(recorded) if isinstance(recorded, dict) else content_digests(self.config)

    def claim_spec(self, out_dir: str) -> ClaimSpec:
        config = dataclasses.replace(self.config, out_dir=out_dir)
        digests = self._digests()
        return ClaimSpec(
            config=config.to_json(),
            identity=run_identity(config, digests=digests),
            inputs={
                **{d.label: d.data for d in config.datasets if d.data},
                **(
                    {"keyword_file": config.perturb.keyword_file}
                    if config.perturb.keyword_file
                    else {}
                ),
            },
            record={
                "seeds": list(config.seeds),
                **self._prompt_digests(),
                "content_digests": digests,
            },
            # Written when the hash covered every option (before run_identity), or its paths as
            # typed (before they were recorded portably): still this run.
            also_accepted=(
                config_hash(config.flat_json()),
                config_hash(run_identity(config, portable=False, digests=digests)),
            ),
            recorded=portable_config(config.to_json()),
        )

    def _prompt_digests(self) -> dict[str, Any]:
        """Each dataset's prompts as loaded, digested (`prompts_sha256`): two machines that
        load the same dataset record the same digest (known after `load`; a study rebuilt
        from a manifest, which loads nothing, keeps the recorded ones)."""
        if not self._datasets:
            recorded = self._recorded.get("prompts_sha256")
            return {"prompts_sha256": recorded} if recorded else {}
        return {
            "prompts_sha256": {
                spec.label: prompts_sha256(loaded.dataset_prompts)
                for spec, loaded in zip(self.config.datasets, self._datasets, strict=True)
            }
        }

    def load(self, log: Callable[[str], None]) -> None:
        check_run_models(self.config)  # a wrong model fails now, not after perturbation
        for source in self.reuse_generations:
            if not source.is_file():
                raise UserError(
                    f"--reuse-generations {source} is not a file; pass another run's generations.jsonl."
                )
        self._datasets = load_datasets(self.config)

    def prepare(self, run: StudyRun | None, log: Callable[[str], None]) -> None:
        """The perturbation (the variants), then the critic gate: the whole-run files. The
        estimate perturbs without writing and does not gate (the gate can only remove)."""
        config = self.config
        if run is None:
            self._variants, self._dataset_of = _perturb(config, None, log, self._datasets)
            return
        out, timings = run.path, run.timings
        if self.reuse_generations:
            with GenerationCache(out / GENERATIONS) as cache:
                for source in self.reuse_generations:
                    log(f"[boi run] reused {cache.import_from(source)} samples from {source}")
        with stage("perturb", log, timings, "boi run"):
            self._variants, self._dataset_of = _perturb(config, out, log, self._datasets)
        if config.critic.enabled:
            # Given completions are gated too: a table means the same whatever wrote its
            # completions, so an external model and a generated one compare on the same
            # variants (critic.enabled: false judges every variant the file answers).
            with stage("critic", log, timings, "boi run"):
                self._variants, _ = _critic_gate(config, out, self._variants, log)

    def units(self) -> list[str]:
        """Source problems: every variant of a problem in one shard."""
        return [v.source_task_id for v in self._variants]

    def cells(self) -> Iterator[Cell]:
        config = self.config
        unit_of = {v.task_id: v.source_task_id for v in self._variants}
        for spec in config.models:
            for setting in config.settings:
                yield Cell(
                    spec.label,
                    setting.label,
                    tuple(prompt_groups(self._variants, setting.decoding)),
                    tuple(config.seeds),
                    unit_of,
                    spec,
                )

    def backend_ready(self, spec: BackendSpec, backend: Backend, run: StudyRun) -> None:
        # Every variant, not only a shard's: what a backend derives from the problems (the
        # reference backend's solution per prompt, its identity) is then the whole run's.
        for note in backend.prepare(self._variants):
            run.log(f"  {note}")
        self._identities[spec.label] = backend.identity  # known once prepared (reference's)

    def judge(self, cell: Cell, samples: list[Sample], run: StudyRun) -> list[dict[str, Any]]:
        """Every sample run in the sandbox against its variant's tests."""
        problems = {v.task_id: v for v in self._variants}
        rows = [
            {
                "task_id": s.prompt_id,
                "completion": s.completion,
                "dataset": self._dataset_of[s.prompt_id],
                "model": cell.model,
                "setting": cell.setting,
                "seed": s.seed,
                "sample_index": s.sample_index,
                "source_task_id": problems[s.prompt_id].source_task_id,
                "transform": problems[s.prompt_id].transform,
                **s.reply_fields(),
                "ordinal": list(s.ordinal or ()),
            }
            for s in samples
        ]
        unread = unread_replies_warning(samples, f"{cell.model} ({cell.setting})")
        if unread:
            run.log(f"  {unread}")
        path = run.path / "results" / cell.model / f"{path_slug(cell.setting)}.jsonl"
        with stage(f"execute {cell.model} {cell.setting}", run.log, run.timings, "boi run"):
            report = execute_samples(
                problems,
                rows,
                self.config.execution,
                path,
                progress=progress_bar(len(rows), f"execute {cell.setting}"),
            )
        run.log(f"  isolation: {report.summary.get('isolation', {}).get('level', 'unknown')}")
        return report.results

    def record(self) -> dict[str, Any]:
        # Each model as generation knows it (a local folder's content digest, not its path);
        # every shard prepares every model on every variant, so each records them all, and a
        # merge keeps them.
        identities = self._identities or self._recorded.get("model_identities")
        return {"model_identities": identities} if identities is not None else {}

    def describe(self, counts: SampleCounts, cells: Sequence[Cell]) -> Estimate:
        """Every variant's samples are executed; the critic does not run (it can only remove
        variants)."""
        config = self.config
        gated = (
            " (before the critic gate, which can only remove variants)"
            if config.critic.enabled
            else ""
        )
        groups = prompt_groups(self._variants, config.settings[0].decoding) if cells else []
        return Estimate.of(
            counts,
            units=f"variants: {len(self._variants)}{gated}",
            distinct_prompts=sum(len(set(g.prompts.values())) for g in groups),
            executions=counts.requested,
            cells=f"{len(config.models)} models x {len(config.settings)} settings x "
            f"{len(config.seeds)} seeds",
        )

    def report(
        self, run: RunDir, generation: Mapping[str, Any], log: Callable[[str], None]
    ) -> StudyOutcome:
        """pass@k per transformation from the results files (after a run or a merge)."""
        config, out = self.config, run.path
        # Read as `boi report` and every analysis read it: one path to a run's report.
        results, problems, similarity = (
            read_run_report_inputs(config, out) if results_files(out) else ([], {}, {})
        )
        totals = {k: v for k, v in generation.items() if k != "verb"} or (
            SamplingTotals().to_json()
        )
        paths = build_run_report(config, out, results, problems, similarity)
        table = Path(paths.table_md).read_text(encoding="utf-8")
        verb = str(generation.get("verb", "generated"))
        summary = summary_line(out, Path(paths.table_json), results, totals, verb)
        # Inside the run directory, which is the run wherever it is moved.
        record = {
            "report": {
                k: None if v is None else os.path.relpath(v, out)
                for k, v in dataclasses.asdict(paths).items()
            }
        }
        return StudyOutcome(out, table, summary, totals, record, paths)


def run_robustness(
    config: RunConfig,
    log: Callable[[str], None] = print,
    shard: Shard | None = None,
    reuse_generations: Sequence[str | os.PathLike[str]] = (),
) -> StudyOutcome:
    """Run (or resume) `boi run`'s study; returns where the report is and its table.

    With `shard`, generate and execute only the shard's problems (every variant of a problem
    lands in one shard); the perturbation and the critic still see every problem, so each
    shard's problems.jsonl and critic.jsonl are the whole run's, and `boi merge` writes the
    report from the shards. `reuse_generations`: other runs' generation caches whose samples
    this run's cache takes before generating (`GenerationCache.import_from`: only samples of
    the same model, prompt and decoding are ever used), e.g. a run over HumanEval reused by one
    over HumanEval and HumanEval+.
    """
    return run_study(RobustnessStudy(config, reuse_generations), shard=shard, log=log)


RunOutcome = StudyOutcome
"""`boi run`'s outcome: the study driver's."""


def estimate_run(
    config: RunConfig,
    log: Callable[[str], None] = print,
    *,
    tokens_per_second: float | None = None,
    gpus: int = 1,
) -> Estimate:
    """Count what `run_robustness(config)` will generate and execute, generating, executing
    and writing nothing (`estimate_study` over its cells)."""
    return estimate_study(
        RobustnessStudy(config), log, tokens_per_second=tokens_per_second, gpus=gpus
    )
