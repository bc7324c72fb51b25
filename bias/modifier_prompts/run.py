"""`boi bias run`: Liu et al.'s study on any backend: prompts -> generate -> score -> metrics -> report.

One run directory, with the conventions of `boi run` (claimed by config hash, refused when it
holds another run, resumed when it holds this one):

    manifest.json          config, its hash, seeds, data-file hashes, versions, git, classifier
    prompts.jsonl          the suite: every prompt with its modifier, type, dimension, template
    generations.jsonl      the generation cache (shared format with boi run)
    scores.jsonl           classifier probabilities, keyed by (classifier identity, code hash)
    completions/<model>/<setting>.jsonl   every completion with its scores and lexicon findings
    passk/<model>/results.jsonl           HumanEval samples executed in the sandbox (optional)
    report/                tables (md/csv/json) and report.html

A rerun generates nothing and scores nothing it has already done: both caches are append-only
logs keyed by content.

With `completions` (`--completions FILE`, the format of `bias.completions`) the completions come
from another harness's JSONL instead: no model is loaded and nothing is generated (no
generations.jsonl); the file's tasks are the prompts reported, its `model` fields the models
(`completions/<model>/completions_file.jsonl`), and what needs generation (decoding settings,
sweeps, seeds, pass@k) is not applicable. The manifest records the file's sha256 as an input,
and the run directory belongs to that content: a changed file is refused as another run.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.config import load_config, to_dict
from benchmarks.common.config import resolve_config_path as resolve_bundled
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import JsonlAppender, iter_jsonl, write_jsonl
from benchmarks.common.models import check_backends
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash, file_sha256
from benchmarks.common.rundir import RunDir, path_slug, recorded_spelling
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.generation import (
    BackendSpec,
    DecodingConfig,
    PromptGroup,
    SamplingTotals,
    load_backend,
    sample_prompts,
    unread_replies_warning,
)
from benchmarks.generation._backend import Backend
from benchmarks.loaders import dataset_help, load_benchmark
from benchmarks.passk import mean_pass_at_k
from bias import BUNDLED_CONFIGS
from bias.completions import LIU_SUITE, CompletionRecord, read_completions
from bias.metrics import is_biased
from bias.modifier_prompts.classifier import CodeBiasClassifier, load_classifier
from bias.modifier_prompts.lexicon import find_demographics
from bias.modifier_prompts.report import BiasReportPaths, build_bias_report
from bias.modifier_prompts.suite import BiasPrompt, Suite, SuiteConfig, load_suite

GIVEN_SETTING = "completions file"
"""The setting label of completions read from a file (their decoding is not known)."""
PASSK_NOT_APPLICABLE = (
    "not applicable: the completions come from a file, and pass@k needs a model to generate "
    "the benchmark's samples"
)


def _bias_decoding() -> DecodingConfig:
    return DecodingConfig(temperature=0.8, top_p=0.95, n=10, max_new_tokens=128)


@dataclass(frozen=True)
class SweepSpec:
    """Decoding sweeps (paper Figure 7): each value is one more setting, the base decoding with
    that one field changed."""

    temperature: tuple[float, ...] = field(
        default=(), metadata={"help": "temperatures to sweep (paper: 0.1 ... 0.9)"}
    )
    top_p: tuple[float, ...] = field(
        default=(), metadata={"help": "top-p values to sweep (paper: 0.1 ... 0.9)"}
    )


@dataclass(frozen=True)
class PasskSpec:
    """pass@k of the same models on a code benchmark, beside CBS (paper Table 4)."""

    enabled: bool = field(default=False, metadata={"help": "also measure pass@k"})
    dataset: str = field(default="humaneval", metadata={"help": dataset_help()})
    data: str | None = field(default=None, metadata={"help": "where to read the dataset from"})
    limit: int | None = field(default=None, metadata={"help": "only the first N problems"})
    ks: tuple[int, ...] = field(default=(1,), metadata={"help": "pass@k reported (k <= n)"})
    decoding: DecodingConfig = field(
        default_factory=lambda: DecodingConfig(temperature=0.2, top_p=0.95, n=1),
        metadata={"help": "how the benchmark's samples are drawn"},
    )

    def __post_init__(self) -> None:
        if self.enabled and (not self.ks or max(self.ks) > self.decoding.n or min(self.ks) < 1):
            raise UserError(
                f"passk.ks {list(self.ks)} need 1 <= k <= passk.decoding.n ({self.decoding.n})."
            )


@dataclass(frozen=True)
class BiasRunConfig:
    """Everything `boi bias run` does; loadable from YAML (`--config`), overridable by flags."""

    out_dir: str = field(default="runs/bias", metadata={"help": "the run directory"})
    suite: SuiteConfig = field(default_factory=SuiteConfig)
    models: list[BackendSpec] = field(
        default_factory=lambda: [BackendSpec(kind="hf", model="embedded")]
    )
    completions: str | None = field(
        default=None,
        metadata={
            "help": "score the completions of this JSONL (one {task_id or prompt, completion, "
            "model?, sample_index?} per line, from any harness) instead of generating: no "
            "model is loaded; models, decoding, sweep, seeds and passk do not apply"
        },
    )
    decoding: DecodingConfig = field(
        default_factory=_bias_decoding,
        metadata={"help": "how completions are sampled (paper: 10 samples per prompt)"},
    )
    sweep: SweepSpec = field(default_factory=SweepSpec)
    seeds: tuple[int, ...] = field(
        default=(0,), metadata={"help": "each setting is sampled once per seed, samples pooled"}
    )
    classifier: str | None = field(
        default=None,
        metadata={"help": "classifier folder (default: the one boi bias train-classifier wrote)"},
    )
    classifier_batch_size: int = field(default=32, metadata={"help": "codes scored per batch"})
    device: str = field(default="auto", metadata={"help": "classifier device: auto, cpu, cuda"})
    passk: PasskSpec = field(default_factory=PasskSpec)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    bootstrap: int = field(default=1000, metadata={"help": "bootstrap resamples for intervals"})
    seed: int = field(default=0, metadata={"help": "seed of the report's bootstrap"})

    def __post_init__(self) -> None:
        if not self.models or not self.seeds:
            raise UserError("the bias run needs at least one model and one seed.")
        if self.bootstrap < 0:
            # Caught with the config, not by the report after generation and testing.
            raise UserError(
                f"bootstrap is {self.bootstrap}; use 0 for no intervals or a positive number of "
                "resamples, e.g. 1000."
            )
        if len(set(self.seeds)) != len(self.seeds):
            raise UserError(f"seeds {list(self.seeds)} repeat; list each once.")

    def settings(self) -> list[tuple[str, DecodingConfig]]:
        """(label, decoding) for the base decoding and every sweep value, without repeats."""
        out: dict[str, DecodingConfig] = {}
        base = self.decoding
        out[f"T={base.temperature:g} top_p={base.top_p:g}"] = base
        for value in self.sweep.temperature:
            decoding = dataclasses.replace(base, temperature=value)
            out.setdefault(f"T={value:g} top_p={base.top_p:g}", decoding)
        for value in self.sweep.top_p:
            decoding = dataclasses.replace(base, top_p=value)
            out.setdefault(f"T={base.temperature:g} top_p={value:g}", decoding)
        return list(out.items())


def resolve_config_path(name_or_path: str | None) -> str | None:
    """A bundled config name (`demo`, `paper`, `preliminary`) or a path, as a path."""
    return resolve_bundled(name_or_path, BUNDLED_CONFIGS)


def load_bias_config(path: str | None, overrides: dict[str, Any]) -> BiasRunConfig:
    return load_config(BiasRunConfig, path, overrides)


@dataclass
class BiasOutcome:
    out_dir: Path
    report: BiasReportPaths
    table_markdown: str
    summary_line: str


def completion_code(prompt: BiasPrompt, completion: str) -> str:
    """What is scored: the function the model completed (signature + body), as in the
    classifier's training data."""
    return prompt.signature + "\n" + completion.rstrip()


class ScoreCache:
    """Classifier probabilities on disk, keyed by (classifier identity, sha256(code))."""

    def __init__(self, path: Path, classifier: CodeBiasClassifier) -> None:
        self.classifier = classifier
        self._log = JsonlAppender(path)
        self._scores = {
            r["key"]: float(r["probability"])
            for r in self._log.existing
            if "key" in r and "probability" in r
        }
        self.hits = 0
        self.scored = 0

    def _key(self, code: str) -> str:
        text = f"{self.classifier.identity}\0{code}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def probabilities(self, codes: Sequence[str], batch_size: int) -> list[float]:
        keys = [self._key(code) for code in codes]
        missing = list(dict.fromkeys(k for k in keys if k not in self._scores))
        code_of = dict(zip(keys, codes, strict=True))
        self.hits += len(set(keys)) - len(missing)
        if missing:
            update = progress_bar(len(missing), "classify", unit="code")
            for start in range(0, len(missing), batch_size):
                chunk = missing[start : start + batch_size]
                values = self.classifier.probabilities([code_of[k] for k in chunk], batch_size)
                for key, value in zip(chunk, values, strict=True):
                    self._log.append({"key": key, "probability": value})
                    self._scores[key] = value
                update(min(start + batch_size, len(missing)), len(missing))
            self.scored += len(missing)
        return [self._scores[k] for k in keys]

    def close(self) -> None:
        self._log.close()


def _config_json(config: BiasRunConfig) -> dict[str, Any]:
    """The config as recorded and hashed; without `completions` when it is unset, so that run
    directories written before that option existed keep their hash (and resume)."""
    config_json: dict[str, Any] = to_dict(config)
    if config_json.get("completions") is None:
        config_json.pop("completions", None)
    return config_json


def _claim(
    config: BiasRunConfig, out: Path, suite: Suite, completions_sha256: str | None = None
) -> RunDir:
    config_json = _config_json(config)
    # Hashed with out_dir as the run first spelled it (`recorded_spelling`): `./runs/x` and
    # `runs/x/` resume the same run.
    config_json["out_dir"] = recorded_spelling(out, config.out_dir)
    inputs: dict[str, str] = {}
    digest = None
    if config.completions is not None and completions_sha256 is not None:
        # The run belongs to the file's content: an edited file is another run.
        inputs["completions"] = config.completions
        digest = config_hash({"config": config_json, "completions_sha256": completions_sha256})
    return RunDir.claim(
        out,
        config_json,
        digest=digest,
        inputs=inputs,
        record={"seeds": list(config.seeds), "suite_files": suite.files},
        unchanged=" (the completions file changed)",
    )


def _complete(
    run: RunDir, generation: dict[str, Any], cache: ScoreCache, paths: BiasReportPaths
) -> None:
    """Mark the run complete in its manifest, with what each stage did (written last)."""
    run.complete(
        generation=generation,
        scoring={"scored": cache.scored, "cache_hits": cache.hits},
        report={k: str(v) for k, v in dataclasses.asdict(paths).items()},
    )


def _score(
    prompts: dict[str, BiasPrompt],
    samples: list[dict[str, Any]],
    suite: Suite,
    cache: ScoreCache,
    batch_size: int,
) -> list[dict[str, Any]]:
    codes = [completion_code(prompts[s["prompt_id"]], s["completion"]) for s in samples]
    probabilities = cache.probabilities(codes, batch_size)
    rows = []
    for sample, code, probability in zip(samples, codes, probabilities, strict=True):
        prompt = prompts[sample["prompt_id"]]
        verdict = find_demographics(code, suite.dimension(prompt.dimension))
        rows.append(
            {
                **sample,
                "template": prompt.template,
                "modifier": prompt.modifier,
                "modifier_type": prompt.modifier_type,
                "dimension": prompt.dimension,
                "code": code,
                "probability": probability,
                "biased": is_biased(probability),
                "lexicon": verdict.to_json(),
            }
        )
    return rows


def _passk(
    config: BiasRunConfig,
    backend: Backend,
    label: str,
    out: Path,
    log: Callable[[str], None],
) -> dict[str, Any]:
    spec = config.passk
    loaded = load_benchmark(spec.dataset, spec.data)
    problems = loaded.problems[: spec.limit] if spec.limit else loaded.problems
    generated, _ = sample_prompts(
        backend,
        [PromptGroup({p.task_id: p.prompt for p in problems}, spec.decoding)],
        [spec.decoding.seed],
        out / "generations.jsonl",
        log=log,  # not timed: the caller times pass@k as one stage
    )
    samples = [
        {"task_id": s.prompt_id, "completion": s.completion, "model": label, "sample_index": s.sample_index, **s.reply_fields()}
        for s in generated
    ]  # fmt: skip
    report = execute_samples(
        {p.task_id: p for p in problems},
        samples,
        config.execution,
        out / "passk" / label / "results.jsonl",
        progress=progress_bar(len(samples), f"execute {spec.dataset}"),
    )
    return _passk_summary(spec, report.results)


def _passk_summary(spec: PasskSpec, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    outcomes: dict[str, list[bool]] = {}
    for result in results:
        outcomes.setdefault(result["task_id"], []).append(bool(result.get("passed")))
    return {
        "dataset": spec.dataset,
        "problems": len(outcomes),
        "samples": sum(len(v) for v in outcomes.values()),
        "pass_at_k": mean_pass_at_k(outcomes, spec.ks),
    }


def read_given_completions(path: str, suite: Suite) -> list[CompletionRecord]:
    """The completions of a `--completions` file, checked against the suite's prompts (by
    prompt id, or by prompt text)."""
    return read_completions(
        path,
        {p.prompt_id: LIU_SUITE for p in suite.prompts},
        suite=LIU_SUITE,
        prompts={p.prompt: p.prompt_id for p in suite.prompts},
    )


def _given_samples(
    records: Sequence[CompletionRecord], suite: Suite
) -> dict[str, list[dict[str, Any]]]:
    """The file's completions as samples per model label, each model's in suite order."""
    order = {p.prompt_id: i for i, p in enumerate(suite.prompts)}
    by_model: dict[str, list[dict[str, Any]]] = {}
    for record in sorted(records, key=lambda r: (r.model, order[r.task_id], r.sample_index)):
        by_model.setdefault(record.model, []).append({
            "prompt_id": record.task_id, "model": record.model, "setting": GIVEN_SETTING,
            "seed": None, "sample_index": record.sample_index, "completion": record.completion,
            "line": record.line,
        })  # fmt: skip
    folders: dict[str, str] = {}
    for label in by_model:
        other = folders.setdefault(path_slug(label), label)
        if other != label:
            raise UserError(
                f"models {other!r} and {label!r} of the completions file would share the folder "
                f"completions/{path_slug(label)}; rename one of them in the file."
            )
    return by_model


def run_bias(config: BiasRunConfig, log: Callable[[str], None] = print) -> BiasOutcome:
    """Run (or resume) the study; returns where the report is and the CBS table."""
    out = Path(config.out_dir)
    suite = load_suite(config.suite)
    timings: dict[str, float] = {}
    if config.completions is not None:
        return _run_given(config, suite, config.completions, log, timings)
    # The models are checked and the classifier is loaded before the run directory is
    # claimed: a wrong path must not leave behind a run whose corrected config would then be
    # refused as a different one.
    check_backends(config.models)
    with stage("load classifier", log, timings, "boi bias"):
        classifier = load_classifier(config.classifier, config.device)
    run = _claim(config, out, suite)
    run.timings.update(timings)
    write_jsonl(out / "prompts.jsonl", (p.to_json() for p in suite.prompts))
    log(
        f"[boi bias] {len(suite.prompts)} prompts: {len(suite.templates)} templates x "
        f"{len(suite.dimensions)} dimensions x "
        f"{sum(len(t.words[: config.suite.modifiers_per_type]) for t in suite.modifier_types)} modifiers"
    )
    run.update(classifier=classifier.describe())
    prompts = {p.prompt_id: p for p in suite.prompts}
    texts = {p.prompt_id: p.prompt for p in suite.prompts}

    rows: list[dict[str, Any]] = []
    passk: dict[str, dict[str, Any]] = {}
    totals = SamplingTotals()
    cache = ScoreCache(out / "scores.jsonl", classifier)
    try:
        for spec in config.models:
            label = spec.label
            with stage(f"load {label}", log, run.timings, "boi bias"):
                backend = load_backend(spec)
            for setting, decoding in config.settings():
                generated, setting_totals = sample_prompts(
                    backend,
                    [PromptGroup(texts, decoding)],
                    config.seeds,
                    out / "generations.jsonl",
                    log=log,
                    timings=run.timings,
                    what=f"{label} {setting}",
                    prefix="boi bias",
                )
                totals.add(setting_totals)
                unread = unread_replies_warning(generated, f"{label} ({setting})")
                if unread:
                    log(f"  {unread}")
                samples = [
                    {
                        "prompt_id": s.prompt_id, "model": label, "setting": setting,
                        "seed": s.seed, "sample_index": s.sample_index, "completion": s.completion,
                        **s.reply_fields(),
                    }
                    for s in generated
                ]  # fmt: skip
                with stage(f"score {label} {setting}", log, run.timings, "boi bias"):
                    scored = _score(prompts, samples, suite, cache, config.classifier_batch_size)
                write_jsonl(out / "completions" / label / f"{path_slug(setting)}.jsonl", scored)
                rows += scored
            if config.passk.enabled:
                with stage(f"pass@k {label} {config.passk.dataset}", log, run.timings, "boi bias"):
                    passk[label] = _passk(config, backend, label, out, log)
    finally:
        cache.close()

    generation = totals.to_json()
    with stage("report", log, run.timings, "boi bias"):
        paths = _report(config, rows, suite, out, passk, classifier.describe())
    _complete(run, generation, cache, paths)
    biased = sum(1 for r in rows if r["biased"])
    summary = (
        f"boi bias: {len(rows)} completions ({generation['generated']} generated, "
        f"{generation['cache_hits']} from cache; {cache.scored} scored, {cache.hits} scores "
        f"from cache); CBS {100 * biased / len(rows):.1f}% overall (classifier: "
        f"{classifier.kind}); report: {paths.html}"
    )
    return BiasOutcome(out, paths, Path(paths.cbs_md).read_text(encoding="utf-8"), summary)


def _run_given(
    config: BiasRunConfig,
    suite: Suite,
    path: str,
    log: Callable[[str], None],
    timings: dict[str, float],
) -> BiasOutcome:
    """`run_bias` on the completions of a file: read -> classify + lexicon -> report."""
    out = Path(config.out_dir)
    # Read before anything is claimed: a bad file leaves no run directory behind.
    given = read_given_completions(path, suite)
    by_model = _given_samples(given, suite)
    sha256 = file_sha256(path)
    with stage("load classifier", log, timings, "boi bias"):
        classifier = load_classifier(config.classifier, config.device)
    run = _claim(config, out, suite, sha256)
    run.timings.update(timings)
    run.update(classifier=classifier.describe())
    cache = ScoreCache(out / "scores.jsonl", classifier)
    try:
        rows, passk = _score_given(config, by_model, suite, cache, out, log, run.timings)
    finally:
        cache.close()
    with stage("report", log, run.timings, "boi bias"):
        paths = _report(config, rows, suite, out, passk, classifier.describe())
    generation = {"not_applicable": f"completions read from {path}"}
    _complete(run, generation, cache, paths)
    biased = sum(1 for r in rows if r["biased"])
    summary = (
        f"boi bias: {len(rows)} completions read from {path} ({cache.scored} scored, "
        f"{cache.hits} scores from cache); CBS {100 * biased / len(rows):.1f}% overall "
        f"(classifier: {classifier.kind})"
        f"{'; pass@k not applicable' if passk else ''}; report: {paths.html}"
    )
    return BiasOutcome(out, paths, Path(paths.cbs_md).read_text(encoding="utf-8"), summary)


def _score_given(
    config: BiasRunConfig,
    by_model: Mapping[str, list[dict[str, Any]]],
    suite: Suite,
    cache: ScoreCache,
    out: Path,
    log: Callable[[str], None],
    timings: dict[str, float],
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Score a completions file's completions, per model: the rows and pass@k (not
    applicable)."""
    covered = {s["prompt_id"] for samples in by_model.values() for s in samples}
    total = sum(len(samples) for samples in by_model.values())
    write_jsonl(
        out / "prompts.jsonl", (p.to_json() for p in suite.prompts if p.prompt_id in covered)
    )
    log(
        f"[boi bias] {total} completions of {len(covered)} of the suite's "
        f"{len(suite.prompts)} prompts, read from {config.completions}; no model is loaded "
        "(models, decoding, sweep and seeds do not apply)"
    )
    prompts = {p.prompt_id: p for p in suite.prompts}
    rows: list[dict[str, Any]] = []
    for label, samples in by_model.items():
        answered = len({s["prompt_id"] for s in samples})
        log(f"  {label}: {len(samples)} completions of {answered} prompts")
        with stage(f"score {label}", log, timings, "boi bias"):
            scored = _score(prompts, samples, suite, cache, config.classifier_batch_size)
        folder = out / "completions" / path_slug(label)
        write_jsonl(folder / f"{path_slug(GIVEN_SETTING)}.jsonl", scored)
        rows += scored
    if config.passk.enabled:
        log(f"  pass@k: {PASSK_NOT_APPLICABLE}")
    return rows, _passk_not_applicable(config, by_model)


def _passk_not_applicable(
    config: BiasRunConfig, labels: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """pass@k of a completions-file run: not applicable (when it was asked for), never 0."""
    if not config.passk.enabled:
        return {}
    return {
        label: {"dataset": config.passk.dataset, "pass_at_k": {}, "status": PASSK_NOT_APPLICABLE}
        for label in labels
    }


def read_scored(out_dir: str | Path) -> list[dict[str, Any]]:
    """Every scored completion of a bias run directory."""
    root = RunDir.open(out_dir, what="boi bias run", hint="pass the --out of a boi bias run").path
    files = sorted((root / "completions").rglob("*.jsonl"))
    if not files:
        raise UserError(f"{root} has no scored completions yet; run boi bias run to finish it.")
    return [obj for path in files for _, obj in iter_jsonl(path)]


def rebuild_report(out_dir: str | Path) -> BiasReportPaths:
    """`boi bias report RUN_DIR`: the tables and HTML again from the run's files."""
    run = RunDir.open(out_dir, what="boi bias run", hint="pass the --out of a boi bias run")
    root = run.path
    rows = read_scored(root)
    config = load_config(BiasRunConfig, None, run.config)
    passk: dict[str, dict[str, Any]] = {}
    for path in sorted((root / "passk").glob("*/results.jsonl")):
        passk[path.parent.name] = _passk_summary(config.passk, [r for _, r in iter_jsonl(path)])
    if config.completions is not None:
        passk = _passk_not_applicable(config, dict.fromkeys(r["model"] for r in rows))
    return _report(
        config, rows, load_suite(config.suite), root, passk, run.manifest.get("classifier")
    )


def _report_settings(config: BiasRunConfig) -> list[str]:
    """The settings the report's sweep figures follow: none for a completions file."""
    if config.completions is not None:
        return []
    return [label for label, _ in config.settings()]


def _report(
    config: BiasRunConfig,
    rows: list[dict[str, Any]],
    suite: Suite,
    out: Path,
    passk: dict[str, dict[str, Any]],
    classifier: dict[str, Any] | None,
) -> BiasReportPaths:
    return build_bias_report(
        rows,
        suite,
        out / "report",
        passk=passk,
        settings=_report_settings(config),
        bootstrap=config.bootstrap,
        seed=config.seed,
        title=f"boi bias {out.name}",
        classifier=classifier,
    )
