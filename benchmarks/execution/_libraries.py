"""The installed libraries a run lets its candidates import (`ExecutionConfig.candidate_libraries`),
resolved on the harness side into what the sandbox reveals of site-packages.

A library is named by its import name (`numpy`, `pandas`). It must belong to an installed
distribution (its metadata names the files it installed); the sandbox then reveals, read-only,
the site-directory entries of that distribution and of every distribution it requires (pandas:
numpy, python-dateutil, and theirs), computed from the metadata, never listed by hand: the
package directories, their `<name>.libs` folders of shared objects, their `*.dist-info`. Nothing
else of any site directory becomes readable to a sample (`_setup.Setup`: the bind mounts into
the hidden site directory, the Landlock read rules, the sample's `sys.path`).

Harness side only (importlib.metadata and packaging): the worker receives the result as plain
data in its start-up config (`CandidateLibraries.worker_config`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import sys
from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from benchmarks.common.errors import UserError

# boi's own distribution: the harness, which a candidate must never read.
_HARNESS_DISTRIBUTIONS = frozenset({"boi"})


@dataclass(frozen=True)
class CandidateLibraries:
    """What `resolve_libraries` found: the allowed import names, the version of every
    distribution revealed (the allowed ones and what they require), and the entries revealed in
    each site directory."""

    names: tuple[str, ...] = ()
    versions: dict[str, str] = field(default_factory=dict)
    reveal: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def worker_config(self) -> dict[str, object]:
        """The zygote's start-up config entries (plain data): the names and, per site
        directory, the entries to reveal."""
        return {
            "candidate_libraries": list(self.names),
            "reveal": {site: list(entries) for site, entries in sorted(self.reveal.items())},
        }


@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    """Top-level module -> distributions (a walk of every installed RECORD: once a process)."""
    return dict(importlib.metadata.packages_distributions())


def _distribution_of(name: str) -> importlib.metadata.Distribution:
    """The installed distribution that provides the top-level module `name`, or a UserError."""
    if name in sys.stdlib_module_names:
        raise UserError(
            f"execution config: candidate_libraries names {name!r}, which is in the standard "
            "library (a candidate imports it already); leave it out."
        )
    providers = _packages_distributions().get(name, [])
    if not providers:
        found = importlib.util.find_spec(name) is not None
        raise UserError(
            f"execution config: candidate_libraries names {name!r}, which "
            + (
                "no installed distribution's metadata lists (it cannot be revealed by its files)"
                if found
                else "is not installed here"
            )
            + "; install it in this environment or leave it out."
        )
    # Several distributions may share a top-level name (namespace packages): all of them.
    return importlib.metadata.distribution(providers[0])


def _required(dist: importlib.metadata.Distribution) -> list[importlib.metadata.Distribution]:
    """The installed distributions `dist` requires on this platform (no extras)."""
    found = []
    for line in dist.requires or ():
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        try:
            found.append(importlib.metadata.distribution(requirement.name))
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed: the library's own import will say so, in the sample
    return found


def _entries(dist: importlib.metadata.Distribution) -> dict[str, set[str]]:
    """Site directory -> the top-level entries `dist` installed there (its RECORD)."""
    entries: dict[str, set[str]] = {}
    for path in dist.files or ():
        top = path.parts[0] if path.parts else ""
        if not top or top in ("..", "__pycache__") or top.endswith(".pth"):
            continue  # scripts installed outside the site directory; caches; startup hooks
        located = os.path.realpath(str(dist.locate_file(top)))
        if os.path.lexists(located):
            entries.setdefault(os.path.dirname(located), set()).add(os.path.basename(located))
    return entries


def resolve_libraries(names: tuple[str, ...]) -> CandidateLibraries:
    """The libraries `names` allow, with everything they require, as the sandbox reveals
    them. A name that is not an installed distribution's module, is the standard library's or
    is boi's own is refused in one sentence."""
    if not names:
        return CandidateLibraries()
    versions: dict[str, str] = {}
    reveal: dict[str, set[str]] = {}
    queue = [_distribution_of(name) for name in names]
    seen: set[str] = set()
    while queue:
        dist = queue.pop()
        key = canonicalize_name(dist.metadata["Name"] or "")
        if key in seen:
            continue
        seen.add(key)
        if key in _HARNESS_DISTRIBUTIONS:
            raise UserError(
                "execution config: candidate_libraries would reveal boi itself to the candidate; "
                "leave out the library that needs it."
            )
        found = _entries(dist)
        if not found:
            raise UserError(
                f"execution config: the installed {dist.metadata['Name']} lists no files "
                "(no RECORD in its metadata), so the sandbox cannot reveal it alone; reinstall "
                "it with pip."
            )
        versions[str(dist.metadata["Name"])] = dist.version
        for site, entries in found.items():
            reveal.setdefault(site, set()).update(entries)
        queue.extend(_required(dist))
    return CandidateLibraries(
        names=tuple(names),
        versions=dict(sorted(versions.items())),
        reveal={site: tuple(sorted(entries)) for site, entries in sorted(reveal.items())},
    )
