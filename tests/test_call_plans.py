"""Calls known before the tests run go to the candidate as one batch (issue 33).

`_tests_side._call_plan` reads, from the text of the tests, the calls their leading asserts will
make; the proxy sends them to the candidate in one message and reads the replies as the tests
make those calls. What a user relies on: the same verdicts and the same calls, in the same
order, as one call at a time; a plan that stops where the text no longer fixes the calls; and
calls that do not depend on the answers either way. These tests run the trusted side in this
process against a stand-in candidate on a thread (plain data over real pipes); the sandbox
suites (`tests/test_sandbox_*.py`) run the same code in the worker.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.execution import _wire
from benchmarks.execution._tests_side import _call_plan
from tests.stand_in import run_against


def planned_args(test: str, prefix: str = "", entry_point: str = "f") -> list[list]:
    return [json.loads(call)["args"] for call in _call_plan(prefix, test, entry_point)]


def run(test: str, answer: Callable[..., Any], entry_point: str = "f") -> tuple[bytes, list]:
    """The verdict of `test` against a candidate that answers `answer(*args)`, and the
    messages the candidate received, in order."""
    verdict, received, _ = run_against(test, answer, entry_point)
    return verdict, received


THREE = (
    "def check(candidate):\n"
    "    assert candidate(1) == 2\n"
    "    assert candidate(2) == 3, str(candidate(2))\n"
    "    assert abs(candidate(3) - 4) < 1e-9\n"
)


def test_straight_asserts_are_planned_in_the_order_they_run():
    # The message's call comes after its condition's, as the rewritten assert evaluates them.
    assert planned_args(THREE) == [[1], [2], [2], [3]]


def test_planned_calls_go_as_one_batch_and_judge_as_before():
    verdict, received = run(THREE, lambda x: x + 1)
    assert verdict == b"P"
    assert received == [{"batch": [{"args": [x], "kwargs": {"d": []}} for x in (1, 2, 2, 3)]}]
    verdict, wrong = run(THREE, lambda x: x)
    assert verdict.startswith(b"FAssertionError")
    assert wrong == received  # what the candidate is sent does not depend on its answers


def test_a_stateful_candidate_sees_the_calls_in_the_tests_order():
    counter = iter(range(1, 100))
    test = (
        "def check(candidate):\n"
        "    assert candidate('a') == 1\n"
        "    assert candidate('b') == 2, candidate('c')\n"
        "    assert candidate('d') == 4\n"
    )
    verdict, _ = run(test, lambda x: next(counter))
    assert verdict == b"P"


def test_the_plan_stops_where_the_text_no_longer_fixes_the_calls():
    test = (
        "def check(candidate):\n"
        "    assert candidate(1) == 2\n"
        "    for x in range(3):\n"
        "        assert candidate(x) == x + 1\n"
        "    assert candidate(9) == 10\n"
    )
    assert planned_args(test) == [[1]]
    verdict, received = run(test, lambda x: x + 1)
    assert verdict == b"P"
    assert received[0] == {"batch": [{"args": [1], "kwargs": {"d": []}}]}
    assert [m["args"] for m in received[1:]] == [[0], [1], [2], [9]]
    # Wrong answers, the first planned one included: the same calls still come after the plan.
    verdict, wrong = run(test, lambda x: x)
    assert verdict.startswith(b"FAssertionError")
    assert wrong == received


@pytest.mark.parametrize(
    "statement",
    [
        "assert candidate(1) and candidate(2)",  # the second call depends on the first answer
        "assert 0 < candidate(1) < candidate(2)",  # so does a chained comparison's last term
        "assert candidate(1) if flag else candidate(2)",
        "assert helper(candidate(1))",  # a function of the tests may call the candidate
        "assert sorted([candidate(1)], key=helper)",  # so may one it is handed
        "assert list(map(candidate, [1, 2]))",  # the candidate handed over as a value
        "assert candidate(x) == 1",  # an argument that is not a literal
        "assert candidate(*[1])",
        "assert len(candidate(1)) == 1",  # `len` rebound by the tests below
    ],
)
def test_what_may_call_anything_else_is_not_planned(statement):
    test = (
        "flag = True\n"
        "x = 1\n"
        "def helper(v):\n"
        "    return v\n"
        "def check(candidate):\n"
        f"    {statement}\n"
        "    assert candidate(5) == 6\n"
    )
    if "len(" in statement:
        test += "def len(v):\n    return 1\n"
    assert planned_args(test) == []


def test_a_plan_stops_at_an_expression_too_deep_to_read():
    # 2,000 nested unary minuses: Python compiles them, the plan's reader stops there.
    test = (
        "def check(candidate):\n"
        "    assert candidate(1) == 2\n"
        f"    assert candidate(2) == {'-' * 2000}1\n"
        "    assert candidate(3) == 4\n"
    )
    compile(test, "<t>", "exec")
    assert planned_args(test) == [[1]]


def test_module_code_that_runs_anything_means_no_plan():
    # A call at module level runs before `check`, and could reach the candidate first.
    test = "setup = print('hi')\ndef check(candidate):\n    assert candidate(1) == 2\n"
    assert planned_args(test) == []
    assert planned_args("import math\n" + THREE) == [[1], [2], [2], [3]]
    # A star import may rebind `abs` (to anything, a function of the tests' own included).
    assert planned_args("from os.path import *\n" + THREE) == []
    assert planned_args(THREE, prefix="from os.path import *\n") == []


def test_literal_sets_are_encoded_as_the_tests_build_them():
    # {12, ..., 16} iterates 16 first when compiled; ast.literal_eval would build 12 first.
    test = "def check(candidate):\n    assert candidate({12, 13, 14, 15, 16}) == 5\n"
    verdict, received = run(test, len)
    assert verdict == b"P"
    assert len(received) == 1 and "batch" in received[0]


def test_planned_calls_a_raising_condition_skips_are_dropped():
    # candidate(1) raises: its message's planned call is never made; its reply is read and
    # dropped, the next call is the plan's next, and the verdict is the first failure.
    test = (
        "def check(candidate):\n"
        "    assert candidate(1) == 2, str(candidate(1))\n"
        "    assert candidate(2) == 3\n"
        "    for x in [5]:\n"
        "        assert candidate(x) == x + 1\n"
    )

    def answer(x: int) -> int:
        if x == 1:
            raise ValueError("one")
        return x + 1

    verdict, received = run(test, answer)
    assert verdict == b"FValueError: one"
    # The batch, then the call after the plan, as for a candidate that does not raise.
    assert received == run(test, lambda x: x + 1)[1]
    assert [m.get("args") for m in received] == [None, [5]]


def test_announced_calls_that_are_not_made_are_dropped():
    # The tests' own announcement (HumanEval+'s `_plus_check_all`) names 1 and 2, then calls 1
    # and 3: the reply to 2 is read and dropped, and 3 goes alone.
    test = (
        "def check(candidate):\n"
        "    candidate.__boi_plan__([((1,), {}), ((2,), {})])\n"
        "    assert candidate(1) == 2\n"
        "    assert candidate(3) == 4\n"
    )
    verdict, received = run(test, lambda x: x + 1)
    assert verdict == b"P"
    assert [m.get("batch", m) for m in received] == [
        [{"args": [1], "kwargs": {"d": []}}, {"args": [2], "kwargs": {"d": []}}],
        {"args": [3], "kwargs": {"d": []}},
    ]


def test_humanevalplus_announces_every_input_as_one_batch():
    from benchmarks.loaders import load_benchmark

    problem = load_benchmark("humanevalplus").problems[0]
    namespace: dict = {}
    exec(problem.prompt + problem.canonical_solution, namespace)
    reference = namespace[problem.entry_point]
    verdict, received = run(problem.test, reference, problem.entry_point)
    assert verdict == b"P"
    assert len(received) == 1
    assert len(received[0]["batch"]) == 1006  # 7 base and 999 plus inputs


def test_a_plain_channel_reads_queued_replies_in_order():
    """A batch's replies arrive back to back in one pipe: each is returned whole and in order,
    small and large (past the first 64 KiB chunk) alike, and an end mid-message is an error."""
    read_end, write_end = os.pipe()
    sender, receiver = _wire.Channel(write_end, plain=True), _wire.Channel(read_end, plain=True)
    messages = [{"ok": i} for i in range(500)] + [{"ok": "x" * 200_000}, {"ok": None}]
    thread = threading.Thread(target=lambda: [sender.send(m) for m in messages])
    thread.start()
    assert [receiver.receive() for _ in messages] == messages
    thread.join()
    os.write(write_end, b"\x00\x00\x00\x10{")  # 16 bytes announced, 1 sent
    os.close(write_end)
    with pytest.raises(EOFError, match="mid-message"):
        receiver.receive()
    os.close(read_end)
