"""JSONL reading and writing with clear errors, atomic rewrites and append-only logs.

Readers name the file and line of every problem they meet. Writers never leave a half-written
file behind: `write_jsonl` writes a temporary file beside the target and renames it, and
`JsonlAppender` appends whole lines to a log that a resumed run can read back, dropping a torn
last line left by a killed process.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import umask_mode
from benchmarks.common.errors import UserError


def _decode_line(path: Path, lineno: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UserError(
            f"{path} line {lineno} is not valid UTF-8 (byte 0x{raw[err.start]:02x} at column "
            f"{err.start + 1}); re-encode the file as UTF-8."
        ) from None


def iter_jsonl(
    path: str | os.PathLike[str], *, tolerate_torn_tail: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a JSONL file.

    With `tolerate_torn_tail`, a last line without its newline that does not parse (what a
    killed writer leaves) is skipped instead of raising.
    """
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path} does not exist; check the path.")
    if path.is_dir():
        raise UserError(f"{path} is a directory; pass a JSONL file.")
    data = path.read_bytes()
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as err:
            raise UserError(
                f"{path} is not a valid gzip file ({err}); decompress it or pass the .jsonl."
            ) from None
    lines = data.split(b"\n")
    torn_tail_possible = not data.endswith(b"\n")
    for index, raw in enumerate(lines):
        lineno = index + 1
        if not raw.strip():
            continue
        text = _decode_line(path, lineno, raw)
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as err:
            if tolerate_torn_tail and torn_tail_possible and index == len(lines) - 1:
                return
            raise UserError(
                f"{path} line {lineno} is not valid JSON ({err.msg} at column {err.colno}); fix or remove the line."
            ) from None
        if not isinstance(obj, dict):
            raise UserError(
                f"{path} line {lineno} holds a {type(obj).__name__}, not a JSON object; each line must be one object."
            )
        yield lineno, obj


def require_fields(
    path: str | os.PathLike[str],
    lineno: int,
    obj: dict[str, Any],
    fields: Iterable[str],
    *,
    what: str = "record",
    needs: str = "add it or use the right dataset format",
) -> None:
    """Raise a UserError naming the first of `fields` missing from the record at `lineno`;
    `needs` says what to do about it."""
    for field in fields:
        if field not in obj:
            raise UserError(f"{path} line {lineno}: the {what} has no {field!r} field; {needs}.")


def dumps(obj: Any) -> str:
    """One JSONL line (without newline): UTF-8, deterministic key order as given."""
    return json.dumps(obj, ensure_ascii=False)


def write_jsonl(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> int:
    """Write records atomically (temporary file + rename); returns the number written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(dumps(record) + "\n")
                count += 1
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


class JsonlAppender:
    """Append-only JSONL log for resumable work.

    Opening it drops a torn last line (a killed writer's partial write) so the next append starts
    on a fresh line; `existing` holds the records already there, for the caller to skip. With
    `keep`, records it rejects are dropped first (what a resume from an older checkpoint must
    forget; rewritten atomically); with `fresh`, the log starts empty.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        keep: Callable[[dict[str, Any]], bool] | None = None,
        fresh: bool = False,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.existing: list[dict[str, Any]] = []
        if fresh:
            write_jsonl(self.path, [])
        elif self.path.exists():
            self._drop_torn_tail()
            self.existing = [obj for _, obj in iter_jsonl(self.path)]
            if keep is not None:
                kept = [obj for obj in self.existing if keep(obj)]
                if len(kept) != len(self.existing):
                    write_jsonl(self.path, kept)
                self.existing = kept
        self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def _drop_torn_tail(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as handle:
                handle.truncate(keep)

    def append(self, record: dict[str, Any]) -> None:
        self._handle.write(dumps(record) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
