"""`boi run`: pass@k under each transformation, end to end.

datasets x transformations x models x decoding settings:
load -> perturb -> (critic gate) -> generate -> execute -> report, each stage the library
function of its own command, talking through files in one run directory:

    manifest.json          config, its hash, seeds, input hashes, versions, git, completed
    problems.jsonl         every variant (and the name-only probe), with lineage
    not_applied.jsonl      (task, transform, reason) for every transformation that did not apply
    critic.jsonl           critic scores and gate verdicts (when the critic is on)
    generations.jsonl      the generation cache (model, prompt hash, decoding, seed, index)
    results/<model>/<setting>.jsonl   executed samples (append-only, resumable)
    report/                table.md/.csv/.json, report.html

A rerun of the same config resumes: cached samples are not generated again and executed ones
not run again. A run directory holding a different config is refused.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.common.config import from_mapping, load_config, to_dict
from benchmarks.common.config import resolve_config_path as resolve_bundled
from benchmarks.common.errors import UserError
from benchmarks.common.http import unreachable
from benchmarks.common.jsonl import write_jsonl
from benchmarks.common.models import check_backends, check_local_model
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash
from benchmarks.common.rundir import RunDir, path_slug
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.generation import (
    PROGRAM_CHAT_INSTRUCTION,
    PROGRAM_STOP,
    Backend,
    BackendSpec,
    DecodingConfig,
    GenerationCache,
    PromptGroup,
    SamplingTotals,
    for_kind,
    load_backend,
    sample_prompts,
    unread_replies_warning,
)
from benchmarks.loaders import LoadResult, dataset_help, load_benchmark
from benchmarks.problem import Problem, read_problems
from benchmarks.report import ReportPaths, build_report, read_results
from benchmarks.report.sections import report_sections
from benchmarks.study import (
    ClaimSpec,
    Estimate,
    Shard,
    StudyOutcome,
    StudyRun,
    estimate_study,
    prompt_counts,
    run_study,
)
from critic.annotate import annotate_file
from critic.scoring import SCORERS, HFScorerConfig, load_scorer
from critic.similarity import PlausibilityGate, canonical_measure, read_similarities
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.keywords import KeywordConfig
from perturb.transforms import (
    CATALOGUE,
    bind_transforms,
    transform_baselines,
    transform_labels,
)


@dataclass(frozen=True)
class DatasetSpec:
    name: str = field(
        default="humaneval",
        metadata={"help": dataset_help()},
    )
    data: str | None = field(
        default=None,
        metadata={
            "help": "where to read the named dataset from (MBPP JSONL, CodeContests JSONL/Parquet)"
        },
    )
    task_ids: tuple[str, ...] = field(
        default=(), metadata={"help": "only these problems (empty: all)"}
    )
    limit: int | None = field(
        default=None, metadata={"help": "only the first N problems (after task_ids)"}
    )

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise UserError(
                f"datasets[].limit is {self.limit}; use a positive number or leave it out."
            )

    @property
    def label(self) -> str:
        return (
            Path(self.name).stem
            if ("/" in self.name or self.name.endswith(".jsonl"))
            else self.name
        )


@dataclass(frozen=True)
class SettingSpec:
    """One decoding setting and the pass@k reported for it."""

    label: str = field(
        default="T=0.2", metadata={"help": "the setting's name in tables and results paths"}
    )
    ks: tuple[int, ...] = field(
        default=(1,), metadata={"help": "pass@k reported for this setting (k <= samples)"}
    )
    decoding: DecodingConfig = field(
        default_factory=DecodingConfig, metadata={"help": "temperature, top-p, n, stops, chat"}
    )

    def __post_init__(self) -> None:
        if not self.ks or any(k < 1 for k in self.ks):
            raise UserError(
                f"settings[{self.label}].ks is {list(self.ks)}; give positive k values such as [1, 100]."
            )


@dataclass(frozen=True)
class CriticSpec:
    enabled: bool = field(
        default=False,
        metadata={
            "help": "score every variant with the LM critic and drop implausible ones before generation"
        },
    )
    kind: str = field(
        default="hf",
        metadata={
            "help": f"the critic scorer: {SCORERS.choices_help()} (hf: a local causal LM; "
            "endpoint: an OpenAI-compatible server that echoes prompt log-probabilities)"
        },
    )
    scorer: Any = field(
        default_factory=HFScorerConfig,
        metadata={
            "help": "the scorer's config: hf {model (HF id, path; None/embedded = SmolLM2-135M), "
            "batch_size, ...}; endpoint {url, model, batch_size, ...}"
        },
    )
    min_similarity: float = field(
        default=0.0,
        metadata={
            "help": "variants below this critic similarity (percent) are not generated (0: keep all, score only)"
        },
    )
    measure: str = field(
        default="similarity",
        metadata={"help": "similarity (total log-probability) or similarity_per_token"},
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "measure", canonical_measure(self.measure))
        config_class = SCORERS.load(self.kind).Config
        if isinstance(self.scorer, Mapping):
            object.__setattr__(
                self, "scorer", from_mapping(config_class, self.scorer, "critic.scorer")
            )
        elif not isinstance(self.scorer, config_class):
            keys = ", ".join(f.name for f in dataclasses.fields(config_class))
            raise UserError(
                f"critic.kind is {self.kind!r}: give critic.scorer as a mapping of its keys "
                f"({keys})."
            )


def _paper_settings() -> list[SettingSpec]:
    return [
        SettingSpec("T=0.2", (1,), DecodingConfig(temperature=0.2, top_p=0.95, n=10)),
        SettingSpec("T=0.8", (1, 100), DecodingConfig(temperature=0.8, top_p=0.95, n=100)),
    ]


@dataclass(frozen=True)
class RunConfig:
    """Everything `boi run` does; loadable from YAML (`--config`), overridable by flags."""

    out_dir: str = field(default="runs/default", metadata={"help": "the run directory"})
    datasets: list[DatasetSpec] = field(default_factory=lambda: [DatasetSpec()])
    transforms: tuple[str, ...] = field(
        default=CATALOGUE,
        metadata={"help": "catalogue entries to apply (see boi perturb --list)", "names": True},
    )
    anonymous_name: str = field(
        default="func", metadata={"help": "the name Anonymize gives the function"}
    )
    transform_params: dict[str, dict[str, Any]] = field(
        default_factory=dict,
        metadata={
            "help": "transformation name -> parameter overrides (PerturbConfig.params), e.g. "
            "{anonymize: {name: XYZ}}"
        },
    )
    keep_unchanged: bool = field(
        default=True,
        metadata={
            "help": "a transformation that does not apply to a problem (no droppable keyword, "
            "no examples) counts it unchanged, so every row of the table covers the same problems "
            "(paper Table 3); identical prompts are generated once. Off: such problems are left "
            "out of that row"
        },
    )
    keywords: KeywordConfig = field(default_factory=KeywordConfig)
    models: list[BackendSpec] = field(
        default_factory=lambda: [BackendSpec(kind="hf", model="embedded")]
    )
    settings: list[SettingSpec] = field(
        default_factory=_paper_settings,
        metadata={"help": "paper protocol: pass@1 at T=0.2, pass@100 at T=0.8 (top-p 0.95)"},
    )
    seeds: tuple[int, ...] = field(
        default=tuple(range(10)),
        metadata={
            "help": "each setting is sampled once per seed; samples of all seeds are pooled (paper: 10 seeds)"
        },
    )
    name_only_probe: bool = field(
        default=True,
        metadata={"help": "also generate from the name block alone (paper appendix 10.8)"},
    )
    critic: CriticSpec = field(default_factory=CriticSpec)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    bootstrap: int = field(
        default=1000,
        metadata={"help": "bootstrap resamples for the confidence intervals of relative drops"},
    )
    perturb_seed: int = field(
        default=0,
        metadata={"help": "seed of the perturbation stage and of the report's bootstrap"},
    )
    random_seeds: int = field(
        default=1,
        metadata={
            "help": "variants of each stochastic transformation, one per seed (ReCode: 10, its "
            "s0..s9); the report takes the worst case over them (PerturbConfig.random_seeds)"
        },
    )

    def __post_init__(self) -> None:
        bind_transforms(self.transforms, self.transform_params, self.anonymous_name)
        if "original" not in self.transforms:
            # Caught here, not after generating everything: the report measures every drop
            # against Original on the same problems.
            raise UserError(
                f"transforms {list(self.transforms)} lack 'original'; add it, drops are measured "
                "against it."
            )
        if self.bootstrap < 0:
            # Caught with the config, not by the report after generation and execution.
            raise UserError(
                f"bootstrap is {self.bootstrap}; use 0 for no confidence intervals or a "
                "positive number of resamples, e.g. 1000."
            )
        if not self.datasets or not self.models or not self.settings or not self.seeds:
            raise UserError("the run needs at least one dataset, model, setting and seed.")
        labels = [s.label for s in self.settings]
        if len(set(labels)) != len(labels):
            raise UserError(f"settings labels {labels} repeat; give each setting its own label.")
        if len(set(self.seeds)) != len(self.seeds):
            raise UserError(f"seeds {list(self.seeds)} repeat; list each once.")
        # Results, caches and table columns are keyed by the model's label: two models under
        # one label would mix their samples.
        model_labels = [m.label for m in self.models]
        repeated = sorted({label for label in model_labels if model_labels.count(label) > 1})
        if repeated:
            raise UserError(
                f"models share the label {repeated[0]!r}; give each model a distinct name or "
                "folder (the label is the backend kind and the model's last path part)."
            )
        for setting in self.settings:
            n = setting.decoding.n * len(self.seeds)
            too_big = [k for k in setting.ks if k > n]
            if too_big:
                raise UserError(
                    f"setting {setting.label}: k={too_big[0]} exceeds the {n} samples per problem (n={setting.decoding.n} x {len(self.seeds)} seeds); raise decoding.n or lower ks."
                )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = to_dict(self)
        return data


BUNDLED_CONFIGS = Path(__file__).parent / "configs"


def resolve_config_path(name_or_path: str | None) -> str | None:
    """A bundled config name (`demo`, `paper`) or a path, as a path."""
    return resolve_bundled(name_or_path, BUNDLED_CONFIGS)


def load_run_config(path: str | None, overrides: dict[str, Any]) -> RunConfig:
    """A RunConfig from YAML (if given) with top-level overrides applied on top."""
    return load_config(RunConfig, path, overrides)


# Options added after run directories existed, with the value that means what those runs did:
# at that value they are left out of the identity, so older directories still resume.
_LATER_OPTIONS = {"random_seeds": 1}


def run_identity(config: RunConfig) -> dict[str, Any]:
    """The config as far as it decides the run's numbers: each model without the options that
    only decide how requests travel (`BackendSpec.identity_mapping`: timeouts, concurrency,
    retries, a pool's servers). A run directory belongs to this, so it resumes after such an
    option changed (a dead server taken out of a pool)."""
    identity = {**config.to_json(), "models": [spec.identity_mapping() for spec in config.models]}
    for key, old_behaviour in _LATER_OPTIONS.items():
        if identity.get(key) == old_behaviour:
            del identity[key]
    return identity


def run_hash(config: RunConfig) -> str:
    """The run directory's config hash: of `run_identity`."""
    return config_hash(run_identity(config))


def work_hash(config: RunConfig) -> str:
    """The hash of what a run computes: its identity without where it is written. The shards
    of one run share it (each has its own out_dir), and `boi merge` checks it."""
    return config_hash({k: v for k, v in run_identity(config).items() if k != "out_dir"})


def check_run_models(config: RunConfig) -> None:
    """Every model the run will load or call can be reached (`check_backends`), the critic's
    scorer included: one sentence before any work, not an error after the perturbation and
    the critic (minutes on a CPU)."""
    check_backends(config.models)
    if config.critic.enabled:
        scorer = config.critic.scorer
        url = getattr(scorer, "url", None)
        if url and unreachable([url]):
            raise UserError(
                f"critic.scorer.url {url}: nothing answers there; start the scorer's server "
                "(or fix the URL, or set critic.enabled: false) before the run."
            )
        if not url and hasattr(scorer, "model"):
            check_local_model(
                scorer.model, getattr(scorer, "revision", None), what="critic.scorer.model"
            )


def _select(problems: list[Problem], spec: DatasetSpec) -> list[Problem]:
    if spec.task_ids:
        by_id = {p.task_id: p for p in problems}
        missing = [t for t in spec.task_ids if t not in by_id]
        if missing:
            raise UserError(
                f"dataset {spec.label}: task_ids {missing[:3]} are not in the dataset; check the ids (e.g. 'HumanEval/0')."
            )
        problems = [by_id[t] for t in spec.task_ids]
    return problems[: spec.limit] if spec.limit else problems


def _given_variants(problems: list[Problem], spec: DatasetSpec) -> list[Problem]:
    """A dataset of variants made elsewhere (`boi perturb --out`, ReCode's released files):
    every record already carries its lineage, so the run takes them as they are. task_ids and
    limit select source problems, with all their variants."""
    originals = [p for p in problems if p.transform == "original"]
    if not originals:
        raise UserError(
            f"dataset {spec.label} holds variants but no original problems; drops are measured "
            "against the originals, so include them (boi perturb writes them with the variants)."
        )
    kept = {p.task_id for p in _select(originals, spec)}
    return [p for p in problems if p.source_task_id in kept]


def _qualified(problem: Problem, label: str) -> Problem:
    """`problem` under the id `label:ID`, for a dataset whose ids an earlier one uses."""
    task_id = f"{label}:{problem.task_id}"
    return dataclasses.replace(problem, task_id=task_id, source_task_id=task_id)


def load_datasets(config: RunConfig) -> list[LoadResult]:
    """Every dataset of the run, loaded and its selection checked (task_ids in the dataset,
    originals among given variants): done before the run directory is claimed, so that a
    wrong path or id costs one sentence and the corrected command then runs, instead of
    meeting a manifest written for the mistaken config."""
    loaded = [load_benchmark(spec.name, spec.data) for spec in config.datasets]
    for spec, result in zip(config.datasets, loaded, strict=True):
        if any(p.lineage for p in result.problems):
            _given_variants(result.problems, spec)
        else:
            _select(result.problems, spec)
    return loaded


def _perturb(
    config: RunConfig,
    out: Path | None,
    log: Callable[[str], None],
    datasets: Sequence[LoadResult] = (),
) -> tuple[list[Problem], dict[str, str]]:
    """All variants of all datasets (+ the name-only probe); problem id -> dataset label.
    Written to `out` (problems.jsonl, not_applied.jsonl) unless it is None (a dry run).
    `datasets`: what `load_datasets` loaded (loaded here when empty)."""
    transforms = tuple(config.transforms) + (("name_only",) if config.name_only_probe else ())
    perturb_config = PerturbConfig(
        transforms,
        config.anonymous_name,
        config.perturb_seed,
        config.keywords,
        config.keep_unchanged,
        config.transform_params,
        config.random_seeds,
    )
    variants: list[Problem] = []
    dataset_of: dict[str, str] = {}
    sources: set[str] = set()  # the problems of the datasets so far
    not_applied = []
    for spec, loaded in zip(config.datasets, datasets or load_datasets(config), strict=True):
        for issue in loaded.issues:
            log(f"  {spec.label}: {issue.task_id}: {issue.reason}")
        if any(p.lineage for p in loaded.problems):
            given = _given_variants(loaded.problems, spec)
            sources.update(v.source_task_id for v in given)
            variants += given
            dataset_of.update({v.task_id: spec.label for v in given})
            names = Counter(v.transform for v in given)
            log(
                f"  {spec.label}: {len(given)} variants as given (not perturbed again); "
                + ", ".join(f"{name} {count}" for name, count in names.items())
            )
            continue
        selected = _select(loaded.problems, spec)
        if any(p.task_id in sources for p in selected):
            # The same problems with other tests (HumanEval and HumanEval+): the variants and
            # results of each dataset stay apart under ids of their own, and the prompts, being
            # identical, share their samples through the generation cache.
            selected = [_qualified(p, spec.label) for p in selected]
            log(
                f"  {spec.label}: task ids shared with an earlier dataset, taken as {spec.label}:ID"
            )
        sources.update(p.task_id for p in selected)
        result = run_catalogue(selected, perturb_config)
        for task_id, reason in result.split_failures.items():
            log(f"  {spec.label}: skipped {task_id}: {reason}")
        variants += result.variants
        dataset_of.update({v.task_id: spec.label for v in result.variants})
        not_applied += [
            {"dataset": spec.label, "task_id": t, "transform": n, "reason": r}
            for t, n, r in result.not_applied
        ]
        log(
            f"  {spec.label}: {len(result.variants)} variants of {len(selected)} problems; "
            + ", ".join(f"{row['transform']} {row['variants']}" for row in result.summary())
        )
    if out is not None:
        write_jsonl(
            out / "problems.jsonl",
            ({**v.to_json(), "dataset": dataset_of[v.task_id]} for v in variants),
        )
        write_jsonl(out / "not_applied.jsonl", not_applied)
    return variants, dataset_of


def _critic_gate(
    config: RunConfig, out: Path, variants: list[Problem], log: Callable[[str], None]
) -> tuple[list[Problem], dict[str, float]]:
    scored = [v for v in variants if v.transform != "name_only"]
    write_jsonl(out / "critic_input.jsonl", (v.to_json() for v in scored))
    scorer = load_scorer(config.critic.kind, config.critic.scorer)
    gate = PlausibilityGate(
        min_similarity=config.critic.min_similarity, measure=config.critic.measure
    )
    annotate_file(
        out / "critic_input.jsonl", out / "critic.jsonl", scorer, gate, log=lambda m: log("  " + m)
    )
    similarity = read_similarities(out / "critic.jsonl", config.critic.measure)
    rejected = {t for t, s in similarity.items() if s < config.critic.min_similarity}
    if rejected:
        log(
            f"  critic gate: {len(rejected)} variants below {config.critic.min_similarity}% similarity are not generated (see critic.jsonl)"
        )
    return [v for v in variants if v.task_id not in rejected], similarity


def prompt_groups(variants: Sequence[Problem], decoding: DecodingConfig) -> list[PromptGroup]:
    """The record decides how a prompt is completed: a function body (HumanEval's stops and
    instruction) or a whole stdin/stdout program (no stops but the model's end, a program
    instruction); each kind is generated with its own decoding."""
    functions = {v.task_id: v.prompt for v in variants if not v.is_stdio}
    programs = {v.task_id: v.prompt for v in variants if v.is_stdio}
    return [
        PromptGroup(functions, decoding, "functions"),
        PromptGroup(
            programs, for_kind(decoding, PROGRAM_STOP, PROGRAM_CHAT_INSTRUCTION), "programs"
        ),
    ]


def _sample_setting(
    config: RunConfig,
    run: RunDir,
    backend: Backend,
    label: str,
    setting: SettingSpec,
    problems: Mapping[str, Problem],
    dataset_of: Mapping[str, str],
    log: Callable[[str], None],
) -> tuple[list[dict[str, Any]], SamplingTotals]:
    """One model's samples under one setting (every seed), as rows for the sandbox."""
    generated, totals = sample_prompts(
        backend,
        prompt_groups(list(problems.values()), setting.decoding),
        config.seeds,
        run.path / "generations.jsonl",
        log=log,
        timings=run.timings,
        what=f"{label} {setting.label}",
        prefix="boi run",
    )
    unread = unread_replies_warning(generated, f"{label} ({setting.label})")
    if unread:
        log(f"  {unread}")
    elif totals.empty:
        # This model and setting's own empties, not the run's so far.
        log(
            f"  warning: {totals.empty} completions from {label} ({setting.label}) are "
            "empty after post-processing; they count as failures"
        )
    rows = [
        {
            "task_id": s.prompt_id, "completion": s.completion,
            "dataset": dataset_of[s.prompt_id], "model": label, "setting": setting.label,
            "seed": s.seed, "sample_index": s.sample_index,
            "source_task_id": problems[s.prompt_id].source_task_id,
            "transform": problems[s.prompt_id].transform, **s.reply_fields(),
        }
        for s in generated
    ]  # fmt: skip
    return rows, totals


class RobustnessStudy:
    """`boi run` as a study (`benchmarks.study`): its units are source problems (every variant
    of a problem in one shard), its cells every model x setting, each sampled over the seeds,
    executed in the sandbox and reported as pass@k per transformation."""

    command: ClassVar[str] = "boi run"
    # Written by every shard for the whole run, so identical in every shard.
    whole_run_files: ClassVar[tuple[str, ...]] = (
        "problems.jsonl", "not_applied.jsonl", "critic_input.jsonl", "critic.jsonl",
    )  # fmt: skip
    split_files: ClassVar[tuple[str, ...]] = ("results/*/*.jsonl",)

    def __init__(
        self, config: RunConfig, reuse_generations: Sequence[str | os.PathLike[str]] = ()
    ) -> None:
        self.config = config
        self.reuse_generations = [Path(p) for p in reuse_generations]
        self._datasets: list[LoadResult] = []

    @classmethod
    def from_config(cls, config_json: Mapping[str, Any]) -> RobustnessStudy:
        return cls(load_run_config(None, dict(config_json)))

    def claim_spec(self, out_dir: str) -> ClaimSpec:
        config = dataclasses.replace(self.config, out_dir=out_dir)
        return ClaimSpec(
            config=config.to_json(),
            digest=run_hash(config),
            work_hash=work_hash(config),
            inputs={d.label: d.data for d in config.datasets if d.data},
            record={"seeds": list(config.seeds)},
            # Written when the hash covered every option (before run_identity): still this run.
            also_accepted=(config_hash(config.to_json()),),
        )

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
            with stage("critic", log, run.timings, "boi run"):
                variants, similarity = _critic_gate(config, out, variants, log)
        owned = run.owned([v.source_task_id for v in variants])
        problems = {v.task_id: v for v in variants if owned(v.source_task_id)}
        results: list[dict[str, Any]] = []
        generation_totals = SamplingTotals()
        for spec in config.models:
            label = spec.label
            with stage(f"load {label}", log, run.timings, "boi run"):
                backend = load_backend(spec)
                # Every variant, not only a shard's: what a backend derives from the problems
                # (the reference backend's solution per prompt, its identity) is then the
                # whole run's.
                for note in backend.prepare(variants):
                    log(f"  {note}")
            for setting in config.settings:
                samples, totals = _sample_setting(config, run.dir, backend, label, setting, problems, dataset_of, log)  # fmt: skip
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
        if run.shard is not None:
            return StudyOutcome(out, "", "", generation)
        with stage("report", log, run.timings, "boi run"):
            return self._outcome(out, results, problems, similarity, generation)

    def _outcome(
        self,
        out: Path,
        results: list[dict[str, Any]],
        problems: Mapping[str, Problem],
        similarity: Mapping[str, float],
        generation: dict[str, Any],
    ) -> StudyOutcome:
        paths = build_run_report(self.config, out, results, problems, similarity)
        table = Path(paths.table_md).read_text(encoding="utf-8")
        summary = summary_line(out, Path(paths.table_json), results, generation)
        record = {"report": {k: str(v) for k, v in dataclasses.asdict(paths).items()}}
        return StudyOutcome(out, table, summary, generation, record, paths)

    def estimate(self, log: Callable[[str], None]) -> Estimate:
        """Generation is counted as the sampling loop does it: each distinct prompt text of a
        kind is generated n times per seed and setting, for every model; every variant's
        samples are executed. The perturbation runs (it decides the variants), the critic does
        not."""
        config = self.config
        variants, _ = _perturb(config, None, log)
        functions = [v.prompt for v in variants if not v.is_stdio]
        programs = [v.prompt for v in variants if v.is_stdio]
        distinct = len(set(functions)) + len(set(programs))
        requested = generations = prompt_tokens = output_tokens = 0
        for _ in config.models:
            for setting in config.settings:
                decoding = setting.decoding
                requested += len(variants) * decoding.n * len(config.seeds)
                for prompts in (functions, programs):
                    _, made, tokens, most = prompt_counts(
                        prompts, decoding.n, len(config.seeds), decoding.max_new_tokens
                    )
                    generations += made
                    prompt_tokens += tokens
                    output_tokens += most
        gated = (
            " (before the critic gate, which can only remove variants)"
            if config.critic.enabled
            else ""
        )
        return Estimate(
            units=f"variants: {len(variants)}{gated}",
            distinct_prompts=distinct,
            requested_samples=requested,
            generations=generations,
            prompt_tokens=prompt_tokens,
            max_output_tokens=output_tokens,
            executions=requested,
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
        return self._outcome(run.path, results, problems, similarity, generation)


def run_experiment(
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
    """Count what `run_experiment(config)` will generate and execute, generating, executing
    and writing nothing (`RobustnessStudy.estimate`)."""
    return estimate_study(
        RobustnessStudy(config), log, tokens_per_second=tokens_per_second, gpus=gpus
    )


def build_run_report(
    config: RunConfig,
    out: Path,
    results: list[dict[str, Any]],
    problems: Mapping[str, Problem],
    similarity: Mapping[str, float],
) -> ReportPaths:
    """The report of a run (or of merged shards): its settings' ks, bootstrap and seed."""
    return build_report(
        results,
        dict(problems),
        {s.label: list(s.ks) for s in config.settings},
        out / "report",
        critic=dict(similarity) or None,
        bootstrap=config.bootstrap,
        seed=config.perturb_seed,
        title=f"boi run {out.name}",
        labels=transform_labels(),
        baselines=transform_baselines(),
        sections=report_sections(out),
    )


def summary_line(
    out: Path, table_json: Path, results: Sequence[dict[str, Any]], generation: dict[str, int]
) -> str:
    """One line: what ran, and the first column's Original vs worst transformation."""
    table = json.loads(table_json.read_text(encoding="utf-8"))
    parts = [
        f"{len(results)} samples executed",
        f"{generation['generated']} generated ({generation['cache_hits']} from cache)",
    ]
    if table["columns"]:
        column = table["columns"][0]
        values = {
            row["transform"]: row["cells"][0]
            for row in table["rows"]
            if row["cells"][0].get("pass_at_k") is not None
        }
        original = values.get("original", {}).get("pass_at_k")
        perturbed = {t: c for t, c in values.items() if t not in ("original", "name_only")}
        label = f"pass@{column['k']} {column['dataset']}/{column['model']}/{column['setting']}"
        if original is not None and perturbed:
            worst = min(perturbed, key=lambda t: perturbed[t]["pass_at_k"])
            parts.append(
                f"{label}: original {100 * original:.1f}, worst {worst} {100 * perturbed[worst]['pass_at_k']:.1f}"
            )
    return f"boi run: {', '.join(parts)}; report: {out / 'report' / 'report.html'}"
