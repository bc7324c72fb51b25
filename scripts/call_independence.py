"""Which tests call the candidate with inputs that depend on its earlier answers?

The sandbox runs every assert to the end (`benchmarks/execution/_tests_side.py`,
`_compile_every_assert`), so that whether a call comes does not tell a candidate whether its
last answer held. That makes the calls independent of the answers wherever the tests' own
inputs are: this script finds the tests where they are not. For each problem it runs the tests
(rewritten as the sandbox runs them) twice, against the reference solution and against a
candidate whose every answer is wrong, records the arguments of every call, and reports
the problems whose two call lists differ (and those where one run ends early, e.g. a test that
unpacks the answer outside an assert). The wrong answers keep the right answer's type (a bool
negated, a number plus one, a string or sequence changed), so that what is measured is
whether the answer was right, not whether it was of a type the tests can use.

    .venv/bin/python scripts/call_independence.py humaneval
    .venv/bin/python scripts/call_independence.py mbpp --data ../shared/data/mbpp/mbpp.jsonl

It also checks the call plans (`_tests_side._call_plan`: the calls a test's text fixes before
it runs, which the sandbox sends to the candidate as one batch) against the calls the tests
really make: a plan must be their beginning, in order. It exits 1 when one is not.

It also checks the trusted side's resources (issue 49): for every problem it runs the tests as
the sandbox's tests process does (`_tests_side._run_tests`, in this process) against the
candidate's own server (`_candidate.serve_candidate`, in a forked child) twice, serving the
reference solution's answers and then wrong answers of the same encoded sizes (a character,
a digit or an element changed; True for None; an answer with no such twin stays right), and
compares what the candidate can observe of the end (every call message it was sent, and the
bytes of its replies left unread when the tests ended) and the tests side's peak memory
(tracemalloc, from the run's start). It exits 1 when either differs (peak by more than
PEAK_SLACK bytes).

    .venv/bin/python scripts/call_independence.py humaneval --resources-only

It executes the datasets' own reference solutions and tests in this process and its children
(trusted dataset code, not generated code), each under a 10-second alarm. Stdin/stdout problems (CodeContests)
need no such check: their tests are fixed inputs, each run as its own process.
"""

from __future__ import annotations

import argparse
import copy
import gc
import hashlib
import json
import os
import random
import re
import signal
import sys
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common.errors import UserError  # noqa: E402
from benchmarks.execution import _candidate, _wire  # noqa: E402
from benchmarks.execution._run import _job, trusted_prefix  # noqa: E402
from benchmarks.execution._tests_side import (  # noqa: E402
    _ASSERTS_NAME,
    _Asserts,
    _call_plan,
    _compile_every_assert,
    _compiled,
    _encode_call,
    _run_tests,
)
from benchmarks.loaders import load_benchmark  # noqa: E402


class _Alarm(BaseException):
    """A run's 10 seconds are up: not an Exception, so that no rewritten assert records it and
    goes on (the tests end, as the sandbox's timeout ends them)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Alarm


def _wrong(answer: Any) -> Any:
    """A wrong answer of the right answer's type."""
    if isinstance(answer, bool):
        return not answer
    if isinstance(answer, int | float):
        return answer + 1
    if isinstance(answer, str):
        return answer + "x"
    if isinstance(answer, list | tuple):
        return type(answer)([*answer, answer[0]] if answer else [0])
    if isinstance(answer, dict):
        return {**answer, "boi-wrong": 0}
    return None


def calls_of(
    problem: Any, answer_with_reference: bool, encoded: list[str | None] | None = None
) -> tuple[list[str], str]:
    """The repr of every call's arguments, and how the tests ended; `encoded` gets each call
    as the sandbox sends it (None where it cannot cross as plain data)."""
    namespace: dict[str, Any] = {}
    exec(compile(problem.prompt + (problem.canonical_solution or ""), "<ref>", "exec"), namespace)
    reference = namespace[problem.entry_point]
    calls: list[str] = []

    def candidate(*args: Any, **kwargs: Any) -> Any:
        # Without memory addresses: objects of the prompt's classes (MBPP's trees) differ there.
        calls.append(re.sub(r" at 0x[0-9a-f]+", "", repr((args, kwargs))))
        if encoded is not None:
            try:
                encoded.append(_encode_call(list(args), dict(kwargs), frozenset()))
            except (TypeError, ValueError):
                encoded.append(None)
        answer = reference(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        return answer if answer_with_reference else _wrong(answer)

    tests: dict[str, Any] = {_ASSERTS_NAME: _Asserts()}
    exec(compile(problem.prompt, "<prompt>", "exec"), tests)
    tests[problem.entry_point] = candidate
    ended = "completed"
    random.seed(0)  # as the sandbox's tests process starts every run from one random state
    signal.alarm(10)
    try:
        exec(_compile_every_assert(problem.test), tests)
        tests["check"](candidate)
    except _Alarm:
        ended = "timed out"
    except Exception as err:
        ended = f"stopped: {type(err).__name__}"
    finally:
        signal.alarm(0)
    return calls, ended


# How far apart the tests side's peak memory may be for a right and a wrong candidate with
# replies of the same sizes: timing noise. The plain channel reads ahead in chunks of what the
# pipe holds at that moment (the candidate is another process), so two runs of one candidate
# peak up to about 700 bytes apart (measured on HumanEval); the previous code's failures
# list put wrong answers 600 to 16,000 bytes above right ones (25 HumanEval problems above 1 KiB
# or near it).
PEAK_SLACK = 1024


def _json_size(value: Any) -> int:
    try:
        return len(json.dumps(_wire.encode_plain(value), allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return -1


def same_size_wrong(answer: Any) -> Any:
    """A wrong answer whose reply has the right answer's size on the wire, else the answer."""
    wrong = _twin(answer)
    size = _json_size(answer)
    return wrong if size >= 0 and _json_size(wrong) == size and wrong != answer else answer


def _twin(answer: Any) -> Any:
    if answer is None or answer is True:
        return None if answer is True else True  # `null` and `true`: four bytes each
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, int):
        last = abs(answer) % 10
        return answer + (1 if last != 9 else -1) * (1 if answer >= 0 else -1)
    if isinstance(answer, float):
        for other in (answer + 1, answer - 1, -answer, answer * 2):
            if repr(other) != repr(answer) and len(repr(other)) == len(repr(answer)):
                return other
        return answer
    if isinstance(answer, str):
        for i in range(len(answer) - 1, -1, -1):  # a printable ASCII character, not " or \
            if " " <= answer[i] <= "~" and answer[i] not in '"\\':
                return answer[:i] + ("a" if answer[i] != "a" else "b") + answer[i + 1 :]
        return answer
    if isinstance(answer, list | tuple):
        for i in range(len(answer) - 1, -1, -1):
            changed = same_size_wrong(answer[i])
            if changed != answer[i] or type(changed) is not type(answer[i]):
                return type(answer)([*answer[:i], changed, *answer[i + 1 :]])
        return answer
    if isinstance(answer, dict):
        for key in reversed(list(answer)):
            changed = same_size_wrong(answer[key])
            if changed != answer[key] or type(changed) is not type(answer[key]):
                return {**answer, key: changed}
    return answer


def resources_of(problem: Any, wrong: bool) -> tuple[tuple[str, int, int], int, bytes]:
    """The candidate-visible end of one run of the tests against the reference (`wrong`: with
    same-size wrong answers): (a digest of the call messages sent, their number, the reply
    bytes left unread), the tests side's peak memory, and the verdict."""
    job = _job(problem, problem.canonical_solution or "", 10.0)
    program = job["candidate_program"]
    if wrong:
        program += (
            "\nimport __main__ as _boi_script\n"
            f"def _boi_wrong(*args, **kwargs):\n"
            f"    return _boi_script.same_size_wrong({problem.entry_point}(*args, **kwargs))\n"
        )
    setup = {
        "candidate_program": program,
        "entry_point": "_boi_wrong" if wrong else problem.entry_point,
        "prefix_classes": job["prefix_classes"],
    }
    calls_r, calls_w = os.pipe()
    replies_r, replies_w = os.pipe()
    child = os.fork()
    if child == 0:  # the candidate: its server, as a sample runs it
        try:
            os.dup2(calls_r, _candidate.CALLS_IN_FD)
            os.dup2(replies_w, _candidate.REPLIES_OUT_FD)
            os.closerange(_candidate.REPLIES_OUT_FD + 1, 1 << 16)
            signal.alarm(30)
            _candidate.serve_candidate()
        finally:
            os._exit(0)
    os.close(calls_r)
    os.close(replies_w)
    _wire.Channel(calls_w, plain=True).send(setup)  # its program: the first message
    sent = hashlib.sha256()
    count = 0
    send_frame = _wire.Channel.send_frame

    def recording(channel: _wire.Channel, data: bytes, deadline: float | None = None) -> None:
        nonlocal count
        if channel.fd == calls_w:
            sent.update(len(data).to_bytes(4, "big") + data)
            count += 1
        send_frame(channel, data, deadline)

    def times_out(signum: int, frame: object) -> None:
        os.kill(child, signal.SIGKILL)  # the tests then read no more of it
        raise _Alarm

    _compiled(job["prefix"], job["test"], job["entry_point"])  # compiled before, as cached
    random.seed(0)
    gc.collect()
    _wire.Channel.send_frame = recording  # type: ignore[method-assign]
    previous = signal.signal(signal.SIGALRM, times_out)
    tracemalloc.start()
    signal.alarm(10)
    try:
        verdict = _run_tests(job, calls_w, replies_r)
    finally:
        signal.alarm(0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        _wire.Channel.send_frame = send_frame  # type: ignore[method-assign]
        signal.signal(signal.SIGALRM, previous)
    os.close(calls_w)  # the candidate's server ends at the end of its calls
    unread = len(_wire.Channel(replies_r).read_to_end(1 << 31))
    os.waitpid(child, 0)
    if verdict.startswith(b"F_Alarm"):
        return ("timed out", 0, 0), 0, verdict  # what a run cut short shows depends on timing
    return (sent.hexdigest(), count, unread), peak, verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", choices=["humaneval", "mbpp"])
    parser.add_argument("--data", default=None, help="the dataset's file (MBPP needs one)")
    parser.add_argument(
        "--resources-only", action="store_true", help="only the trusted side's resources"
    )
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _on_alarm)
    try:
        loaded = load_benchmark(args.dataset, args.data)
    except UserError as err:  # a missing or unreachable dataset: one sentence, no traceback
        parser.error(str(err))
    problems = [p for p in loaded.problems if p.entry_point]
    dependent: list[str] = []
    misplanned: list[str] = []
    planned = total = whole = 0
    unequal: list[str] = []
    judged_wrong = timed_out = 0
    widest = 0
    for problem in problems:
        # Two runs first, whose peaks are dropped: the allocator's free lists and the
        # interpreter's caches settle (the first runs of a problem peak up to 400 bytes
        # higher). Then the smallest of three each: a read that finds a reply half written
        # (the candidate is another process) can add a few hundred bytes to one run's peak.
        for _ in range(2):
            resources_of(problem, wrong=False)
        rights = [resources_of(problem, wrong=False) for _ in range(3)]
        wrongs = [resources_of(problem, wrong=True) for _ in range(3)]
        right_end, wrong_end = rights[0][0], wrongs[0][0]
        if any(run[0] != right_end for run in rights) or any(run[0] != wrong_end for run in wrongs):
            print(f"{problem.task_id}: the same candidate saw different ends in two runs")
            right_end = ("", -1, -1)
        right_peak = min(run[1] for run in rights)
        wrong_peak = min(run[1] for run in wrongs)
        judged_wrong += wrongs[0][2] != b"P"
        timed_out += right_end[0] == "timed out" or wrong_end[0] == "timed out"
        widest = max(widest, abs(right_peak - wrong_peak))
        if right_end != wrong_end or abs(right_peak - wrong_peak) > PEAK_SLACK:
            unequal.append(problem.task_id)
            print(
                f"{problem.task_id}: right {right_end[1:]} calls/unread bytes, peak "
                f"{right_peak}; wrong {wrong_end[1:]}, peak {wrong_peak} "
                f"(calls {'the same' if right_end[0] == wrong_end[0] else 'differ'})"
            )
    print(
        f"{args.dataset}: {len(problems) - len(unequal)} of {len(problems)} problems end the "
        f"same for the candidate, and take the tests side the same peak memory (within "
        f"{PEAK_SLACK} bytes; widest gap {widest}), for right answers and for wrong ones of the "
        f"same sizes ({judged_wrong} of them judged wrong, {timed_out} cut short at 10 s); "
        f"{len(unequal)} do not"
    )
    if args.resources_only:
        return 1 if unequal else 0
    for problem in problems:
        made: list[str | None] = []
        right, right_end = calls_of(problem, answer_with_reference=True, encoded=made)
        # The calls the sandbox sends ahead as batches (`_call_plan`) must be the first calls
        # the tests make, in their order.
        plan = _call_plan(trusted_prefix(problem), problem.test, problem.entry_point)
        if plan != made[: len(plan)]:
            misplanned.append(problem.task_id)
            print(f"{problem.task_id}: the plan of {len(plan)} calls is not the calls made")
        planned += len(plan)
        total += len(made)
        whole += bool(plan) and len(plan) == len(made)
        wrong, wrong_end = calls_of(problem, answer_with_reference=False)
        if right != wrong or right_end != wrong_end:
            first = next(
                (i for i, (a, b) in enumerate(zip(right, wrong, strict=False)) if a != b),
                min(len(right), len(wrong)),
            )
            dependent.append(problem.task_id)
            print(
                f"{problem.task_id}: {len(right)} calls with the reference ({right_end}), "
                f"{len(wrong)} with wrong answers ({wrong_end}); they part at call {first + 1}"
            )
    print(
        f"{args.dataset}: {len(problems) - len(dependent)} of {len(problems)} problems call the "
        f"candidate with the same inputs whatever it answers; {len(dependent)} do not"
    )
    print(
        f"{args.dataset}: {planned} of {total} calls are known before the tests run and go to "
        f"the candidate in batches ({whole} problems wholly); plans that are not the calls "
        f"made: {len(misplanned)}"
    )
    return 1 if misplanned or unequal else 0


if __name__ == "__main__":
    sys.exit(main())
