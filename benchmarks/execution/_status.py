"""How a judged sample's run ended, as data.

The sandbox worker decides the status where it decides the verdict and sends it beside the
human-readable reason; `execute_samples` writes it into every result row as `status`, next to
`passed` and `result`. Readers take the status from that field, never from the reason's text:
the text is for people and may change wording.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from benchmarks.common.errors import UserError


class Status(str, enum.Enum):
    """The status of one judged sample.

    The values are the strings the worker (`_zygote.py`, which imports only the standard
    library so that a sample sees a plain interpreter, and so cannot import this class) sends
    over its pipe, and the strings result rows carry: `Status(wire_value)` is the whole decoding.
    """

    PASSED = "passed"
    # A test failed, the program raised, was killed (memory, signals) or exited early, or the
    # sample could not be judged at all (unknown task, malformed sample, a problem without
    # tests); `result` says which.
    FAILED = "failed"
    # The wall-clock deadline or the CPU-time limit.
    TIMED_OUT = "timed out"
    # Programs of other languages than Python (job mode "build"), whose failures the sandbox
    # tells apart: the compiler refused the program (or ran past its own time limit); the
    # program crashed, raised or exited before its tests finished; an assert of the tests
    # failed. Python samples keep FAILED for all three.
    COMPILE_ERROR = "compile error"
    RUNTIME_ERROR = "runtime error"
    WRONG_ANSWER = "wrong answer"
    # The sandbox failed, not the sample (a worker died twice, its plumbing broke).
    ERROR = "error"

    def __str__(self) -> str:
        # A plain value in f-strings and messages (a str-mixin enum prints `Status.PASSED` on
        # Python 3.11+ otherwise).
        return self.value


def result_status(row: Mapping[str, Any]) -> Status:
    """The status of a result row: its `status` field, or, for a row written before rows had
    one, what `legacy_status` reads from it. Raises UserError for a value that is no status."""
    if "status" not in row:
        return legacy_status(row)
    try:
        return Status(row["status"])
    except ValueError:
        expected = ", ".join(repr(s.value) for s in Status)
        raise UserError(
            f"a result row (task {row.get('task_id')!r}) has status {row['status']!r}; "
            f"expected one of {expected}."
        ) from None


def legacy_status(row: Mapping[str, Any]) -> Status:
    """The status of a result row without a `status` field, from `passed` and the start of
    `result` (the only place that reads a status out of the text).

    This exists only for results files written before result rows carried `status`; the
    sandbox sets the status of every row written since, and nothing else parses it.
    """
    if row.get("passed"):
        return Status.PASSED
    result = str(row.get("result", ""))
    if result.startswith("timed out"):
        return Status.TIMED_OUT
    if result.startswith("error"):
        return Status.ERROR
    return Status.FAILED
