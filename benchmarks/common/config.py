"""Typed dataclass configs <-> YAML/JSON <-> command-line flags, with messages that say what to change.

The one config layer every command uses:

- `from_mapping(Config, data)` builds nested dataclasses (fields that are dataclasses, lists or
  tuples of dataclasses, tuples of scalars), rejects unknown keys with the closest known one
  ("settings[0].temprature is not a config key; did you mean 'temperature'?") and wrong types,
  and leaves validation of values to each dataclass's `__post_init__`. A dataclass that needs a
  custom shape (a backend spec whose keys depend on its kind) defines a classmethod
  `from_mapping(data, where)`, which is used instead; one whose keys moved (an older shape
  still read: run directories' manifests, older YAML files) defines a classmethod
  `upgrade_mapping(data, where)` returning the mapping in today's shape, applied first.
- `load_config(Config, path, overrides)` reads a YAML file and applies flag overrides on top.
- `add_dataclass_arguments(parser, Config)` generates one `--flag` per scalar field, with the
  field's help (`field(metadata={"help": ...})`: the one help convention) and its default;
  `overrides_from_args(args, Config)` collects the flags the user gave. A field marked
  `metadata={"names": True}` (transformation names) takes the one names syntax,
  `--transforms original anonymize`, as does a hand-made flag from `add_names_argument`.
- `to_dict(config)` is the JSON form that run records and config hashes use.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.common.errors import UserError, require_text, suggest

T = TypeVar("T")


def convert_value(value: Any, hint: Any, where: str) -> Any:
    """`value` (YAML-loaded) as the type `hint` describes, or a UserError naming `where`."""
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
                return convert_value(value, option, where)
            except UserError as err:
                errors.append(str(err))
        raise UserError(errors[0] if errors else f"{where} has an unsupported value {value!r}.")
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        custom = getattr(hint, "from_mapping", None)
        if custom is not None and isinstance(value, Mapping):
            return custom(value, where)
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
                convert_value(v, a, f"{where}[{i}]")
                for i, (v, a) in enumerate(zip(value, args, strict=True))
            )
        else:
            item = args[0] if args else Any
        items = [convert_value(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if (origin is tuple or hint is tuple) else items
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            raise UserError(f"{where} must be a mapping, not {type(value).__name__}.")
        return dict(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str):
        # PyYAML (YAML 1.1) reads `1e-5`, the way learning rates are written, as a string.
        try:
            return float(value)
        except ValueError:
            pass  # reported below: it must be a float
    if hint is str and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # YAML reads `model: 7` as a number; a name was meant
    if hint in (int, float, str, bool):
        if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
            raise UserError(f"{where} must be {hint.__name__}, not {value!r}.")
        # A path from a listing of the file system (the API) may hold bytes that are not UTF-8.
        return require_text(value, where) if hint is str else value
    return value


def from_mapping(cls: type[T], data: Mapping[str, Any], where: str = "config") -> T:
    """An instance of the dataclass `cls` from a (YAML-loaded) mapping."""
    upgrade = getattr(cls, "upgrade_mapping", None)
    if upgrade is not None:
        data = upgrade(data, where)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]  # cls is a dataclass by contract
    kwargs = {}
    for key, value in data.items():
        if key not in fields:
            raise UserError(
                f"{where}.{key} is not a config key{suggest(str(key), fields)}; known keys: {', '.join(fields)}."
            )
        kwargs[key] = convert_value(value, hints[key], f"{where}.{key}")
    try:
        return cls(**kwargs)
    except TypeError as err:
        raise UserError(f"{where}: {err}.") from None


class _DuplicateKey(Exception):
    """A mapping of a YAML document gives one key twice (`_safe_load`)."""

    def __init__(self, key: Any, first: int, again: int) -> None:
        super().__init__(key)
        self.key, self.first, self.again = key, first, again

    def sentence(self, where: str) -> str:
        return (
            f"{where} gives {self.key!r} twice (lines {self.first} and {self.again}); YAML "
            "would keep the last silently, so keep one."
        )


def _safe_load(text: str) -> Any:
    """`yaml.safe_load`, except that a key given twice in one mapping is `_DuplicateKey` (YAML
    keeps the last one, so a config's forgotten earlier line would silently not count). Keys
    brought in by a merge (`<<: *base`) may be given again: that is what a merge is for."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=True)
                    line = key_node.start_mark.line + 1
                    try:
                        if key in seen:
                            raise _DuplicateKey(key, seen[key], line)
                        seen[key] = line
                    except TypeError:  # an unhashable key: the base constructor says so
                        continue
            return super().construct_mapping(node, deep)

    return yaml.load(text, Loader=Loader)  # noqa: S506  (a SafeLoader subclass)


def parse_yaml_mapping(text: str, where: str) -> dict[str, Any]:
    """A YAML (or JSON) mapping given inline, e.g. as a flag's value; `where` names the flag."""
    import yaml

    try:
        loaded = _safe_load(text)
    except _DuplicateKey as err:
        raise UserError(err.sentence(f"{where}: {text!r}")) from None
    except yaml.YAMLError as err:
        raise UserError(
            f"{where}: {text!r} is not valid YAML ({getattr(err, 'problem', err)}); fix the syntax."
        ) from None
    if not isinstance(loaded, Mapping):
        raise UserError(f"{where}: {text!r} is not a mapping such as '{{kind: hf, model: NAME}}'.")
    return dict(loaded)


def load_yaml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A YAML mapping from a file, with a clear error for a missing or malformed file."""
    import yaml

    path = Path(path)
    if path.is_dir():
        raise UserError(f"Config file {path} is a folder; pass a YAML file (or a bundled name).")
    if not path.is_file():
        raise UserError(f"Config file {path} does not exist; check the path.")
    try:
        loaded = _safe_load(path.read_text(encoding="utf-8"))
    except _DuplicateKey as err:
        raise UserError(err.sentence(str(path))) from None
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
    custom = getattr(config, "to_mapping", None)
    if custom is not None and not isinstance(config, type):
        return to_dict(custom())  # the inverse of a custom `from_mapping` (a backend spec)
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return {f.name: to_dict(getattr(config, f.name)) for f in dataclasses.fields(config)}
    if isinstance(config, list | tuple):
        return [to_dict(v) for v in config]
    if isinstance(config, Mapping):
        return {k: to_dict(v) for k, v in config.items()}
    return config


def resolve_config_path(name_or_path: str | None, bundled: Path) -> str | None:
    """A bundled config's name (`demo` for `bundled/demo.yaml`) or a path, as a path; an
    existing file of that name wins over a bundled config."""
    if (
        name_or_path
        and not Path(name_or_path).exists()
        and (bundled / f"{name_or_path}.yaml").exists()
    ):
        return str(bundled / f"{name_or_path}.yaml")
    return name_or_path


def load_config(
    cls: type[T],
    path: str | os.PathLike[str] | None,
    overrides: Mapping[str, Any] | None = None,
) -> T:
    """A `cls` from a YAML file (optional) with `overrides` (None values ignored) on top."""
    data = load_yaml(path) if path else {}
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return from_mapping(cls, data, where=Path(path).name if path else "config")


# --------------------------------------------------------------------------- command-line flags


def field_help(spec: dataclasses.Field[Any]) -> str:
    """A field's help text (`field(metadata={"help": ...})`)."""
    return str(spec.metadata.get("help", ""))


def _default_of(spec: dataclasses.Field[Any]) -> Any:
    if spec.default is not dataclasses.MISSING:
        return spec.default
    if spec.default_factory is not dataclasses.MISSING:
        return spec.default_factory()
    return None


def _flag_type(hint: Any) -> tuple[Any, bool] | None:
    """(scalar type, many) for a field that can be a flag; None for nested configs."""
    origin = typing.get_origin(hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return _flag_type(args[0]) if len(args) == 1 else None
    if origin in (list, tuple):
        item = args[0] if args else str
        return (item, True) if item in (int, float, str) else None
    if hint in (int, float, str, bool):
        return hint, False
    return None


DEVICE_PATTERN = r"auto|cpu|mps|cuda(:[0-9]+)?"
"""The torch devices a `--device` flag takes (`auto`: CUDA when there is one)."""


def device_name(text: str) -> str:
    """A `--device` value, checked when the flags are parsed (a typo such as `tpu` would
    otherwise surface as torch's traceback after a model load)."""
    if not re.fullmatch(DEVICE_PATTERN, text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a device boi can use: auto, cpu, mps, cuda or cuda:N"
        )
    return text


def positive_int(text: str) -> int:
    """A count that must be at least 1 (a batch size of 0 would loop or divide by zero)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive whole number (1 or more)")
    return value


# A field's flag type by what its name means: every `device` is a torch device, every batch
# size a positive count, whichever config declares it (a new config is covered by naming its
# fields the usual way).
def _named_flag_type(name: str, scalar: Any) -> Any:
    if name == "device" and scalar is str:
        return device_name
    if (name == "batch_size" or name.endswith("_batch_size")) and scalar is int:
        return positive_int
    return scalar


def add_dataclass_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type,
    *,
    only: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
    flags: Mapping[str, str] | None = None,
) -> None:
    """One `--flag` per scalar field of the dataclass `cls` (nested configs are YAML-only).

    Flags default to None, so an unset flag leaves the YAML or dataclass default in place; the
    help shows the dataclass default. Booleans get `--x/--no-x`, tuples and lists take several
    values (space- or comma-separated, the flag repeatable), except fields marked
    `metadata={"names": True}`, which take `add_names_argument`'s one syntax. `flags` renames a
    field's flag (`{"out_dir": "--out"}`). A `device` flag takes only torch device names and a
    `batch_size` (or `*_batch_size`) flag only positive counts, checked while parsing.
    """
    hints = typing.get_type_hints(cls)
    wanted = set(only) if only is not None else None
    for spec in dataclasses.fields(cls):
        if (
            not spec.init
            or spec.name in exclude
            or (wanted is not None and spec.name not in wanted)
        ):
            continue
        kind = _flag_type(hints[spec.name])
        if kind is None:
            continue
        scalar, many = kind
        flag = (flags or {}).get(spec.name, f"--{spec.name.replace('_', '-')}")
        default = _default_of(spec)
        shown = " ".join(map(str, default)) if many and default else default
        # A help that says its default in words ("default: the packaged one") keeps it alone.
        own = field_help(spec)
        plain = own if "default:" in own.lower() else f"{own} (default: {shown})"
        help_text = plain.replace("%", "%%")
        if many and scalar is str and spec.metadata.get("names"):
            add_names_argument(parser, flag, dest=spec.name, help=plain)
        elif scalar is bool:
            parser.add_argument(
                flag,
                dest=spec.name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=help_text,
            )
        elif many:
            parser.add_argument(
                flag,
                dest=spec.name,
                type=_comma_list(scalar),
                nargs="+",
                action=_ExtendFlat,
                default=None,
                metavar=spec.name.upper(),
                help=help_text + "; several values, space- or comma-separated",
            )
        else:
            parser.add_argument(
                flag,
                dest=spec.name,
                type=_named_flag_type(spec.name, scalar),
                default=None,
                metavar=spec.name.upper(),
                help=help_text,
            )


def add_names_argument(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    flag: str,
    *,
    dest: str | None = None,
    help: str = "",
) -> None:
    """A flag that takes names in one syntax, separated by spaces (`--transforms original
    anonymize`); None when not given. Names separated by commas, or the flag given twice, are
    refused with a UserError that shows the same names written the accepted way."""
    parser.add_argument(
        flag,
        dest=dest or flag.lstrip("-").replace("-", "_"),
        nargs="+",
        action=_Names,
        default=None,
        metavar="NAME",
        help=(help + "; names separated by spaces").replace("%", "%%"),
    )


class _Names(argparse.Action):
    """`add_names_argument`'s flag: the names as a list, other syntaxes refused."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        flag = option_string or self.option_strings[0]
        given = [str(v) for v in values]
        if any("," in v for v in given):
            names = [n.strip() for v in given for n in v.split(",") if n.strip()]
            raise UserError(
                f"{flag} takes names separated by spaces, not commas: write "
                f"{flag} {' '.join(names)}."
            )
        earlier = getattr(namespace, self.dest, None)
        if earlier is not None:
            raise UserError(
                f"{flag} is given once with every name after it, not repeated: write "
                f"{flag} {' '.join([*earlier, *given])}."
            )
        setattr(namespace, self.dest, given)


class _ExtendFlat(argparse.Action):
    """Collect the values of a repeatable many-valued flag as one flat list: `--k 1,10 100`
    gives [1, 10, 100] (each token is parsed into a list by `_comma_list`)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        collected = list(getattr(namespace, self.dest, None) or [])
        for value in values:
            collected.extend(value)
        setattr(namespace, self.dest, collected)


def _comma_list(scalar: Any) -> Any:
    """An argparse type reading `1,10,100` as [1, 10, 100] (and `1` as [1])."""

    def parse(text: str) -> list[Any]:
        try:
            return [scalar(part) for part in text.split(",") if part.strip()]
        except ValueError:
            # The help says "space- or comma-separated", and so does this: a word that is no
            # value is most often a positional argument the flag took in (`--k 1 10 FILE`).
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a valid {scalar.__name__}: this flag takes {scalar.__name__} "
                "values separated by spaces or commas and reads every word up to the next "
                "flag, so put positional arguments before it or end its values with --"
            ) from None

    parse.__name__ = f"{scalar.__name__} list"
    return parse


def overrides_from_args(
    args: argparse.Namespace, cls: type, *, only: Iterable[str] | None = None
) -> dict[str, Any]:
    """The fields of `cls` the user set on the command line (flags left unset are absent)."""
    names = set(only) if only is not None else {f.name for f in dataclasses.fields(cls)}
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}
