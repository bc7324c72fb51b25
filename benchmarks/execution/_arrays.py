"""boi-plain/2: numpy arrays and scalars, pandas Index, Series and DataFrame as plain data.

The worker loads this module (by path, like its other siblings) only when a run lets its
candidates import libraries (`ExecutionConfig.candidate_libraries`), and installs it into the
plain-data codec (`_wire.install_extension`): `_wire.encode_plain` hands it a value of no
built-in type, `_wire.decode_plain` a tag of its own. It imports nothing but the standard
library at load time; numpy and pandas are taken from `sys.modules` when encoding (a value can
only be an ndarray where numpy is imported) and imported when decoding (in the tests process,
which reads the harness's site directories, or in a candidate allowed to import them).

Why this is safe for the trusted side: the data names no class. A tag says which of a fixed
few kinds it is, and the receiver builds it with its own library from a dtype string it has
checked, a shape and raw bytes (`numpy.frombuffer(...).reshape(...)`, `pandas.DataFrame(...)`):
nothing the sender wrote is looked up or called. Types are checked exactly on the sending side
(a subclass of ndarray with its own `__eq__` is refused), and the receiver's objects are its own
library's whatever the sender was. Refused, in one sentence: an object dtype array, a
structured or sub-array dtype, bytes that do not fill the shape, an absurd shape, an unknown
column kind; pandas values of other kinds (Categorical, MultiIndex, nullable extension arrays).

The encodings (each a one-key dict, like the rule's other tags):

    {"A": [dtype, shape, base64 bytes]}          numpy.ndarray (C order)
    {"N": [dtype, base64 bytes]}                 numpy scalar (numpy.float64(1.5), numpy.bool_)
    {"PI": {"values": COLUMN, "name": PLAIN}}    pandas.Index (and its datetime kinds)
    {"PR": [start, stop, step, PLAIN name]}      pandas.RangeIndex
    {"PS": {"values": COLUMN, "index": INDEX, "name": PLAIN}}
    {"PF": {"columns": INDEX, "index": INDEX, "data": [COLUMN, ...]}}

where COLUMN is {"a": ARRAY} for a numpy dtype, or {"l": [PLAIN, ...], "dtype": "object" |
"str"} for a column of Python values (pandas' object and string columns), each value by the
plain rule.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import sys
from collections.abc import Callable
from typing import Any

RULE = "boi-plain/2"
TAGS = frozenset({"A", "N", "PI", "PR", "PS", "PF"})
# numpy kinds that are data: bool, signed, unsigned, float, complex, bytes, str, datetime,
# timedelta. Not object (O), void/structured (V).
_KINDS = frozenset("biufcSUMm")
# A dtype as numpy's `dtype.str` spells it: byte order, kind, item size, a datetime unit.
_DTYPE = re.compile(r"[<>|=][biufcSUMm][0-9]{1,6}(\[[0-9]*[a-zA-Z]{1,2}\])?")
_MAX_DIMS = 32
# Python-valued columns: the pandas dtypes rebuilt from a list.
_LIST_DTYPES = frozenset({"object", "str"})

Encoder = Callable[[object, frozenset[str]], object]
Decoder = Callable[[object, dict[str, type]], object]


class Refused(TypeError):
    """Raised as `_wire.NotPlain` by the caller's codec (this module does not import _wire)."""


# --------------------------------------------------------------------------- encoding


def encode(value: Any, classes: frozenset[str], plain: Encoder) -> object | None:
    """`value` by boi-plain/2, or None when it is none of this module's kinds. Raises
    TypeError (the caller's NotPlain) for a kind it knows but refuses."""
    np = sys.modules.get("numpy")
    if np is None:
        return None
    kind = type(value)
    if kind is np.ndarray:
        return {"A": _array(np, value)}
    if isinstance(value, np.generic):
        dtype = _data_dtype(np, value.dtype)  # a flexible one (str_) with its item size
        if dtype.type is not kind:
            raise Refused(f"{kind.__name__} (a subclass of a numpy scalar)")
        return {"N": [dtype.str, base64.b64encode(value.tobytes()).decode("ascii")]}
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    if kind is pd.RangeIndex:
        start, stop, step = value.start, value.stop, value.step
        return {"PR": [start, stop, step, plain(value.name, classes)]}
    if kind in (pd.Index, pd.DatetimeIndex, pd.TimedeltaIndex):
        return {
            "PI": {"values": _column(np, value, classes, plain), "name": plain(value.name, classes)}
        }
    if kind is pd.Series:
        return {
            "PS": {
                "values": _column(np, value, classes, plain),
                "index": encode(value.index, classes, plain),
                "name": plain(value.name, classes),
            }
        }
    if kind is pd.DataFrame:
        return {
            "PF": {
                "columns": encode(value.columns, classes, plain),
                "index": encode(value.index, classes, plain),
                "data": [
                    _column(np, value.iloc[:, i], classes, plain) for i in range(value.shape[1])
                ],
            }
        }
    if isinstance(value, pd.Index | pd.Series | pd.DataFrame):
        raise Refused(f"{kind.__name__} (a pandas kind boi-plain/2 does not carry)")
    return None


def _data_dtype(np: Any, dtype: Any) -> Any:
    if dtype.kind not in _KINDS or dtype.hasobject or dtype.fields is not None or dtype.subdtype:
        raise Refused(f"ndarray of dtype {dtype} (only numbers, booleans, strings and dates)")
    return dtype


def _array(np: Any, value: Any) -> list:
    dtype = _data_dtype(np, value.dtype)
    raw = np.ascontiguousarray(value).tobytes()
    return [dtype.str, list(value.shape), base64.b64encode(raw).decode("ascii")]


def _column(np: Any, values: Any, classes: frozenset[str], plain: Encoder) -> dict:
    """A pandas Index's or Series' values: an array where the dtype is numpy's, else a list of
    plain values (object and string columns)."""
    dtype = values.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in _KINDS:
        return {"a": _array(np, values.to_numpy(copy=False))}
    name = str(dtype)
    if name in _LIST_DTYPES:
        return {"l": [plain(v, classes) for v in values.tolist()], "dtype": name}
    raise Refused(f"{type(values).__name__} of dtype {name} (not carried by boi-plain/2)")


# --------------------------------------------------------------------------- decoding


def decode(tag: str, body: object, classes: dict[str, type], plain: Decoder) -> object:
    """The value of one of this module's tags, built with the receiver's numpy and pandas.
    Raises ValueError, in one sentence, for anything malformed."""
    try:
        return _decode(tag, body, classes, plain)
    except (ValueError, RecursionError):
        raise
    except Exception as err:  # numpy or pandas refusing what the checks let through
        raise ValueError(
            f"a {tag} value that numpy or pandas cannot build ({type(err).__name__})"
        ) from None


def _decode(tag: str, body: object, classes: dict[str, type], plain: Decoder) -> object:
    import numpy as np  # the receiver's own library (see the module docstring)

    if tag == "A":
        return _decode_array(np, body)
    if tag == "N":
        if type(body) is not list or len(body) != 2:
            raise ValueError("a numpy scalar must be [dtype, bytes]")
        return _decode_array(np, [body[0], [], body[1]])[()]
    import pandas as pd

    return _decode_pandas(np, pd, tag, body, classes, plain)


def _decode_array(np: Any, body: object) -> Any:
    if type(body) is not list or len(body) != 3:
        raise ValueError("an ndarray must be [dtype, shape, bytes]")
    spelled, shape, encoded = body
    if type(spelled) is not str or not _DTYPE.fullmatch(spelled):
        raise ValueError(f"an ndarray's dtype {str(spelled)[:40]!r} is not a plain numpy dtype")
    dtype = np.dtype(spelled)
    try:
        _data_dtype(np, dtype)
    except Refused as err:
        raise ValueError(str(err)) from None
    if (
        type(shape) is not list
        or len(shape) > _MAX_DIMS
        or any(type(n) is not int or n < 0 for n in shape)
    ):
        raise ValueError(f"an ndarray's shape must be at most {_MAX_DIMS} sizes >= 0")
    if type(encoded) is not str:
        raise ValueError("an ndarray's bytes must be base64 text")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("an ndarray's bytes are not base64") from None
    if math.prod(shape) * dtype.itemsize != len(raw):
        raise ValueError(
            f"an ndarray of shape {tuple(shape)[:8]} and dtype {spelled} needs "
            f"{math.prod(shape) * dtype.itemsize} bytes, not {len(raw)}"
        )
    try:
        # A copy: the tests get an array of their own, writable, not a view of the message.
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    except (ValueError, TypeError, MemoryError) as err:
        raise ValueError(f"an ndarray that numpy cannot build ({type(err).__name__})") from None


def _decode_column(np: Any, pd: Any, body: object, classes: dict, plain: Decoder) -> Any:
    if type(body) is dict and set(body) == {"a"}:
        array = _decode_array(np, body["a"])
        if array.ndim != 1:
            raise ValueError("a pandas column must be one-dimensional")
        return array
    if type(body) is dict and set(body) == {"l", "dtype"} and body["dtype"] in _LIST_DTYPES:
        values = plain(body["l"], classes)
        if type(values) is not list:
            raise ValueError("a pandas column's values must be a list")
        if body["dtype"] == "str" and not all(
            v is None or type(v) is str or (type(v) is float and v != v) for v in values
        ):
            # pandas would str() anything else into the column: not what the sender claimed.
            raise ValueError("a pandas str column may hold only strings and missing values")
        return (
            pd.array(values, dtype=body["dtype"]) if values else pd.array([], dtype=body["dtype"])
        )
    raise ValueError("a pandas column must be {'a': array} or {'l': values, 'dtype': ...}")


def _decode_pandas(np: Any, pd: Any, tag: str, body: object, classes: dict, plain: Decoder) -> Any:
    if tag == "PR":
        if type(body) is not list or len(body) != 4 or any(type(n) is not int for n in body[:3]):
            raise ValueError("a RangeIndex must be [start, stop, step, name]")
        if body[2] == 0:
            raise ValueError("a RangeIndex's step must not be 0")
        if any(abs(n) >= 2**63 for n in body[:3]):
            raise ValueError("a RangeIndex's start, stop and step must fit in 64 bits")
        return pd.RangeIndex(body[0], body[1], body[2], name=_name(body[3], classes, plain))
    if type(body) is not dict:
        raise ValueError(f"a pandas {tag} must be an object")
    if tag == "PI" and set(body) == {"values", "name"}:
        values = _decode_column(np, pd, body["values"], classes, plain)
        return pd.Index(values, name=_name(body["name"], classes, plain), copy=True)
    if tag == "PS" and set(body) == {"values", "index", "name"}:
        values = _decode_column(np, pd, body["values"], classes, plain)
        index = _decode_index(np, pd, body["index"], classes, plain)
        if len(index) != len(values):
            raise ValueError("a Series' index and values differ in length")
        name = _name(body["name"], classes, plain)
        return pd.Series(values, index=index, name=name, copy=True)
    if tag == "PF" and set(body) == {"columns", "index", "data"}:
        columns = _decode_index(np, pd, body["columns"], classes, plain)
        index = _decode_index(np, pd, body["index"], classes, plain)
        data = body["data"]
        if type(data) is not list or len(data) != len(columns):
            raise ValueError("a DataFrame needs one column of data per column name")
        arrays = [_decode_column(np, pd, column, classes, plain) for column in data]
        if any(len(a) != len(index) for a in arrays):
            raise ValueError("a DataFrame's columns and index differ in length")
        frame = pd.DataFrame(
            {i: pd.Series(a, index=index, copy=True) for i, a in enumerate(arrays)},
            index=index,
        )
        frame.columns = columns
        return frame
    raise ValueError(f"a malformed pandas {tag}")


def _decode_index(np: Any, pd: Any, body: object, classes: dict, plain: Decoder) -> Any:
    if type(body) is dict and len(body) == 1:
        ((tag, inner),) = body.items()
        if tag in ("PI", "PR"):
            return _decode_pandas(np, pd, tag, inner, classes, plain)
    raise ValueError("a pandas index must be a PI or PR")


def _name(data: object, classes: dict, plain: Decoder) -> Any:
    name = plain(data, classes)
    try:
        hash(name)
    except TypeError:
        raise ValueError("a pandas name must be hashable") from None
    return name
