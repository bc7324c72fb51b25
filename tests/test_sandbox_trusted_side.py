"""The trusted side does the same work whatever the answers (issue 49), checked in this process.

`_tests_side._run_tests` runs here against a stand-in candidate on a thread (plain data over
real pipes, as `tests/test_call_plans.py` does); `tests/test_sandbox_oracles.py` runs the same
code in the worker, with attacks. What must hold:

- a failed assert is kept as bounded text: a run leaves no reference cycle behind, failed or
  not, and a held assert makes the same text its failure would have;
- the run's replies add up to a budget, checked on each reply's announced size before any of
  it is read; at the budget the run fails as the candidate's doing;
- however the run ends (held, failed, raised, a malformed reply, the budget), every reply owed
  is read: the candidate sees all its replies taken, the same end whatever its answers.
"""

from __future__ import annotations

import gc
import json
import os
import threading
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.execution import _wire
from benchmarks.execution._tests_side import _Asserts
from tests.stand_in import Raw, run_against


def run(
    test: str, answer: Callable[..., Any], budget: int | None = None
) -> tuple[bytes, list, int]:
    """The verdict of `test` against a candidate that answers `answer(*args)`, the calls it
    received (one list per message) and the bytes of its replies left unread at the end."""
    verdict, messages, unread = run_against(test, answer, budget=budget)
    received = [[call["args"] for call in m.get("batch", [m])] for m in messages]
    return verdict, received, unread


FIVE = "def check(candidate):\n" + "".join(
    f"    assert candidate({i}) == 'y' * 1000, candidate({i})\n" for i in range(5)
)


def right(x: int) -> str:
    return "y" * 1000


def wrong(x: int) -> str:
    return "x" * 1000  # the right answer's size


def test_a_run_leaves_no_cycle_behind_whatever_its_answers():
    """Failures are text: no exception, traceback or frame of the run outlives it (the old
    failures list, its exceptions and the tests' frames formed a cycle that lived until a
    full collection, many runs later in the tests process)."""
    run(FIVE, right)  # the first run's own garbage (compiling the tests, the thread)
    gc.collect()
    gc.disable()
    try:
        for answer in (right, wrong, lambda x: 1 / 0, right):
            verdict, _, _ = run(FIVE, answer)
            assert gc.collect() == 0, verdict
    finally:
        gc.enable()
    assert run(FIVE, wrong)[0] == b"FAssertionError: " + b"x" * 1000
    assert run(FIVE, lambda x: 1 / 0)[0] == b"FZeroDivisionError: division by zero"


def test_held_and_failed_asserts_make_the_same_text():
    asserts = _Asserts()
    spare, first = asserts._spare, asserts._first
    asserts.end(True, "m" * 5000)  # held: its text made and put aside, as a failure's would be
    assert not asserts.failed and bytes(spare[:20]) == b"AssertionError: mmmm"
    asserts.end(asserts.held(0), "n" * 5000)
    asserts.end(False, "later")  # the first failure is the verdict
    assert asserts.first_failure() == b"AssertionError: " + b"n" * (_wire.MAX_REASON - 16)
    # Two buffers made when the run starts, written in place: a failure allocates nothing.
    assert asserts._spare is spare and asserts._first is first
    assert len(spare) == len(first) == _wire.MAX_REASON


def test_a_raising_condition_is_the_failure_and_its_message_still_runs():
    # Not planned (a loop): each call goes alone, and a message not evaluated would be a call
    # that does not come.
    test = (
        "def check(candidate):\n"
        "    for x in [1]:\n"
        "        assert candidate(x)[0] == 2, candidate(x + 1)\n"
        "    assert candidate(3) == [4]\n"
    )
    verdict, received, unread = run(test, lambda x: [])
    assert verdict == b"FIndexError: list index out of range"
    assert received == run(test, lambda x: [x + 1])[1]  # the message's call came all the same
    assert unread == 0


def test_every_end_reads_every_reply_owed():
    """Planned calls go as one batch; whatever ends the tests, the replies still owed are read
    and dropped, so that the candidate's view of the end is the same (all its replies taken)
    whatever ended the run and whatever its answers were."""
    big = "y" * 100_000  # past a pipe's 64 KiB: a reply left unread would stay in the pipe
    test = "def check(candidate):\n" + "".join(
        f"    assert candidate({i}) == {big!r}\n" for i in range(4)
    )
    ends = {
        "held": lambda x: big,
        "failed": lambda x: "x" * len(big),
        "malformed": lambda x: Raw(b"{") if x == 0 else big,
        "not plain": lambda x: Raw(b'{"error": "no"}') if x == 1 else big,
    }
    seen = []
    for name, answer in ends.items():
        verdict, received, unread = run(test, answer)
        assert unread == 0, name
        seen.append(received)
        assert (verdict == b"P") is (name == "held"), (name, verdict)
    assert all(received == seen[0] for received in seen), seen


def test_the_reply_budget_ends_the_run_the_same_way_whatever_the_answers():
    test = "def check(candidate):\n" + "".join(
        f"    assert candidate({i}) == 'y' * 40_000, candidate({i})\n" for i in range(6)
    )
    budget = 200_000  # four replies and a half
    outcomes = [run(test, lambda x, c=c: c * 40_000, budget) for c in "yx"]
    for verdict, _, unread in outcomes:
        assert verdict.startswith(b"Fthe candidate sent a reply too large for the tests' side")
        assert b"may come to 200000 bytes" in verdict
        assert unread == 0  # the reply over the budget and those after it: read and dropped
    assert outcomes[0][1] == outcomes[1][1]
    # Within the budget, the same tests pass.
    assert run(test, lambda x: "y" * 40_000, 12 * 40_100)[0] == b"P"


def test_a_reply_over_the_budget_is_not_read_into_memory():
    read_end, write_end = os.pipe()
    sender, receiver = _wire.Channel(write_end, plain=True), _wire.Channel(read_end, plain=True)
    thread = threading.Thread(target=lambda: [sender.send("z" * 300_000), sender.send(1)])
    thread.start()
    with pytest.raises(_wire.OverBudget):
        receiver.receive(max_bytes=100_000)
    assert receiver.received == 0  # only its header was looked at
    receiver.skip()  # dropped a chunk at a time
    assert receiver.receive(max_bytes=100) == 1
    thread.join()
    os.close(write_end)
    os.close(read_end)


@pytest.mark.parametrize(
    "items",
    [
        ["0"] * 50_000,  # small ints: a pointer each
        ["1e1"] * 25_000,  # a float object each
        ['"\U0001f600"'] * 14_000,  # a one-character string outside the BMP each
        ['"\u1234"'] * 16_000,  # one of the BMP, written as UTF-8
        ['"ab"'] * 20_000,
    ],
)
def test_decoding_a_reply_costs_at_most_16_bytes_a_byte(items):
    """The figure behind `_wire.REPLY_BUDGET_SHARE`: the text read, the JSON objects and the
    plain-data copy of a reply take at most 16 bytes per byte of the reply (the worst cases
    here are lists of one-character strings and of floats); so decoding the largest reply
    (`_wire.MAX_MESSAGE`) fits in the tests process's cap."""
    body = ('{"ok": [' + ",".join(items) + "]}").encode()
    tracemalloc.start()
    try:
        text = bytes(body)
        value = _wire.decode_plain(json.loads(text.decode("utf-8", "surrogatepass"))["ok"], {})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert value and peak <= 16 * len(body), peak / len(body)
