"""One driver for every study: a study is data and a judge; the loop is here.

A *study* is a kind of run: `boi run` (pass@k under each transformation, `boi.runner`),
`boi bias run` (Liu et al.'s judgmental modifiers, `bias.modifier_prompts.run`) and
`boi bias test` (executable fairness tests, `bias.fairness_tests.run`). It declares:

    units()               the ids a shard may own (problems, prompts, tasks)
    cells()               per model, each setting: its prompt groups (each with its decoding)
                          over its seeds, every prompt's unit, the model sampling them
    judge(cell, samples)  the sandbox's tests, the classifier, the fairness tables: rows, each
                          with its sample's `ordinal`, written to the study's split files
    report(run)           its tables and pages, from the run's files (a run's, a merge's)

and the driver (`run_study`) does the rest, written once for all of them: claim / resume /
refuse the run directory (`RunDir`) under the study's identity (`identity_hashes`, the one
recipe); `prepare` (the whole-run files); every cell's model loaded once, its shard's units
sampled through the generation cache (`sample_prompts`) and stamped with their `ordinal` (the
cell's place, the sample's place in the unsharded cell); `judge`; the report. The estimate
(`--dry-run`, `estimate_study`) counts the same `cells()`; a merge (`boi merge`,
`merge_study`) orders the shards' rows by `ordinal`; Ray runs the shards as tasks
(`run_study_on_ray`); completions made elsewhere come only as the `completions` backend (a
file of several models is one backend per model, `GivenCompletionsBackend.specs_of_file`).
`Study` gives a new study the defaults (its config's claim, model checks, no whole-run files,
the estimate in plain words): adding one is a module and a line in `boi.studies.STUDIES`
(tests/toy_study.py is one).
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.common.config import load_config, to_dict
from benchmarks.common.errors import UserError
from benchmarks.common.progress import stage
from benchmarks.common.provenance import config_hash, portable_config, portable_path
from benchmarks.common.rundir import RunDir, claim_run_dir, read_marker, recorded_spelling
from benchmarks.generation import (
    Backend,
    BackendSpec,
    PromptGroup,
    Sample,
    SamplingTotals,
    check_models,
    load_backend,
    sample_prompts,
    sample_verb,
)
from benchmarks.study.shards import Shard, parse_shard

GENERATIONS = "generations.jsonl"
"""The generation cache every study keeps (keyed lines: a merge joins the shards')."""

__all__ = [
    "CHARS_PER_TOKEN",
    "GENERATIONS",
    "Cell",
    "ClaimSpec",
    "Estimate",
    "SampleCounts",
    "Shard",
    "Study",
    "StudyOutcome",
    "StudyRun",
    "cell_counts",
    "check_claim",
    "claim_study",
    "estimate_study",
    "identity_hashes",
    "parse_shard",
    "run_study",
    "study_path",
]

# Characters per token of code in the BPE vocabularies code models use (GPT-2's, CodeGen's,
# StarCoder's, Qwen's: 3 to 4.5 on HumanEval prompts); the estimate says it is one.
CHARS_PER_TOKEN = 4.0


@dataclass
class StudyOutcome:
    """What a finished run (or shard, or merge) reports: where it is, its main table, one
    summary line, what generation did, and the fields its completed manifest records."""

    out_dir: Path
    table_markdown: str
    summary_line: str
    generation: dict[str, Any]
    record: dict[str, Any] = field(default_factory=dict)
    report: Any = None
    """The study's report paths (None for a shard, which has no report)."""


def identity_hashes(
    identity: Mapping[str, Any], content: Mapping[str, Any] | None = None
) -> tuple[str, str]:
    """Every study's identity, one recipe: the hash of what decides the run (`identity`, with
    `out_dir` as the run first spelled it; `content`: digests of files it belongs to, beside
    it), and the work hash, the same without `out_dir` (the shards of one run share it, and
    `boi merge` checks it)."""
    work = {k: v for k, v in identity.items() if k != "out_dir"}
    if content is None:
        return config_hash(dict(identity)), config_hash(work)
    return (
        config_hash({"config": dict(identity), **content}),
        config_hash({"config": work, **content}),
    )


@dataclass(frozen=True)
class ClaimSpec:
    """How a study's run directory is claimed: the config as recorded (with `out_dir` as the
    run first spelled it), the identity its hashes are of (`identity_hashes`), the input files
    recorded with their sha256, and more manifest fields."""

    config: dict[str, Any]
    identity: Mapping[str, Any]
    """What decides the run's numbers (the config, or the part of it that does), out_dir
    included."""
    content: Mapping[str, Any] | None = None
    """Digests of files the run belongs to, hashed beside the identity (a completions file's)."""
    inputs: dict[str, str] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    unchanged: str = ""
    """Why the hash can differ with no config key changed (an input hashed into it)."""
    also_accepted: tuple[str, ...] = ()
    """Older hashes of this same run (directories written before the identity changed)."""
    recorded: dict[str, Any] | None = None
    """The config as the manifest records it when that is not `config` (paths made portable,
    `benchmarks.common.provenance.portable_config`); its hashes are `digest` and `work_hash`."""

    @property
    def digest(self) -> str:
        return identity_hashes(self.identity, self.content)[0]

    @property
    def work_hash(self) -> str:
        return identity_hashes(self.identity, self.content)[1]


@dataclass
class StudyRun:
    """A claimed run as the study executes it: its directory, its shard (None: the whole run)
    and the log."""

    dir: RunDir
    shard: Shard | None
    log: Callable[[str], None]

    @property
    def path(self) -> Path:
        return self.dir.path

    @property
    def timings(self) -> dict[str, float]:
        return self.dir.timings

    def owned(self, units: Sequence[str]) -> Callable[[str], bool]:
        """Whether a unit is this run's to generate and judge, from every unit of the run in
        run order (a study may know them only after its first stage: boi run's perturbation)."""
        if self.shard is None:
            return lambda unit: True
        mine = self.shard.select_units(units)
        self.log(f"  shard {self.shard.label}: {len(mine)} of {len(set(units))} units")
        return mine.__contains__


@dataclass(frozen=True)
class SampleCounts:
    """What sampling costs, counted as the sampling loop does it (`sampled`) and added up over
    a study's models, settings and prompt kinds with `+`."""

    requested: int = 0
    distinct_prompts: int = 0
    generations: int = 0
    prompt_tokens: int = 0
    max_output_tokens: int = 0

    @classmethod
    def sampled(
        cls, prompts: Sequence[str], n: int, seeds: int, max_new_tokens: int
    ) -> SampleCounts:
        """Sampling `prompts` n times per seed: identical texts are generated once, one request
        per distinct prompt and seed, every sample running to `max_new_tokens` at most."""
        distinct = dict.fromkeys(prompts)
        generations = len(distinct) * n * seeds
        return cls(
            requested=len(prompts) * n * seeds,
            distinct_prompts=len(distinct),
            generations=generations,
            prompt_tokens=round(sum(len(p) for p in distinct) / CHARS_PER_TOKEN) * seeds,
            max_output_tokens=generations * max_new_tokens,
        )

    def __add__(self, other: SampleCounts) -> SampleCounts:
        return SampleCounts(
            *(
                a + b
                for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other), strict=True)
            )
        )


@dataclass
class Estimate:
    """What a run will do, counted before anything is generated (`--dry-run`)."""

    units: str
    """What is run, in words ("24 variants of 12 problems")."""
    distinct_prompts: int
    requested_samples: int
    generations: int
    prompt_tokens: int
    max_output_tokens: int
    executions: int
    cells: str = ""
    """What varies, in words ("2 models x 2 settings x 10 seeds")."""
    notes: list[str] = field(default_factory=list)
    tokens_per_second: float | None = None
    gpus: int = 1

    @classmethod
    def of(
        cls,
        counts: SampleCounts,
        *,
        units: str,
        executions: int,
        cells: str,
        notes: Sequence[str] = (),
        distinct_prompts: int | None = None,
    ) -> Estimate:
        """An estimate from added-up sample counts; `distinct_prompts` when the study counts
        them once rather than per cell."""
        return cls(
            units=units,
            distinct_prompts=counts.distinct_prompts
            if distinct_prompts is None
            else distinct_prompts,
            requested_samples=counts.requested,
            generations=counts.generations,
            prompt_tokens=counts.prompt_tokens,
            max_output_tokens=counts.max_output_tokens,
            executions=executions,
            cells=cells,
            notes=list(notes),
        )

    @property
    def counts(self) -> SampleCounts:
        return SampleCounts(
            self.requested_samples,
            self.distinct_prompts,
            self.generations,
            self.prompt_tokens,
            self.max_output_tokens,
        )

    @property
    def gpu_hours(self) -> float | None:
        if not self.tokens_per_second:
            return None
        return self.max_output_tokens / self.tokens_per_second / 3600

    def lines(self) -> list[str]:
        lines = [
            f"{self.units}; distinct prompts: {self.distinct_prompts}",
            f"samples: {self.requested_samples} requested, {self.generations} generated "
            "(identical prompts share samples)",
            f"tokens: about {self.prompt_tokens:,} prompt tokens ({CHARS_PER_TOKEN:g} characters "
            f"per token), at most {self.max_output_tokens:,} generated (max_new_tokens)",
            f"executions: {self.executions}",
            *self.notes,
        ]
        hours = self.gpu_hours
        if hours is None:
            lines.append("time: give --tokens-per-second (one GPU's decode throughput) for hours")
        else:
            lines.append(
                f"time at {self.tokens_per_second:g} tokens/s per GPU: at most {hours:.1f} GPU-hours, "
                f"{hours / self.gpus:.1f} h on {self.gpus} GPU{'s' if self.gpus != 1 else ''}"
            )
        return lines


@dataclass(frozen=True)
class Cell:
    """One model under one setting: the prompt groups it samples over its seeds, or the samples
    it was given (a completions file's), and which unit each prompt belongs to. A study's
    `cells()` yields them; the driver samples each (the units of its shard only) and hands the
    samples to the study's `judge`."""

    model: str
    """The label the cell's rows carry."""
    setting: str
    groups: tuple[PromptGroup, ...] = ()
    """Every prompt of the cell, whichever shard runs it: the driver keeps the shard's units."""
    seeds: tuple[int, ...] = ()
    unit_of: Mapping[str, str] = field(default_factory=dict)
    """The unit (what a shard owns) of each prompt id."""
    backend: BackendSpec | None = None
    """The model that samples the groups (completions made elsewhere: the `completions`
    backend serving a file's); every cell a run samples has one."""
    positions: Mapping[str, int] | None = None
    """Each prompt's place in the cell when it is not the sampling order: a follow-up cell's
    prompts (one sample each) take the place of the row they follow up."""
    executed: bool = True
    """Whether judging runs the samples (the estimate counts them as executions)."""
    context: Any = None
    """The study's own description of the cell (its setting, strategy, round)."""
    place: int = -1
    """The cell's place in the run (set by the driver): the first part of its rows' ordinals."""


class Study(abc.ABC):
    """A kind of run (see the module docstring): what varies is data (`units`, `cells`), how a
    cell's samples are judged is `judge`, what is reported is `report`; the driver loops. A
    study names its `command` and `split_files` and writes those four; the rest has defaults it
    overrides where it differs: a config dataclass `Config` (with `out_dir`, `models`, backend
    specs, and `seeds`) claimed by its portable self, its models checked before the claim, no
    whole-run files, no manifest fields of its own, the estimate in plain words."""

    Config: ClassVar[type]
    command: ClassVar[str]
    """The command that runs it ("boi run"): logs, manifests (`study`) and `boi merge`."""
    whole_run_files: ClassVar[tuple[str, ...]] = ()
    """Files every shard writes for the whole run (identical in every shard)."""
    split_files: ClassVar[tuple[str, ...]]
    """Glob patterns (relative to the run) of the JSONL files each shard writes for its own
    units, one row per judged sample carrying the sample's `ordinal`: a merge joins them in
    that order."""

    def __init__(self, config: Any, recorded: Mapping[str, Any] | None = None) -> None:
        self.config = config
        # The manifest this study was rebuilt from (a shard's, for the merge), or None.
        self._recorded = dict(recorded or {})

    @property
    def log_prefix(self) -> str:
        """What its log lines start with ("boi run", "boi bias")."""
        return self.command

    @classmethod
    def from_config(
        cls, config_json: Mapping[str, Any], recorded: Mapping[str, Any] | None = None
    ) -> Study:
        """The study of a config: a Ray task's (paths as the user gave them), or a recorded
        one (a shard's, for the merge) with `recorded`, the manifest it came from. A recorded
        config names a file outside the working directory by its last part only
        (`portable_config`), so what the study needs of a file's content (a digest its
        identity hashes) it takes from `recorded`, never from a file of that name."""
        return cls(load_config(cls.Config, None, dict(config_json)), recorded)

    def claim_spec(self, out_dir: str) -> ClaimSpec:
        """How the run is claimed, its config's `out_dir` spelled as given: by the config,
        recorded and hashed with portable paths (no machine's absolute path), so the run is the
        same run from its manifest alone, wherever it is merged or resumed."""
        config_json = {**to_dict(self.config), "out_dir": out_dir}
        recorded = portable_config(config_json)
        return ClaimSpec(
            config=config_json,
            identity=recorded,
            record={"seeds": list(self.config.seeds)},
            recorded=recorded,
        )

    def load(self, log: Callable[[str], None]) -> None:
        """Read and check every input (no file written): a mistake costs one sentence before
        the directory is claimed."""
        check_models(self.config.models, self.config.seeds)

    def prepare(self, run: StudyRun | None, log: Callable[[str], None]) -> None:
        """Decide the units and cells: write the whole-run files into the run, or, with None
        (the estimate), write nothing. By default there are none."""
        return None

    @abc.abstractmethod
    def units(self) -> list[str]:
        """Every unit of the run in run order (after `prepare`): what shards are dealt."""

    @abc.abstractmethod
    def cells(self) -> Iterable[Cell]:
        """Every cell in run order (after `prepare`). A generator may look at what `judge` saw
        of the cells before (a feedback round); the estimate asks without judging."""

    def backend_ready(self, spec: BackendSpec, backend: Backend, run: StudyRun) -> None:
        """Called once a model is loaded, before its first cell is sampled (by default: no
        more to do)."""
        return None

    @abc.abstractmethod
    def judge(self, cell: Cell, samples: list[Sample], run: StudyRun) -> list[dict[str, Any]]:
        """Judge the cell's samples (the run's shard's), write its split files (each row with
        its sample's `ordinal`) and return the rows."""

    def record(self) -> dict[str, Any]:
        """What the completed manifest records of the run beside the report (a shard's too:
        the models' identities, the classifier's cache hits)."""
        return {}

    def describe(self, counts: SampleCounts, cells: Sequence[Cell]) -> Estimate:
        """The estimate in the study's words, from what its cells sample (`counts`)."""
        executed = sum(cell_counts(cell).requested for cell in cells if cell.executed)
        return Estimate.of(
            counts,
            units=f"units: {len(self.units())}",
            executions=executed,
            cells=f"{len(self.config.models)} models x {len(self.config.seeds)} seeds",
        )

    @abc.abstractmethod
    def report(
        self, run: RunDir, generation: Mapping[str, Any], log: Callable[[str], None]
    ) -> StudyOutcome:
        """The report built from the run's files, after a run or a merge alike; `generation`
        is what sampling did (`SamplingTotals` and `verb`, the backends' `sample_verb`: a file's
        samples are read), empty after a merge, which adds up its shards'."""


def study_path(study: Study | type[Study]) -> str:
    """`module:Class` of a study, as a Ray task names it."""
    cls = study if isinstance(study, type) else type(study)
    return f"{cls.__module__}:{cls.__qualname__}"


def _claim_checks(study: Study, shard: Shard | None) -> tuple[Path, ClaimSpec, str]:
    """The study's directory, claim spec and digest, once the shard it holds (if any) is this
    one; what `claim_study` and `check_claim` share."""
    out = Path(study.config.out_dir)
    # `./runs/x`, `runs/x/` and the absolute path name one directory, and the one holding the
    # manifest is the run: its identity is hashed with out_dir as the run first spelled it.
    # A new run spells it portably (relative, or its name: no machine's absolute path).
    spec = study.claim_spec(recorded_spelling(out, portable_path(study.config.out_dir)))
    recorded = read_marker(out) if out.is_dir() else None
    digest = spec.digest
    if recorded is not None and recorded.get("config_hash") in spec.also_accepted:
        digest = str(recorded["config_hash"])
    if recorded is not None and recorded.get("shard") != (shard.label if shard else None):
        was = recorded.get("shard") or "the whole run"
        now = shard.label if shard else "the whole run"
        raise UserError(
            f"{out} holds shard {was} of this run, not {now}; use another --out, or the same "
            "--shard to resume it."
        )
    return out, spec, digest


def check_claim(study: Study, shard: Shard | None) -> None:
    """What `claim_study` would refuse, refused now, with nothing created or written (a dry
    run must not approve a run its claim then refuses)."""
    out, spec, digest = _claim_checks(study, shard)
    config = spec.config if spec.recorded is None else spec.recorded
    claim_run_dir(out, digest, config, unchanged=spec.unchanged, create=False)


def claim_study(
    study: Study,
    shard: Shard | None,
    *,
    record: Mapping[str, Any] | None = None,
    recorded_inputs: Mapping[str, Any] | None = None,
) -> RunDir:
    """Claim the study's directory: start, resume, or refuse (another config, another shard).
    `recorded_inputs`: the input files as a manifest recorded them (path and sha256), recorded
    so instead of reading `spec.inputs` (a merge records its shards': they read the files where
    they ran, and the recorded paths need not name them where the merge runs)."""
    out, spec, digest = _claim_checks(study, shard)
    return RunDir.claim(
        out,
        spec.config if spec.recorded is None else spec.recorded,
        digest=digest,
        inputs=spec.inputs if recorded_inputs is None else None,
        record={
            **({} if recorded_inputs is None else {"inputs": dict(recorded_inputs)}),
            **spec.record,
            "study": study.command,
            "work_hash": spec.work_hash,
            "shard": shard.label if shard else None,
            **dict(record or {}),
        },
        unchanged=spec.unchanged,
    )


def _sampling_positions(cell: Cell) -> dict[tuple[str, int], int]:
    """Each sample's place in the cell, whichever shard generates it: the sampling loop's order
    over every prompt of the cell (seed, group, prompt, sample), or the cell's own
    `positions`."""
    if cell.positions is not None:
        return {(prompt_id, 0): place for prompt_id, place in cell.positions.items()}
    places: dict[tuple[str, int], int] = {}
    for seed_index in range(len(cell.seeds)):
        for group in cell.groups:
            n = group.decoding.n
            for prompt_id in group.prompts:
                for index in range(n):
                    places[(prompt_id, seed_index * n + index)] = len(places)
    return places


def _samples_of(
    cell: Cell,
    place: int,
    backend: Backend,
    run: StudyRun,
    owned: Callable[[str], bool],
    prefix: str,
) -> tuple[list[Sample], SamplingTotals]:
    """The cell's samples of this run's units, each with its ordinal."""
    positions = _sampling_positions(cell)
    samples, totals = sample_prompts(
        backend,
        _owned_part(cell, owned).groups,
        cell.seeds,
        run.path / GENERATIONS,
        log=run.log,
        timings=run.timings,
        what=f"{cell.model} {cell.setting}",
        prefix=prefix,
    )
    return [
        dataclasses.replace(s, ordinal=(place, positions[(s.prompt_id, s.sample_index)]))
        for s in samples
    ], totals


def run_study(
    study: Study, *, shard: Shard | None = None, log: Callable[[str], None] = print
) -> StudyOutcome:
    """Run (or resume) a study, or one shard of it; returns its outcome. Every input is read
    and checked before the directory is claimed; then the driver's loop: the whole-run files,
    every cell sampled (the shard's units) on its model, loaded once, and judged; the report
    from the run's files."""
    study.load(log)
    dir = claim_study(study, shard)
    run = StudyRun(dir, shard, log)
    study.prepare(run, log)
    owned = run.owned(study.units())
    totals = SamplingTotals()
    verbs: set[str] = set()
    loaded: tuple[BackendSpec, Backend] | None = None
    prefix = study.log_prefix
    for place, cell in enumerate(study.cells()):
        if cell.backend is None:
            raise ValueError(f"{study.command}: cell {cell.model} {cell.setting} has no backend")
        if loaded is None or loaded[0] != cell.backend:
            loaded = None  # the previous model is let go before the next loads
            with stage(f"load {cell.backend.label}", log, run.timings, prefix):
                loaded = (cell.backend, load_backend(cell.backend))
            study.backend_ready(cell.backend, loaded[1], run)
            verbs.add(sample_verb(loaded[1]))
        samples, made = _samples_of(cell, place, loaded[1], run, owned, prefix)
        totals.add(made)
        study.judge(dataclasses.replace(cell, place=place), samples, run)
    loaded = None
    generation: dict[str, Any] = totals.to_json()
    # A file's samples are read, a model's generated; a run of both says generated.
    generation["verb"] = verbs.pop() if len(verbs) == 1 else "generated"
    if shard is not None:
        dir.complete(generation=_generation_record(generation), **study.record())
        done = (
            f"{generation['generated']} generated ({generation['cache_hits']} from cache)"
            if generation["generated"] or generation["cache_hits"]
            else "nothing generated"
        )
        return StudyOutcome(
            dir.path,
            "",
            f"{study.command}: shard {shard.label}: {done}; when every shard is done: "
            f"boi merge OUT {dir.path} ...",
            _generation_record(generation),
            study.record(),
        )
    with stage("report", log, run.timings, prefix):
        outcome = study.report(dir, generation, log)
    if not outcome.generation:  # what sampling did, unless the study says it otherwise
        outcome.generation = _generation_record(generation)
    outcome.record = {**study.record(), **outcome.record}
    dir.complete(generation=outcome.generation, **outcome.record)
    return outcome


def _generation_record(generation: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in generation.items() if k != "verb"}


def cell_counts(cell: Cell) -> SampleCounts:
    """What sampling the cell costs (every prompt of it)."""
    counts = SampleCounts()
    for group in cell.groups:
        decoding = group.decoding
        counts += SampleCounts.sampled(
            list(group.prompts.values()), decoding.n, len(cell.seeds), decoding.max_new_tokens
        )
    return counts


def _owned_part(cell: Cell, owned: Callable[[str], bool]) -> Cell:
    """The cell as a shard samples it: the prompts of its units only."""
    groups = tuple(
        PromptGroup(
            {p: text for p, text in g.prompts.items() if owned(cell.unit_of[p])},
            g.decoding,
            g.name,
        )
        for g in cell.groups
    )
    return dataclasses.replace(cell, groups=groups)


def estimate_study(
    study: Study,
    log: Callable[[str], None] = print,
    *,
    tokens_per_second: float | None = None,
    gpus: int = 1,
    shard: Shard | None = None,
) -> Estimate:
    """What the study's cells would sample and judge (a shard's units only, with `shard`),
    counted as the sampling loop does it (each distinct prompt of a group n times per seed),
    with the throughput that turns tokens into hours. Nothing is generated, executed or
    written."""
    if tokens_per_second is not None and tokens_per_second <= 0:
        raise UserError(f"--tokens-per-second is {tokens_per_second}; give a positive rate.")
    if gpus < 1:
        raise UserError(f"--gpus is {gpus}; give at least 1.")
    study.prepare(None, log)
    cells = list(study.cells())
    if shard is not None:
        units = study.units()
        mine = shard.select_units(units)
        cells = [_owned_part(cell, mine.__contains__) for cell in cells]
    counts = SampleCounts()
    for cell in cells:
        counts += cell_counts(cell)
    estimate = study.describe(counts, cells)
    if shard is not None:
        estimate.notes.insert(
            0,
            f"shard {shard.label}: {len(mine)} of {len(set(units))} units (the counts are its own)",
        )
    estimate.tokens_per_second = tokens_per_second
    estimate.gpus = gpus
    return estimate
