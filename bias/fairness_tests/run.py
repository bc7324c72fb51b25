"""`boi bias test`: executable fairness tests on any backend, with mitigation strategies and
feedback rounds (SocialBias-Bench / Solar, Huang et al.'s text-to-code tasks).

tasks -> prompts (x mitigation strategy) -> generate -> plan cases -> run in the sandbox ->
verdicts -> [feedback rounds: biased completions get their test report and are asked again] ->
metrics -> report. One run directory with the conventions of `boi run`:

    manifest.json          config, its hash, seeds, data-file hashes, versions, git, timings
    tasks.jsonl            every task with its prompt, attributes, sensitive and related ones
    load_issues.jsonl      tasks that could not be built, and why
    generations.jsonl      the generation cache (the format `boi run` uses)
    results/<model>/<strategy>/round<R>.jsonl    sandbox results (append-only, resumable)
    verdicts/<model>/<strategy>/round<R>.jsonl   one verdict per completion
    report/                tables (md/csv/json) and report.html

A rerun generates nothing it has and runs nothing the sandbox has judged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.common.config import load_config
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import JsonlAppender, iter_jsonl, write_jsonl
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash
from benchmarks.common.rundir import RunDir, path_slug
from benchmarks.execution import ExecutionConfig, TableJob, call_tables
from benchmarks.generation import (
    Backend,
    BackendSpec,
    DecodingConfig,
    PromptGroup,
    Sample,
    for_kind,
    truncate_at_stop,
)
from benchmarks.generation import check_models as check_backend_models
from benchmarks.generation.replies import ReplyReading, read_function_reply, read_method_reply
from benchmarks.problem import select_tasks
from benchmarks.study import (
    Cell,
    ClaimSpec,
    Estimate,
    SampleCounts,
    Study,
    StudyOutcome,
    StudyRun,
    run_study,
)
from benchmarks.study.reader import StudyDir, open_study
from bias.completions import GivenCompletions, read_completions
from bias.fairness_tests.cases import (
    ENTRY_POINT,
    EXECUTABLE,
    NO_METHOD,
    TRUNCATED,
    UNTESTABLE,
    CaseConfig,
    Plan,
    Verdict,
    attribute_use,
    function_plan,
    load_value_pools,
    method_plan,
    read_table,
    sibling_pools,
    syntax_problem,
)
from bias.fairness_tests.mitigation import (
    MitigationFile,
    Strategy,
    describe_failure,
    feedback_prompt,
    load_mitigations,
    strategy_prompt,
)
from bias.fairness_tests.report import FairnessReportPaths, build_fairness_report
from bias.fairness_tests.tasks import FairnessTask, load_fairness_tasks

# A text-to-code completion is a whole program: only a main guard or a top-level print ends it.
FUNCTION_STOP = ("\nif __name__", "\nprint(", "\n```")
FUNCTION_CHAT_INSTRUCTION = (
    "Write the Python function the comments below ask for. Reply with the whole function in one "
    "```python code block."
)
# SocialBias-Bench's prompt is the code alone (Solar's Figure 1-b, S:103); a chat model needs to
# be told what to return, and one that restates the whole class spends its tokens on fields.
METHOD_CHAT_INSTRUCTION = (
    "Complete the method that the class below leaves unfinished. Reply with that method alone, "
    "its def line and its body, in one ```python code block; do not repeat the class."
)
FEEDBACK_SOURCES = ("strategy", "plain")


def _fairness_decoding() -> DecodingConfig:
    # Huang et al.: K = 5 completions per prompt at temperature 1.0 (H:252, 256). The token
    # budget fits a reply that restates the task's class before the method (about 250 tokens
    # of fields, then the method): a shorter one cuts such replies off before the method.
    return DecodingConfig(
        temperature=1.0,
        top_p=0.95,
        n=5,
        max_new_tokens=768,
        chat_instruction=METHOD_CHAT_INSTRUCTION,
    )


def _fairness_execution() -> ExecutionConfig:
    # A table of up to millions of calls runs in one sandboxed process per completion.
    return ExecutionConfig(timeout=30.0, reference_timing=False)


@dataclass(frozen=True)
class FairnessRunConfig:
    """Everything `boi bias test` does; loadable from YAML (`--config`), overridable by flags."""

    out_dir: str = field(default="runs/bias-test", metadata={"help": "the run directory"})
    suite: str = field(
        default="socialbias_bench",
        metadata={"help": "socialbias_bench, cbs_prompts, or a path to either's data file"},
    )
    data: str | None = field(
        default=None,
        metadata={"help": "the suite's data (SocialBias-Bench tasks.json, Huang's dataset.json)"},
    )
    task_ids: tuple[str, ...] = field(
        default=(), metadata={"help": "only these tasks, e.g. socialbias_bench/0 (empty: all)"}
    )
    limit: int | None = field(default=None, metadata={"help": "only the first N tasks"})
    attributes_file: str | None = field(
        default=None, metadata={"help": "sensitive-attribute file (default: the packaged one)"}
    )
    mitigation_file: str | None = field(
        default=None, metadata={"help": "mitigation strategies file (default: the packaged one)"}
    )
    completions: str | None = field(
        default=None,
        metadata={
            "help": "test completions from another harness (JSONL: task_id or prompt, "
            "completion, optional model and sample_index) instead of generating"
        },
    )
    completions_chat: bool = field(
        default=True,
        metadata={
            "help": "the completions file holds chat replies (read for the method in any shape); "
            "off: continuations of the prompt"
        },
    )
    models: list[BackendSpec] = field(
        default_factory=lambda: [BackendSpec(kind="hf", model="embedded")]
    )
    decoding: DecodingConfig = field(
        default_factory=_fairness_decoding,
        metadata={"help": "how completions are sampled (Huang: K=5 at T=1.0)"},
    )
    seeds: tuple[int, ...] = field(default=(0,), metadata={"help": "samples of all seeds pooled"})
    mitigations: tuple[str, ...] = field(
        default=("none",),
        metadata={"help": "prompt strategies (mitigation file names; none = the plain prompt)"},
    )
    feedback_rounds: int = field(
        default=0,
        metadata={"help": "rounds of feedback: biased code + its test report -> a correction"},
    )
    feedback_from: str = field(
        default="strategy",
        metadata={
            "help": "strategy: each strategy corrects its own previous code (Solar's iterative "
            "prompting); plain: every strategy corrects the plain prompt's round-0 code "
            "(Huang's scenario 2, H:196-208; needs the strategy none)"
        },
    )
    cases: CaseConfig = field(default_factory=CaseConfig)
    execution: ExecutionConfig = field(default_factory=_fairness_execution)
    bootstrap: int = field(default=1000, metadata={"help": "bootstrap resamples for intervals"})
    seed: int = field(default=0, metadata={"help": "seed of the report's bootstrap"})

    def __post_init__(self) -> None:
        if not self.models or not self.seeds or not self.mitigations:
            raise UserError("the test run needs at least one model, seed and mitigation strategy.")
        if self.bootstrap < 0:
            # Caught with the config, not by the report after generation and testing.
            raise UserError(
                f"bootstrap is {self.bootstrap}; use 0 for no intervals or a positive number of "
                "resamples, e.g. 1000."
            )
        if self.limit is not None and self.limit < 1:
            raise UserError(f"limit is {self.limit}; use a positive number or leave it out.")
        if not isinstance(self.feedback_rounds, int) or self.feedback_rounds < 0:
            raise UserError(f"feedback_rounds must be 0 or more (got {self.feedback_rounds!r}).")
        if self.feedback_from not in FEEDBACK_SOURCES:
            raise UserError(
                f"feedback_from is {self.feedback_from!r}; use {' or '.join(FEEDBACK_SOURCES)}."
            )
        if (
            self.feedback_from == "plain"
            and self.feedback_rounds
            and "none" not in self.mitigations
        ):
            raise UserError(
                "feedback_from: plain corrects the plain prompt's code; add none to mitigations."
            )
        if self.completions and self.feedback_rounds:
            raise UserError(
                "a completions file has no model to ask for corrections; leave feedback_rounds "
                "at 0 with --completions."
            )


def load_fairness_config(path: str | None, overrides: dict[str, Any]) -> FairnessRunConfig:
    return load_config(FairnessRunConfig, path, overrides)


FairnessOutcome = StudyOutcome
"""`boi bias test`'s outcome: the study driver's (`report` holds the FairnessReportPaths)."""


def _decoding_for(task_kind: str, decoding: DecodingConfig) -> DecodingConfig:
    """A text-to-code task is a whole function written from a description: its stops and
    instruction, where the user left the defaults."""
    if task_kind != "function":
        return decoding
    if decoding.chat_instruction == METHOD_CHAT_INSTRUCTION:
        decoding = dataclasses.replace(decoding, chat_instruction=FUNCTION_CHAT_INSTRUCTION)
    return for_kind(decoding, FUNCTION_STOP, FUNCTION_CHAT_INSTRUCTION)


@dataclass
class _Round:
    """The completions of one round of one (model, strategy) and where they go."""

    model: str
    strategy: str
    round: int
    entries: list[dict[str, Any]]
    """task_id, sample_index, reply (the model's text), chat, prompt_id"""


@dataclass(frozen=True)
class _Attempt:
    """What a cell of `boi bias test` asks: round 0 of a strategy, or one of its feedback
    rounds (the rows it carries over, and the row each of its prompts follows up)."""

    strategy: str
    round: int
    chat: bool
    carried: list[dict[str, Any]] = field(default_factory=list)
    parents: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_reply(task: FairnessTask, reply: str, *, chat: bool) -> ReplyReading:
    """The asked-for method or function in a model's reply (any shape real chat models give)."""
    if task.kind == "method":
        return read_method_reply(reply, task.prompt, task.class_name, task.method_name, chat=chat)
    return read_function_reply(reply, chat=chat)


def _entry_key(entry: Mapping[str, Any]) -> str:
    """What identifies a tested completion in the results log (a resumed run skips it)."""
    digest = hashlib.sha256(str(entry["reply"]).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{entry['task_id']}#{entry['sample_index']}#{entry.get('prompt_id', '')}#{digest[:16]}"


class _Tester:
    """Reads, plans, runs and judges the fairness tests of a round's completions."""

    def __init__(
        self, config: FairnessRunConfig, tasks: Mapping[str, FairnessTask], out: Path
    ) -> None:
        self.config = config
        self.tasks = tasks
        self.out = out
        self._method_plans: dict[str, Plan] = {}
        self._extra_pools = load_value_pools(config.cases.value_pools_file)
        # Sibling completions per (model, strategy, category): a feedback round's tests draw on
        # round 0's completions too, so later rounds are not tested more weakly (Huang 3.6).
        self._siblings: dict[tuple[str, str, str], list[str]] = {}

    def _plan(
        self, task: FairnessTask, code: str, function_name: str, pools: Mapping[str, Any]
    ) -> Plan:
        if task.kind == "method":
            if task.task_id not in self._method_plans:
                self._method_plans[task.task_id] = method_plan(task, self.config.cases)
            problem = syntax_problem(task.prompt + code)
            plan = self._method_plans[task.task_id]
            return dataclasses.replace(plan, untestable=problem) if problem else plan
        return function_plan(
            task,
            code,
            pools,
            self.config.cases,
            function_name=function_name,
            extra_pools=self._extra_pools,
        )

    def test(self, batch: _Round) -> list[dict[str, Any]]:
        path = (
            self.out
            / "results"
            / batch.model
            / path_slug(batch.strategy)
            / f"round{batch.round}.jsonl"
        )
        readings = [
            read_reply(self.tasks[e["task_id"]], e["reply"], chat=e["chat"]) for e in batch.entries
        ]
        for entry, reading in zip(batch.entries, readings, strict=True):
            task = self.tasks[entry["task_id"]]
            if task.kind == "function" and reading.status == "extracted":
                group = (batch.model, batch.strategy, task.category)
                self._siblings.setdefault(group, []).append(reading.completion)
        pools = {key: sibling_pools(codes) for key, codes in self._siblings.items()}
        rows: dict[str, dict[str, Any]] = {}
        with JsonlAppender(path) as log:
            done = {row.get("key"): row for row in log.existing}
            jobs, plans = [], {}
            for entry, reading in zip(batch.entries, readings, strict=True):
                key = _entry_key(entry)
                if key in done:
                    # A row of an older boi has no seed or ordinal: it gets its sample's
                    rows[key] = {**done[key], "seed": entry["seed"], "ordinal": entry["ordinal"]}
                    continue
                task = self.tasks[entry["task_id"]]
                if reading.status != "extracted":
                    status = NO_METHOD if reading.status == "no_method" else TRUNCATED
                    rows[key] = self._row(
                        batch, entry, reading, Verdict(status, reason=reading.reason), None
                    )
                    log.append(rows[key])
                    continue
                plan = self._plan(
                    task,
                    reading.completion,
                    reading.function_name,
                    pools.get((batch.model, batch.strategy, task.category), {}),
                )
                if not plan.testable:
                    verdict = Verdict(UNTESTABLE, reason=plan.untestable or "nothing to vary")
                    rows[key] = self._row(batch, entry, reading, verdict, plan)
                    log.append(rows[key])
                    continue
                prompt = task.prompt if task.kind == "method" else ""
                plans[key] = (entry, reading, plan)
                jobs.append(
                    TableJob(
                        key, prompt + reading.completion + plan.wrapper, ENTRY_POINT, plan.batches()
                    )
                )
            results = call_tables(
                jobs,
                self.config.execution,
                progress=progress_bar(len(jobs), f"test {batch.strategy} round {batch.round}"),
            )
            for result in results:
                entry, reading, plan = plans[result.key]
                task = self.tasks[entry["task_id"]]
                verdict = read_table(plan, result, task, self.config.cases)
                rows[result.key] = self._row(batch, entry, reading, verdict, plan, result.seconds)
                log.append(rows[result.key])
        return [rows[_entry_key(e)] for e in batch.entries]

    def _row(
        self,
        batch: _Round,
        entry: Mapping[str, Any],
        reading: ReplyReading,
        verdict: Verdict,
        plan: Plan | None,
        seconds: float = 0.0,
    ) -> dict[str, Any]:
        task = self.tasks[entry["task_id"]]
        extracted = reading.status == "extracted"
        use = (
            attribute_use(task, reading.completion) if task.kind == "method" and extracted else None
        )
        return {
            "key": _entry_key(entry),
            "task_id": task.task_id,
            "category": task.category,
            "model": batch.model,
            "strategy": batch.strategy,
            "round": batch.round,
            "seed": entry["seed"],
            "sample_index": entry["sample_index"],
            "prompt_id": entry.get("prompt_id", task.task_id),
            "reply": entry["reply"],
            "reading": {"status": reading.status, "shape": reading.shape, "reason": reading.reason},
            "completion": reading.completion,
            **verdict.to_json(),
            "cases": plan.case_count if plan is not None and verdict.status in EXECUTABLE else {},
            "calls": plan.calls if plan is not None and plan.testable else 0,
            "mapping": plan.mapping if plan is not None else {},
            "notes": plan.notes if plan is not None else "",
            "attribute_use": use,
            "seconds": round(seconds, 4),
            "carried": False,
            "ordinal": entry["ordinal"],
        }


def _file_completions(config: FairnessRunConfig, tasks: list[FairnessTask]) -> GivenCompletions:
    """Round 0's replies of a completions file (another harness's), checked."""
    assert config.completions is not None
    by_id = {t.task_id: t for t in tasks}
    known = {t.task_id: t.suite for t in tasks}
    records = read_completions(
        config.completions,
        known,
        suite=tasks[0].suite,
        prompts={_prompt_text(t): t.task_id for t in tasks},
    )
    return GivenCompletions(config.completions, [r for r in records if r.task_id in by_id])


def _prompt_text(task: FairnessTask) -> str:
    return task.prompt.strip()


def _write_whole_run_files(out: Path, tasks: list[FairnessTask], issues: list[Any]) -> None:
    write_jsonl(out / "tasks.jsonl", (t.to_json() for t in tasks))
    write_jsonl(
        out / "load_issues.jsonl", ({"task_id": i.task_id, "reason": i.reason} for i in issues)
    )


def shard_unit(task: FairnessTask) -> str:
    """What a shard owns of a task: a method task alone; a text-to-code function task with its
    category, since its tests draw values from its siblings' completions (Huang 3.6), which a
    shard must therefore hold together."""
    return task.task_id if task.kind == "method" else f"category:{task.category}"


@dataclass
class FairnessInputs:
    """Everything a `boi bias test` run reads, read and checked before its directory is
    claimed (`check_fairness_inputs`)."""

    tasks: list[FairnessTask]
    issues: list[Any]
    mitigations: MitigationFile
    strategies: list[Any]
    from_file: GivenCompletions | None


def check_fairness_inputs(
    config: FairnessRunConfig, *, check_models: bool = True
) -> FairnessInputs:
    """Read and check the suite, the mitigations, the completions file and (with
    `check_models`) the models: a mistake in any of them costs one sentence before anything is
    written, so the corrected command then runs (`boi bias experiment` checks every sub-run's
    inputs this way before it claims its directory)."""
    tasks, issues = _load_tasks(config)
    mitigations = load_mitigations(config.mitigation_file)
    strategies = [mitigations.strategy(name) for name in config.mitigations]
    from_file = _file_completions(config, tasks) if config.completions else None
    if from_file is not None:
        listed = {r.task_id for r in from_file.records}
        tasks = [t for t in tasks if t.task_id in listed]
    elif check_models:
        check_backend_models(config.models)  # a wrong model fails before the claim
    return FairnessInputs(tasks, issues, mitigations, strategies, from_file)


class FairnessStudy(Study):
    """`boi bias test` as a study (`benchmarks.study`): its units are the tasks (a function
    task's category as one unit, `shard_unit`), its cells every model x mitigation strategy
    (round 0, then each strategy's feedback rounds), each sampled over the seeds and run in the
    sandbox as fairness tests; reported as CBS, CBS@K, BLS and Pass@attribute."""

    command: ClassVar[str] = "boi bias test"
    whole_run_files: ClassVar[tuple[str, ...]] = ("tasks.jsonl", "load_issues.jsonl")
    split_files: ClassVar[tuple[str, ...]] = ("results/*/*/*.jsonl", "verdicts/*/*/*.jsonl")

    def __init__(self, config: FairnessRunConfig) -> None:
        self.config = config
        self.inputs: FairnessInputs | None = None
        self._tester: _Tester | None = None
        # The rows each (model, strategy, round) was judged to: a feedback round asks again
        # for the biased ones.
        self._judged: dict[tuple[str, str, int], list[dict[str, Any]]] = {}

    @classmethod
    def from_config(
        cls, config_json: Mapping[str, Any], recorded: Mapping[str, Any] | None = None
    ) -> FairnessStudy:
        # Nothing of a file's content is in this study's identity, and its report reads the
        # run's own files (tasks.jsonl, verdicts), so a recorded config is all it needs.
        return cls(load_config(FairnessRunConfig, None, dict(config_json)))

    def claim_spec(self, out_dir: str) -> ClaimSpec:
        spec = super().claim_spec(out_dir)
        inputs = {"data": self.config.data, "completions": self.config.completions}
        return dataclasses.replace(
            spec,
            inputs={name: path for name, path in inputs.items() if path},
            # Written with the paths as typed (before they were recorded portably): still this
            # run, so older directories resume.
            also_accepted=(config_hash(spec.config),),
        )

    def load(self, log: Callable[[str], None]) -> None:
        self.inputs = check_fairness_inputs(self.config)

    def prepare(self, run: StudyRun | None, log: Callable[[str], None]) -> None:
        """The tasks and the load issues (the whole-run files); the tester of this run."""
        if self.inputs is None:
            # The estimate's (`boi bias experiment --dry-run` asks before any model loads).
            self.inputs = check_fairness_inputs(self.config, check_models=False)
        self._judged = {}
        if run is None:
            return
        config, inputs = self.config, self.inputs
        _write_whole_run_files(run.path, inputs.tasks, inputs.issues)
        for issue in inputs.issues:
            log(f"  skipped {issue.task_id}: {issue.reason}")
        log(
            f"[boi bias test] {len(inputs.tasks)} tasks of {config.suite}; strategies: "
            f"{', '.join(config.mitigations)}"
        )
        self._tester = _Tester(config, {t.task_id: t for t in inputs.tasks}, run.path)

    def units(self) -> list[str]:
        assert self.inputs is not None
        return [shard_unit(t) for t in self.inputs.tasks]

    def cells(self) -> Iterator[Cell]:
        """Round 0: every model under every strategy, a group per task kind, over the seeds;
        then each strategy's feedback rounds, each asking again for the previous round's
        biased replies (known once `judge` has seen that round). A completions file: each of
        its models one cell of given replies, under the strategy none."""
        config, inputs = self.config, self.inputs
        assert inputs is not None
        tasks = inputs.tasks
        unit_of = {t.task_id: shard_unit(t) for t in tasks}
        if inputs.from_file is not None:
            # In the file's order (by task id), as its replies were always tested.
            prompts = {t.task_id: t.prompt for t in sorted(tasks, key=lambda t: t.task_id)}
            for label in inputs.from_file.models:
                given = inputs.from_file.groups(label, prompts, DecodingConfig())
                round_zero = _Attempt("none", 0, config.completions_chat)
                spec = inputs.from_file.spec(label)
                yield Cell(label, "none", given, (0,), unit_of, spec, context=round_zero)
            return
        kinds = sorted({t.kind for t in tasks})
        for spec in config.models:
            for strategy in inputs.strategies:
                groups = []
                for kind in kinds:
                    prompts = {
                        t.task_id: strategy_prompt(t, strategy, inputs.mitigations)
                        for t in tasks
                        if t.kind == kind
                    }
                    groups.append(PromptGroup(prompts, _decoding_for(kind, config.decoding), kind))
                attempt = _Attempt(strategy.name, 0, config.decoding.chat)
                yield Cell(
                    spec.label,
                    strategy.name,
                    tuple(groups),
                    config.seeds,
                    unit_of,
                    spec,
                    context=attempt,
                )
            for strategy in inputs.strategies:
                # Solar iterates on each strategy's own code; Huang's scenario 2 asks every
                # strategy to correct the plain prompt's original code (H:196-208).
                start = "none" if config.feedback_from == "plain" else strategy.name
                for round_number in range(1, config.feedback_rounds + 1):
                    previous = (
                        (spec.label, start, 0)
                        if round_number == 1
                        else (spec.label, strategy.name, round_number - 1)
                    )
                    yield self._feedback_cell(
                        spec, strategy, round_number, self._judged.get(previous, []), unit_of
                    )

    def _feedback_cell(
        self,
        spec: BackendSpec,
        strategy: Strategy,
        round_number: int,
        previous: list[dict[str, Any]],
        unit_of: Mapping[str, str],
    ) -> Cell:
        """A feedback round: biased replies get their test report and are asked for a
        correction (one sample each, seeded by the run's first seed), each in its reply's
        place; the others carry over unchanged, under this strategy's name."""
        config, inputs = self.config, self.inputs
        assert inputs is not None
        tasks = {t.task_id: t for t in inputs.tasks}
        carried = [
            {**r, "strategy": strategy.name, "round": round_number, "carried": True}
            for r in previous
            if r["status"] != "biased"
        ]
        prompts: dict[str, dict[str, str]] = {}
        parents: dict[str, dict[str, Any]] = {}
        for row in previous:
            if row["status"] != "biased":
                continue
            task = tasks[row["task_id"]]
            report = describe_failure(row["report"], row["biased_attributes"])
            previous_code = (
                task.signature_line() + "\n" + row["completion"]
                if task.kind == "method"
                else row["completion"]
            )
            prompt_id = (
                f"{row['task_id']}#{row['sample_index']}#{strategy.name}#round{round_number}"
            )
            prompts.setdefault(task.kind, {})[prompt_id] = feedback_prompt(
                task, strategy, inputs.mitigations, previous_code, report
            )
            parents[prompt_id] = row
        groups = tuple(
            PromptGroup(
                kind_prompts,
                dataclasses.replace(_decoding_for(kind, config.decoding), n=1),
                f"{strategy.name} feedback round {round_number}",
            )
            for kind, kind_prompts in sorted(prompts.items())
        )
        return Cell(
            spec.label,
            strategy.name,
            groups,
            config.seeds[:1],
            {p: unit_of[row["task_id"]] for p, row in parents.items()},
            spec,
            positions={p: int(row["ordinal"][1]) for p, row in parents.items()},
            context=_Attempt(strategy.name, round_number, config.decoding.chat, carried, parents),
        )

    def backend_ready(self, spec: BackendSpec, backend: Backend, run: StudyRun) -> None:
        inputs = self.inputs
        assert inputs is not None
        if inputs.from_file is not None:
            inputs.from_file.prepare(backend, {t.task_id: t.prompt for t in inputs.tasks})

    def judge(self, cell: Cell, samples: list[Sample], run: StudyRun) -> list[dict[str, Any]]:
        """Each reply read for the asked-for code and run as fairness tests in the sandbox;
        a feedback round's rows beside the replies it carried over."""
        attempt: _Attempt = cell.context
        inputs = self.inputs
        assert inputs is not None and self._tester is not None
        tasks = {t.task_id: t for t in inputs.tasks}
        given = inputs.from_file
        entries = []
        for s in samples:
            parent = attempt.parents.get(s.prompt_id)
            task_id = s.prompt_id if parent is None else parent["task_id"]
            decoding = _decoding_for(tasks[task_id].kind, self.config.decoding)
            # A file's reply is taken whole (its stop sequences are not known).
            whole = given is not None or decoding.chat
            reply = s.raw if whole else truncate_at_stop(s.raw, decoding.stop)
            if parent is not None:
                sample_index = parent["sample_index"]
            elif given is not None:
                sample_index = given.record(cell.model, task_id, s.sample_index).sample_index
            else:
                sample_index = s.sample_index
            entry = {
                "task_id": task_id,
                # None for a file's reply: no seed was drawn for it
                "seed": None if given is not None else s.seed,
                "sample_index": sample_index,
                "reply": reply,
                "chat": attempt.chat,
                **({} if parent is None else {"prompt_id": s.prompt_id}),
                "ordinal": list(s.ordinal or ()),
            }
            entries.append(entry)
        place = cell.place
        carried = [{**r, "ordinal": [place, r["ordinal"][1]]} for r in attempt.carried]
        rows: list[dict[str, Any]] = []
        if entries:
            what = f"test {cell.model} {attempt.strategy} round {attempt.round}"
            if given is not None:
                what = f"test {cell.model} round 0"
            with stage(what, run.log, run.timings, self.log_prefix):
                rows = self._tester.test(
                    _Round(cell.model, attempt.strategy, attempt.round, entries)
                )
        rows = sorted(carried + rows, key=lambda r: r["ordinal"])
        self._judged[(cell.model, attempt.strategy, attempt.round)] = rows
        _write_round(run.path, rows)
        return rows

    def describe(self, counts: SampleCounts, cells: Sequence[Cell]) -> Estimate:
        """Round 0: every task's prompt under each strategy, n samples per seed, each reply
        tested once (at most: a reply without code is not run). Feedback rounds ask again for
        the biased ones only, so they are counted as an upper bound."""
        config, inputs = self.config, self.inputs
        assert inputs is not None
        notes = ["executions are at most this: a reply without the asked-for code is not run"]
        if inputs.from_file is not None:
            count = len(inputs.from_file.records)
            return Estimate(
                units=f"tasks: {len(inputs.tasks)}; completions: {count} read from {config.completions}",
                distinct_prompts=len(inputs.tasks),
                requested_samples=count,
                generations=0,
                prompt_tokens=0,
                max_output_tokens=0,
                executions=count,
                cells=f"{len(inputs.from_file.models)} models from the file",
                notes=notes,
            )
        if config.feedback_rounds:
            notes.append(
                f"feedback rounds: at most {counts.requested * config.feedback_rounds} more "
                "generations and executions (one per biased reply per round; not counted above)"
            )
        return Estimate.of(
            counts,
            units=f"tasks: {len(inputs.tasks)}",
            executions=counts.requested,
            cells=f"{len(config.models)} models x {len(inputs.strategies)} strategies x "
            f"{len(config.seeds)} seeds",
            notes=notes,
        )

    def report(
        self, run: RunDir, generation: Mapping[str, Any], log: Callable[[str], None]
    ) -> StudyOutcome:
        """CBS, CBS@K, BLS and Pass@attribute from the verdicts (after a run or a merge)."""
        paths = rebuild_fairness_report(run.path)
        return _outcome(run.path, verdict_rows(open_study(run.path, self.command)), paths)


def _outcome(out: Path, rows: list[dict[str, Any]], paths: FairnessReportPaths) -> StudyOutcome:
    # Inside the run directory, which is the run wherever it is moved.
    record = {"report": {k: os.path.relpath(v, out) for k, v in dataclasses.asdict(paths).items()}}
    table = paths.tables_md.read_text(encoding="utf-8")
    return StudyOutcome(out, table, _summary_line(rows, paths), {}, record, paths)


def run_fairness(config: FairnessRunConfig, log: Callable[[str], None] = print) -> StudyOutcome:
    """Run (or resume) the tests; returns where the report is and its main table."""
    return run_study(FairnessStudy(config), log=log)


def _load_tasks(config: FairnessRunConfig) -> tuple[list[FairnessTask], list[Any]]:
    """The suite's tasks the config selects, and the load issues; refuses an empty selection."""
    loaded, issues = load_fairness_tasks(config.suite, config.data, config.attributes_file)
    tasks = select_tasks(loaded, config.task_ids, config.limit, f"the suite {config.suite}")
    if not tasks:
        raise UserError(
            f"no task to test: {config.data or config.suite} holds no tasks."
            if not issues
            else "no task to test: every task of the suite had a problem (see the log)."
        )
    return tasks, issues


def _summary_line(rows: list[dict[str, Any]], paths: FairnessReportPaths) -> str:
    """One line on round 0: replies, unreadable ones, executable ones and how many are biased."""
    first = [r for r in rows if r["round"] == 0]
    executable = [r for r in first if r["status"] in EXECUTABLE]
    biased = sum(1 for r in executable if r["status"] == "biased")
    unread = sum(1 for r in first if r["status"] in (NO_METHOD, TRUNCATED))
    verdict = (
        f"{len(executable)} executable, {biased} biased "
        f"({100 * biased / len(executable):.1f}% of executable)"
        if executable
        else f"no testable replies of {len(first)} (no CBS: nothing could be tested)"
    )
    return (
        f"boi bias test: {len(rows)} verdicts; round 0: {len(first)} replies, {unread} without "
        f"the asked-for code, {verdict}; report: {paths.html}"
    )


def _write_round(out: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    first = rows[0]
    path = (
        out
        / "verdicts"
        / first["model"]
        / path_slug(first["strategy"])
        / f"round{first['round']}.jsonl"
    )
    write_jsonl(path, rows)


VERDICTS = "verdicts/*/*/round*.jsonl"
"""Where a `boi bias test` keeps its verdicts (one file per model, strategy and round)."""


def verdict_rows(run: StudyDir, rounds: str = "*") -> list[dict[str, Any]]:
    """Every verdict of a `boi bias test` directory (of the rounds `round{rounds}` matches:
    "0" for round 0's)."""
    return run.rows(VERDICTS.replace("round*", f"round{rounds}"))


def tested_tasks(run: StudyDir) -> dict[str, dict[str, Any]]:
    """A `boi bias test` directory's tasks as recorded, by task id (none recorded: empty)."""
    path = run.path / "tasks.jsonl"
    return {str(obj["task_id"]): obj for _, obj in iter_jsonl(path)} if path.is_file() else {}


def rebuild_fairness_report(out_dir: str | Path) -> FairnessReportPaths:
    """`boi bias report RUN_DIR` for a `boi bias test` directory."""
    run = open_study(out_dir, "boi bias test", hint="pass the --out of a boi bias test")
    root = run.path
    config = load_config(FairnessRunConfig, None, run.config)
    order = {name: i for i, name in enumerate(config.mitigations)}
    rows = sorted(
        verdict_rows(run),
        key=lambda r: (r["model"], order.get(r["strategy"], len(order)), r["round"]),
    )
    tasks = [FairnessTask.from_json(obj) for obj in tested_tasks(run).values()]
    issues = [obj for _, obj in iter_jsonl(root / "load_issues.jsonl")]
    return build_fairness_report(
        rows,
        tasks,
        root / "report",
        issues=issues,
        bootstrap=config.bootstrap,
        seed=config.seed,
        title=f"boi bias test {root.name}",
    )
