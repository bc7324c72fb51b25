"""The one registry mechanism: `name -> entry`, for every kind of thing boi names by name
(backends, datasets, languages, critic scorers, transformations, plots, ablations, commands,
analyses, studies).

An entry is registered either lazily, as a `"package.module:Attribute"` string (or
`"package.module"` for the module itself), imported only when the entry is first used, so
naming an implementation never imports its heavy dependencies (vLLM, torch) and `boi --help`
stays fast; or given now, by a call (`REGISTRY.register(name, value)`) or a decorator
(`@REGISTRY.add(name)`). Either way:

- registering a name that is already registered is an error naming both entries (unregister
  the first one to replace it: a test, a plugin replacing a built-in);
- an optional `base` (a class or a `typing.Protocol`) is checked when an entry is resolved: a
  class entry must subclass it (for a protocol: define its methods), any other entry must be an
  instance of it (for a protocol: have its members); a given entry is resolved at once;
- an unknown name is one `UserError` sentence with a did-you-mean listing the known names
  (`check`, `load`); `registry[name]` stays a plain mapping lookup (KeyError), so `in`, `get`
  and iteration never import anything but what they return.

The CLI's choices and help text come from the registry (names in registration order,
`choices_help`, each entry's one-line `help`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from benchmarks.common.errors import UserError, suggest

T = TypeVar("T")

# "package.module:Attribute.attribute" or "package.module" (the module itself).
_TARGET = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)?")


@dataclass
class _Entry:
    target: str | None  # the lazy "module:Attribute" string; None: `value` was given
    value: Any
    help: str
    origin: str  # what the collision error names


def _origin(value: Any) -> str:
    """Where a given entry comes from, for the collision error: `module:qualname` where the
    value has one (a function, a class), else its repr."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}:{qualname}"
    return repr(value)


def _protocol_members(base: type) -> tuple[list[str], list[str]]:
    """A protocol's (methods, other members), read from the protocol classes of its MRO (what
    `typing.get_protocol_members` gives on Python 3.13, split by kind). A class can only be
    checked for the methods: its data members may be set per instance."""
    methods: list[str] = []
    data: list[str] = []
    for klass in base.__mro__:
        if not getattr(klass, "_is_protocol", False) or klass.__module__ == "typing":
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") or name in methods:
                continue
            if callable(member) or isinstance(member, classmethod | staticmethod | property):
                methods.append(name)
        for name in getattr(klass, "__annotations__", {}):
            if not name.startswith("_") and name not in methods and name not in data:
                data.append(name)
    return methods, data


def conforms(value: Any, base: Any) -> bool:
    """Whether `value` is what a registry with `base` holds: a class subclassing `base`, or an
    instance of it; for a protocol, one that has its members (runtime-checkable or not)."""
    if getattr(base, "_is_protocol", False):
        methods, data = _protocol_members(base)
        wanted = methods if isinstance(value, type) else methods + data
        return all(hasattr(value, name) for name in wanted)
    if isinstance(value, type) and isinstance(base, type) and base is not type:
        try:
            return issubclass(value, base)
        except TypeError:  # an ABC like Callable that a class cannot subclass by name
            return isinstance(value, base)
    return isinstance(value, base)


class Registry(Mapping[str, T], Generic[T]):
    """`name -> entry` in registration order; see the module docstring.

    `what` names the kind in messages ("backend kind", "dataset"); `entries` are lazy targets,
    `name -> "module:Attribute"`, or `name -> ("module:Attribute", help)`; `base` is the
    optional class or protocol every entry is checked against when resolved."""

    def __init__(
        self,
        what: str,
        entries: Mapping[str, str | tuple[str, str]] | None = None,
        *,
        base: Any = None,
    ) -> None:
        self.what = what
        self.base = base
        self._entries: dict[str, _Entry] = {}
        for name, entry in (entries or {}).items():
            target, help_text = (entry, "") if isinstance(entry, str) else entry
            self.register(name, target, help=help_text)

    # ------------------------------------------------------------------ registering

    def register(
        self, name: str, entry: str | T, *, help: str = "", origin: str | None = None
    ) -> None:
        """Add `name`: `entry` is a lazy "package.module:Attribute" (or "package.module") string,
        or the entry itself (checked against `base` now). `help`: its one line for help texts;
        `origin`: what a collision names it by (default: the target, or the value's
        `module:qualname`). A name already registered is a ValueError naming both."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.what} needs a non-empty name, not {name!r}")
        if isinstance(entry, str):
            if not _TARGET.fullmatch(entry):
                raise ValueError(
                    f"{self.what} {name!r}: registry target {entry!r} must look like "
                    "'package.module:Attribute' (or 'package.module' for the module itself)"
                )
            new = _Entry(entry, None, help, origin or entry)
        else:
            new = _Entry(None, entry, help, origin or _origin(entry))
            self._check_base(name, new, entry)
        if name in self._entries:
            raise ValueError(
                f"{self.what} {name!r} is registered twice: by {self._entries[name].origin} and "
                f"by {new.origin}; unregister the first to replace it, or choose another name"
            )
        self._entries[name] = new

    def add(self, name: str, *, help: str = "", origin: str | None = None) -> Callable[[T], T]:
        """A decorator registering what it decorates as `name` (returned unchanged)."""

        def register(entry: T) -> T:
            self.register(name, entry, help=help, origin=origin)
            return entry

        return register

    def unregister(self, name: str) -> None:
        """Remove `name` if registered (tests; a plugin replacing a built-in)."""
        self._entries.pop(name, None)

    # ------------------------------------------------------------------ reading

    def __getitem__(self, name: str) -> T:
        """The entry `name`, imported now if it was registered lazily (KeyError when unknown;
        `load` says it in a sentence)."""
        entry = self._entries[name]
        if entry.target is None:
            value: T = entry.value
            return value
        # Resolved on every use rather than cached: importlib caches the module, and a test
        # that patches the module's attribute sees its patch.
        module_name, _, attribute = entry.target.partition(":")
        resolved: Any = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else ():
            resolved = getattr(resolved, part)
        self._check_base(name, entry, resolved)
        return resolved  # type: ignore[no-any-return]

    def __contains__(self, name: object) -> bool:
        # Never imports (Mapping's would resolve the entry); a config's list or mapping where a
        # name belongs is simply not one.
        return isinstance(name, str) and name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<Registry of {self.what}: {', '.join(self._entries)}>"

    def check(self, name: str) -> str:
        """`name` itself when registered, else a UserError with a did-you-mean and the choices."""
        if name not in self:
            raise UserError(
                f"{self.what} {name!r} is unknown{suggest(str(name), self._entries)}; use one of "
                f"{', '.join(self._entries)}."
            )
        return name

    def load(self, name: str) -> T:
        """The entry `name`, imported now; an unknown name is `check`'s UserError."""
        return self[self.check(name)]

    def target(self, name: str) -> str:
        """Where the entry `name` lives: its lazy target, or what it was registered as."""
        entry = self._entries[name]
        return entry.target or entry.origin

    def help(self, name: str) -> str:
        """The entry's one-line help ('' when it was registered without one)."""
        return self._entries[name].help

    def choices_help(self) -> str:
        """'a, b or c' for help texts."""
        names = list(self._entries)
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"

    def _check_base(self, name: str, entry: _Entry, value: Any) -> None:
        if self.base is None or conforms(value, self.base):
            return
        wanted = getattr(self.base, "__name__", repr(self.base))
        shape = f"the class {value.__name__}" if isinstance(value, type) else type(value).__name__
        raise TypeError(
            f"{self.what} {name!r} ({entry.target or entry.origin}) is {shape}, which is not "
            f"a {wanted}; register a {wanted} under that name"
        )
