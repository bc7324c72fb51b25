"""The wire: what crosses between the harness and a sandbox worker, and between a candidate and
its tests, and the one channel type every such crossing uses.

Standard library only. The worker (`_zygote.py`, run as `python -I`) and its other siblings load
this file by path (see `_zygote._load_sibling`); the harness (`_pool.py`, `_tables.py`) imports
it as `benchmarks.execution._wire`. It is the only module of the worker the harness imports: the
rest of the worker is internal to the sandbox. Other packages use what `benchmarks.execution`
exports from it (`encode_plain`, `same_output`), never this module.

What it holds:

- `Channel`: one end of a pipe or a stream socket carrying length-prefixed messages (a 4-byte
  big-endian length, then that many bytes: JSON, or a verdict's raw bytes), read and written
  whole, blocking or before a deadline, each message bounded where the other side is not
  trusted. Two kinds: the worker's own channels (the harness's jobs and results, the tests
  process's control socket, a candidate's first message: its program), and the plain-data
  channels between a candidate and the tests (`plain=True`: every message at most MAX_MESSAGE
  bytes, its values by PLAIN_RULE, NaN refused by the encoder).
- The plain-data codec (`encode_plain`, `decode_plain`, PLAIN_RULE): the only values that cross
  between the candidate and the tests, decoded into fresh built-in objects.
- The verdict: the pass token a passing run writes (`pass_token`), the bounds on a verdict and
  on a failure's reason.
- `same_output`: the contest comparison of a stdin/stdout program's output, applied by the
  worker to each test's output and by the analysis that replays it.
"""

from __future__ import annotations

import builtins
import collections
import hashlib
import io
import json
import os
import select
import struct
import time
from collections.abc import Callable
from typing import Any

NONCE_BYTES = 16
MAX_REASON = 2000
MAX_MESSAGE = 64 * 2**20
# The most lists and objects one reply of the candidate may hold (see Channel.receive): far
# above any benchmark's outputs (HumanEval+'s expected outputs hold at most 25, HumanEval/87's;
# its million-number lists are one), far below what takes the tests' side a second to decode.
MAX_REPLY_CONTAINERS = 200_000
# What the candidate's replies may add up to in one run, as a share of the tests process's
# address-space cap: 1/8 (256 MiB under the default 2 GiB cap). It must hold what a correct
# candidate sends: HumanEval+'s references send about 147 MB in a run (HumanEval/15's strings,
# /130's million-number lists; 1/32 refused both, tests/test_loaders_humanevalplus.py). Decoding
# a reply costs at most about 16 bytes per byte of its text (the text, the JSON objects, the
# plain-data copy; a list of one-character strings outside the BMP is the worst case, measured
# in tests/test_sandbox_trusted_side.py), and one reply is at most MAX_MESSAGE, so decoding any
# one reply fits in the cap. Tests that keep every reply could still run out of memory near
# the budget; that out-of-memory is a malformed reply, the candidate's doing, and depends on
# the sizes it sent, never on whether its answers were right (see `_tests_side`).
REPLY_BUDGET_SHARE = 8
PLAIN_RULE = "boi-plain/1"
# The most a verdict can hold: the pass token, or "F" and the reason.
MAX_VERDICT = NONCE_BYTES + MAX_REASON + 64
# Without a size-capped tmpfs (no mount namespace), the jobs process checks the scratch space
# this often while a sample runs: a sample can overshoot the cap by what it writes in that time
# (at 50 ms, a review's sample wrote 75 MiB into a 64 MiB cap). A check of an empty or small
# scratch costs tens of microseconds, and only runs longer than this period pay for any.
GUARD_SECONDS = 0.01

_HEADER = struct.Struct(">I")


# --------------------------------------------------------------------------- the channel


class Channel:
    """One end of a pipe or a stream socket that carries length-prefixed messages.

    Without a deadline every call blocks; with one, the descriptor is switched to non-blocking
    (and left so) and the call raises TimeoutError when the deadline passes, however slowly the
    other side reads or writes. A channel that ends early raises EOFError. `plain` channels
    carry the calls and replies between a candidate and the tests: a message is at most
    MAX_MESSAGE bytes both ways, and, received without a deadline, it is read in chunks, what
    was read ahead kept for the next message (so such a channel is read only by `receive`)."""

    def __init__(self, fd: int, plain: bool = False) -> None:
        self.fd = fd
        self.plain = plain
        # Read ahead by `_receive_buffered`: the bytes, and where the next message starts.
        self._pending = b""
        self._start = 0
        self.received = 0  # the bytes of the messages received (or skipped) so far

    # ---- bytes ---------------------------------------------------------------------------

    def write(self, data: bytes, deadline: float | None = None) -> None:
        """Write all of `data` (no framing); with a `deadline`, before it (TimeoutError)."""
        fd, view = self.fd, memoryview(data)
        if deadline is None:
            while view:
                view = view[os.write(fd, view) :]
            return
        os.set_blocking(fd, False)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            _, writable, _ = select.select([], [fd], [], left)
            if writable:
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    continue

    def read(
        self, size: int, deadline: float | None = None, guard: Callable[[], bool] | None = None
    ) -> bytes:
        """Exactly `size` bytes (EOFError when the writer is gone first); with a `deadline`,
        before it (TimeoutError). With a `guard`, polled every GUARD_SECONDS, TimeoutError also
        when it says stop."""
        fd = self.fd
        buf = io.BytesIO()
        if deadline is None:
            while buf.tell() < size:
                chunk = os.read(fd, size - buf.tell())
                if not chunk:
                    raise EOFError("the other side closed the channel")
                buf.write(chunk)
            return buf.getvalue()
        os.set_blocking(fd, False)
        while buf.tell() < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            step = left if guard is None else min(left, GUARD_SECONDS)
            readable, _, _ = select.select([fd], [], [], step)
            if not readable:
                if guard is not None and guard():
                    raise TimeoutError
                continue
            try:
                chunk = os.read(fd, min(1 << 20, size - buf.tell()))
            except BlockingIOError:
                continue
            if not chunk:
                raise EOFError("the other side closed the channel")
            buf.write(chunk)
        return buf.getvalue()

    def read_to_end(self, limit: int) -> bytes:
        """Everything until the writer closes its end, at most `limit` bytes; then closes ours."""
        fd = self.fd
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(65536, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        os.close(fd)
        return b"".join(chunks)

    # ---- framed messages -----------------------------------------------------------------

    def send_frame(self, data: bytes, deadline: float | None = None) -> None:
        """One message of raw bytes: its length, then the bytes."""
        self.write(_HEADER.pack(len(data)) + data, deadline)

    def receive_frame(
        self, limit: int, deadline: float | None = None, guard: Callable[[], bool] | None = None
    ) -> bytes | None:
        """One message of raw bytes, or None when it announces more than `limit` bytes (then
        left unread)."""
        size = _HEADER.unpack(self.read(4, deadline, guard))[0]
        if size > limit:
            return None
        return self.read(size, deadline, guard)

    def send(self, obj: object, deadline: float | None = None) -> None:
        """One JSON message. On a plain channel NaN is refused (the codec writes it as data)
        and a message over MAX_MESSAGE bytes raises NotPlain."""
        data = json.dumps(obj, allow_nan=not self.plain).encode("utf-8", "surrogatepass")
        if self.plain and len(data) > MAX_MESSAGE:
            raise NotPlain(f"a message of {len(data)} bytes (more than {MAX_MESSAGE})")
        self.send_frame(data, deadline)

    def receive(
        self,
        deadline: float | None = None,
        max_containers: int | None = None,
        max_bytes: int | None = None,
    ) -> Any:
        """One JSON message (EOFError when the channel ends first).

        `max_containers` bounds the lists and objects it may hold (counted on the raw text, an
        upper bound, before any parsing): decoding costs per container, so a reply of a million
        one-element lists would keep the trusted side busy for seconds, and turn the
        candidate's failure into a timeout. `max_bytes` (a plain channel read without a
        deadline) bounds its size: a larger one raises OverBudget before any of it is read,
        and is left whole for `skip`."""
        if deadline is None and self.plain:
            body = self._receive_buffered(max_bytes)
        else:
            size = _HEADER.unpack(self.read(4, deadline))[0]
            if self.plain and size > MAX_MESSAGE:
                raise ValueError(f"a message of {size} bytes (more than {MAX_MESSAGE})")
            body = self.read(size, deadline)
        if max_containers is not None and body.count(b"[") + body.count(b"{") > max_containers:
            raise ValueError(f"a message of more than {max_containers} lists and objects")
        return json.loads(body.decode("utf-8", "surrogatepass"))

    def skip(self) -> None:
        """Read the next message of a plain exchange and drop it, a chunk at a time: what it
        costs does not depend on its size beyond the reading (EOFError when the channel ends
        first)."""
        size = self._next_size()
        self._start += 4
        self.received += size
        left = size - (len(self._pending) - self._start)
        if left <= 0:
            self._start += size
            if self._start == len(self._pending):
                self._pending, self._start = b"", 0
            return
        self._pending, self._start = b"", 0
        while left > 0:
            chunk = os.read(self.fd, min(left, 65536))
            if not chunk:
                raise EOFError("the other side closed the channel mid-message")
            left -= len(chunk)

    def _next_size(self) -> int:
        """The size the next message of a plain exchange announces (its header read ahead,
        nothing consumed)."""
        buffer, start = self._pending, self._start
        while len(buffer) - start < 4:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                mid = " mid-message" if len(buffer) > start else ""
                raise EOFError("the other side closed the channel" + mid)
            buffer, start = buffer[start:] + chunk, 0
        self._pending, self._start = buffer, start
        return int(_HEADER.unpack_from(buffer, start)[0])

    def _receive_buffered(self, max_bytes: int | None = None) -> bytes:
        """The body of the next message of a plain exchange, read in chunks: one read usually
        brings a whole message, and what it brings of the messages after it (a batch's
        replies, see `_tests_side`) is kept for the next call, by offset (a batch of a thousand
        small replies is not copied a thousand times). A message larger than the first chunk
        is read to its end exactly."""
        size = self._next_size()
        if max_bytes is not None and size > max_bytes:
            raise OverBudget(f"a message of {size} bytes (more than the {max_bytes} left)")
        if size > MAX_MESSAGE:
            raise OverBudget(f"a message of {size} bytes (more than {MAX_MESSAGE})")
        self.received += size
        buffer, start = self._pending, self._start
        end = start + 4 + size
        if len(buffer) < end:
            try:
                rest = self.read(end - len(buffer))
            except EOFError:
                raise EOFError("the other side closed the channel mid-message") from None
            self._pending, self._start = b"", 0
            return buffer[start + 4 :] + rest
        self._pending, self._start = (buffer, end) if end < len(buffer) else (b"", 0)
        return buffer[start + 4 : end]


# --------------------------------------------------------------------------- the verdict


def pass_token(nonce: bytes) -> bytes:
    """What a passing run writes: a digest of the nonce, so echoing bytes read back is no pass."""
    return hashlib.sha256(b"boi verdict: passed\0" + nonce).digest()


def reason(err: BaseException) -> bytes:
    """A failure's reason as a verdict carries it: "Type: message", at most MAX_REASON bytes."""
    try:
        message = str(err)
        text = f"{type(err).__name__}: {message[:MAX_REASON]}" if message else type(err).__name__
    except BaseException:
        text = type(err).__name__
    # Cut to MAX_REASON characters first (each encodes to one byte or more): a message of
    # megabytes costs its str(), not a copy and an encoding of all of it.
    return text[:MAX_REASON].encode("utf-8", "backslashreplace")[:MAX_REASON]


# --------------------------------------------------------------------------- plain data


class OverBudget(ValueError):
    """A message larger than what its receiver has left to take (left unread: see `skip`)."""


class NotPlain(TypeError):
    """A value that cannot cross between the candidate and the tests (PLAIN_RULE)."""


# Built-in classes cross by name (`candidate(values, int)`), rebuilt from `builtins`.
_BUILTIN_TYPES = {
    name: cls
    for name, cls in vars(builtins).items()
    if isinstance(cls, type) and not issubclass(cls, BaseException)
}
# The codec's extension for a run with candidate libraries (`_arrays`: boi-plain/2), installed
# by the worker (`install_extension`) only then; None: boi-plain/1 alone.
_EXTENSION: Any = None
_INF = float("inf")
_SPECIAL_FLOATS = {"nan": float("nan"), "inf": _INF, "-inf": -_INF}
_BIG_INT = 2**63


def install_extension(module: Any) -> None:
    """Carry the values of `module` too (`_arrays`: numpy and pandas, boi-plain/2): its
    `encode` is asked about a value of no kind of this rule, its `decode` about its `TAGS`."""
    global _EXTENSION
    _EXTENSION = module


def plain_rule() -> str:
    """The plain-data rule in force: PLAIN_RULE, or the installed extension's."""
    return PLAIN_RULE if _EXTENSION is None else str(_EXTENSION.RULE)


def encode_plain(value: object, classes: frozenset[str] = frozenset()) -> object:
    """`value` as JSON-able data by PLAIN_RULE.

    The rule (version 1): None, bool, int, float (nan and infinities included), complex, str,
    bytes; list, tuple, dict, set, frozenset, and the standard library's Counter, OrderedDict,
    defaultdict (of a built-in factory) and deque, nested; built-in classes by name; instances
    of the prompt prefix's own classes (`classes`: their names) as class name + attributes.
    Types are checked exactly, so a subclass of int, str or list with its own `__eq__` is
    refused; nothing else crosses.
    """
    if value is None or type(value) is bool or type(value) is str:
        return value
    if type(value) is int:
        return {"i": hex(value)} if abs(value) >= _BIG_INT else value  # no digit-limit errors
    if type(value) is float:
        return {"f": repr(value)} if value != value or abs(value) == _INF else value
    if type(value) is list:
        return [encode_plain(v, classes) for v in value]
    if type(value) is tuple:
        return {"t": [encode_plain(v, classes) for v in value]}
    if type(value) is dict:
        return {"d": _encode_items(value, classes)}
    if type(value) is set:
        return {"s": [encode_plain(v, classes) for v in value]}
    if type(value) is frozenset:
        return {"z": [encode_plain(v, classes) for v in value]}
    if type(value) is bytes:
        return {"b": value.hex()}
    if type(value) is complex:
        return {"c": [encode_plain(value.real), encode_plain(value.imag)]}
    if type(value) is collections.defaultdict:
        factory = value.default_factory
        factory_name = getattr(factory, "__name__", "")
        if factory is not None and _BUILTIN_TYPES.get(factory_name) is not factory:
            raise NotPlain("defaultdict with a default factory that is not a built-in type")
        return {"D": [factory_name or None, _encode_items(value, classes)]}
    if type(value) is collections.Counter:
        return {"C": _encode_items(value, classes)}
    if type(value) is collections.OrderedDict:
        return {"O": _encode_items(value, classes)}
    if type(value) is collections.deque:
        return {"Q": [encode_plain(v, classes) for v in value]}
    if isinstance(value, type) and type(value) is type:
        type_name = value.__name__
        if _BUILTIN_TYPES.get(type_name) is value:
            return {"T": type_name}
    if _EXTENSION is not None:
        try:
            encoded = _EXTENSION.encode(value, classes, encode_plain)
        except _EXTENSION.Refused as err:
            raise NotPlain(str(err)) from None
        if encoded is not None:
            return encoded
    name = getattr(type(value), "__name__", "?")
    attributes = getattr(value, "__dict__", None)
    if name in classes and type(attributes) is dict:
        return {"o": name, "a": encode_plain(dict(attributes), classes)}
    raise NotPlain(name)


def decode_plain(data: object, classes: dict[str, type]) -> object:
    """The value `encode_plain` encoded, as fresh built-in objects. Objects of `classes` (name
    -> class) are rebuilt from their attributes without calling anything of the class."""
    if data is None or type(data) in (bool, str, int, float):
        return data
    if type(data) is list:
        return [decode_plain(v, classes) for v in data]
    if type(data) is not dict:
        raise ValueError(f"not {PLAIN_RULE} data")
    if len(data) == 1:
        ((tag, body),) = data.items()
        if tag == "i" and type(body) is str:
            return int(body, 16)
        if tag == "f" and body in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[body]
        if tag == "b" and type(body) is str:
            return bytes.fromhex(body)
        if tag == "T" and type(body) is str and body in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[body]
        if _EXTENSION is not None and tag in _EXTENSION.TAGS:
            return _EXTENSION.decode(tag, body, classes, decode_plain)
        if type(body) is list:
            if tag == "t":
                return tuple(decode_plain(v, classes) for v in body)
            if tag in ("s", "z"):
                items = [decode_plain(v, classes) for v in body]
                return set(items) if tag == "s" else frozenset(items)
            if tag == "d":
                return _decode_items(body, classes)
            if tag in ("C", "O"):
                kind = collections.Counter if tag == "C" else collections.OrderedDict
                return kind(_decode_items(body, classes))
            if tag == "D" and len(body) == 2 and type(body[1]) is list:
                factory = _BUILTIN_TYPES.get(body[0]) if body[0] is not None else None
                if body[0] is not None and factory is None:
                    raise ValueError("a defaultdict's factory must be a built-in type")
                return collections.defaultdict(factory, _decode_items(body[1], classes))
            if tag == "Q":
                return collections.deque(decode_plain(v, classes) for v in body)
            if tag == "c" and len(body) == 2:
                real, imag = (decode_plain(v, classes) for v in body)
                if type(real) is float and type(imag) is float:
                    return complex(real, imag)
    if set(data) == {"o", "a"} and data["o"] in classes:
        attributes = decode_plain(data["a"], classes)
        if type(attributes) is not dict or any(type(k) is not str for k in attributes):
            raise ValueError("an object's attributes must be a dict with string keys")
        cls = classes[data["o"]]
        for key in attributes:
            # Instance attributes may not hide the class's methods or properties (the class is
            # the tests' own code; an attribute `is_square = object` would replace its check).
            static = getattr(cls, key, None)
            if key.startswith("__") or callable(static) or hasattr(type(static), "__get__"):
                raise ValueError(f"attribute {key!r} would hide a member of class {cls.__name__}")
        obj: Any = object.__new__(cls)
        obj.__dict__.update(attributes)
        return obj
    raise ValueError(f"not {PLAIN_RULE} data")


def _encode_items(value: dict, classes: frozenset[str]) -> list:
    """A dict's items as [key, value] pairs (keys need not be strings)."""
    return [[encode_plain(k, classes), encode_plain(v, classes)] for k, v in value.items()]


def _decode_items(body: list, classes: dict[str, type]) -> dict:
    out = {}
    for pair in body:
        if type(pair) is not list or len(pair) != 2:
            raise ValueError("a dict item is not a pair")
        out[decode_plain(pair[0], classes)] = decode_plain(pair[1], classes)
    return out


# --------------------------------------------------------------------------- stdio outputs


def same_output(actual: str, expected: str, judge: dict) -> bool:
    """The contest comparison (`benchmarks.problem.OutputJudge`): equal whitespace-separated
    token sequences, where a token written as a decimal number matches within the tolerance
    (absolute or relative) and letters may differ in case when the statement allows it."""
    got, want = actual.split(), expected.split()
    if len(got) != len(want):
        return False
    tolerance = float(judge.get("float_tolerance", 1e-6))
    any_case = bool(judge.get("case_insensitive", False))
    for a, b in zip(got, want, strict=True):
        if a == b or (any_case and a.lower() == b.lower()):
            continue
        # Only an expected token with a fraction or exponent is a real number: an integer
        # answer must match exactly, as judges compare it.
        if not any(c in b for c in ".eE") or not _is_number(b):
            return False
        try:
            x, y = float(a), float(b)
        except ValueError:
            return False
        if not abs(x - y) <= tolerance * max(1.0, abs(y)):
            return False
    return True


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return token.lower() not in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity")
