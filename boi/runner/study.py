"""`boi run` as a study (`RobustnessStudy`, driven by `benchmarks.study`), and the calls that
run it (`run_robustness`) or count what it would do (`estimate_run`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.common.errors import UserError
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash, portable_config, prompts_sha256
from benchmarks.common.rundir import RunDir, path_slug
from benchmarks.execution import execute_samples
from benchmarks.generation import GenerationCache, SamplingTotals, load_backend, sample_verb
from benchmarks.loaders import LoadResult
from benchmarks.problem import Problem, read_problems
from benchmarks.report import read_results
from benchmarks.study import (
    ClaimSpec,
    Estimate,
    SampleCounts,
    Shard,
    StudyOutcome,
    StudyRun,
    estimate_study,
    run_study,
)
from boi.runner.config import (
    RunConfig,
    content_digests,
    load_run_config,
    run_hash,
    run_identity,
    work_hash,
)
from boi.runner.report import build_run_report, summary_line
from boi.runner.stages import (
    _critic_gate,
    _perturb,
    _sample_setting,
    check_run_models,
    load_datasets,
)
from critic.similarity import read_similarities

__all__ = ["RobustnessStudy", "RunOutcome", "estimate_run", "run_robustness"]


class RobustnessStudy:
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
            digest=run_hash(config, digests),
            work_hash=work_hash(config, digests),
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

    def execute(self, run: StudyRun) -> StudyOutcome:
        config, out, log = self.config, run.path, run.log
        if self.reuse_generations:
            with GenerationCache(out / "generations.jsonl") as cache:
                for source in self.reuse_generations:
                    log(f"[boi run] reused {cache.import_from(source)} samples from {source}")
        with stage("perturb", log, run.timings, "boi run"):
            variants, dataset_of = _perturb(config, out, log, self._datasets)
        similarity: dict[str, float] = {}
        if config.critic.enabled:
            # Given completions are gated too: a table means the same whatever wrote its
            # completions, so an external model and a generated one compare on the same
            # variants (critic.enabled: false judges every variant the file answers).
            with stage("critic", log, run.timings, "boi run"):
                variants, similarity = _critic_gate(config, out, variants, log)
        owned = run.owned([v.source_task_id for v in variants])
        problems = {v.task_id: v for v in variants if owned(v.source_task_id)}
        results: list[dict[str, Any]] = []
        generation_totals = SamplingTotals()
        # Each model as generation knows it (a local folder's content digest, not its path).
        identities: dict[str, str] = {}
        verbs: set[str] = set()
        for spec in config.models:
            label = spec.label
            with stage(f"load {label}", log, run.timings, "boi run"):
                backend = load_backend(spec)
                # Every variant, not only a shard's: what a backend derives from the problems
                # (the reference backend's solution per prompt, its identity) is then the
                # whole run's.
                for note in backend.prepare(variants):
                    log(f"  {note}")
                identities[label] = backend.identity  # known once prepared (reference's)
                verbs.add(sample_verb(backend))
            for setting in config.settings:
                samples, totals = _sample_setting(
                    config, run.dir, backend, label, setting, problems, dataset_of, log
                )
                generation_totals.add(totals)
                results_path = out / "results" / label / f"{path_slug(setting.label)}.jsonl"
                with stage(f"execute {label} {setting.label}", log, run.timings, "boi run"):
                    report = execute_samples(
                        problems,
                        samples,
                        config.execution,
                        results_path,
                        progress=progress_bar(len(samples), f"execute {setting.label}"),
                    )
                log(f"  isolation: {report.summary.get('isolation', {}).get('level', 'unknown')}")
                results += report.results
        generation = generation_totals.to_json()
        # A file's samples are read, a model's generated; a run of both says generated.
        verb = verbs.pop() if len(verbs) == 1 else "generated"
        if run.shard is not None:
            # Every shard prepares every model on every variant, so each records them all,
            # and the merge keeps them.
            return StudyOutcome(out, "", "", generation, {"model_identities": identities})
        with stage("report", log, run.timings, "boi run"):
            outcome = self._outcome(out, results, problems, similarity, generation, verb)
        outcome.record["model_identities"] = identities
        return outcome

    def _outcome(
        self,
        out: Path,
        results: list[dict[str, Any]],
        problems: Mapping[str, Problem],
        similarity: Mapping[str, float],
        generation: dict[str, Any],
        verb: str = "generated",
    ) -> StudyOutcome:
        paths = build_run_report(self.config, out, results, problems, similarity)
        table = Path(paths.table_md).read_text(encoding="utf-8")
        summary = summary_line(out, Path(paths.table_json), results, generation, verb)
        # Inside the run directory, which is the run wherever it is moved.
        record = {
            "report": {
                k: None if v is None else os.path.relpath(v, out)
                for k, v in dataclasses.asdict(paths).items()
            }
        }
        return StudyOutcome(out, table, summary, generation, record, paths)

    def estimate(self, log: Callable[[str], None]) -> Estimate:
        """Generation is counted as the sampling loop does it: each distinct prompt text of a
        kind is generated n times per seed and setting, for every model; every variant's
        samples are executed. The perturbation runs (it decides the variants), the critic does
        not."""
        config = self.config
        variants, _ = _perturb(config, None, log, self._datasets)
        functions = [v.prompt for v in variants if not v.is_stdio]
        programs = [v.prompt for v in variants if v.is_stdio]
        counts = SampleCounts()
        for _ in config.models:
            for setting in config.settings:
                decoding = setting.decoding
                for prompts in (functions, programs):
                    counts += SampleCounts.sampled(
                        prompts, decoding.n, len(config.seeds), decoding.max_new_tokens
                    )
        gated = (
            " (before the critic gate, which can only remove variants)"
            if config.critic.enabled
            else ""
        )
        return Estimate.of(
            counts,
            units=f"variants: {len(variants)}{gated}",
            distinct_prompts=len(set(functions)) + len(set(programs)),
            executions=counts.requested,
            cells=f"{len(config.models)} models x {len(config.settings)} settings x "
            f"{len(config.seeds)} seeds",
        )

    def _variants(self, out: Path) -> tuple[list[Problem], dict[str, float]]:
        """The run's variants past the critic gate, and the critic's similarities, from its
        whole-run files."""
        config = self.config
        every = read_problems(out / "problems.jsonl")
        similarity = (
            read_similarities(out / "critic.jsonl", config.critic.measure)
            if config.critic.enabled
            else {}
        )
        rejected = {t for t, s in similarity.items() if s < config.critic.min_similarity}
        return [v for v in every if v.task_id not in rejected], similarity

    def row_order(self, out: Path, relative: str) -> Callable[[dict[str, Any]], Any]:
        """The unsharded run's order of a results file's rows: seed, then functions before
        programs, then the variant's place in the run, then the sample's index (see
        `prompt_groups` and `sample_prompts`)."""
        variants, _ = self._variants(out)
        seed_rank = {seed: i for i, seed in enumerate(self.config.seeds)}
        place = {v.task_id: (int(v.is_stdio), i) for i, v in enumerate(variants)}

        def key(row: dict[str, Any]) -> tuple[int, ...]:
            kind, position = place[row["task_id"]]
            return (seed_rank[row["seed"]], kind, position, int(row["sample_index"]))

        return key

    def report_from_files(self, run: RunDir, log: Callable[[str], None]) -> StudyOutcome:
        variants, similarity = self._variants(run.path)
        results: list[dict[str, Any]] = []
        for spec in self.config.models:
            for setting in self.config.settings:
                path = run.path / "results" / spec.label / f"{path_slug(setting.label)}.jsonl"
                if path.is_file():
                    results += read_results(path)
        generation = SamplingTotals().to_json()
        problems = {v.task_id: v for v in variants}
        outcome = self._outcome(run.path, results, problems, similarity, generation)
        if "model_identities" in self._recorded:
            outcome.record["model_identities"] = self._recorded["model_identities"]
        return outcome


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
    and writing nothing (`RobustnessStudy.estimate`)."""
    return estimate_study(
        RobustnessStudy(config), log, tokens_per_second=tokens_per_second, gpus=gpus
    )
