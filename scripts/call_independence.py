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

It executes the datasets' own reference solutions and tests in this process (trusted dataset
code, not generated code), each under a 10-second alarm. Stdin/stdout problems (CodeContests)
need no such check: their tests are fixed inputs, each run as its own process.
"""

from __future__ import annotations

import argparse
import copy
import random
import re
import signal
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common.errors import UserError  # noqa: E402
from benchmarks.execution._run import trusted_prefix  # noqa: E402
from benchmarks.execution._tests_side import (  # noqa: E402
    _ASSERTS_NAME,
    _Asserts,
    _call_plan,
    _compile_every_assert,
    _encode_call,
)
from benchmarks.loaders import load_benchmark  # noqa: E402


class _Alarm(Exception):
    pass


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", choices=["humaneval", "mbpp"])
    parser.add_argument("--data", default=None, help="the dataset's file (MBPP needs one)")
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
    return 1 if misplanned else 0


if __name__ == "__main__":
    sys.exit(main())
