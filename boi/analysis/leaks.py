"""Leak audit: how much of each problem's hidden tests its prompt's examples already show.

Needs no run: `boi analyze leaks --dataset NAME` audits a dataset (humaneval, humanevalplus,
mbpp, code_contests or a HumanEval-format JSONL file). `boi analyze leaks RUN_DIR` audits the
original problems of a `boi run` and adds, beside the run's numbers, the Drop Ex effect per
problem against its leak share. A run directory that keeps its problems without their tests
(the committed results run) has them reloaded from its datasets by task id, where the
dataset's prompt is the run's (`restore_tests`), or the audit is refused in one sentence.

Per problem, by value, never by text (`boi.analysis.leak_cases`): the examples the prompt's
`examples` block shows (input and stated output), the hidden test cases (a call and its
expected value, or a stdin/stdout pair), and what could not be read of either (`unparsed`,
never guessed). A hidden case is *shown* when an example has its input and an output the tests
would accept (within the test's own tolerance). An example *contradicts the tests* when a
hidden case has its input and rejects its output.

The memoriser is a program that returns the shown output for a shown input and raises for any
other; it runs in the sandbox (`benchmarks.execution.call_tables`) on every hidden case's
input, and its outputs are judged here as the tests judge them: `leak_share` is the fraction
of the parsed hidden cases it passes, the share a model could pass by pattern-matching the
prompt. The canonical solution runs the same way on the examples' inputs; an example whose
stated output it does not produce is a data bug worth reporting upstream (a contest problem
that accepts several answers is marked, not listed).

With a run: per panel member (model @ setting, as `boi analyze hints`), the Drop Ex effect of
a problem is its original pass rate minus its Drop Ex pass rate (in points); the report shows
it against the leak share (scatter), with Pearson's r, its p-value and a bootstrap interval
over problems (`benchmarks.stats`). A positive r says the examples help where they give tests
away (leakage); r near 0 says they help as examples do.

Writes leaks.jsonl (one row per problem), leaks.csv (its counts), summary.json (per dataset,
and the correlations) and a report section: the run's report.html, or leaks.html on its own
without a run. Rerunning recomputes everything. The output folder (--out, or its default) must
be new, empty or an earlier audit's (`OUTPUT_MARKERS`): a user's folder is never written into.
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import inspect
import io
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.config import add_dataclass_arguments, from_mapping, overrides_from_args
from benchmarks.common.errors import UserError
from benchmarks.common.outputs import holds_ours, output_dir
from benchmarks.common.progress import progress_bar
from benchmarks.common.rundir import path_slug
from benchmarks.execution import ExecutionConfig, TableBatch, TableJob, TableResult, call_tables
from benchmarks.loaders import dataset_help, load_benchmark
from benchmarks.loaders.humanevalplus import python_literal
from benchmarks.problem import Problem
from benchmarks.report import (
    esc,
    figure_html,
    filtered_tables,
    html_document,
    natural_key,
    scatter_chart,
)
from benchmarks.report.sections import analysis_dir, write_section
from benchmarks.stats import is_defined, mean, pearson, pearson_interval
from boi.analysis.hints import HintsConfig, audit_runs
from boi.analysis.leak_cases import (
    Case,
    Judge,
    Signature,
    Unparsed,
    input_key,
    read_examples,
    read_hidden,
    short,
    stdio_key,
)
from boi.reporting import rebuild_run_report
from boi.run_reader import Run, open_run
from perturb.blocks import SplitError, split_blocks

NAME = "leaks"
TITLE = "Leak audit: hidden tests in the prompt"
# Rows per sandbox round trip (HumanEval+'s largest problem has about 1,100 inputs of at most
# 1.5 kB each, far below the sandbox's message limit).
BATCH_ROWS = 2000
CATEGORIES = ("leaks", "fully shown", "no leak", "data bug", "unparsed tests", "no examples")
CONFIDENCE = 0.95
# The files that mark a folder as a leak audit's own (`benchmarks.common.outputs`).
OUTPUT_MARKERS = ("summary.json", "leaks.jsonl", "leaks.csv")


@dataclass(frozen=True)
class LeaksConfig:
    """What the leak audit reads and how it runs the memoriser."""

    dataset: str | None = field(
        default=None,
        metadata={
            "help": "audit this dataset without a run: "
            + dataset_help("a HumanEval-format JSONL path")
        },
    )
    data: str | None = field(
        default=None,
        metadata={"help": "where to read --dataset from (MBPP JSONL, CodeContests JSONL/Parquet)"},
    )
    models: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "only these model labels for the Drop Ex correlation; empty: every model"
        },
    )
    settings: tuple[str, ...] = field(
        default=(),
        metadata={"help": "only these decoding settings (labels); empty: every setting"},
    )
    workers: int = field(
        default=0,
        metadata={"help": "sandbox workers (0: the run's, else one per available CPU core)"},
    )
    allow_weak_isolation: bool = field(
        default=False,
        metadata={"help": "run the memoriser even where the sandbox's isolation is weak"},
    )
    out: str | None = field(
        default=None,
        metadata={
            "help": "folder for leaks.jsonl / leaks.csv / summary.json; None: "
            "RUN_DIR/analysis/leaks, or ./leaks-DATASET without a run"
        },
    )


# --------------------------------------------------------------------------- one problem


@dataclass
class ProblemLeaks:
    """One problem's audit (see the module docstring)."""

    dataset: str
    task_id: str
    entry_point: str | None
    stdio: bool
    examples_block: bool
    examples: list[Case]
    examples_unparsed: list[Unparsed]
    hidden: list[Case]
    hidden_unparsed: list[Unparsed]
    shown: list[int] = field(default_factory=list)  # indices into hidden
    contradictions: list[dict[str, str]] = field(default_factory=list)
    memoriser_status: str = "not run"
    memoriser_passed: int | None = None
    canonical_status: str = "not run"
    canonical_checked: int = 0
    disagreements: list[dict[str, str]] = field(default_factory=list)
    several_answers: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def leak_share(self) -> float | None:
        """The memoriser's passes over the parsed hidden cases (None: none, or not run)."""
        if self.memoriser_passed is None or not self.hidden:
            return None
        return self.memoriser_passed / len(self.hidden)

    @property
    def data_bug(self) -> bool:
        """Examples disagree with the canonical solution or the tests (and the problem does not
        accept several answers)."""
        return bool(self.disagreements or self.contradictions) and not self.several_answers

    @property
    def categories(self) -> list[str]:
        share = self.leak_share
        found = set()
        if share is not None:
            found.add("leaks" if share > 0 else "no leak")
            if share == 1:
                found.add("fully shown")
        if self.data_bug:
            found.add("data bug")
        if self.hidden_unparsed:
            found.add("unparsed tests")
        if not self.examples:
            found.add("no examples")
        return [c for c in CATEGORIES if c in found]

    def splits(self) -> dict[str, list[int]]:
        """stdin/stdout problems: split -> [shown, tests]."""
        counts: dict[str, list[int]] = {}
        shown = set(self.shown)
        for index, case in enumerate(self.hidden):
            entry = counts.setdefault(case.split or "tests", [0, 0])
            entry[0] += index in shown
            entry[1] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        share = self.leak_share
        return {
            "dataset": self.dataset,
            "task_id": self.task_id,
            "entry_point": self.entry_point,
            "examples_block": self.examples_block,
            "examples": len(self.examples),
            "examples_unparsed": len(self.examples_unparsed),
            "hidden": len(self.hidden),
            "hidden_unparsed": len(self.hidden_unparsed),
            "shown_and_hidden": len(self.shown),
            "memoriser_passed": self.memoriser_passed,
            "leak_share": None if share is None else round(share, 6),
            "memoriser_status": self.memoriser_status,
            "contradicting_examples": len(self.contradictions),
            "canonical_checked": self.canonical_checked,
            "canonical_disagrees": len(self.disagreements),
            "canonical_status": self.canonical_status,
            "data_bug": self.data_bug,
            "several_answers": self.several_answers,
            "splits": self.splits() if self.stdio else None,
            "shown_examples": [_example_json(c) for c in self.examples],
            "shown_hidden_cases": [_case_source(self.hidden[i]) for i in self.shown],
            "contradictions": self.contradictions,
            "disagreements": self.disagreements,
            "unparsed_examples": [u.to_json() for u in self.examples_unparsed],
            "unparsed_hidden": [u.to_json() for u in self.hidden_unparsed[:20]],
            "notes": self.notes,
        }


def _case_source(case: Case) -> str:
    return case.source or f"(*{short(list(case.args))}) -> {short(case.expected)}"


def _example_json(case: Case) -> dict[str, str]:
    return {"source": case.source, "args": short(list(case.args)), "output": short(case.expected)}


def _key(problem: Problem, case: Case) -> Any:
    return stdio_key(case.args[0]) if problem.is_stdio else input_key(case.args)


def read_problem(problem: Problem) -> ProblemLeaks:
    """The trusted-side audit of one problem: its cases, examples and their matches (the
    memoriser and the canonical solution are run later, by `run_programs`)."""
    notes = []
    if problem.blocks is None:
        try:
            problem = split_blocks(problem)
        except SplitError as err:
            notes.append(f"the prompt could not be split into blocks ({err}): no examples read")
    signature = Signature.of(problem)
    hidden = read_hidden(problem, signature)
    examples = (
        read_examples(problem, signature.knowing(hidden.cases))
        if problem.blocks is not None
        else None
    )
    if examples:
        notes += examples.notes
    audit = ProblemLeaks(
        dataset=problem.benchmark,
        task_id=problem.task_id,
        entry_point=problem.entry_point,
        stdio=problem.is_stdio,
        examples_block=problem.block("examples") is not None,
        examples=examples.cases if examples else [],
        examples_unparsed=examples.unparsed if examples else [],
        hidden=hidden.cases,
        hidden_unparsed=hidden.unparsed,
        several_answers=problem.output_judge.several_answers if problem.is_stdio else None,
        notes=notes,
    )
    by_key: dict[Any, list[int]] = {}
    for index, case in enumerate(hidden.cases):
        try:
            by_key.setdefault(_key(problem, case), []).append(index)
        except TypeError:
            pass  # an unhashable input (nan inside a set...): no example can meet it
    shown: set[int] = set()
    for example in audit.examples:
        try:
            indices = by_key.get(_key(problem, example), [])
        except TypeError:
            indices = []
        rejected = None
        for index in indices:
            case = hidden.cases[index]
            if case.judge.accepts(example.expected, case.expected):
                shown.add(index)
            elif rejected is None:
                rejected = case
        if rejected is not None:
            audit.contradictions.append(
                {
                    "example": example.source,
                    "stated": short(example.expected),
                    "test": _case_source(rejected),
                    "expected": short(rejected.expected),
                }
            )
    audit.shown = sorted(shown)
    return audit


# --------------------------------------------------------------------------- the sandbox


def memoriser_program(problem: Problem, examples: Sequence[Case]) -> tuple[str, str]:
    """(program, function to call): returns the shown output for a shown input, raises
    LookupError for any other. Inputs meet as `input_key` (function problems; its very source
    is in the program) or as whitespace tokens (stdin/stdout)."""
    pairs = "".join(
        f"    ({python_literal(list(c.args))}, {python_literal(c.expected)}),\n" for c in examples
    )
    if problem.is_stdio:
        return (
            "_BOI_SHOWN = {}\n"
            f"for _boi_input, _boi_output in [\n{pairs}]:\n"
            "    _BOI_SHOWN.setdefault(tuple(_boi_input[0].split()), _boi_output)\n\n\n"
            "def _boi_memoriser(text):\n"
            "    key = tuple(text.split())\n"
            "    if key in _BOI_SHOWN:\n"
            "        return _BOI_SHOWN[key]\n"
            '    raise LookupError("an input the prompt does not show")\n',
            "_boi_memoriser",
        )
    key_source = _plain_source(input_key).replace("input_key", "_boi_input_key")
    entry = problem.entry_point or "f"
    return (
        f"{key_source}\n\n"
        "_BOI_SHOWN = {}\n"
        f"for _boi_args, _boi_output in [\n{pairs}]:\n"
        "    _BOI_SHOWN.setdefault(_boi_input_key(_boi_args), _boi_output)\n\n\n"
        f"def {entry}(*args):\n"
        "    key = _boi_input_key(list(args))\n"
        "    if key in _BOI_SHOWN:\n"
        "        return _BOI_SHOWN[key]\n"
        '    raise LookupError("an input the prompt does not show")\n',
        entry,
    )


def _plain_source(function: Callable[..., Any]) -> str:
    """A function's source without its annotations (the sandbox's program imports nothing)."""
    tree = ast.parse(inspect.getsource(function))
    definition = tree.body[0]
    assert isinstance(definition, ast.FunctionDef)
    definition.returns = None
    for argument in (*definition.args.posonlyargs, *definition.args.args):
        argument.annotation = None
    return ast.unparse(definition) + "\n"


# A contest solution as a function of its stdin: run with stdin and stdout replaced.
_STDIO_RUNNER = """
import contextlib as _boi_contextlib
import io as _boi_io
import sys as _boi_sys

_BOI_SOLUTION = compile({source}, "<solution>", "exec")


def _boi_solution(text):
    raw = _boi_io.BytesIO()
    out = _boi_io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    saved = _boi_sys.stdin
    _boi_sys.stdin = _boi_io.TextIOWrapper(_boi_io.BytesIO(text.encode("utf-8")), encoding="utf-8")
    try:
        with _boi_contextlib.redirect_stdout(out):
            try:
                exec(_BOI_SOLUTION, {{"__name__": "__main__"}})
            except SystemExit:
                pass
    finally:
        _boi_sys.stdin = saved
        out.flush()
    return raw.getvalue().decode("utf-8", "replace")
"""


def canonical_program(problem: Problem) -> tuple[str, str] | None:
    """(program, function to call) of the canonical solution; None without one."""
    if not problem.canonical_solution:
        return None
    if problem.is_stdio:
        return _STDIO_RUNNER.format(source=repr(problem.canonical_solution)), "_boi_solution"
    return problem.prompt + problem.canonical_solution + "\n", problem.entry_point or ""


def _batches(rows: Sequence[Sequence[Any]]) -> list[TableBatch]:
    return [
        TableBatch(rows=[list(r) for r in rows[i : i + BATCH_ROWS]])
        for i in range(0, len(rows), BATCH_ROWS)
    ]


def _outcomes(result: TableResult) -> list[tuple[bool, Any]]:
    """(returned, value or exception name) per row, in row order, over the batches."""
    out: list[tuple[bool, Any]] = []
    for table in result.tables:
        for code in table.codes:
            outcome = table.outcomes[int(code)]
            out.append(
                (
                    outcome.raised is None,
                    outcome.value if outcome.raised is None else outcome.raised,
                )
            )
    return out


def agrees(stated: Any, actual: Any, tolerance: float) -> bool:
    """Whether a stated output is what the canonical solution gives: `==`, or numbers within
    `tolerance` (absolute or relative; 1e-9 at least), item by item through lists, tuples and
    dict values."""
    try:
        if stated == actual:
            return True
    except Exception:
        return False
    numbers = (int, float)
    if type(stated) in numbers and type(actual) in numbers:
        gap = abs(float(stated) - float(actual))
        return gap <= max(tolerance, 1e-9) * max(1.0, abs(float(actual)))
    if isinstance(stated, list | tuple) and type(stated) is type(actual):
        return len(stated) == len(actual) and all(
            agrees(s, a, tolerance) for s, a in zip(stated, actual, strict=True)
        )
    if isinstance(stated, dict) and isinstance(actual, dict):
        return stated.keys() == actual.keys() and all(
            agrees(stated[k], actual[k], tolerance) for k in stated
        )
    return False


def run_programs(
    problems: Sequence[Problem],
    audits: Sequence[ProblemLeaks],
    execution: ExecutionConfig,
    show_progress: bool = False,
) -> None:
    """Run every memoriser on its problem's hidden inputs and every canonical solution on its
    examples' inputs, in the sandbox, and judge the outcomes here (fills `audits` in).

    Each job may take `execution.max_timeout`, not the calibrated per-sample timeout: these
    programs are a lookup table and the dataset's own solution, whose time says nothing about
    the audit, and a limit near their running time makes the audit depend on the machine's
    load. MBPP/123's solution needs about 3.6 s for its examples: under the calibrated 3 s it
    timed out on a quiet 2-core machine (4.2 s) and completed on a loaded one (the calibration
    scales up), so leaks.jsonl changed from run to run, and a timed-out canonical solution
    lists none of its data bugs. The limit is left only to stop a hang."""
    jobs: list[TableJob] = []
    owner: dict[str, tuple[str, int]] = {}
    for index, (problem, audit) in enumerate(zip(problems, audits, strict=True)):
        if audit.hidden:
            program, entry = memoriser_program(problem, audit.examples)
            key = f"memoriser:{index}"
            jobs.append(TableJob(key, program, entry, _batches([c.args for c in audit.hidden])))
            owner[key] = ("memoriser", index)
        else:
            audit.memoriser_status = "no parsed hidden test"
        canonical = canonical_program(problem) if audit.examples else None
        if canonical is not None:
            key = f"canonical:{index}"
            jobs.append(TableJob(key, *canonical, _batches([c.args for c in audit.examples])))
            owner[key] = ("canonical", index)
        else:
            audit.canonical_status = (
                "no examples" if not audit.examples else "no canonical solution"
            )
    progress = (
        progress_bar(len(jobs), "memoriser and canonical", unit="job")
        if show_progress and jobs
        else None
    )
    for result in call_tables(jobs, execution, timeout=execution.max_timeout, progress=progress):
        kind, index = owner[result.key]
        audit = audits[index]
        completed = result.status == "completed"
        reason = "completed" if completed else f"{result.status}: {result.reason}"
        if kind == "memoriser":
            audit.memoriser_status = reason
            if completed:
                outcomes = _outcomes(result)
                audit.memoriser_passed = sum(
                    returned and case.judge.accepts(value, case.expected)
                    for (returned, value), case in zip(outcomes, audit.hidden, strict=True)
                )
        else:
            audit.canonical_status = reason
            if completed:
                _judge_canonical(problems[index], audit, _outcomes(result))


def _judge_canonical(
    problem: Problem, audit: ProblemLeaks, outcomes: Sequence[tuple[bool, Any]]
) -> None:
    audit.canonical_checked = len(outcomes)
    judges = [c.judge for c in audit.hidden]
    tolerance = max((j.float_tolerance for j in judges), default=0.0)
    output_judge = Judge("tokens", output_judge=problem.output_judge.to_json())
    for example, (returned, value) in zip(audit.examples, outcomes, strict=True):
        if not returned:
            fine = False
        elif problem.is_stdio:
            fine = output_judge.accepts(value, example.expected)
        else:
            fine = agrees(example.expected, value, tolerance)
        if not fine:
            audit.disagreements.append(
                {
                    "example": example.source,
                    "stated": short(example.expected),
                    "canonical": short(value) if returned else f"raised {value}",
                }
            )


def audit_problems(
    problems: Sequence[Problem],
    execution: ExecutionConfig,
    log: Callable[[str], None] = lambda message: None,
    show_progress: bool = False,
) -> tuple[list[ProblemLeaks], dict[str, float]]:
    """Every problem's audit (in dataset and natural task id order) and the stages' seconds."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    ordered = sorted(problems, key=lambda p: (p.benchmark, natural_key(p.task_id)))
    audits = [read_problem(p) for p in ordered]
    timings["read"] = round(time.perf_counter() - started, 2)
    log(f"[leaks] read {len(ordered)} problems in {timings['read']:.1f} s")
    started = time.perf_counter()
    run_programs(ordered, audits, execution, show_progress)
    timings["sandbox"] = round(time.perf_counter() - started, 2)
    log(f"[leaks] memoriser and canonical solutions run in {timings['sandbox']:.1f} s")
    return audits, timings


# --------------------------------------------------------------------------- summaries


def dataset_summary(audits: Sequence[ProblemLeaks]) -> dict[str, Any]:
    """The per-dataset counts (every key is a sum over problems, or says what it averages)."""
    shares = [a.leak_share for a in audits if a.leak_share is not None]
    hidden = sum(len(a.hidden) for a in audits if a.memoriser_passed is not None)
    passed = sum(a.memoriser_passed or 0 for a in audits)
    return {
        "problems": len(audits),
        "with_examples": sum(bool(a.examples) for a in audits),
        "examples": sum(len(a.examples) for a in audits),
        "examples_unparsed": sum(len(a.examples_unparsed) for a in audits),
        "hidden": sum(len(a.hidden) for a in audits),
        "hidden_unparsed": sum(len(a.hidden_unparsed) for a in audits),
        "shown_and_hidden": sum(len(a.shown) for a in audits),
        "problems_leaking": sum(1 for s in shares if s > 0),
        "problems_fully_shown": sum(1 for s in shares if s == 1),
        "problems_with_share": len(shares),
        "mean_leak_share": round(mean(shares), 6) if shares else None,
        "pooled_leak_share": round(passed / hidden, 6) if hidden else None,
        "memoriser_passed": passed,
        "contradicting_examples": sum(len(a.contradictions) for a in audits),
        "canonical_disagrees": sum(len(a.disagreements) for a in audits),
        "data_bugs": sum(a.data_bug for a in audits),
        "memoriser_not_completed": sum(
            1 for a in audits if a.hidden and a.memoriser_status != "completed"
        ),
    }


@dataclass
class Correlation:
    """One panel member's Drop Ex effect against the leak share, over problems."""

    member: str
    points: list[tuple[str, float, float]]  # (problem, leak share, effect in points)
    r: float | None = None
    p_value: float | None = None
    low: float | None = None
    high: float | None = None

    def to_json(self) -> dict[str, Any]:
        leaky = [e for _, s, e in self.points if s > 0]
        clean = [e for _, s, e in self.points if s == 0]
        return {
            "member": self.member,
            "problems": len(self.points),
            "r": self.r,
            "p_value": self.p_value,
            "ci_low": self.low,
            "ci_high": self.high,
            "confidence": CONFIDENCE,
            "mean_effect_leaking": round(mean(leaky), 4) if leaky else None,
            "mean_effect_not_leaking": round(mean(clean), 4) if clean else None,
            "points": [
                {"task_id": t, "leak_share": round(s, 6), "drop_examples_effect": round(e, 4)}
                for t, s, e in self.points
            ],
        }


def drop_examples_correlations(
    run: Run,
    audits: Sequence[ProblemLeaks],
    config: LeaksConfig,
    resamples: int,
    seed: int,
) -> list[Correlation]:
    """Per panel member: (leak share, Drop Ex effect) per problem with both, r and its interval.
    The effect is the original pass rate minus the Drop Ex pass rate, in points, read as
    `boi analyze hints` reads the run (a Drop Ex variant the transformation left unchanged is
    no evidence and gives no point)."""
    panel = audit_runs([run], HintsConfig(settings=config.settings, models=config.models))
    shares = {(a.dataset, a.task_id): a.leak_share for a in audits}
    by_member: dict[str, list[tuple[str, float, float]]] = {}
    for problem in panel:
        share = shares.get((problem.dataset, problem.source_task_id))
        for member, found in problem.members.items():
            dropped = found.rate_of("drop_examples")
            by_member.setdefault(member, [])
            if share is None or dropped is None:
                continue
            effect = 100 * (found.original.rate - dropped)
            by_member[member].append((problem.source_task_id, share, effect))
    out = []
    for member, points in sorted(by_member.items(), key=lambda item: natural_key(item[0])):
        xs, ys = [s for _, s, _ in points], [e for _, _, e in points]
        r, p = pearson(xs, ys)
        low, high = pearson_interval(xs, ys, resamples, CONFIDENCE, seed)
        out.append(
            Correlation(
                member, points, r, p,
                low if is_defined(low) else None, high if is_defined(high) else None,
            )
        )  # fmt: skip
    return out


# --------------------------------------------------------------------------- outputs

CSV_FIELDS = (
    "dataset", "task_id", "examples", "examples_unparsed", "hidden", "hidden_unparsed",
    "shown_and_hidden", "memoriser_passed", "leak_share", "contradicting_examples",
    "canonical_checked", "canonical_disagrees", "data_bug", "several_answers",
    "memoriser_status", "canonical_status",
)  # fmt: skip


def csv_text(audits: Sequence[ProblemLeaks]) -> str:
    """leaks.csv: the per-problem counts (leak_share empty where undefined)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for audit in audits:
        row = audit.to_json()
        writer.writerow(["" if row[f] is None else row[f] for f in CSV_FIELDS])
    return buffer.getvalue()


def _fraction(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _interval(correlation: Correlation) -> str:
    if correlation.r is None:
        return "undefined (a constant side or fewer than two problems)"
    text = f"r = {correlation.r:.2f}"
    if correlation.low is not None and correlation.high is not None:
        text += f" [{correlation.low:.2f}, {correlation.high:.2f}]"
    if correlation.p_value is not None:
        text += f", p = {correlation.p_value:.3g}"
    return text


def section_html(
    summaries: Mapping[str, Mapping[str, Any]],
    audits: Sequence[ProblemLeaks],
    correlations: Sequence[Correlation] | None,
    resamples: int,
) -> str:
    out = [
        f"<h2>{esc(TITLE)}</h2>",
        '<p class="note">Per problem, the hidden test cases the prompt\'s examples already '
        "show (input and expected output, compared by value within each test's own tolerance), "
        "and the share of the parsed hidden cases a memoriser passes: a program that returns "
        "the shown output for a shown input and raises otherwise, run in the sandbox on every "
        "hidden input. Cases that could not be read are counted as unparsed, never guessed. "
        "Data: leaks.jsonl, leaks.csv, summary.json.</p>",
        "<table><tr><th>dataset</th><th>problems</th><th>with examples</th><th>examples "
        "(unparsed)</th><th>hidden tests (unparsed)</th><th>shown and hidden</th><th>problems "
        "leaking / fully shown</th><th>mean leak share</th><th>pooled leak share</th><th>data "
        "bugs</th></tr>",
    ]
    for dataset, s in summaries.items():
        out.append(
            f"<tr><td>{esc(dataset)}</td><td>{s['problems']}</td><td>{s['with_examples']}</td>"
            f"<td>{s['examples']} ({s['examples_unparsed']})</td>"
            f"<td>{s['hidden']} ({s['hidden_unparsed']})</td><td>{s['shown_and_hidden']}</td>"
            f"<td>{s['problems_leaking']} / {s['problems_fully_shown']}</td>"
            f"<td>{_fraction(s['mean_leak_share'])}</td><td>{_fraction(s['pooled_leak_share'])}</td>"
            f"<td>{s['data_bugs']}</td></tr>"
        )
    out.append("</table>")
    if correlations is not None:
        out.append(_correlation_html(correlations, resamples))
    out.append(_bugs_html(audits))
    out.append(_problems_html(audits))
    return "".join(out)


def _correlation_html(correlations: Sequence[Correlation], resamples: int) -> str:
    out = [
        "<h3>Drop Ex effect against the leak share</h3>",
        '<p class="note">Per problem and model: the original pass rate minus the pass rate '
        "without the examples (Drop Ex), in points, against the problem's leak share. A "
        "positive r says the examples help most where they give the tests away (leakage); r "
        f"near 0 says they help as examples. Pearson's r with a {CONFIDENCE:.0%} percentile "
        f"bootstrap interval over problems ({resamples} resamples).</p>",
    ]
    if not any(c.points for c in correlations):
        out.append(
            '<p class="note">No problem has both a leak share and a Drop Ex variant that '
            "changed its prompt: nothing to correlate.</p>"
        )
        return "".join(out)
    out.append(
        "<table><tr><th>model</th><th>problems</th><th>Pearson's r [interval], p</th>"
        "<th>mean effect, leak share &gt; 0</th><th>mean effect, leak share 0</th></tr>"
    )
    for c in correlations:
        data = c.to_json()
        leaky, clean = data["mean_effect_leaking"], data["mean_effect_not_leaking"]
        out.append(
            f"<tr><td>{esc(c.member)}</td><td>{len(c.points)}</td><td>{esc(_interval(c))}</td>"
            f"<td>{'n/a' if leaky is None else f'{leaky:+.1f}'}</td>"
            f"<td>{'n/a' if clean is None else f'{clean:+.1f}'}</td></tr>"
        )
    out.append("</table>")
    image = scatter_chart(
        [(c.member, [(100 * s, e) for _, s, e in c.points]) for c in correlations],
        "leak share (% of the hidden tests the memoriser passes)",
        "Drop Ex effect (points)",
        "Drop Ex effect against leak share",
    )
    caption = "; ".join(f"{c.member}: {_interval(c)}" for c in correlations)
    out.append(figure_html(image, f"One point per problem. {caption}"))
    return "".join(out)


def _bugs_html(audits: Sequence[ProblemLeaks]) -> str:
    bugs = [a for a in audits if a.data_bug]
    out = [
        "<h3>Examples that disagree with the tests or the canonical solution</h3>",
        '<p class="note">Worth reporting upstream: an example whose stated output the '
        "canonical solution does not produce, or whose input a hidden test checks against "
        "another output.</p>",
    ]
    if not bugs:
        out.append('<p class="note">None.</p>')
        return "".join(out)
    out.append(
        "<table><tr><th>problem</th><th>example</th><th>stated</th><th>disagrees with</th></tr>"
    )
    for audit in bugs:
        for d in audit.disagreements:
            out.append(
                f"<tr><td>{esc(audit.dataset)} {esc(audit.task_id)}</td><td><code>"
                f"{esc(d['example'])}</code></td><td><code>{esc(d['stated'])}</code></td>"
                f"<td>canonical solution: <code>{esc(d['canonical'])}</code></td></tr>"
            )
        for c in audit.contradictions:
            out.append(
                f"<tr><td>{esc(audit.dataset)} {esc(audit.task_id)}</td><td><code>"
                f"{esc(c['example'])}</code></td><td><code>{esc(c['stated'])}</code></td>"
                f"<td>hidden test <code>{esc(c['test'])}</code> expects "
                f"<code>{esc(c['expected'])}</code></td></tr>"
            )
    out.append("</table>")
    return "".join(out)


def _problems_html(audits: Sequence[ProblemLeaks]) -> str:
    header = [
        "problem", "examples (unparsed)", "hidden (unparsed)", "shown and hidden",
        "memoriser passes", "leak share", "disagreements", "shown cases",
    ]  # fmt: skip
    rows = []
    for a in audits:
        share = a.leak_share
        shown = " | ".join(_case_source(a.hidden[i]) for i in a.shown[:5])
        if len(a.shown) > 5:
            shown += f" | ... ({len(a.shown) - 5} more)"
        rows.append(
            [
                f"{a.dataset} {a.task_id}",
                f"{len(a.examples)} ({len(a.examples_unparsed)})",
                f"{len(a.hidden)} ({len(a.hidden_unparsed)})",
                str(len(a.shown)),
                "n/a" if a.memoriser_passed is None else f"{a.memoriser_passed}/{len(a.hidden)}",
                (_fraction(share), "fail" if share else "pass") if share is not None else "n/a",
                str(len(a.disagreements) + len(a.contradictions)),
                shown,
            ]
        )
    natural = list(range(len(audits)))
    sorts = [
        ("problem", natural),
        ("highest leak share", sorted(natural, key=lambda i: -(audits[i].leak_share or 0))),
        ("most shown", sorted(natural, key=lambda i: -len(audits[i].shown))),
        ("most unparsed tests", sorted(natural, key=lambda i: -len(audits[i].hidden_unparsed))),
    ]
    return "<h3>Per problem</h3>" + filtered_tables(
        "leaks",
        header,
        rows,
        sorts=sorts,
        categories=CATEGORIES,
        row_categories=[a.categories for a in audits],
    )


def summaries_of(audits: Sequence[ProblemLeaks]) -> dict[str, dict[str, Any]]:
    datasets: dict[str, list[ProblemLeaks]] = {}
    for audit in audits:
        datasets.setdefault(audit.dataset, []).append(audit)
    return {name: dataset_summary(group) for name, group in datasets.items()}


def write_outputs(
    out: Path,
    audits: Sequence[ProblemLeaks],
    summaries: Mapping[str, Any],
    correlations: Sequence[Correlation] | None,
    timings: Mapping[str, float],
    source: str,
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "jsonl": out / "leaks.jsonl",
        "csv": out / "leaks.csv",
        "summary": out / "summary.json",
    }
    write_text_atomic(
        paths["jsonl"],
        "".join(json.dumps(a.to_json(), ensure_ascii=False) + "\n" for a in audits),
    )
    write_text_atomic(paths["csv"], csv_text(audits))
    document = {
        "source": source,
        "datasets": summaries,
        "drop_examples": None if correlations is None else [c.to_json() for c in correlations],
        "seconds": dict(timings),
    }
    write_text_atomic(paths["summary"], json.dumps(document, indent=1) + "\n")
    return paths


# --------------------------------------------------------------------------- command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dir",
        nargs="?",
        metavar="RUN_DIR",
        help="a boi run directory: audit its original problems and add the section, with the "
        "Drop Ex effect against the leak share, to its report (or give --dataset instead)",
    )
    add_dataclass_arguments(
        parser, LeaksConfig, flags={"models": "--model", "settings": "--setting"}
    )


def _execution(config: LeaksConfig, base: ExecutionConfig | None = None) -> ExecutionConfig:
    """The sandbox's settings: the run's (or the defaults) with this command's flags."""
    execution = base or ExecutionConfig()
    if config.workers:
        execution = dataclasses.replace(execution, workers=config.workers)
    if config.allow_weak_isolation:
        execution = dataclasses.replace(execution, allow_weak_isolation=True)
    return execution


def _dataset_out(config: LeaksConfig) -> Path:
    """--out, or ./leaks-DATASET: a folder that is new, empty or an earlier audit's, checked
    before anything runs (the default is checked as a given --out is: a user's folder that
    happens to have the name is refused, never written into)."""
    assert config.dataset is not None
    inputs = [i for i in (config.dataset, config.data) if i]
    if config.out:
        return output_dir(config.out, ours=OUTPUT_MARKERS, inputs=inputs)
    default = Path(f"leaks-{path_slug(Path(config.dataset).stem)}")
    if default.is_dir() and not holds_ours(default, OUTPUT_MARKERS):
        raise UserError(
            f"{default}, where --dataset {config.dataset} writes by default, already exists and "
            f"holds no {', '.join(OUTPUT_MARKERS)}, so boi did not write it; pass --out with a "
            "new or empty folder (nothing there was changed)."
        )
    return output_dir(default, ours=OUTPUT_MARKERS, inputs=inputs)


def restore_tests(run: Run, problems: Sequence[Problem]) -> tuple[list[Problem], dict[str, str]]:
    """The run's original problems with their hidden tests, and task id -> dataset label of
    those reloaded. A run directory may keep its problems without tests (the committed results
    run does, to stay small); each such problem takes the tests of the problem with its id in
    the run's dataset (a `label:ID` id of a dataset sharing ids is that dataset's ID), only
    where that problem's prompt is the run's, character for character. Where a dataset does not
    load, or holds no such problem, the audit is refused in one sentence: hidden tests
    silently absent would make a leak share of nothing."""
    missing = [p for p in problems if not p.test and not p.stdio_tests]
    if not missing:
        return list(problems), {}
    specs = {spec.label: spec for spec in run.run_config.datasets}
    reloaded: dict[str, Problem] = {}
    for label in sorted({p.benchmark for p in missing}):
        spec = specs.get(label)
        wanted = [p for p in missing if p.benchmark == label]
        what = (
            f"{run.path}/problems.jsonl keeps no hidden tests for {len(wanted)} problems of {label}"
        )
        if spec is None:
            raise UserError(
                f"{what}, and the run's config names no dataset {label} to reload them from; "
                "audit the dataset itself with --dataset instead."
            )
        try:
            loaded = {p.task_id: p for p in load_benchmark(spec.name, spec.data).problems}
        except UserError as err:
            raise UserError(
                f"{what}, and its dataset does not load here to reload them "
                f"({str(err).rstrip('.')}); make the dataset available, or rerun boi run."
            ) from None
        for problem in wanted:
            task_id = problem.task_id
            if task_id not in loaded and task_id.startswith(f"{label}:"):
                task_id = task_id[len(label) + 1 :]
            source = loaded.get(task_id)
            if source is None or source.prompt != problem.prompt:
                why = "is not in it" if source is None else "has another prompt there"
                raise UserError(
                    f"{what}, and {problem.task_id} {why} (the dataset {spec.name} has changed "
                    "since the run), so its tests cannot be reloaded; rerun boi run, or audit "
                    f"the dataset with --dataset {spec.name}."
                )
            reloaded[problem.task_id] = problem.replace(
                test=source.test,
                stdio_tests=source.stdio_tests,
                canonical_solution=problem.canonical_solution or source.canonical_solution,
                metadata={**source.metadata, **problem.metadata},
            )
    restored = {task_id: p.benchmark for task_id, p in reloaded.items()}
    return [reloaded.get(p.task_id, p) for p in problems], restored


def run(args: argparse.Namespace) -> int:
    config = from_mapping(LeaksConfig, overrides_from_args(args, LeaksConfig), "leaks")
    if (args.run_dir is None) == (config.dataset is None):
        raise UserError("give either RUN_DIR or --dataset NAME (a run, or a dataset without one).")
    started = time.perf_counter()
    timings: dict[str, float] = {}
    if config.dataset is not None:
        if config.models or config.settings:
            raise UserError("--model and --setting choose a run's results; --dataset has none.")
        out = _dataset_out(config)
        load_start = time.perf_counter()
        problems = load_benchmark(config.dataset, config.data).problems
        timings["load"] = round(time.perf_counter() - load_start, 2)
        audits, stages = audit_problems(problems, _execution(config), log=print, show_progress=True)
        timings.update(stages)
        summaries = summaries_of(audits)
        timings["total"] = round(time.perf_counter() - started, 2)
        paths = write_outputs(out, audits, summaries, None, timings, config.dataset)
        page = out / "leaks.html"
        write_text_atomic(
            page,
            html_document(
                f"boi leak audit: {config.dataset}",
                f"{len(audits)} problems",
                [],
                [section_html(summaries, audits, None, 0)],
            ),
        )
        paths["html"] = page
    else:
        opened = open_run(args.run_dir)
        run_dir = opened.path
        run_config = opened.run_config
        out = output_dir(
            config.out or analysis_dir(run_dir, NAME), ours=OUTPUT_MARKERS, inputs=[run_dir]
        )
        # The run names each problem's dataset by its spec's label (the results' `dataset`).
        labels = opened.dataset_labels()
        problems = [
            p.replace(benchmark=labels.get(p.task_id) or p.benchmark)
            for p in opened.problems()
            if not p.lineage
        ]
        problems, restored = restore_tests(opened, problems)
        if restored:
            print(
                f"[leaks] {run_dir}/problems.jsonl keeps no hidden tests for {len(restored)} "
                f"problems: reloaded from the datasets by task id, each where the dataset's prompt "
                f"is the run's ({', '.join(sorted(set(restored.values())))})"
            )
        audits, stages = audit_problems(
            problems, _execution(config, run_config.execution), log=print, show_progress=True
        )
        for audit in audits:
            if audit.task_id in restored:
                audit.notes.append(
                    f"hidden tests reloaded from the dataset {restored[audit.task_id]} (the run "
                    "keeps none; same task id, same prompt)"
                )
        timings.update(stages)
        summaries = summaries_of(audits)
        resamples = run_config.bootstrap
        correlations = drop_examples_correlations(
            opened, audits, config, resamples, run_config.bootstrap_seed
        )
        timings["total"] = round(time.perf_counter() - started, 2)
        paths = write_outputs(out, audits, summaries, correlations, timings, str(run_dir))
        write_section(
            run_dir, NAME, TITLE, section_html(summaries, audits, correlations, resamples)
        )
        paths["html"] = rebuild_run_report(run_dir).html
    for dataset, s in summaries.items():
        print(
            f"boi analyze leaks: {dataset}: {s['problems']} problems, {s['examples']} examples "
            f"({s['examples_unparsed']} unparsed), {s['hidden']} hidden tests "
            f"({s['hidden_unparsed']} unparsed), {s['shown_and_hidden']} shown and hidden, "
            f"{s['problems_leaking']} problems leaking, mean leak share "
            f"{_fraction(s['mean_leak_share'])}, {s['data_bugs']} data bugs"
        )
    print(
        f"wrote {', '.join(str(p) for p in paths.values())} in {time.perf_counter() - started:.1f} s"
    )
    return 0
