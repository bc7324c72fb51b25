"""Atomic writes: a reader sees the old file or folder, or the new one, never half of either.

Files are written to a temporary name beside the target and renamed over it; folders are built
beside their final place and swapped in, the old one removed only once the new one is there.
Whether a path may be written at all is the output contract's question
(`benchmarks.common.outputs`), asked before any of these run. Nothing here removes anything
but what it made: the parked old folder has a hidden name of boi's own (`.NAME.boi-old`), never
a name a user might have chosen (`NAME.old`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def umask_mode() -> int:
    """The mode a newly created file gets (mkstemp's temporary files are 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str = ".tmp") -> Iterator[Path]:
    """A new, empty temporary file beside `path` (a hidden name) for the block to write: when
    the block ends it is renamed over `path`, with the mode a new file gets; when it raises, it
    is removed. Every atomic file write is this."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, umask_mode())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write a text file atomically (temporary file + rename)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write a file atomically (temporary file + rename)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


OLD_SUFFIX = ".boi-old"


def old_dir(final: Path) -> Path:
    """Where `replace_dir` parks the folder it replaces until the new one is in place."""
    return final.with_name(f".{final.name}{OLD_SUFFIX}")


def parked_finals(parent: Path, pattern: str = "*") -> list[Path]:
    """The folders in `parent` (matching `pattern`) that a killed `replace_dir` left parked,
    for `recover_dir`."""
    return [
        old.with_name(old.name[1 : -len(OLD_SUFFIX)])
        for old in parent.glob(f".{pattern}{OLD_SUFFIX}")
    ]


def replace_dir(tmp: Path, final: Path) -> None:
    """Replace `final` by the complete folder `tmp`; the old one is removed only afterwards.

    A kill between the two renames leaves the parked old folder and no `final`: `recover_dir`
    undoes it.
    """
    old = old_dir(final)
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    if old.exists():
        shutil.rmtree(old)


def recover_dir(final: Path) -> None:
    """Undo a `replace_dir` killed half-way: put the old folder back if the new one is missing."""
    old = old_dir(final)
    if old.exists() and not final.exists():
        os.replace(old, final)
    elif old.exists():
        shutil.rmtree(old)
