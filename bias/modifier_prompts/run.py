"""`boi bias run`: Liu et al.'s study on any backend: prompts -> generate -> score -> metrics -> report.

One run directory, with the conventions of `boi run` (claimed by config hash, refused when it
holds another run, resumed when it holds this one):

    manifest.json          config, its hash, seeds, data-file hashes, versions, git, classifier
    prompts.jsonl          the suite: every prompt with its modifier, type, dimension, template
    generations.jsonl      the generation cache (shared format with boi run)
    scores.jsonl           classifier probabilities, keyed by (classifier identity, code hash)
    completions/<model>/<setting>.jsonl   every completion with its scores and lexicon findings
    passk/<model>/results.jsonl           HumanEval samples executed in the sandbox (optional)
    passk_problems.jsonl   the pass@k benchmark's task ids in its order (with pass@k)
    inputs/modifiers.yaml, inputs/dimensions.yaml, inputs/templates.yaml
                           the suite files the run used, byte for byte (`suite.PART` inputs)
    report/                tables (md/csv/json) and report.html

The manifest names a file outside the working directory by its last part only, so `boi bias
report` and `boi merge` never follow a recorded path: they read the suite from the run's own
copies (checked against the sha256 the manifest's inputs record) and the pass@k order from
passk_problems.jsonl.

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
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.common.atomic import write_bytes_atomic
from benchmarks.common.config import load_config, to_dict
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import KeyedLog, iter_jsonl, write_jsonl
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import (
    file_sha256,
    portable_config,
    portable_path,
)
from benchmarks.common.rundir import MANIFEST, RunDir, path_slug
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.generation import (
    Backend,
    BackendSpec,
    DecodingConfig,
    PromptGroup,
    Sample,
    check_models,
    unread_replies_warning,
)
from benchmarks.loaders import dataset_help, load_benchmark
from benchmarks.passk import mean_pass_at_k
from benchmarks.problem import Problem
from benchmarks.study import (
    Cell,
    ClaimSpec,
    Estimate,
    SampleCounts,
    Study,
    StudyOutcome,
    StudyRun,
    cell_counts,
    identity_hashes,
    run_study,
)
from benchmarks.study.reader import StudyDir, open_study
from bias.completions import LIU_SUITE, CompletionRecord, GivenCompletions, read_completions
from bias.metrics import is_biased
from bias.modifier_prompts.classifier import CodeBiasClassifier, load_classifier
from bias.modifier_prompts.lexicon import find_demographics
from bias.modifier_prompts.report import BiasReportPaths, build_bias_report
from bias.modifier_prompts.suite import (
    SUITE_PARTS,
    BiasPrompt,
    Suite,
    SuiteConfig,
    load_suite,
    suite_paths,
    with_suite_files,
)

GIVEN_SETTING = "completions file"
"""The setting label of completions read from a file (their decoding is not known)."""
PASSK_NOT_APPLICABLE = (
    "not applicable: the completions come from a file, and pass@k needs a model to generate "
    "the benchmark's samples"
)


# Why a run keeps copies: its manifest names a suite file or the pass@k data outside the working
# directory by its last part only (no machine's path), so a report or merge that reloaded them
# by that name would find nothing, or a same-named file where it runs. The run directory holds
# what they need instead: each suite file byte for byte (a few kB of YAML; the report needs the
# whole suite: lexicon, modifier types, templates), its sha256 the manifest's input
# `suite.PART`; and of the pass@k benchmark only its task order (all the merge needs of it: a
# dataset may be large, a folder, or a name only the machine that ran has). Whole-run files, so
# every shard writes them and the merge checks and copies them like prompts.jsonl.
SUITE_COPIES = {part: f"inputs/{part}.yaml" for part in SUITE_PARTS}
"""Where a run keeps each suite file it used (relative to the run), by part."""
PASSK_SETTING = "pass@k"
"""The setting of a model's pass@k cell (its samples go to passk/<model>/results.jsonl)."""
PASSK_ORDER = "passk_problems.jsonl"
"""The pass@k benchmark's task ids in the benchmark's order (a merge's row order)."""


def _suite_input(part: str) -> str:
    """The manifest's `inputs` name of a suite file."""
    return f"suite.{part}"


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


def load_bias_config(path: str | None, overrides: dict[str, Any]) -> BiasRunConfig:
    return load_config(BiasRunConfig, path, overrides)


BiasOutcome = StudyOutcome
"""`boi bias run`'s outcome: the study driver's (`report` holds the BiasReportPaths)."""


def completion_code(prompt: BiasPrompt, completion: str) -> str:
    """What is scored: the function the model completed (signature + body), as in the
    classifier's training data."""
    return prompt.signature + "\n" + completion.rstrip()


class ScoreCache:
    """Classifier probabilities on disk, keyed by (classifier identity, sha256(code))."""

    def __init__(self, path: Path, classifier: CodeBiasClassifier) -> None:
        self.classifier = classifier
        self._log = KeyedLog(
            path,
            lambda r: r["key"] if "key" in r and "probability" in r else None,
            lambda r: float(r["probability"]),
        )
        self.hits = 0
        self.scored = 0

    def _key(self, code: str) -> str:
        text = f"{self.classifier.identity}\0{code}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def probabilities(self, codes: Sequence[str], batch_size: int) -> list[float]:
        keys = [self._key(code) for code in codes]
        missing = list(dict.fromkeys(k for k in keys if k not in self._log))
        code_of = dict(zip(keys, codes, strict=True))
        self.hits += len(set(keys)) - len(missing)
        if missing:
            update = progress_bar(len(missing), "classify", unit="code")
            for start in range(0, len(missing), batch_size):
                chunk = missing[start : start + batch_size]
                values = self.classifier.probabilities([code_of[k] for k in chunk], batch_size)
                for key, value in zip(chunk, values, strict=True):
                    self._log.put(key, value, {"key": key, "probability": value})
                update(min(start + batch_size, len(missing)), len(missing))
            self.scored += len(missing)
        return [float(self._log.get(k)) for k in keys]

    def close(self) -> None:
        self._log.close()


def _config_json(config: BiasRunConfig) -> dict[str, Any]:
    """The config as recorded and hashed; without `completions` when it is unset, so that run
    directories written before that option existed keep their hash (and resume)."""
    config_json: dict[str, Any] = to_dict(config)
    if config_json.get("completions") is None:
        config_json.pop("completions", None)
    return config_json


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


def _passk_problems(spec: PasskSpec) -> list[Problem]:
    """The pass@k benchmark's problems the config selects."""
    loaded = load_benchmark(spec.dataset, spec.data)
    return loaded.problems[: spec.limit] if spec.limit else loaded.problems


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


def _check_folders(models: Iterable[str]) -> None:
    """Each of a completions file's models writes its own folder."""
    folders: dict[str, str] = {}
    for label in models:
        other = folders.setdefault(path_slug(label), label)
        if other != label:
            raise UserError(
                f"models {other!r} and {label!r} of the completions file would share the folder "
                f"completions/{path_slug(label)}; rename one of them in the file."
            )


class ModifierStudy(Study):
    """`boi bias run` as a study (`benchmarks.study`): its units are the suite's prompts (and
    the pass@k benchmark's problems), its cells every model x decoding setting (the sweeps),
    each sampled over the seeds, classified and read by the lexicon, reported as CBS/UFS/SD.
    With `completions`, the file's models are the models and its tasks the prompts."""

    command: ClassVar[str] = "boi bias run"
    log_prefix: ClassVar[str] = "boi bias"
    whole_run_files: ClassVar[tuple[str, ...]] = (
        "prompts.jsonl",
        *SUITE_COPIES.values(),
        PASSK_ORDER,
    )
    split_files: ClassVar[tuple[str, ...]] = ("completions/*/*.jsonl", "passk/*/results.jsonl")

    def __init__(self, config: BiasRunConfig, recorded: Mapping[str, Any] | None = None) -> None:
        self.config = config
        self.suite: Suite | None = None
        self.classifier: CodeBiasClassifier | None = None
        self._given: GivenCompletions | None = None
        self._given_sha256: str | None = None
        self._passk_problems: list[Problem] = []
        self._scoring = {"scored": 0, "cache_hits": 0}
        # The manifest this study was rebuilt from (a shard's, for the merge), or None.
        self._recorded = dict(recorded or {})

    @classmethod
    def from_config(
        cls, config_json: Mapping[str, Any], recorded: Mapping[str, Any] | None = None
    ) -> ModifierStudy:
        return cls(load_config(BiasRunConfig, None, dict(config_json)), recorded)

    def _sha256(self) -> str | None:
        if self.config.completions is None:
            return None
        if self._given_sha256 is None:
            # Rebuilt from a manifest: the file's digest as the run recorded it (its config
            # names the file by its last part, which need not name it here).
            entry = (self._recorded.get("inputs") or {}).get("completions") or {}
            self._given_sha256 = entry.get("sha256") or file_sha256(self.config.completions)
        return self._given_sha256

    def claim_spec(self, out_dir: str) -> ClaimSpec:
        config_json = {**_config_json(self.config), "out_dir": out_dir}
        # Recorded and hashed with portable paths (no machine's absolute path): the run is the
        # same run from its manifest alone, wherever it is merged or resumed.
        recorded = portable_config(config_json)
        sha256 = self._sha256()

        content = None if sha256 is None else {"completions_sha256": sha256}
        # The run belongs to the file's content: an edited file is another run.
        inputs = {"completions": self.config.completions} if sha256 is not None else {}
        # The suite files by content (the run keeps copies of them, checked against these).
        inputs |= {_suite_input(part): str(p) for part, p in suite_paths(self.config.suite).items()}
        return ClaimSpec(
            config=config_json,
            identity=recorded,
            content=content,
            inputs={k: v for k, v in inputs.items() if v is not None},
            record={"seeds": list(self.config.seeds), "suite_files": self._suite_files()},
            unchanged=" (the completions file changed)",
            # Written with the paths as typed (before they were recorded portably): still this
            # run, so older directories resume.
            also_accepted=(identity_hashes(config_json, content)[0],),
            recorded=recorded,
        )

    def _suite_files(self) -> dict[str, str]:
        """Which data file each part of the suite came from, with its digest: as loaded, or as
        the manifest this study was rebuilt from recorded it (the recorded config names a file
        outside the working directory by its last part only)."""
        if self.suite is None and isinstance(self._recorded.get("suite_files"), dict):
            return dict(self._recorded["suite_files"])
        return (self.suite or load_suite(self.config.suite)).files

    def _classifier_record(self) -> dict[str, Any]:
        """The classifier as the manifest and the report name it (its folder portably)."""
        assert self.classifier is not None
        return dict(portable_config(self.classifier.describe()))

    def _read_inputs(self) -> None:
        """The suite, a completions file's completions, the pass@k benchmark's problems."""
        config = self.config
        self.suite = load_suite(config.suite)
        if config.completions is not None:
            # Read before anything is claimed: a bad file leaves no run directory behind.
            given = GivenCompletions(
                config.completions, read_given_completions(config.completions, self.suite)
            )
            _check_folders(given.models)
            self._given = given
            self._sha256()
        elif config.passk.enabled:
            self._passk_problems = _passk_problems(config.passk)

    def load(self, log: Callable[[str], None]) -> None:
        config = self.config
        if config.completions is None:
            # The models are checked and the classifier is loaded before the run directory is
            # claimed: a wrong path must not leave behind a run whose corrected config would
            # then be refused as a different one.
            check_models(config.models, config.seeds)
        self._read_inputs()
        timings: dict[str, float] = {}
        with stage("load classifier", log, timings, "boi bias"):
            self.classifier = load_classifier(config.classifier, config.device)

    def _keep_inputs(self, run: RunDir) -> None:
        """Copy the suite files into the run (`SUITE_COPIES`) and write the pass@k order
        (`PASSK_ORDER`): what the report and a merge read instead of a recorded name."""
        assert self.suite is not None
        for part, path in suite_paths(self.config.suite).items():
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            loaded = self.suite.files[part].rsplit("sha256:", 1)[-1]
            recorded = (run.inputs.get(_suite_input(part)) or {}).get("sha256")
            if digest != recorded or not digest.startswith(loaded):
                raise UserError(
                    f"{path} changed while the run started (its sha256 is not the one "
                    f"{run.path / MANIFEST} records); leave it unchanged and rerun the command."
                )
            write_bytes_atomic(run.path / SUITE_COPIES[part], data)
        if self._passk_problems:
            write_jsonl(
                run.path / PASSK_ORDER, ({"task_id": p.task_id} for p in self._passk_problems)
            )

    def prepare(self, run: StudyRun | None, log: Callable[[str], None]) -> None:
        """The suite's copies, the pass@k order and the prompts reported (the whole-run files),
        and the classifier the run records."""
        if self.suite is None:
            self._read_inputs()  # the estimate's: the models and classifier are not loaded
        suite, config = self.suite, self.config
        assert suite is not None
        if run is None:
            return
        out = run.path
        self._keep_inputs(run.dir)
        run.dir.update(classifier=self._classifier_record())
        if self._given is None:
            write_jsonl(out / "prompts.jsonl", (p.to_json() for p in suite.prompts))
            log(
                f"[boi bias] {len(suite.prompts)} prompts: {len(suite.templates)} templates x "
                f"{len(suite.dimensions)} dimensions x "
                f"{sum(len(t.words[: config.suite.modifiers_per_type]) for t in suite.modifier_types)} modifiers"
            )
            return
        covered = {r.task_id for r in self._given.records}
        # The file's prompts, every shard's alike (a whole-run file).
        write_jsonl(
            out / "prompts.jsonl", (p.to_json() for p in suite.prompts if p.prompt_id in covered)
        )
        log(
            f"[boi bias] {len(self._given.records)} completions of "
            f"{len(covered)} of the suite's {len(suite.prompts)} prompts, read from "
            f"{config.completions}; no model is loaded (models, decoding, sweep and seeds do "
            "not apply)"
        )
        if config.passk.enabled:
            log(f"  pass@k: {PASSK_NOT_APPLICABLE}")

    def units(self) -> list[str]:
        assert self.suite is not None
        return [p.prompt_id for p in self.suite.prompts] + [
            f"pass@k:{p.task_id}" for p in self._passk_problems
        ]

    def cells(self) -> Iterator[Cell]:
        """Every model under every decoding setting (each sampled over the seeds), then its
        pass@k; a completions file's models, each one cell of its completions."""
        suite, config = self.suite, self.config
        assert suite is not None
        unit_of = {p.prompt_id: p.prompt_id for p in suite.prompts}
        texts = {p.prompt_id: p.prompt for p in suite.prompts}
        if self._given is not None:
            for label in self._given.models:
                groups = self._given.groups(label, texts, DecodingConfig())
                spec = self._given.spec(label)
                yield Cell(label, GIVEN_SETTING, groups, (0,), unit_of, spec, executed=False)
            return
        passk = {p.task_id: p.prompt for p in self._passk_problems}
        passk_units = {task_id: f"pass@k:{task_id}" for task_id in passk}
        for spec in config.models:
            for setting, decoding in config.settings():
                group = PromptGroup(texts, decoding)
                yield Cell(
                    spec.label, setting, (group,), config.seeds, unit_of, spec, executed=False
                )
            if passk:
                decoding = config.passk.decoding
                yield Cell(
                    spec.label,
                    PASSK_SETTING,
                    (PromptGroup(passk, decoding),),
                    (decoding.seed,),
                    passk_units,
                    spec,
                )

    def backend_ready(self, spec: BackendSpec, backend: Backend, run: StudyRun) -> None:
        if self._given is not None:
            assert self.suite is not None
            self._given.prepare(backend, {p.prompt_id: p.prompt for p in self.suite.prompts})

    def judge(self, cell: Cell, samples: list[Sample], run: StudyRun) -> list[dict[str, Any]]:
        """pass@k's samples run in the sandbox; every other completion classified and read by
        the lexicon."""
        if not samples:
            return []  # a shard that owns none of the cell's prompts
        out, label = run.path, cell.model
        if cell.setting == PASSK_SETTING:
            rows = [
                {
                    "task_id": s.prompt_id,
                    "completion": s.completion,
                    "model": label,
                    "sample_index": s.sample_index,
                    **s.reply_fields(),
                    "ordinal": list(s.ordinal or ()),
                }
                for s in samples
            ]
            dataset = self.config.passk.dataset
            with stage(f"pass@k {label} {dataset}", run.log, run.timings, self.log_prefix):
                return execute_samples(
                    {p.task_id: p for p in self._passk_problems},
                    rows,
                    self.config.execution,
                    out / "passk" / label / "results.jsonl",
                    progress=progress_bar(len(rows), f"execute {dataset}"),
                ).results
        given = self._given
        if given is not None:
            completions = []
            for s in samples:
                record = given.record(label, s.prompt_id, s.sample_index)
                completions.append(
                    {
                        "prompt_id": record.task_id,
                        "model": label,
                        "setting": GIVEN_SETTING,
                        "seed": None,
                        "sample_index": record.sample_index,
                        "completion": record.completion,
                        "line": record.line,
                        "ordinal": list(s.ordinal or ()),
                    }
                )
            stage_name = f"score {label}"
        else:
            completions = [
                {
                    "prompt_id": s.prompt_id,
                    "model": label,
                    "setting": cell.setting,
                    "seed": s.seed,
                    "sample_index": s.sample_index,
                    "completion": s.completion,
                    **s.reply_fields(),
                    "ordinal": list(s.ordinal or ()),
                }
                for s in samples
            ]
            stage_name = f"score {label} {cell.setting}"
            unread = unread_replies_warning(samples, f"{label} ({cell.setting})")
            if unread:
                run.log(f"  {unread}")
        assert self.suite is not None and self.classifier is not None
        prompts = {p.prompt_id: p for p in self.suite.prompts}
        cache = ScoreCache(out / "scores.jsonl", self.classifier)
        try:
            with stage(stage_name, run.log, run.timings, self.log_prefix):
                scored = _score(
                    prompts, completions, self.suite, cache, self.config.classifier_batch_size
                )
        finally:
            cache.close()
        self._scoring["scored"] += cache.scored
        self._scoring["cache_hits"] += cache.hits
        if given is not None:
            answered = len({s["prompt_id"] for s in completions})
            run.log(f"  {label}: {len(completions)} completions of {answered} prompts")
        write_jsonl(
            out / "completions" / path_slug(label) / f"{path_slug(cell.setting)}.jsonl", scored
        )
        return scored

    def record(self) -> dict[str, Any]:
        return {"scoring": dict(self._scoring)} if self.classifier is not None else {}

    def describe(self, counts: SampleCounts, cells: Sequence[Cell]) -> Estimate:
        """Every completion is classified; pass@k's samples are executed. A completions file
        generates nothing: its completions are classified."""
        config = self.config
        assert self.suite is not None
        if self._given is not None:
            records = self._given.records
            return Estimate(
                units=f"completions: {len(records)} read from {config.completions}",
                distinct_prompts=len({r.task_id for r in records}),
                requested_samples=len(records),
                generations=0,
                prompt_tokens=0,
                max_output_tokens=0,
                executions=0,
                cells=f"{len(self._given.models)} models from the file",
                notes=[f"classifications: at most {len(records)}"],
            )
        executions = sum(cell_counts(c).requested for c in cells if c.executed)
        notes = [f"classifications: at most {counts.requested - executions}"]
        if config.passk.enabled:
            notes.append(f"pass@k: {len(self._passk_problems)} problems of {config.passk.dataset}")
        return Estimate.of(
            counts,
            units=f"prompts: {len(self.suite.prompts)}",
            distinct_prompts=len({p.prompt for p in self.suite.prompts}),
            executions=executions,
            cells=f"{len(config.models)} models x {len(config.settings())} settings x "
            f"{len(config.seeds)} seeds",
            notes=notes,
        )

    def report(
        self, run: RunDir, generation: Mapping[str, Any], log: Callable[[str], None]
    ) -> StudyOutcome:
        """CBS, UFS and SD (and pass@k) from the scored completions (after a run or a merge)."""
        if "classifier" not in run.manifest and "classifier" in self._recorded:
            # The classifier the shards recorded (one config, so one classifier).
            run.update(classifier=self._recorded["classifier"])
        out = run.path
        paths = rebuild_report(out)
        rows = scored_rows(open_study(out, self.command))
        if self.config.completions is not None:
            given = portable_path(self.config.completions)
            generation = {"not_applicable": f"completions read from {given}"} if generation else {}
        else:
            generation = {k: v for k, v in generation.items() if k != "verb"}
        biased = sum(1 for r in rows if r["biased"])
        kind = self.classifier.kind if self.classifier else "as recorded"
        scoring = (
            f"{self._scoring['scored']} scored, {self._scoring['cache_hits']} scores from cache"
            if generation and self.classifier is not None
            else ""
        )
        if self.config.completions is not None:
            done = f"{len(rows)} completions read from {self.config.completions}"
            done += f" ({scoring})" if scoring else ""
        else:
            done = (
                f"{len(rows)} completions ({generation.get('generated', 0)} generated, "
                f"{generation.get('cache_hits', 0)} from cache"
                + (f"; {scoring})" if scoring else ")")
            )
        passk_note = (
            "; pass@k not applicable"
            if self.config.completions is not None and self.config.passk.enabled
            else ""
        )
        cbs = f"{100 * biased / len(rows):.1f}%" if rows else "n/a"
        summary = (
            f"boi bias run: {done}; CBS {cbs} overall (classifier: {kind}){passk_note}; "
            f"report: {paths.html}"
        )
        # Inside the run directory, which is the run wherever it is moved.
        record = {
            "report": {k: os.path.relpath(v, out) for k, v in dataclasses.asdict(paths).items()}
        }
        table = Path(paths.cbs_md).read_text(encoding="utf-8")
        return StudyOutcome(out, table, summary, generation, record, paths)


def run_bias(config: BiasRunConfig, log: Callable[[str], None] = print) -> StudyOutcome:
    """Run (or resume) the study; returns where the report is and the CBS table."""
    return run_study(ModifierStudy(config), log=log)


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


SCORED = "completions/*/*.jsonl"
"""Where a `boi bias run` keeps its scored completions (one file per model and setting)."""


def scored_rows(run: StudyDir) -> list[dict[str, Any]]:
    """Every scored completion of a `boi bias run` directory."""
    return run.rows(SCORED)


def rebuild_report(out_dir: str | Path) -> BiasReportPaths:
    """`boi bias report RUN_DIR`: the tables and HTML again from the run's files."""
    run = open_study(out_dir, "boi bias run", hint="pass the --out of a boi bias run")
    root = run.path
    config = load_config(BiasRunConfig, None, run.config)
    rows = scored_rows(run)
    # In the run's order (models as configured, each model's settings base first, then the
    # sweeps; a completions file's models by name), not the files' alphabetical one: the
    # tables list them in row order, so a rebuilt report equals the run's own.
    if config.completions is None:
        model_rank = {spec.label: i for i, spec in enumerate(config.models)}
        setting_rank = {label: i for i, (label, _) in enumerate(config.settings())}
        rows.sort(key=lambda r: (model_rank.get(r["model"], 0), setting_rank.get(r["setting"], 0)))
    else:
        rows.sort(key=lambda r: str(r["model"]))
    passk: dict[str, dict[str, Any]] = {}
    for path in sorted((root / "passk").glob("*/results.jsonl")):
        passk[path.parent.name] = _passk_summary(config.passk, [r for _, r in iter_jsonl(path)])
    if config.completions is not None:
        passk = _passk_not_applicable(config, dict.fromkeys(r["model"] for r in rows))
    return _report(
        config, rows, run_suite(run, config.suite), root, passk, run.manifest.get("classifier")
    )


def run_suite(run: RunDir, config: SuiteConfig) -> Suite:
    """The suite a run used, from its own copies of the suite files (`SUITE_COPIES`), each
    checked against the sha256 its manifest records; never from a file a recorded name finds
    where this runs. A directory written before boi kept copies reads the files its config
    names (as typed then), refused when one is not the file the run recorded."""
    if any(_suite_input(part) in run.inputs for part in SUITE_PARTS):
        copies = {part: run.path / relative for part, relative in SUITE_COPIES.items()}
        for part, copy in copies.items():
            recorded = (run.inputs.get(_suite_input(part)) or {}).get("sha256")
            if not copy.is_file():
                raise UserError(
                    f"{copy} is missing: the run keeps the suite file it used there; copy the "
                    "run directory whole, or rerun it."
                )
            if file_sha256(copy) != recorded:
                raise UserError(
                    f"{copy} is not the suite file the run used (its sha256 differs from the "
                    f"one {run.path / MANIFEST} records); restore it from a copy of the run, "
                    "or rerun it."
                )
        return load_suite(with_suite_files(config, copies))
    named = {"modifiers": config.modifiers, "dimensions": config.dimensions}
    named["templates"] = config.template_file
    recorded_files = run.manifest.get("suite_files") or {}
    for part, path in suite_paths(config).items():
        entry = recorded_files.get(part) if isinstance(recorded_files, dict) else None
        if named[part] is None or not isinstance(entry, str) or "sha256:" not in entry:
            continue  # the packaged file, or no digest recorded: read as before
        digest = entry.rsplit("sha256:", 1)[-1]
        if not path.is_file() or not file_sha256(path).startswith(digest):
            state = "is not here" if not path.is_file() else "is another file (sha256 differs)"
            raise UserError(
                f"{run.path} was written before boi kept a run's suite files in it, and the "
                f"{part} file its manifest names, {path}, {state}; run boi bias report where "
                "the run was started, or rerun the run."
            )
    return load_suite(config)


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
