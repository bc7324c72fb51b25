"""HumanEval+ judging: evalplus's comparison of a candidate's outputs with the expected ones.

The code of this file (all but this docstring) is copied to the top of every `humanevalplus`
test string, so it runs on the trusted side of the sandbox: standard library only, no
`from __future__` (a test string is also pasted after the completion in single-process
judging), and every name starts with `_plus_` / `_Plus` so that nothing collides with the
candidate's names there. The loader and the tests import it as a module.

The rule is evalplus's (`unsafe_execute` in `evalplus/eval/__init__.py`), per input:

- an output equal (`==`) to the expected one passes;
- HumanEval/32 (`find_zero`) has an oracle instead: |poly(xs, x)| <= atol for the input xs;
- an expected float, or non-empty list or tuple of floats, is compared with atol 1e-6 when
  the problem's atol is 0;
- with a non-zero atol, an unequal output passes when it has the expected output's type (and
  length) and numpy.allclose(out, expected, rtol=1e-7, atol=atol) would hold.

Two departures, both on the safe side: evalplus keeps the 1e-6 it set for one float output
for all later inputs of the same problem, where a later non-float output gets no tolerance
here; and the oracle sees the input as it was, not as the candidate may have changed it.

Expected outputs too large to embed (HumanEval/15's strings of megabytes, HumanEval/130's lists
of a million numbers, HumanEval/83's integers of a million digits) are kept as `_PlusDigest`:
the sha256 of the output's exact JSON text where it has one (a fast check) and of its
`==`-canonical form (`_plus_key`, where equal values give equal keys).
"""

import array as _plus_array
import base64 as _plus_base64
import hashlib as _plus_hashlib
import itertools as _plus_itertools
import json as _plus_json
import math as _plus_math
import operator as _plus_operator
import sys as _plus_sys
import typing as _plus_typing
import zlib as _plus_zlib

_PLUS_RTOL = 1e-07
_PLUS_FLOAT_ATOL = 1e-06
_PLUS_FAST_TYPES = frozenset({int, float, str, bool, type(None)})
_PLUS_NUMBER_TYPES = frozenset({int, float, bool})
_PLUS_EXACT_FLOAT = 2**53
_PLUS_SHOWN = 160


class _PlusNoKey(Exception):
    """A value `_plus_key` does not cover (dict, set, nan, ...): only `==` can judge it."""


def _plus_sha(text: str) -> str:
    return _plus_hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _plus_fast_text(value: _plus_typing.Any) -> "str | None":
    """The exact text of a str, an int or a flat list of plain scalars; None for others.
    Equal texts mean equal types and values (floats by their shortest repr)."""
    kind = type(value)
    if kind is str:
        return "s" + value
    if kind is int:
        return "i" + hex(value)
    if kind is list and set(map(type, value)) <= _PLUS_FAST_TYPES:
        try:
            return "l" + _plus_json.dumps(value, allow_nan=False)
        except ValueError:  # nan or infinity, or an int too long for decimal digits
            return None
    return None


def _plus_numbers(value: _plus_typing.Any) -> "bytes | None":
    """A non-empty list or tuple of ints, floats and bools, all finite and within 2**53 (where
    every int is a double), as doubles: equal (`==`) sequences give equal bytes. None for
    anything else. Runs at C speed (HumanEval/130's outputs hold a million numbers)."""
    if not value or not set(map(type, value)) <= _PLUS_NUMBER_TYPES:
        return None
    if not -_PLUS_EXACT_FLOAT <= min(value) <= max(value) <= _PLUS_EXACT_FLOAT:
        return None  # an infinity, or an int a double cannot hold
    # Adding 0.0 makes each a float and -0.0 (== 0.0) into 0.0.
    doubles = _plus_array.array("d", map(_plus_operator.add, value, _plus_itertools.repeat(0.0)))
    total = sum(doubles)
    if total != total:
        return None  # a nan
    if _plus_sys.byteorder != "little":
        doubles.byteswap()
    return doubles.tobytes()


def _plus_feed(digest: "_plus_hashlib._Hash", value: _plus_typing.Any) -> None:
    kind = type(value)
    if kind is str:
        data = value.encode("utf-8", "surrogatepass")
        digest.update(b"s%d:" % len(data))
        digest.update(data)
    elif kind is int or kind is bool:
        digest.update(b"i" + hex(value).encode() + b";")
    elif kind is float:
        if value != value:
            raise _PlusNoKey("nan")  # never equal to anything
        if value.is_integer():
            _plus_feed(digest, int(value))  # 2.0 == 2
        else:
            digest.update(b"f" + repr(value).encode() + b";")
    elif kind is complex:
        if value.imag == 0:
            _plus_feed(digest, value.real)  # (2+0j) == 2
        elif value != value:
            raise _PlusNoKey("nan")
        else:
            digest.update(b"c" + repr(value).encode() + b";")
    elif value is None:
        digest.update(b"n;")
    elif kind is list or kind is tuple:
        digest.update(b"%s%d[" % (b"l" if kind is list else b"t", len(value)))
        numbers = _plus_numbers(value)
        if numbers is not None:  # equal sequences take the same path: it depends on the values
            digest.update(b"d")
            digest.update(numbers)
        else:
            for item in value:
                _plus_feed(digest, item)
    else:
        raise _PlusNoKey(kind.__name__)


def _plus_key(value: _plus_typing.Any) -> str:
    """sha256 of `value`'s canonical form: for None, bool, int, float, complex, str and lists
    and tuples of them, equal (`==`) values give equal keys and unequal ones different keys
    (one exception: a complex number among the real numbers of a list). Raises _PlusNoKey for
    anything else."""
    digest = _plus_hashlib.sha256()
    _plus_feed(digest, value)
    return digest.hexdigest()


class _PlusDigest:
    """An expected output kept as digests (`_plus_fast_text`'s, None where it has none, and
    `_plus_key`'s)."""

    __slots__ = ("fast", "key")

    def __init__(self, fast: "str | None", key: str) -> None:
        self.fast = fast
        self.key = key

    def __repr__(self) -> str:
        return f"<a value with key {self.key[:12]}>"

    def matches(self, out: _plus_typing.Any) -> bool:
        if self.fast is not None:
            text = _plus_fast_text(out)
            if text is not None and _plus_sha(text) == self.fast:
                return True
        try:
            return _plus_key(out) == self.key
        except (_PlusNoKey, RecursionError):
            return False


def _plus_is_floats(value: _plus_typing.Any) -> bool:
    """evalplus's `is_floats`: a float, or a non-empty list or tuple of floats."""
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(item, float) for item in value)
    return False


def _plus_isclose(out: _plus_typing.Any, expected: _plus_typing.Any, atol: float) -> bool:
    """numpy.isclose(out, expected, rtol=1e-7, atol=atol) for two real numbers."""
    numbers = (int, float, bool)
    if type(out) not in numbers or type(expected) not in numbers:
        return False
    try:
        a, b = float(out), float(expected)
    except OverflowError:
        return False
    if _plus_math.isinf(a) or _plus_math.isinf(b):
        return a == b
    return abs(a - b) <= atol + _PLUS_RTOL * abs(b)


def _plus_allclose(out: _plus_typing.Any, expected: _plus_typing.Any, atol: float) -> bool:
    """numpy.allclose(out, expected, rtol=1e-7, atol=atol), element by element."""
    if isinstance(expected, (list, tuple)):
        if not isinstance(out, (list, tuple)) or len(out) != len(expected):
            return False
        return all(_plus_allclose(o, e, atol) for o, e in zip(out, expected, strict=True))
    return _plus_isclose(out, expected, atol)


def _plus_matches(out: _plus_typing.Any, expected: _plus_typing.Any, atol: float) -> bool:
    """Whether `out` passes for `expected` (evalplus's rule, without the oracle)."""
    if isinstance(expected, _PlusDigest):
        return expected.matches(out)
    exact = out == expected
    if atol == 0 and _plus_is_floats(expected):
        atol = _PLUS_FLOAT_ATOL
    if exact or atol == 0:
        return bool(exact)
    if type(out) is not type(expected):
        return False
    if isinstance(expected, (list, tuple)) and len(out) != len(expected):
        return False
    return _plus_allclose(out, expected, atol)


def _plus_poly(xs: list, x: float) -> float:
    """evalplus's oracle polynomial for HumanEval/32 (the prompt's `poly`)."""
    return sum([coeff * _plus_math.pow(x, i) for i, coeff in enumerate(xs)])


def _plus_find_zero_ok(args: _plus_typing.Any, out: _plus_typing.Any, atol: float) -> bool:
    try:
        (xs,) = args  # evalplus calls _poly(*inp, out): the input is [xs]
        return abs(_plus_poly(xs, out)) <= atol
    except Exception:
        return False


def _plus_clip(text: str) -> str:
    return text if len(text) <= _PLUS_SHOWN else text[: _PLUS_SHOWN - 3] + "..."


def _plus_show(value: _plus_typing.Any) -> str:
    try:
        return _plus_clip(repr(value))
    except Exception:  # an int too long for decimal digits
        return f"<{type(value).__name__}>"


def _plus_unpack(data: str) -> "tuple[str, list]":
    """The inputs and expected outputs a test carries: zlib-compressed UTF-8 text in base64,
    the inputs' JSON on the first line and the outputs' Python source (literals and
    `_PlusDigest`s, one list) after it."""
    text = _plus_zlib.decompress(_plus_base64.b64decode(data)).decode("utf-8", "surrogatepass")
    inputs_json, expected_source = text.split("\n", 1)
    names = {
        "float": float,
        "complex": complex,
        "set": set,
        "frozenset": frozenset,
        "_PlusDigest": _PlusDigest,
    }
    return inputs_json, eval(expected_source, {"__builtins__": {}}, names)


def _plus_check_all(
    candidate: _plus_typing.Any, data: str, atol: float, base: int, oracle: str = ""
) -> None:
    """Call `candidate` on every input of `data` (`_plus_unpack`; the `base` inputs first),
    then raise AssertionError for the first output that did not pass.

    Every input is called even after a failure: a candidate must not learn from whether its
    next call comes that its last answer was wrong (the sandbox's oracle rule)."""
    if oracle not in ("", "find_zero"):
        raise AssertionError(f"malformed HumanEval+ test: unknown oracle {oracle!r}")
    inputs_json, expected = _plus_unpack(data)
    inputs = _plus_json.loads(inputs_json)
    # The inputs as they were, for the oracle and the messages: the candidate may change its
    # arguments (in separated judging, the changes come back).
    originals = _plus_json.loads(inputs_json) if oracle else None
    if len(inputs) != len(expected):
        raise AssertionError("malformed HumanEval+ test: inputs and outputs differ in number")
    name = getattr(candidate, "__name__", "candidate")
    # Judged in separated mode, `candidate` is the sandbox's proxy, which then sends these
    # calls to the candidate as one batch instead of one pipe round trip each (elsewhere it is
    # the function itself, which has no such attribute).
    announce = getattr(candidate, "__boi_plan__", None)
    if announce is not None:
        announce([(args, {}) for args in inputs])
    first_failure: AssertionError | None = None
    for index, (args, want) in enumerate(zip(inputs, expected, strict=True)):
        if index < base:
            where = f"base input {index + 1} of {base}"
        else:
            where = f"plus input {index - base + 1} of {len(inputs) - base}"
        try:
            out = candidate(*args)
        except Exception as err:
            shown = _plus_show(_plus_json.loads(inputs_json)[index])
            try:
                message = _plus_clip(str(err))
            except Exception:  # an int too long for decimal digits among its arguments
                message = ""
            if first_failure is None:
                first_failure = AssertionError(
                    f"{where}: {name}(*{shown}) raised {type(err).__name__}: {message}"
                )
                first_failure.__cause__ = err
            continue
        try:
            if originals is not None:  # oracle == "find_zero"
                passed = _plus_find_zero_ok(originals[index], out, atol)
            else:
                passed = _plus_matches(out, want, atol)
        except Exception:  # an output so wrong that comparing it fails: a failure, go on
            passed = False
        if not passed and first_failure is None:
            shown = _plus_show(_plus_json.loads(inputs_json)[index])
            first_failure = AssertionError(
                f"{where}: {name}(*{shown}) returned {_plus_show(out)}, expected "
                + ("a root of the polynomial" if oracle else _plus_show(want))
            )
    if first_failure is not None:
        raise first_failure
