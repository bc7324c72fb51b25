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
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.config import load_config, to_dict
from benchmarks.common.config import resolve_config_path as resolve_bundled
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, write_jsonl
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash, run_record
from benchmarks.common.rundir import MANIFEST, claim_run_dir, path_slug
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.generation import (
    BackendSpec,
    DecodingConfig,
    for_kind,
    generate_samples,
    load_backend,
)
from benchmarks.generation._backend import Backend
from bias.cases import (
    CaseConfig,
    Plan,
    attribute_use,
    fairness_problem,
    function_plan,
    method_plan,
    read_verdict,
    sibling_pools,
    syntax_problem,
)
from bias.fairness_report import FairnessReportPaths, build_fairness_report
from bias.mitigation import (
    MitigationFile,
    describe_failure,
    feedback_prompt,
    load_mitigations,
    strategy_prompt,
)
from bias.tasks import FairnessTask, load_fairness_tasks

BUNDLED_CONFIGS = Path(__file__).parent / "configs"

# A text-to-code completion is a whole program: only a main guard or a top-level print ends it.
FUNCTION_STOP = ("\nif __name__", "\nprint(", "\n```")
FUNCTION_CHAT_INSTRUCTION = (
    "Write the Python function the comments below ask for. Reply with the whole function in one "
    "```python code block."
)


def _fairness_decoding() -> DecodingConfig:
    # Huang et al.: K = 5 completions per prompt at temperature 1.0.
    return DecodingConfig(temperature=1.0, top_p=0.95, n=5, max_new_tokens=256)


def _fairness_execution() -> ExecutionConfig:
    # Hundreds of calls per program cross the sandbox's pipe; no reference solution exists.
    return ExecutionConfig(timeout=20.0, reference_timing=False)


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
    cases: CaseConfig = field(default_factory=CaseConfig)
    execution: ExecutionConfig = field(default_factory=_fairness_execution)
    bootstrap: int = field(default=1000, metadata={"help": "bootstrap resamples for intervals"})
    seed: int = field(default=0, metadata={"help": "seed of the report's bootstrap"})

    def __post_init__(self) -> None:
        if not self.models or not self.seeds or not self.mitigations:
            raise UserError("the test run needs at least one model, seed and mitigation strategy.")
        if self.limit is not None and self.limit < 1:
            raise UserError(f"limit is {self.limit}; use a positive number or leave it out.")
        if not isinstance(self.feedback_rounds, int) or self.feedback_rounds < 0:
            raise UserError(f"feedback_rounds must be 0 or more (got {self.feedback_rounds!r}).")


def resolve_config_path(name_or_path: str | None) -> str | None:
    """A bundled config name (`test-demo`) or a path, as a path."""
    return resolve_bundled(name_or_path, BUNDLED_CONFIGS)


def load_fairness_config(path: str | None, overrides: dict[str, Any]) -> FairnessRunConfig:
    return load_config(FairnessRunConfig, path, overrides)


@dataclass
class FairnessOutcome:
    out_dir: Path
    report: FairnessReportPaths
    table_markdown: str
    summary_line: str


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
    instruction, where the user left HumanEval's defaults."""
    if task_kind != "function":
        return decoding
    return for_kind(decoding, FUNCTION_STOP, FUNCTION_CHAT_INSTRUCTION)


@dataclass
class _Round:
    """The completions of one round of one (model, strategy) and where they go."""

    model: str
    strategy: str
    round: int
    entries: list[dict[str, Any]]  # task_id, sample_index, completion, prompt_id


class _Tester:
    """Plans, runs and reads the fairness tests of a round's completions."""

    def __init__(
        self, config: FairnessRunConfig, tasks: Mapping[str, FairnessTask], out: Path
    ) -> None:
        self.config = config
        self.tasks = tasks
        self.out = out
        self._method_plans: dict[str, Plan] = {}

    def _plans(self, entries: list[dict[str, Any]]) -> list[Plan]:
        plans = []
        by_category: dict[str, list[str]] = {}
        for entry in entries:
            task = self.tasks[entry["task_id"]]
            if task.kind == "function":
                by_category.setdefault(task.category, []).append(entry["completion"])
        pools = {category: sibling_pools(codes) for category, codes in by_category.items()}
        for entry in entries:
            task = self.tasks[entry["task_id"]]
            if task.kind == "method":
                if task.task_id not in self._method_plans:
                    self._method_plans[task.task_id] = method_plan(task, self.config.cases)
                problem = syntax_problem(task.prompt + entry["completion"])
                plans.append(
                    dataclasses.replace(self._method_plans[task.task_id], untestable=problem)
                    if problem
                    else self._method_plans[task.task_id]
                )
            else:
                plans.append(
                    function_plan(
                        task, entry["completion"], pools[task.category], self.config.cases
                    )
                )
        return plans

    def test(self, batch: _Round) -> list[dict[str, Any]]:
        entries = batch.entries
        plans = self._plans(entries)
        problems, samples = {}, []
        for entry, plan in zip(entries, plans, strict=True):
            if plan.untestable or not plan.cases:
                continue
            problem_id = f"{entry['task_id']}#{entry['sample_index']}"
            task = self.tasks[entry["task_id"]]
            problems[problem_id] = fairness_problem(problem_id, task, plan)
            samples.append(
                {"task_id": problem_id, "completion": entry["completion"] + plan.wrapper}
            )
        results: dict[str, str] = {}
        if samples:
            path = (
                self.out
                / "results"
                / batch.model
                / path_slug(batch.strategy)
                / f"round{batch.round}.jsonl"
            )
            report = execute_samples(
                problems,
                samples,
                self.config.execution,
                path,
                progress=progress_bar(len(samples), f"test {batch.strategy} round {batch.round}"),
            )
            results = {r["task_id"]: str(r.get("result", "")) for r in report.results}
        rows = []
        for entry, plan in zip(entries, plans, strict=True):
            task = self.tasks[entry["task_id"]]
            problem_id = f"{entry['task_id']}#{entry['sample_index']}"
            verdict = read_verdict(results.get(problem_id, ""), plan)
            use = attribute_use(task, entry["completion"]) if task.kind == "method" else None
            notes = [plan.notes] if plan.notes else []
            mutated = verdict.report.get("mutated") or []
            if mutated:
                notes.append(
                    f"the method changes its instance ({', '.join(mutated)}); every case used a "
                    "fresh instance"
                )
            rows.append(
                {
                    "task_id": task.task_id,
                    "category": task.category,
                    "model": batch.model,
                    "strategy": batch.strategy,
                    "round": batch.round,
                    "sample_index": entry["sample_index"],
                    "completion": entry["completion"],
                    "prompt_id": entry.get("prompt_id", task.task_id),
                    **verdict.to_json(),
                    "cases": plan.case_count,
                    "mapping": plan.mapping,
                    "notes": "; ".join(notes),
                    "attribute_use": use,
                    "carried": False,
                }
            )
        return rows


def _generate(
    backend: Backend,
    prompts: dict[str, str],
    decoding: DecodingConfig,
    out: Path,
    log: Callable[[str], None],
) -> dict[str, list[str]]:
    outcome = generate_samples(backend, prompts, decoding, out / "generations.jsonl")
    log(f"  {outcome.summary()}")
    return outcome.completions


def run_fairness(config: FairnessRunConfig, log: Callable[[str], None] = print) -> FairnessOutcome:
    """Run (or resume) the tests; returns where the report is and its main table."""
    out = Path(config.out_dir)
    loaded, issues = load_fairness_tasks(config.suite, config.data, config.attributes_file)
    tasks = _select(loaded, config)
    if not tasks:
        raise UserError(
            f"no task to test: {config.data or config.suite} holds no tasks."
            if not issues
            else "no task to test: every task of the suite had a problem (see the log)."
        )
    mitigations = load_mitigations(config.mitigation_file)
    strategies = [mitigations.strategy(name) for name in config.mitigations]
    config_json = to_dict(config)
    claim_run_dir(out, config_hash(config_json), config_json, option="--out")
    inputs = {"data": config.data} if config.data else {}
    manifest = run_record(config_json, inputs)
    manifest["completed"] = False
    write_text_atomic(out / MANIFEST, json.dumps(manifest, indent=2, default=str))
    write_jsonl(out / "tasks.jsonl", (t.to_json() for t in tasks))
    write_jsonl(
        out / "load_issues.jsonl", ({"task_id": i.task_id, "reason": i.reason} for i in issues)
    )
    for issue in issues:
        log(f"  skipped {issue.task_id}: {issue.reason}")
    log(
        f"[boi bias test] {len(tasks)} tasks of {config.suite}; strategies: {', '.join(config.mitigations)}"
    )

    by_id = {t.task_id: t for t in tasks}
    tester = _Tester(config, by_id, out)
    timings: dict[str, float] = {}
    rows: list[dict[str, Any]] = []
    kinds = {t.kind for t in tasks}
    for spec in config.models:
        label = spec.label
        with stage(f"load {label}", log, timings, "boi bias test"):
            backend = load_backend(spec)
        for strategy in strategies:
            entries: list[dict[str, Any]] = []
            for kind in sorted(kinds):
                kind_tasks = [t for t in tasks if t.kind == kind]
                prompts = {t.task_id: strategy_prompt(t, strategy, mitigations) for t in kind_tasks}
                decoding = _decoding_for(kind, config.decoding)
                for seed_index, seed in enumerate(config.seeds):
                    with stage(
                        f"generate {label} {strategy.name} seed {seed}",
                        log,
                        timings,
                        "boi bias test",
                    ):
                        completions = _generate(
                            backend, prompts, dataclasses.replace(decoding, seed=seed), out, log
                        )
                    for task_id, texts in completions.items():
                        for index, text in enumerate(texts):
                            entries.append({"task_id": task_id, "sample_index": seed_index * decoding.n + index, "completion": text})  # fmt: skip
            with stage(f"test {label} {strategy.name} round 0", log, timings, "boi bias test"):
                current = tester.test(_Round(label, strategy.name, 0, entries))
            _write_round(out, current)
            rows += current
            for round_number in range(1, config.feedback_rounds + 1):
                current = _feedback_round(
                    config,
                    backend,
                    tester,
                    by_id,
                    strategy,
                    mitigations,
                    current,
                    round_number,
                    out,
                    log,
                    timings,
                )
                _write_round(out, current)
                rows += current

    with stage("report", log, timings, "boi bias test"):
        paths = build_fairness_report(
            rows,
            tasks,
            out / "report",
            issues=[{"task_id": i.task_id, "reason": i.reason} for i in issues],
            bootstrap=config.bootstrap,
            seed=config.seed,
            title=f"boi bias test {out.name}",
        )
    manifest.update(
        {
            "completed": True,
            "timings_s": timings,
            "report": {k: str(v) for k, v in dataclasses.asdict(paths).items()},
        }
    )
    write_text_atomic(out / MANIFEST, json.dumps(manifest, indent=2, default=str))
    executable = [r for r in rows if r["status"] != "untestable" and r["round"] == 0]
    biased = sum(1 for r in executable if r["status"] == "biased")
    summary = (
        f"boi bias test: {len(rows)} verdicts; round 0: {len(executable)} executable, "
        f"{biased} biased ({100 * biased / len(executable) if executable else 0:.1f}%); "
        f"report: {paths.html}"
    )
    return FairnessOutcome(out, paths, paths.tables_md.read_text(encoding="utf-8"), summary)


def _feedback_round(
    config: FairnessRunConfig,
    backend: Backend,
    tester: _Tester,
    tasks: Mapping[str, FairnessTask],
    strategy: Any,
    mitigations: MitigationFile,
    previous: list[dict[str, Any]],
    round_number: int,
    out: Path,
    log: Callable[[str], None],
    timings: dict[str, float],
) -> list[dict[str, Any]]:
    """Biased completions get their test report and are asked for a correction (one sample
    each, seeded by the run's first seed); the others carry over unchanged."""
    biased = [r for r in previous if r["status"] == "biased"]
    carried = [
        {**r, "round": round_number, "carried": True} for r in previous if r["status"] != "biased"
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
        prompt_id = f"{row['task_id']}#{row['sample_index']}#round{round_number}"
        prompts[prompt_id] = feedback_prompt(task, strategy, mitigations, previous_code, report)
        keys[prompt_id] = row
    entries = []
    for kind in sorted({tasks[r["task_id"]].kind for r in biased}):
        kind_prompts = {
            p: text for p, text in prompts.items() if tasks[keys[p]["task_id"]].kind == kind
        }
        decoding = dataclasses.replace(
            _decoding_for(kind, config.decoding), n=1, seed=config.seeds[0]
        )
        with stage(
            f"generate {strategy.name} feedback round {round_number}", log, timings, "boi bias test"
        ):
            completions = _generate(backend, kind_prompts, decoding, out, log)
        for prompt_id, texts in completions.items():
            row = keys[prompt_id]
            entries.append({"task_id": row["task_id"], "sample_index": row["sample_index"], "completion": texts[0], "prompt_id": prompt_id})  # fmt: skip
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
    root = Path(out_dir)
    if not (root / MANIFEST).is_file():
        raise UserError(f"{root} holds no {MANIFEST}; pass a directory written by boi bias test.")
    files = sorted((root / "verdicts").rglob("*.jsonl"))
    if not files:
        raise UserError(f"{root} has no verdicts yet; run boi bias test to finish it.")
    return [obj for path in files for _, obj in iter_jsonl(path)]


def rebuild_fairness_report(out_dir: str | Path) -> FairnessReportPaths:
    """`boi bias report RUN_DIR` for a `boi bias test` directory."""
    root = Path(out_dir)
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    config = load_config(FairnessRunConfig, None, manifest["config"])
    order = {name: i for i, name in enumerate(config.mitigations)}
    rows = sorted(
        read_verdicts(root),
        key=lambda r: (r["model"], order.get(r["strategy"], len(order)), r["round"]),
    )
    tasks = [FairnessTask.from_json(obj) for _, obj in iter_jsonl(root / "tasks.jsonl")]
    issues = [obj for _, obj in iter_jsonl(root / "load_issues.jsonl")]
    return build_fairness_report(
        rows, tasks, root / "report", issues=issues, bootstrap=config.bootstrap,
        seed=config.seed, title=f"boi bias test {root.name}",
    )  # fmt: skip
