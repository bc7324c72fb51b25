"""Lazy registries: a name maps to a `"module:attribute"` string, imported on first use.

Adding a backend, a dataset or a scorer is one module plus one mapping line; the CLI's choices
and help text come from the mapping, and naming an implementation never imports its heavy
dependencies (vLLM, torch) until it is chosen.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from benchmarks.common.errors import UserError, suggest

T = TypeVar("T")


class Registry(Mapping[str, str], Generic[T]):
    """`name -> "module:attribute"`, resolved lazily; unknown names get a did-you-mean."""

    def __init__(self, what: str, entries: Mapping[str, str] | None = None) -> None:
        self.what = what
        self._entries: dict[str, str] = dict(entries or {})

    def register(self, name: str, target: str) -> None:
        """Add (or replace) `name`; `target` is "package.module:Attribute"."""
        if ":" not in target:
            raise ValueError(f"registry target {target!r} must look like 'module:Attribute'")
        self._entries[name] = target

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)

    def __getitem__(self, name: str) -> str:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def check(self, name: str) -> str:
        """`name` itself when registered, else a UserError listing the choices."""
        if name not in self._entries:
            raise UserError(
                f"{self.what} {name!r} is unknown{suggest(name, self._entries)}; use one of "
                f"{', '.join(self._entries)}."
            )
        return name

    def load(self, name: str) -> Any:
        """The registered attribute, imported now."""
        module_name, _, attribute = self[self.check(name)].partition(":")
        return getattr(importlib.import_module(module_name), attribute)

    def choices_help(self) -> str:
        """'a, b or c' for help texts."""
        names = list(self._entries)
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
