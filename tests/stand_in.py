"""A stand-in candidate for the trusted side's tests: `_tests_side._run_tests` runs in this
process against a thread that answers its calls with a Python function, plain data over real
pipes (`tests/test_call_plans.py`, `tests/test_sandbox_trusted_side.py`); the sandbox suites
run the same code in the worker against generated code."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from benchmarks.execution import _wire
from benchmarks.execution._tests_side import _run_tests


class Raw(bytes):
    """An answer the stand-in sends as this frame's raw body (a malformed reply)."""


def run_against(
    test: str, answer: Callable[..., Any], entry_point: str = "f", budget: int | None = None
) -> tuple[bytes, list[dict[str, Any]], int]:
    """The verdict of `test` against a candidate that answers each call with `answer(*args)`
    (an exception it raises goes back as the candidate's, a `Raw` value as a raw frame), the
    messages the candidate received in order (a batch or one call each), and the bytes of its
    replies left unread when the tests ended."""
    calls_r, calls_w = os.pipe()
    replies_r, replies_w = os.pipe()
    received: list[dict[str, Any]] = []

    def candidate() -> None:
        calls = _wire.Channel(calls_r, plain=True)
        replies = _wire.Channel(replies_w, plain=True)
        try:
            while True:
                try:
                    message = calls.receive()
                except EOFError:
                    break
                received.append(message)
                for call in message.get("batch", [message]):
                    try:
                        value = answer(*_wire.decode_plain(call["args"], {}))
                    except Exception as err:
                        replies.send({"raise": type(err).__name__, "message": str(err)})
                        continue
                    if isinstance(value, Raw):
                        replies.send_frame(bytes(value))
                    else:
                        replies.send({"ok": _wire.encode_plain(value)})
        except BrokenPipeError:
            pass
        finally:
            os.close(calls_r)
            os.close(replies_w)

    thread = threading.Thread(target=candidate)
    thread.start()
    job = {"prefix": "", "test": test, "entry_point": entry_point}
    try:
        verdict = _run_tests(job, calls_w, replies_r, budget)
    finally:
        os.close(calls_w)
        # What the tests left unread once they ended: read here to the end (a candidate
        # blocked writing a reply the tests never took then finishes, and sees no more calls).
        unread = len(_wire.Channel(replies_r).read_to_end(1 << 30))
        thread.join(timeout=10)
    return verdict, received, unread
