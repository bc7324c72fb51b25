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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.common.config import load_config, to_dict
from benchmarks.common.config import resolve_config_path as resolve_bundled
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import JsonlAppender, iter_jsonl, write_jsonl
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash, portable_config
from benchmarks.common.rundir import RunDir, path_slug
from benchmarks.execution import ExecutionConfig, TableJob, call_tables
from benchmarks.generation import (
    Backend,
    BackendSpec,
    DecodingConfig,
    PromptGroup,
    Sample,
    for_kind,
    load_backend,
    sample_prompts,
    truncate_at_stop,
)
from benchmarks.generation import check_models as check_backend_models
from benchmarks.generation.replies import ReplyReading, read_function_reply, read_method_reply
from benchmarks.study import (
    ClaimSpec,
    Estimate,
    SampleCounts,
    StudyOutcome,
    StudyRun,
    run_study,
    work_hash_of,
)
from bias import BUNDLED_CONFIGS
from bias.completions import read_completions
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


def resolve_config_path(name_or_path: str | None) -> str | None:
    """A bundled config name (`test-demo`) or a path, as a path."""
    return resolve_bundled(name_or_path, BUNDLED_CONFIGS)


def load_fairness_config(path: str | None, overrides: dict[str, Any]) -> FairnessRunConfig:
    return load_config(FairnessRunConfig, path, overrides)


FairnessOutcome = StudyOutcome
"""`boi bias test`'s outcome: the study driver's (`report` holds the FairnessReportPaths)."""


def _select(tasks: list[FairnessTask], config: FairnessRunConfig) -> list[FairnessTask]:
    if config.task_ids:
        by_id = {t.task_id: t for t in tasks}
        missing = [t for t in config.task_ids if t not in by_id]
        if missing:
            raise UserError(
                f"task_ids {missing[:3]} are not in the suite; ids look like {tasks[0].task_id!r}."
            )
        tasks = [by_id[t] for t in config.task_ids]
    return tasks[: config.limit] if config.limit else tasks


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
                    rows[key] = done[key]
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
        }


def _generate(
    backend: Backend,
    prompts: dict[str, str],
    decoding: DecodingConfig,
    seeds: Sequence[int],
    out: Path,
    log: Callable[[str], None],
    timings: dict[str, float],
    what: str,
) -> list[tuple[Sample, str]]:
    """Each prompt's samples with the reply as the model wrote it (a base model's cut at the
    stops); the asked-for code is read from the reply by `read_reply`, which knows the task."""
    samples, _ = sample_prompts(
        backend,
        [PromptGroup(prompts, decoding)],
        seeds,
        out / "generations.jsonl",
        log=log,
        timings=timings,
        what=what,
        prefix="boi bias test",
    )
    return [
        (s, s.raw if decoding.chat else truncate_at_stop(s.raw, decoding.stop)) for s in samples
    ]


def _model_entries(
    config: FairnessRunConfig,
    backend: Backend,
    label: str,
    strategy: Strategy,
    mitigations: MitigationFile,
    tasks: list[FairnessTask],
    out: Path,
    log: Callable[[str], None],
    timings: dict[str, float],
) -> list[dict[str, Any]]:
    """Round 0's replies of one model and strategy: every task, every seed."""
    entries: list[dict[str, Any]] = []
    for kind in sorted({t.kind for t in tasks}):
        kind_tasks = [t for t in tasks if t.kind == kind]
        prompts = {t.task_id: strategy_prompt(t, strategy, mitigations) for t in kind_tasks}
        decoding = _decoding_for(kind, config.decoding)
        what = f"{label} {strategy.name}"
        for s, reply in _generate(
            backend, prompts, decoding, config.seeds, out, log, timings, what
        ):
            entries.append(
                {
                    "task_id": s.prompt_id,
                    "sample_index": s.sample_index,
                    "reply": reply,
                    "chat": decoding.chat,
                }
            )
    return entries


def _file_entries(
    config: FairnessRunConfig, tasks: list[FairnessTask]
) -> dict[str, list[dict[str, Any]]]:
    """Round 0's replies per model label, from a completions file (another harness's)."""
    assert config.completions is not None
    by_id = {t.task_id: t for t in tasks}
    known = {t.task_id: t.suite for t in tasks}
    records = read_completions(
        config.completions,
        known,
        suite=tasks[0].suite,
        prompts={_prompt_text(t): t.task_id for t in tasks},
    )
    entries: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if record.task_id not in by_id:
            continue
        entries.setdefault(record.model, []).append(
            {
                "task_id": record.task_id,
                "sample_index": record.sample_index,
                "reply": record.completion,
                "chat": config.completions_chat,
            }
        )
    return entries


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
class _Session:
    """What the stages of one `boi bias test` run share."""

    config: FairnessRunConfig
    out: Path
    tasks: list[FairnessTask]
    by_id: dict[str, FairnessTask]
    mitigations: MitigationFile
    tester: _Tester
    log: Callable[[str], None]
    timings: dict[str, float]


@dataclass
class FairnessInputs:
    """Everything a `boi bias test` run reads, read and checked before its directory is
    claimed (`check_fairness_inputs`)."""

    tasks: list[FairnessTask]
    issues: list[Any]
    mitigations: MitigationFile
    strategies: list[Any]
    from_file: dict[str, list[dict[str, Any]]] | None


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
    from_file = _file_entries(config, tasks) if config.completions else None
    if from_file is not None:
        listed = {e["task_id"] for rows in from_file.values() for e in rows}
        tasks = [t for t in tasks if t.task_id in listed]
    elif check_models:
        check_backend_models(config.models)  # a wrong model fails before the claim
    return FairnessInputs(tasks, issues, mitigations, strategies, from_file)


class FairnessStudy:
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

    @classmethod
    def from_config(
        cls, config_json: Mapping[str, Any], recorded: Mapping[str, Any] | None = None
    ) -> FairnessStudy:
        # Nothing of a file's content is in this study's identity, and its report reads the
        # run's own files (tasks.jsonl, verdicts), so a recorded config is all it needs.
        return cls(load_config(FairnessRunConfig, None, dict(config_json)))

    def claim_spec(self, out_dir: str) -> ClaimSpec:
        config_json = {**to_dict(self.config), "out_dir": out_dir}
        # Recorded and hashed with portable paths (no machine's absolute path): the run is the
        # same run from its manifest alone, wherever it is merged or resumed.
        recorded = portable_config(config_json)
        inputs = {"data": self.config.data, "completions": self.config.completions}
        return ClaimSpec(
            config=config_json,
            digest=config_hash(recorded),
            work_hash=work_hash_of(recorded),
            inputs={name: path for name, path in inputs.items() if path},
            record={"seeds": list(self.config.seeds)},
            # Written with the paths as typed (before they were recorded portably): still this
            # run, so older directories resume.
            also_accepted=(config_hash(config_json),),
            recorded=recorded,
        )

    def load(self, log: Callable[[str], None]) -> None:
        self.inputs = check_fairness_inputs(self.config)

    def execute(self, run: StudyRun) -> StudyOutcome:
        assert self.inputs is not None
        config, out, log = self.config, run.path, run.log
        inputs = self.inputs
        tasks, issues = inputs.tasks, inputs.issues
        _write_whole_run_files(out, tasks, issues)
        for issue in issues:
            log(f"  skipped {issue.task_id}: {issue.reason}")
        log(
            f"[boi bias test] {len(tasks)} tasks of {config.suite}; strategies: {', '.join(config.mitigations)}"
        )
        owned = run.owned([shard_unit(t) for t in tasks])
        mine = [t for t in tasks if owned(shard_unit(t))]
        by_id = {t.task_id: t for t in tasks}
        session = _Session(
            config,
            out,
            mine,
            by_id,
            inputs.mitigations,
            _Tester(config, by_id, out),
            log,
            run.timings,
        )
        rows: list[dict[str, Any]] = []
        if inputs.from_file is not None:
            ids = {t.task_id for t in mine}
            from_file = {
                label: [e for e in entries if e["task_id"] in ids]
                for label, entries in inputs.from_file.items()
            }
            rows += _test_completions_file(session, from_file)
        for spec in config.models if inputs.from_file is None else ():
            rows += _test_model(session, spec, inputs.strategies)
        if run.shard is not None:
            return StudyOutcome(out, "", "", {})
        with stage("report", log, run.timings, "boi bias test"):
            paths = build_fairness_report(
                rows,
                tasks,
                out / "report",
                issues=[{"task_id": i.task_id, "reason": i.reason} for i in issues],
                bootstrap=config.bootstrap,
                seed=config.seed,
                title=f"boi bias test {out.name}",
            )
        return _outcome(out, rows, paths)

    def estimate(self, log: Callable[[str], None]) -> Estimate:
        """Round 0: every task's prompt under each strategy, n samples per seed, each reply
        tested once (at most: a reply without code is not run). Feedback rounds ask again for
        the biased ones only, so they are counted as an upper bound."""
        config = self.config
        inputs = check_fairness_inputs(config, check_models=False)
        if inputs.from_file is not None:
            count = sum(len(entries) for entries in inputs.from_file.values())
            return Estimate(
                units=f"tasks: {len(inputs.tasks)}; completions: {count} read from {config.completions}",
                distinct_prompts=len(inputs.tasks),
                requested_samples=count,
                generations=0,
                prompt_tokens=0,
                max_output_tokens=0,
                executions=count,
                cells=f"{len(inputs.from_file)} models from the file",
                notes=[
                    "executions are at most this: a reply without the asked-for code is not run"
                ],
            )
        counts = SampleCounts()
        seeds = len(config.seeds)
        for _ in config.models:
            for strategy in inputs.strategies:
                for kind in sorted({t.kind for t in inputs.tasks}):
                    kind_tasks = [t for t in inputs.tasks if t.kind == kind]
                    decoding = _decoding_for(kind, config.decoding)
                    prompts = [strategy_prompt(t, strategy, inputs.mitigations) for t in kind_tasks]
                    counts += SampleCounts.sampled(
                        prompts, decoding.n, seeds, decoding.max_new_tokens
                    )
        notes = ["executions are at most this: a reply without the asked-for code is not run"]
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
            f"{seeds} seeds",
            notes=notes,
        )

    def row_order(self, out: Path, relative: str) -> Callable[[dict[str, Any]], Any]:
        """The unsharded order: round 0 of a model's replies by kind, seed, the task's place,
        sample (the sampling loop's order); a completions file's and the feedback rounds'
        by task id, then sample; the results logs (read by nothing but a resume) the same."""
        tasks = [FairnessTask.from_json(obj) for _, obj in iter_jsonl(out / "tasks.jsonl")]
        place = {t.task_id: i for i, t in enumerate(tasks)}
        kinds = {kind: i for i, kind in enumerate(sorted({t.kind for t in tasks}))}
        kind_of = {t.task_id: kinds[t.kind] for t in tasks}
        n = max(1, self.config.decoding.n)
        by_generation = (
            relative.startswith("verdicts")
            and relative.endswith("round0.jsonl")
            and self.config.completions is None
        )
        if by_generation:
            return lambda row: (
                kind_of[row["task_id"]],
                int(row["sample_index"]) // n,
                place[row["task_id"]],
                int(row["sample_index"]),
            )
        return lambda row: (row["task_id"], int(row["sample_index"]), str(row.get("key", "")))

    def report_from_files(self, run: RunDir, log: Callable[[str], None]) -> StudyOutcome:
        paths = rebuild_fairness_report(run.path)
        return _outcome(run.path, read_verdicts(run.path), paths)


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
    tasks = _select(loaded, config)
    if not tasks:
        raise UserError(
            f"no task to test: {config.data or config.suite} holds no tasks."
            if not issues
            else "no task to test: every task of the suite had a problem (see the log)."
        )
    return tasks, issues


def _test_round_zero(session: _Session, batch: _Round, what: str) -> list[dict[str, Any]]:
    """Test one round-0 batch of completions (the stage `what`) and write its verdicts."""
    with stage(what, session.log, session.timings, "boi bias test"):
        rows = session.tester.test(batch)
    _write_round(session.out, rows)
    return rows


def _test_completions_file(
    session: _Session, from_file: Mapping[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Round 0 of every model in a completions file, under the strategy none."""
    rows: list[dict[str, Any]] = []
    for label, entries in from_file.items():
        rows += _test_round_zero(
            session, _Round(label, "none", 0, entries), f"test {label} round 0"
        )
    return rows


def _test_model(
    session: _Session, spec: BackendSpec, strategies: Sequence[Strategy]
) -> list[dict[str, Any]]:
    """One model: round 0 of every strategy, then each strategy's feedback rounds."""
    config, label = session.config, spec.label
    with stage(f"load {label}", session.log, session.timings, "boi bias test"):
        backend = load_backend(spec)
    rows: list[dict[str, Any]] = []
    round_zero: dict[str, list[dict[str, Any]]] = {}
    for strategy in strategies:
        entries = _model_entries(
            config,
            backend,
            label,
            strategy,
            session.mitigations,
            session.tasks,
            session.out,
            session.log,
            session.timings,
        )
        batch = _Round(label, strategy.name, 0, entries)
        current = _test_round_zero(session, batch, f"test {label} {strategy.name} round 0")
        rows += current
        round_zero[strategy.name] = current
    for strategy in strategies:
        # Solar iterates on each strategy's own code; Huang's scenario 2 asks every
        # strategy to correct the plain prompt's original code (H:196-208).
        start = round_zero["none" if config.feedback_from == "plain" else strategy.name]
        rows += _feedback_rounds(session, backend, strategy, start)
    return rows


def _feedback_rounds(
    session: _Session, backend: Backend, strategy: Strategy, current: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A strategy's feedback rounds, each correcting the previous round's biased code."""
    rows: list[dict[str, Any]] = []
    for round_number in range(1, session.config.feedback_rounds + 1):
        current = _feedback_round(
            session.config,
            backend,
            session.tester,
            session.by_id,
            strategy,
            session.mitigations,
            current,
            round_number,
            session.out,
            session.log,
            session.timings,
        )
        _write_round(session.out, current)
        rows += current
    return rows


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


def _feedback_round(
    config: FairnessRunConfig,
    backend: Backend,
    tester: _Tester,
    tasks: Mapping[str, FairnessTask],
    strategy: Strategy,
    mitigations: MitigationFile,
    previous: list[dict[str, Any]],
    round_number: int,
    out: Path,
    log: Callable[[str], None],
    timings: dict[str, float],
) -> list[dict[str, Any]]:
    """Biased completions get their test report and are asked for a correction (one sample
    each, seeded by the run's first seed); the others carry over unchanged, under this
    strategy's name."""
    biased = [r for r in previous if r["status"] == "biased"]
    carried = [
        {**r, "strategy": strategy.name, "round": round_number, "carried": True}
        for r in previous
        if r["status"] != "biased"
    ]
    if not biased:
        return carried
    prompts: dict[str, str] = {}
    keys: dict[str, dict[str, Any]] = {}
    for row in biased:
        task = tasks[row["task_id"]]
        report = describe_failure(row["report"], row["biased_attributes"])
        previous_code = (
            task.signature_line() + "\n" + row["completion"]
            if task.kind == "method"
            else row["completion"]
        )
        prompt_id = f"{row['task_id']}#{row['sample_index']}#{strategy.name}#round{round_number}"
        prompts[prompt_id] = feedback_prompt(task, strategy, mitigations, previous_code, report)
        keys[prompt_id] = row
    entries = []
    for kind in sorted({tasks[r["task_id"]].kind for r in biased}):
        kind_prompts = {
            p: text for p, text in prompts.items() if tasks[keys[p]["task_id"]].kind == kind
        }
        decoding = dataclasses.replace(_decoding_for(kind, config.decoding), n=1)
        what = f"{strategy.name} feedback round {round_number}"
        for s, reply in _generate(
            backend, kind_prompts, decoding, config.seeds[:1], out, log, timings, what
        ):
            row = keys[s.prompt_id]
            entries.append(
                {
                    "task_id": row["task_id"],
                    "sample_index": row["sample_index"],
                    "reply": reply,
                    "chat": decoding.chat,
                    "prompt_id": s.prompt_id,
                }
            )
    model = previous[0]["model"]
    with stage(f"test {model} {strategy.name} round {round_number}", log, timings, "boi bias test"):
        tested = tester.test(_Round(model, strategy.name, round_number, entries))
    return sorted(carried + tested, key=lambda r: (r["task_id"], r["sample_index"]))


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


def read_verdicts(out_dir: str | Path) -> list[dict[str, Any]]:
    root = RunDir.open(out_dir, what="boi bias test", hint="pass the --out of a boi bias test").path
    files = sorted((root / "verdicts").rglob("*.jsonl"))
    if not files:
        raise UserError(f"{root} has no verdicts yet; run boi bias test to finish it.")
    return [obj for path in files for _, obj in iter_jsonl(path)]


def rebuild_fairness_report(out_dir: str | Path) -> FairnessReportPaths:
    """`boi bias report RUN_DIR` for a `boi bias test` directory."""
    run = RunDir.open(out_dir, what="boi bias test", hint="pass the --out of a boi bias test")
    root = run.path
    config = load_config(FairnessRunConfig, None, run.config)
    order = {name: i for i, name in enumerate(config.mitigations)}
    rows = sorted(
        read_verdicts(root),
        key=lambda r: (r["model"], order.get(r["strategy"], len(order)), r["round"]),
    )
    tasks = [FairnessTask.from_json(obj) for _, obj in iter_jsonl(root / "tasks.jsonl")]
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
