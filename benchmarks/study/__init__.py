"""One driver for every study: what varies and how it is judged is the study's; the rest is here.

A *study* is a kind of run: `boi run` (pass@k under each transformation, `boi.runner`),
`boi bias run` (Liu et al.'s judgmental modifiers, `bias.modifier_prompts.run`) and
`boi bias test` (executable fairness tests, `bias.fairness_tests.run`). It says what varies
and how to judge it: its typed config, the units a shard may own (problems, prompts, tasks),
how to run the units it is given over its models and settings, how to report, and which of its
files a shard writes for the whole run and which it splits. This package owns everything else,
written once for all of them:

- claim / resume / refuse a run directory (`RunDir`), with the study's identity and the shard;
- shards (`Shard`, `--shard I/N | auto | auto/N`): each shard runs the units dealt to it;
- `merge_study` (`boi merge`): the shards of one run as one directory, equal to the unsharded
  run's, byte for byte;
- `run_study_on_ray` (`--ray`): the shards as Ray tasks, then the merge;
- the cost estimate (`--dry-run`): `Estimate`, counted by the study before anything runs;
- completions made elsewhere: the `completions` backend (`benchmarks.generation.given`), taken
  by every study as a model;
- the outcome (`StudyOutcome`) and the completed manifest.

Adding a study is one class with the `Study` methods, a line in `boi.studies.STUDIES` (so that
`boi merge` finds it) and its command, which calls `benchmarks.study.cli.drive`; a flag for every
study is declared and carried out in `benchmarks.study.cli`, and what it changes in the driver
is here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from benchmarks.common.errors import UserError
from benchmarks.common.provenance import config_hash, portable_path
from benchmarks.common.rundir import RunDir, claim_run_dir, read_marker, recorded_spelling
from benchmarks.study.shards import Shard, parse_shard

__all__ = [
    "CHARS_PER_TOKEN",
    "ClaimSpec",
    "Estimate",
    "SampleCounts",
    "Shard",
    "Study",
    "StudyOutcome",
    "StudyRun",
    "check_claim",
    "claim_study",
    "estimate_study",
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


@dataclass(frozen=True)
class ClaimSpec:
    """How a study's run directory is claimed: the config as recorded (with `out_dir` as the
    run first spelled it), its hash, the hash of the work without `out_dir` (shards of one run
    share it), the input files recorded with their sha256, and more manifest fields."""

    config: dict[str, Any]
    digest: str
    work_hash: str
    inputs: dict[str, str] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    unchanged: str = ""
    """Why the hash can differ with no config key changed (an input hashed into it)."""
    also_accepted: tuple[str, ...] = ()
    """Older hashes of this same run (directories written before the identity changed)."""
    recorded: dict[str, Any] | None = None
    """The config as the manifest records it when that is not `config` (paths made portable,
    `benchmarks.common.provenance.portable_config`); its hashes are `digest` and `work_hash`."""


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


class Study(Protocol):
    """A kind of run (see the module docstring). `config` is its typed config, with at least
    `out_dir`, `models` (backend specs) and `seeds`."""

    command: ClassVar[str]
    """The command that runs it ("boi run"): logs, manifests (`study`) and `boi merge`."""
    whole_run_files: ClassVar[tuple[str, ...]]
    """Files every shard writes for the whole run (identical in every shard)."""
    split_files: ClassVar[tuple[str, ...]]
    """Glob patterns (relative to the run) of the JSONL files each shard writes for its own
    units; a merge joins them in the unsharded run's order (`row_order`)."""
    config: Any

    @classmethod
    def from_config(
        cls, config_json: Mapping[str, Any], recorded: Mapping[str, Any] | None = None
    ) -> Study:
        """The study of a config: a Ray task's (paths as the user gave them), or a recorded
        one (a shard's, for the merge) with `recorded`, the manifest it came from. A recorded
        config names a file outside the working directory by its last part only
        (`portable_config`), so what the study needs of a file's content (a digest its
        identity hashes) it takes from `recorded`, never from a file of that name."""
        ...

    def claim_spec(self, out_dir: str) -> ClaimSpec:
        """How the run is claimed, its config's `out_dir` spelled as given."""
        ...

    def load(self, log: Callable[[str], None]) -> None:
        """Read and check every input (no file written): a mistake costs one sentence before
        the directory is claimed."""
        ...

    def execute(self, run: StudyRun) -> StudyOutcome:
        """Run (or resume) the units `run.owned` gives it over the models and settings; report
        unless `run.shard` is set."""
        ...

    def estimate(self, log: Callable[[str], None]) -> Estimate:
        """Count what `execute` will generate and execute, writing nothing."""
        ...

    def row_order(self, out: Path, relative: str) -> Callable[[dict[str, Any]], Any]:
        """The sort key that puts a split file's merged rows in the unsharded run's order; `out`
        holds the merged whole-run files."""
        ...

    def report_from_files(self, run: RunDir, log: Callable[[str], None]) -> StudyOutcome:
        """The report built from the run's files (after a merge)."""
        ...


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


def run_study(
    study: Study, *, shard: Shard | None = None, log: Callable[[str], None] = print
) -> StudyOutcome:
    """Run (or resume) a study, or one shard of it; returns its outcome. Every input is read
    and checked before the directory is claimed."""
    study.load(log)
    run = claim_study(study, shard)
    outcome = study.execute(StudyRun(run, shard, log))
    run.complete(generation=outcome.generation, **outcome.record)
    if shard is not None:
        generation = outcome.generation
        done = (
            f"{generation['generated']} generated ({generation['cache_hits']} from cache)"
            if "generated" in generation
            else "nothing generated"
        )
        outcome = dataclasses.replace(
            outcome,
            table_markdown="",
            summary_line=(
                f"{study.command}: shard {shard.label}: {done}; when every shard is done: "
                f"boi merge OUT {run.path} ..."
            ),
        )
    return outcome


def estimate_study(
    study: Study,
    log: Callable[[str], None] = print,
    *,
    tokens_per_second: float | None = None,
    gpus: int = 1,
) -> Estimate:
    """The study's estimate, with the throughput that turns tokens into hours."""
    if tokens_per_second is not None and tokens_per_second <= 0:
        raise UserError(f"--tokens-per-second is {tokens_per_second}; give a positive rate.")
    if gpus < 1:
        raise UserError(f"--gpus is {gpus}; give at least 1.")
    estimate = study.estimate(log)
    estimate.tokens_per_second = tokens_per_second
    estimate.gpus = gpus
    return estimate


def work_hash_of(identity: Mapping[str, Any]) -> str:
    """The hash of what a run computes: its identity without where it is written."""
    return config_hash({k: v for k, v in identity.items() if k != "out_dir"})
