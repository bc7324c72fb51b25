"""Typed dataclass configs from YAML/dicts, with messages that say what to change.

`from_mapping(Config, data)` builds nested dataclasses (fields that are dataclasses, lists or
tuples of dataclasses, tuples of scalars), rejects unknown keys with the closest known one
("settings[0].temprature is not a config key; did you mean 'temperature'?") and wrong types,
and leaves validation of values to each dataclass's `__post_init__`.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.errors import UserError, suggest

T = TypeVar("T")


def _convert(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _convert(value, option, where)
            except UserError as err:
                errors.append(str(err))
        raise UserError(errors[0] if errors else f"{where} has an unsupported value {value!r}.")
    if dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise UserError(
                f"{where} must be a mapping of {hint.__name__} fields, not {type(value).__name__}."
            )
        return from_mapping(hint, value, where)
    if origin in (list, tuple) or hint in (list, tuple):
        if isinstance(value, str) or not isinstance(value, list | tuple):
            value = [value]  # a single value where a list is expected
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            item = args[0]
        elif origin is tuple and args:
            if len(args) != len(value):
                raise UserError(f"{where} must have {len(args)} items, not {len(value)}.")
            return tuple(
                _convert(v, a, f"{where}[{i}]")
                for i, (v, a) in enumerate(zip(value, args, strict=True))
            )
        else:
            item = args[0] if args else Any
        items = [_convert(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if (origin is tuple or hint is tuple) else items
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            raise UserError(f"{where} must be a mapping, not {type(value).__name__}.")
        return dict(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (int, float, str, bool):
        if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
            raise UserError(f"{where} must be {hint.__name__}, not {value!r}.")
        return value
    return value


def from_mapping(cls: type[T], data: Mapping[str, Any], where: str = "config") -> T:
    """An instance of the dataclass `cls` from a (YAML-loaded) mapping."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    kwargs = {}
    for key, value in data.items():
        if key not in fields:
            raise UserError(
                f"{where}.{key} is not a config key{suggest(str(key), fields)}; known keys: {', '.join(fields)}."
            )
        kwargs[key] = _convert(value, hints[key], f"{where}.{key}")
    try:
        return cls(**kwargs)
    except TypeError as err:
        raise UserError(f"{where}: {err}.") from None


def load_yaml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A YAML mapping from a file, with a clear error for a missing or malformed file."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise UserError(f"Config file {path} does not exist; check the path.")
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise UserError(
            f"{path}{line} is not valid YAML ({getattr(err, 'problem', err)}); fix the syntax."
        ) from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; re-encode it.") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, Mapping):
        raise UserError(f"{path} must hold a mapping of config keys at the top level.")
    return dict(loaded)


def to_dict(config: Any) -> Any:
    """A JSON-able dict of a (nested) dataclass config."""
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return {f.name: to_dict(getattr(config, f.name)) for f in dataclasses.fields(config)}
    if isinstance(config, list | tuple):
        return [to_dict(v) for v in config]
    if isinstance(config, Mapping):
        return {k: to_dict(v) for k, v in config.items()}
    return config
