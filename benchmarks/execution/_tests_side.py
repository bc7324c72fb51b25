"""The tests' side of separated judging: the trusted code that calls the candidate by proxy.

The worker's tests process (`TestsProcess`, `boi-tests`) runs the prompt's prefix, the tests and
`check(proxy)` run after run. Each call of the proxy crosses to the candidate's process as plain
data (PLAIN_RULE) on a pipe and its reply comes back the same way, decoded into fresh built-in
objects; the tests process alone receives the nonce and writes the verdict. It runs no generated
code. The tests are compiled so that every assert runs to the end (`_compile_every_assert`):
the calls a candidate receives must not tell it whether its answers were right.

Standard library only, loaded by the zygote from its file (see `_zygote._load_sibling`).
"""

from __future__ import annotations

import ast
import builtins
import gc
import json
import os
import resource
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

if __package__:  # imported as benchmarks.execution._tests_side (the tests); in the worker, the
    from . import _kernel, _wire  # zygote hands this module its siblings as it loads it by path
if TYPE_CHECKING:
    from ._zygote import ScratchGuard

# The tests process's end of its control socket (jobs in, verdicts out).
TESTS_CONTROL_FD = 3


class CandidateError(Exception):
    """Raised in the tests for an exception of the candidate's that is not a built-in one."""


class _Violation(BaseException):
    """The candidate broke the protocol. A BaseException, so that a test's `except Exception:`
    cannot swallow it; the verdict records it even if a bare `except:` does."""


# Exceptions that steer the tests' own control flow rather than report an error: a candidate
# raising StopIteration would end `all(map(candidate, ...))` early, as if every value passed.
_CONTROL_FLOW = (StopIteration, StopAsyncIteration)


def _exception_type(name: str) -> type[Exception]:
    """The built-in exception class called `name`, else CandidateError."""
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, _CONTROL_FLOW):
        return cls
    return CandidateError


def _make_proxy(
    entry_point: str,
    classes: dict[str, type],
    violations: list[str],
    calls_fd: int,
    replies_fd: int,
    plan: list[str],
    budget: int,
) -> tuple[Any, Callable[[], None]]:
    """The function the tests call, each call crossing to the candidate's process and back
    (calls written to `calls_fd`, replies read from `replies_fd`), and the run's end (`finish`).

    `plan` (encoded calls, see `_call_plan`) lists the calls the tests will make first, in
    order, known before they run: they go to the candidate as batches, one message each, and
    its replies are read as the tests make those calls. The proxy's `__boi_plan__` lets the
    tests announce calls the same way (HumanEval+'s `_plus_check_all` announces its inputs).
    Planned calls the tests skip have their replies read and dropped; a call the plan does not
    hold (a test it misread) drops the rest of the plan the same way and goes alone. Either way
    the candidate has been sent the same batches and is sent the same calls after them: what
    it observes does not depend on its answers.

    The replies of one run may add up to `budget` bytes: a reply that announces more is not
    read (a violation: the candidate's doing), so that no candidate can push the trusted side's
    memory past what the budget allows. However the tests end (they held, failed, or stopped
    at a violation), `finish` reads and drops every reply still owed for calls sent, without
    decoding it: the candidate sees all its replies taken, then no further call, the same end
    whatever its answers were and whatever ended the run."""
    names = frozenset(classes)
    calls = _wire.Channel(calls_fd, plain=True)
    replies = _wire.Channel(replies_fd, plain=True)
    planned: list[str] = list(plan)
    # Calls of `planned` sent to the candidate and answered; replies owed for calls sent.
    position = {"sent": 0, "next": 0, "owed": 0}

    def violation(reason: str) -> _Violation:
        violations.append(reason[: _wire.MAX_REASON])
        return _Violation(violations[0])

    def post(message: str, count: int) -> None:
        data = message.encode("utf-8", "surrogatepass")
        if len(data) > _wire.MAX_MESSAGE:
            raise TypeError(f"a call of {len(data)} bytes cannot cross to the candidate")
        try:
            calls.send_frame(data)
        except OSError:
            raise violation("the candidate's process ended during a call") from None
        position["owed"] += count

    def receive() -> object:
        try:
            reply = replies.receive(
                max_containers=_wire.MAX_REPLY_CONTAINERS, max_bytes=budget - replies.received
            )
        except (EOFError, OSError):
            position["owed"] = 0
            raise violation("the candidate's process ended during a call") from None
        except _wire.OverBudget as err:  # left unread, for `finish` to drop
            raise violation(
                f"the candidate sent a reply too large for the tests' side ({err}; its "
                f"replies may come to {budget} bytes in a run)"
            ) from None
        except Exception as err:  # bad JSON, too deep (RecursionError), too large, ...
            position["owed"] -= 1
            raise violation(
                f"the candidate sent a malformed reply ({type(err).__name__}: {err})"[:200]
            ) from None
        position["owed"] -= 1
        return reply

    def drop() -> None:
        """Read the next reply owed and drop it, undecoded."""
        try:
            replies.skip()
        except (EOFError, OSError):
            position["owed"] = 0
            raise violation("the candidate's process ended during a call") from None
        position["owed"] -= 1

    def send_plan_through(last: int) -> None:
        """Send the plan's batches up to the one that holds call `last`."""
        while position["sent"] <= last:
            batch = _batch(planned, position["sent"])
            post('{"batch": [' + ", ".join(batch) + "]}", len(batch))
            position["sent"] += len(batch)

    def drop_plan() -> None:
        for _ in range(position["sent"] - position["next"]):
            drop()
        planned.clear()
        position["sent"] = position["next"] = 0

    def announce(calls_made: Iterable[tuple[Any, Any]]) -> None:
        """The tests' own plan: (args, kwargs) of the calls they are about to make, in order."""
        if violations:
            raise _Violation(violations[0])
        drop_plan()
        try:
            planned.extend(
                _encode_call(list(args), dict(kwargs), names) for args, kwargs in calls_made
            )
        except (_wire.NotPlain, TypeError, ValueError, RecursionError):
            planned.clear()  # the calls go one by one, and the one that cannot cross says so

    def candidate(*args: object, **kwargs: object) -> object:
        if violations:
            raise _Violation(violations[0])
        try:
            message = _encode_call(list(args), dict(kwargs), names)
        except _wire.NotPlain as err:
            # The tests, not the candidate, passed something that cannot cross (a callback).
            raise TypeError(
                f"an argument of type {err} cannot cross to the candidate ({_wire.plain_rule()}); "
                "judge this problem with separate_candidate: false"
            ) from None
        index = position["next"]
        try:
            found = planned.index(message, index)
        except ValueError:
            drop_plan()
            post(message, 1)
        else:
            send_plan_through(found)
            for _ in range(found - index):  # planned calls the tests did not make
                drop()
            position["next"] = found + 1
        reply = receive()
        if type(reply) is not dict:
            raise violation("the candidate sent a malformed reply")
        if "error" in reply:
            raise violation(str(reply["error"]))
        if "raise" in reply:
            raise _candidate_exception(reply)
        try:
            result = _wire.decode_plain(reply["ok"], classes)
            for original, after in zip(args, reply.get("args") or [], strict=False):
                _write_back(original, after, classes)
            changed = reply.get("kwargs") or {}
            for key, original in kwargs.items():
                _write_back(original, changed.get(key), classes)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as err:
            raise violation(
                f"the candidate sent a malformed reply ({type(err).__name__})"
            ) from None
        return result

    def finish() -> None:
        """The end of the run: every reply still owed is read and dropped (until the
        candidate's process ends, if it does first)."""
        while position["owed"] > 0:
            try:
                drop()
            except _Violation:
                break

    candidate.__name__ = candidate.__qualname__ = entry_point
    candidate.__boi_plan__ = announce  # type: ignore[attr-defined]
    return candidate, finish


def _encode_call(args: list, kwargs: dict, names: frozenset[str]) -> str:
    """One call as the candidate reads it (a JSON text: equal texts, equal calls)."""
    message = {"args": _wire.encode_plain(args, names), "kwargs": _wire.encode_plain(kwargs, names)}
    return json.dumps(message, allow_nan=False)


# A batch of planned calls: at most this many, and about this many bytes (one call may be
# larger), so that no batch comes near MAX_MESSAGE.
_BATCH_CALLS = 4096
_BATCH_BYTES = 4 * 2**20


def _batch(planned: list[str], start: int) -> list[str]:
    end, size = start, 0
    while end < len(planned) and end - start < _BATCH_CALLS:
        size += len(planned[end]) + 2
        if size > _BATCH_BYTES and end > start:
            break
        end += 1
    return planned[start:end]


def _candidate_exception(reply: dict) -> Exception:
    """The exception to raise in the tests for the candidate's: same built-in type, same args
    where they are plain data, else the message."""
    cls = _exception_type(str(reply["raise"]))
    message = str(reply.get("message", ""))
    if cls is CandidateError:
        return CandidateError(f"{reply['raise']}: {message}" if message else str(reply["raise"]))
    try:
        args = _wire.decode_plain(reply.get("args"), {})
        return cls(*args) if type(args) is list else cls(message)
    except Exception:
        return cls(message)


def _write_back(original: object, after: object, classes: dict[str, type]) -> None:
    """Apply the candidate's changes to a mutable argument in place (calls pass copies)."""
    if after is None:
        return
    value = _wire.decode_plain(after, classes)
    if type(original) is list and type(value) is list:
        original[:] = value
    elif (type(original) is dict and type(value) is dict) or (
        type(original) is set and type(value) is set
    ):
        original.clear()
        original.update(value)
    else:
        raise ValueError("an argument changed type")


class TestsProcess:
    """The jobs process's handle on the worker's tests process.

    Separated judging runs the trusted side (the prompt's prefix, the tests, `check`) in one
    long-lived process per worker instead of a fresh fork per run: a fork, an exit and the
    page copies in between cost more than most HumanEval tests take. That process runs no
    generated code: it sees the candidate only as plain data (PLAIN_RULE), decoded into fresh
    built-in objects, and the candidate cannot reach it (another uid, not dumpable, no ptrace
    or process_vm_* under the seccomp filter, signals scoped by Landlock). Every run gets a
    fresh namespace, the random module's state and recursion limit of the process's start, and
    an emptied working directory; a run that ends without a verdict (timeout, crash, limit)
    retires the process, and the next run starts a new one.
    """

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock
        self.status: int | None = None  # its wait status, once reaped

    @classmethod
    def start(cls, enter: Callable[[str, int], None], home: str) -> TestsProcess:
        """Fork the tests process, which `enter` (`_setup.Setup.enter_tests_process`) sets up
        in `home` with its end of the control socket as descriptor 3."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                enter(home, theirs.detach())
                # Not dumpable: no ptrace, no /proc/<pid>/mem or fd access, even for the same
                # uid (set after any uid change, which resets it).
                _kernel.prctl(_kernel.PR_SET_DUMPABLE, 0)
                # A candidate that hangs up must show as such, not as a SIGPIPE death.
                signal.signal(signal.SIGPIPE, signal.SIG_IGN)
                _kernel.set_name(b"boi-tests")
                _serve_tests(TESTS_CONTROL_FD)
            finally:
                os._exit(70)
        theirs.close()
        ours.setblocking(False)
        return cls(pid, ours)

    def alive(self) -> bool:
        if self.status is None and os.waitpid(self.pid, os.WNOHANG)[0] == self.pid:
            self.status = 0  # it ended between runs (nothing was judged by it)
        return self.status is None

    def start_job(self, job: dict, nonce: bytes, fds: tuple[int, int]) -> None:
        """Hand it one run: the tests, the nonce and its ends of the calls and replies pipes.
        A process that cannot take it is found out by `verdict`."""
        message = {
            "prefix": job["prefix"],
            "test": job["test"],
            "entry_point": job["entry_point"],
            "prefix_classes": list(job.get("prefix_classes", ())),
            "nonce": nonce.hex(),
        }
        try:
            socket.send_fds(self.sock, [b"J"], list(fds))
            # Taken at once by a process that waits for its next run; the bound is for one
            # that does not. (Not a plain channel: the tests are benchmark text, not bounded by
            # the calls' MAX_MESSAGE.)
            _wire.Channel(self.sock.fileno()).send(message, time.monotonic() + 10.0)
        except (OSError, TimeoutError):
            pass

    def verdict(self, deadline: float, guard: ScratchGuard | None) -> tuple[bytes | None, bool]:
        """(the run's verdict, False), or (None, timed out) when the deadline passes, the
        scratch guard trips or the process ends first."""
        channel = _wire.Channel(self.sock.fileno())
        try:
            return channel.receive_frame(_wire.MAX_VERDICT, deadline, guard), False
        except TimeoutError:
            return None, guard is None or not guard.tripped
        except (EOFError, OSError):
            return None, False

    def stop(self) -> int:
        """Kill it (if it still runs) and return its wait status."""
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.status = os.waitpid(self.pid, 0)[1]
        self.sock.close()
        return self.status


def _serve_tests(control: int) -> None:
    """The tests process: run after run, read the tests, the nonce and the two pipe ends from
    `control`, run them against the candidate by proxy and write the verdict back."""
    import random

    sock = socket.socket(fileno=control)
    channel = _wire.Channel(control)
    random_state = random.getstate()
    recursion_limit = sys.getrecursionlimit()
    home = os.getcwd()
    finished: list[int] = []  # the last run's pipe ends, closed once its candidate is dead
    _kernel.fix_malloc(_MALLOC_THRESHOLD)
    baseline = _after_run()  # the first run starts from where every later one does
    while True:
        try:
            marker, fds, _, _ = socket.recv_fds(sock, 1, 2)
        except OSError:
            os._exit(0)
        for fd in finished:
            os.close(fd)
        finished = []
        if not marker or len(fds) != 2:
            os._exit(0)  # the jobs process is gone (or sent something it never sends)
        try:
            job = channel.receive()
        except EOFError:
            os._exit(0)
        # What a fresh process would start from: the tests of one run must not see another's.
        random.setstate(random_state)
        sys.setrecursionlimit(recursion_limit)
        os.chdir(home)
        verdict = _run_tests(job, *fds)
        baseline = _after_run(baseline)
        # Kept open until the next run comes, by when the jobs process has killed this run's
        # candidate: it never sees its calls end (an end it could time, or tell from an
        # early one), it is killed while waiting for the next.
        finished = fds
        if verdict == b"P":
            verdict = _wire.pass_token(bytes.fromhex(job["nonce"])) + b"P"
        try:
            channel.send_frame(verdict)
        except OSError:
            os._exit(0)


# Blocks from this size up are mapped on their own and unmapped when freed (see `_after_run`).
_MALLOC_THRESHOLD = 128 * 2**10
# How far above its resident memory after start-up the tests process may be left after a run
# before the free pages inside malloc's heap are given back (`_after_run`).
_TRIM_SLACK = 2**20


def _after_run(baseline: int | None = None) -> int | None:
    """What one run allocated goes before the next run starts: the reference cycles it left
    (a prefix's classes, the tests' own) are collected now, not whenever a full collection
    comes, and the memory freed goes back to the kernel. Why: the tests process's memory
    between runs must not depend on what an earlier run received or how its answers fared;
    else a neighbour could leave too little for a later correct sample's replies, or a later
    candidate sense what an earlier one left.

    Blocks of `_MALLOC_THRESHOLD` and more are unmapped when freed, and the heap's free top is
    trimmed by free() itself; what is left is free pages inside the heap, given back with
    `malloc_trim` only when the resident memory is more than `_TRIM_SLACK` above `baseline`,
    the floor the last trim reached (which this returns: modules the tests imported stay, and
    raise it). Trimming after every run cost about 2.5 ms of CPU a sample, in the trim and in
    faulting the pages in again (paired runs of scripts/bench_execute.py). Whether it trims
    depends on what the run allocated (the sizes the candidate sent, the tests), never on
    whether the answers were right."""
    gc.collect()
    resident = _kernel.resident_bytes()
    if baseline is None or resident is None or resident > baseline + _TRIM_SLACK:
        _kernel.malloc_trim()
        return _kernel.resident_bytes()
    return baseline


def _run_tests(job: dict, calls_fd: int, replies_fd: int, budget: int | None = None) -> bytes:
    """One run of the tests: the prompt's prefix and the tests, calling the candidate by proxy.
    Returns b"P" when they held, else b"F" and the reason. The candidate's replies may add up
    to `budget` bytes (by default a share of this process's address-space cap:
    `_wire.REPLY_BUDGET_SHARE`)."""
    namespace: dict = {}
    violations: list[str] = []
    asserts = _Asserts()
    finish: Callable[[], None] | None = None
    verdict = b"P"
    try:
        compiled = _compiled(job["prefix"], job["test"], job["entry_point"])
        # The benchmark's own prefix and tests (trusted text, never generated code), in the
        # tests process, which calls the candidate only by proxy.
        exec(compiled.prefix, namespace)  # noqa: S102
        classes = {
            name: namespace[name]
            for name in job.get("prefix_classes", ())
            if isinstance(namespace.get(name), type)
        }
        proxy, finish = _make_proxy(
            job["entry_point"],
            classes,
            violations,
            calls_fd,
            replies_fd,
            compiled.plan,
            reply_budget() if budget is None else budget,
        )
        # Bound before the tests run: MBPP tests of a function called `check` capture it as a
        # default argument while their own `check` is defined.
        namespace[job["entry_point"]] = proxy
        namespace[_ASSERTS_NAME] = asserts
        exec(compiled.test, namespace)  # noqa: S102 (the tests, as the prefix above)
        namespace["check"](proxy)
        if asserts.failed:
            verdict = b"F" + asserts.first_failure()
    except BaseException as err:
        verdict = b"F" + _wire.reason(err)
        if isinstance(err, _Violation):
            verdict = b""  # reported as the violation itself, below
    if finish is not None:
        finish()
    if violations and (verdict == b"P" or not verdict):
        # A violation can never pass. Tests that caught it and failed with their own reason
        # keep that reason (a fairness test names the input the candidate died on).
        verdict = b"F" + violations[0].encode("utf-8", "backslashreplace")[: _wire.MAX_REASON]
    namespace.clear()
    return verdict


def reply_budget() -> int:
    """The bytes a run's replies may add up to in this process: a share of its address-space
    cap (of 2 GiB where it has none: the tests of this module run the trusted side
    in-process)."""
    cap = resource.getrlimit(resource.RLIMIT_AS)[0]
    if cap == resource.RLIM_INFINITY:
        cap = 2 * 2**30
    return cap // _wire.REPLY_BUDGET_SHARE


class _Asserts:
    """The outcomes of a run's asserts, kept as bounded text, never as exceptions.

    Why text: an exception keeps its traceback, the traceback the tests' frames, and those
    whatever the tests held (the candidate's replies among them), in a reference cycle that
    outlives the run until a full collection. The tests process's memory would then depend on
    whether the answers were wrong (a failed assert kept its message, a held one did not), in
    this run and in later ones: something a candidate near a memory limit could observe, and a
    neighbour's failures could make a later correct sample fail. So every assert, held or
    not, does the same work: its message is evaluated (also when its condition raised), the
    text of its failure is made (`_wire.reason`, MAX_REASON bytes at most) and copied into one
    of two buffers made when the run starts: the first failure's, or a spare one.
    """

    __slots__ = ("_first", "_length", "_spare", "failed")

    def __init__(self) -> None:
        self.failed = False
        self._length = 0
        self._first = bytearray(_wire.MAX_REASON)
        self._spare = bytearray(_wire.MAX_REASON)

    @staticmethod
    def held(condition: object) -> bool:
        """Whether the condition held (its truth, as `assert` takes it)."""
        return bool(condition)

    @staticmethod
    def raised(error: BaseException) -> bytes:
        """The condition raised: that is the failure, whatever the message says."""
        return _wire.reason(error)

    def end(self, held: bool | bytes, *message: object) -> None:
        """The assert's end, once its message (if it has one) was evaluated."""
        self._keep(held, _wire.reason(AssertionError(*message)))

    def end_raised(self, held: bool | bytes, error: BaseException) -> None:
        """The message raised (the failure where the condition did not hold)."""
        self._keep(held, _wire.reason(error))

    def _keep(self, held: bool | bytes, text: bytes) -> None:
        if held is True or self.failed:
            self._spare[: len(text)] = text
        else:
            kept = text if held is False else held
            self._first[: len(kept)] = kept
            self._length = len(kept)
            self.failed = True

    def first_failure(self) -> bytes:
        return bytes(self._first[: self._length])


# The name the rewritten tests find the run's `_Asserts` under, and the names of the
# rewritten assert's own variables (see _compile_every_assert).
_ASSERTS_NAME = "__boi_asserts__"
_HELD_NAME = "__boi_assert_held__"
_ERROR_NAME = "__boi_assert_error__"


class _EveryAssert(ast.NodeTransformer):
    """`assert X, M` ->

        try:
            held = asserts.held(X)
        except Exception as e:
            held = asserts.raised(e)
        try:
            asserts.end(held, M)       # `asserts.end(held)` without a message
        except Exception as e:
            asserts.end_raised(held, e)

    Why the message too, and even when the condition raised: HumanEval's tests often call the
    candidate again in it (`assert candidate(1) == True, str(candidate(1))`), which Python
    evaluates only when the assert fails, so that an extra call would tell the candidate it
    was wrong (and a condition that raises, `candidate(1)[0] == 2` on an empty list, would
    skip it). Evaluated whichever way the assert went, the message costs the same calls and
    the same work (`_Asserts`) either way."""

    def visit_Assert(self, node: ast.Assert) -> list[ast.stmt]:
        load, store = ast.Load(), ast.Store()

        def method(name: str, *args: ast.expr) -> ast.Call:
            return ast.Call(
                ast.Attribute(ast.Name(_ASSERTS_NAME, load), name, load), list(args), []
            )

        held, error = ast.Name(_HELD_NAME, load), ast.Name(_ERROR_NAME, load)
        condition = ast.Try(
            [ast.Assign([ast.Name(_HELD_NAME, store)], method("held", node.test))],
            [
                ast.ExceptHandler(
                    ast.Name("Exception", load),
                    _ERROR_NAME,
                    [ast.Assign([ast.Name(_HELD_NAME, store)], method("raised", error))],
                )
            ],
            [],
            [],
        )
        message = [node.msg] if node.msg is not None else []
        end = ast.Try(
            [ast.Expr(method("end", held, *message))],
            [
                ast.ExceptHandler(
                    ast.Name("Exception", load),
                    _ERROR_NAME,
                    [ast.Expr(method("end_raised", held, error))],
                )
            ],
            [],
            [],
        )
        return [ast.copy_location(condition, node), ast.copy_location(end, node)]


def _compile_every_assert(test: str) -> Any:
    """The tests, compiled so that a failed assert is recorded (as text, `_Asserts`) and the
    tests go on.

    Why: a test that stops at its first failed assert tells the candidate, by whether its next
    call comes, whether its last answer was right; a candidate that remembers that (in any
    state a later sample can read) learns a task's answers without computing them. With every
    assert run, the calls a candidate receives do not depend on its answers wherever the tests'
    inputs do not (the docs list the tests whose later inputs depend on earlier outputs). The
    verdict is the same: the first failure, with its own exception's text, once the tests have
    ended. A candidate's own exception inside an assert is a failure of that assert like any
    other; `_Violation` (a BaseException: the candidate died or sent garbage) still ends the
    tests. The rewritten tests need the run's `_Asserts` as `__boi_asserts__`.
    """
    tree = ast.fix_missing_locations(_EveryAssert().visit(ast.parse(test, "<tests>")))
    return compile(tree, "<tests>", "exec")


# --------------------------------------------------------------------------- compiled tests


class _Compiled(NamedTuple):
    prefix: Any  # the prompt's prefix, compiled
    test: Any  # the tests, compiled by _compile_every_assert
    plan: list[str]  # the calls known before the tests run (`_call_plan`), encoded


# What one tests process has compiled, by (prefix, tests, entry point): the samples of a task
# come one after another, and compiling its tests (an AST rewrite) costs more than most runs.
# Code objects are immutable and every run executes them in a namespace of its own.
_COMPILED: dict[tuple[str, str, str], _Compiled] = {}
_COMPILED_KEPT = 64


def _compiled(prefix: str, test: str, entry_point: str) -> _Compiled:
    key = (prefix, test, entry_point)
    found = _COMPILED.get(key)
    if found is None:
        found = _Compiled(
            compile(prefix, "<prompt>", "exec"),
            _compile_every_assert(test),
            _call_plan(prefix, test, entry_point),
        )
        if len(_COMPILED) >= _COMPILED_KEPT:
            del _COMPILED[next(iter(_COMPILED))]  # the oldest
        _COMPILED[key] = found
    return found


# --------------------------------------------------------------------------- call plans

# Built-ins that call nothing of the tests' or the candidate's when given plain values and
# other such built-ins: a statement made of them, literals and calls of the candidate with
# literal arguments makes exactly those calls, in the order they are written.
_INERT_BUILTINS = frozenset(
    "abs all any bool dict float frozenset int isinstance len list max min repr round set "
    "sorted str sum tuple type".split()
)


def _call_plan(prefix: str, test: str, entry_point: str) -> list[str]:
    """The calls of the candidate that `check` makes first, in order, known from the text of
    the tests: those of its leading statements that are asserts (or expressions) made only of
    literals, inert built-ins and calls of the candidate with literal arguments (HumanEval's
    and MBPP's tests are mostly such asserts). Empty when the tests are not of that shape.

    Why: the calls then go to the candidate as one batch, instead of one pipe round trip each,
    and the candidate learns no more from a batch than from the same calls one by one (with
    every assert run to the end, `_compile_every_assert`, the calls do not depend on the
    answers either way). The plan stops at the first statement it cannot read; the calls after
    it go one by one. An assert's message is planned after its condition, as the rewritten
    assert evaluates it (whether the condition held, failed or raised)."""
    try:
        prefix_tree = ast.parse(prefix)
        tree = ast.parse(test)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the run reports it, from compiling the same text
    prefix_modules, prefix_names = _bindings(prefix_tree)
    test_modules, test_names = _bindings(tree)
    bound = prefix_names | test_names
    if "*" in bound:
        return []  # `from m import *` may bind any name, an inert built-in's included
    checks = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "check"
    ]
    # The module's own statements run before `check`: they must not call anything (a call
    # there could reach the candidate before the plan's first call).
    if (
        len(checks) != 1
        or not isinstance(checks[0], ast.FunctionDef)
        or checks[0].decorator_list
        or not checks[0].args.args
        or not all(_runs_nothing(node) for node in tree.body)
    ):
        return []
    check = checks[0]
    candidates = {check.args.args[0].arg, entry_point}
    # Names that may be read: inert built-ins and modules (whose functions call only what they
    # are given), unless the prompt or the tests bind them to something else too.
    readable = (_INERT_BUILTINS | prefix_modules | test_modules) - bound - candidates
    plan: list[str] = []
    for statement in check.body:
        if isinstance(statement, ast.Pass | ast.Import | ast.ImportFrom):
            continue  # binds a module (names it binds are not inert: see `bound`)
        if isinstance(statement, ast.Assert):
            parts = [statement.test] if statement.msg is None else [statement.test, statement.msg]
        elif isinstance(statement, ast.Expr):
            parts = [statement.value]
        else:
            break
        calls: list[ast.Call] = []
        try:
            if not all(_planned_calls(part, candidates, readable, calls) for part in parts):
                break
        except RecursionError:  # an expression nested deeper than the reader goes: stop here
            break
        try:
            encoded = [
                _encode_call(
                    [_literal(arg) for arg in call.args],
                    {str(k.arg): _literal(k.value) for k in call.keywords},
                    frozenset(),
                )
                for call in calls
            ]
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            break  # an argument that is not a literal, or cannot cross: the plan ends here
        plan.extend(encoded)
    return plan


def _literal(node: ast.expr) -> Any:
    """The value of a literal argument, built as the compiled tests build it: a set's order
    (and so its encoding) depends on how it was built, and `literal_eval` builds sets another
    way. Checked to be a literal first, so evaluating it runs nothing."""
    ast.literal_eval(node)  # ValueError for anything but a literal
    code = compile(ast.fix_missing_locations(ast.Expression(node)), "<tests>", "eval")
    # `set()`: literal_eval's empty set; nothing but a literal gets here (checked above).
    return eval(code, {"__builtins__": {"set": set}})  # noqa: S307


def _bindings(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names a module binds anywhere: (those bound by `import module`, every other)."""
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return modules, names


def _runs_nothing(node: ast.stmt) -> bool:
    """Does this module-level statement run no code of anyone's when it runs?"""
    if isinstance(node, ast.Import | ast.ImportFrom | ast.Pass):
        return True
    if isinstance(node, ast.Expr | ast.Assign | ast.AnnAssign):
        value = node.value
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return True
        try:
            ast.literal_eval(value)  # type: ignore[arg-type]
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return False
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        return all(isinstance(t, ast.Name) for t in targets if t is not None)
    if isinstance(node, ast.FunctionDef):
        # Defining a function runs its decorators and its defaults' expressions only.
        defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        return not node.decorator_list and all(
            isinstance(d, ast.Constant | ast.Name) for d in defaults
        )
    return False


def _planned_calls(
    node: ast.AST, candidates: set[str], readable: frozenset[str] | set[str], calls: list[ast.Call]
) -> bool:
    """Append to `calls`, in evaluation order, the candidate's calls that evaluating `node`
    makes; False when `node` may call anything else (a name that is not `readable`, which could
    be a function of the tests that calls the candidate), or may or may not call the candidate
    depending on a value (a second operand of `and`/`or`, a chained comparison's later terms,
    a conditional expression)."""

    def visit(node: ast.AST | None, certain: bool = True) -> bool:
        if node is None or isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            return node.id in readable
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return all(visit(e, certain) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(
                k is not None and visit(k, certain) and visit(v, certain)
                for k, v in zip(node.keys, node.values, strict=True)
            )
        if isinstance(node, ast.UnaryOp):
            return visit(node.operand, certain)
        if isinstance(node, ast.BinOp):
            return visit(node.left, certain) and visit(node.right, certain)
        if isinstance(node, ast.Compare):
            # `a < b < c` evaluates c only when a < b holds.
            return (
                visit(node.left, certain)
                and visit(node.comparators[0], certain)
                and all(visit(c, False) for c in node.comparators[1:])
            )
        if isinstance(node, ast.BoolOp):
            return visit(node.values[0], certain) and all(visit(v, False) for v in node.values[1:])
        if isinstance(node, ast.Attribute):
            # A module's function, or a method of a value made here (built-in values' methods
            # call nothing of ours).
            return visit(node.value, certain)
        if isinstance(node, ast.Subscript):
            return visit(node.value, certain) and visit(node.slice, certain)
        if isinstance(node, ast.Slice):
            return all(visit(part, certain) for part in (node.lower, node.upper, node.step))
        if isinstance(node, ast.JoinedStr):
            return all(visit(v, certain) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            return visit(node.value, certain) and visit(node.format_spec, certain)
        if isinstance(node, ast.Call):
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords
            ):
                return False
            func = node.func
            if isinstance(func, ast.Name) and func.id in candidates:
                if not certain:
                    return False
                # Its arguments must be literals: the caller evaluates them (`_literal`).
                calls.append(node)
                return True
            return (
                visit(func, certain)
                and all(visit(a, certain) for a in node.args)
                and all(visit(k.value, certain) for k in node.keywords)
            )
        return False  # lambdas, comprehensions, conditional expressions, walrus, await, ...

    return visit(node)
