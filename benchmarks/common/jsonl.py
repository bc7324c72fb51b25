"""JSONL reading and writing with clear errors, atomic rewrites and append-only logs.

Every JSONL file boi reads goes through `scan_jsonl`, so a byte-order mark, CRLF line ends,
blank lines, a cut-off last line and bytes that are not UTF-8 mean the same everywhere. Strict
readers (`iter_jsonl`: our own files, datasets) refuse a bad line in one sentence naming the
file and line; lenient ones (samples to judge, a training corpus) go on and list every line
they could not use on the console (`report_bad_lines`), never dropping one without a word.

Writers never leave a half-written file behind: `write_jsonl` writes a temporary file beside the
target and renames it, and `JsonlAppender` appends whole lines to a log that a resumed run can
read back, dropping (with a note) a torn last line left by a killed process.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from benchmarks.common.atomic import atomic_path
from benchmarks.common.errors import UserError

_BOM = b"\xef\xbb\xbf"
# What to do about a line a strict reader refuses, by kind.
_REMEDY = {
    "undecodable": "re-encode the file as UTF-8, or check that it is a JSONL file at all",
    "malformed": "fix or remove the line",
    "not_object": "each line must be one object",
    "torn": "the file was cut off; complete or remove its last line",
}
# The console lists this many unreadable lines one by one; the rest by number only, so that a
# corpus with a million bad rows still gets a readable report.
_LISTED = 20


@dataclass(frozen=True)
class JsonlLine:
    """One non-blank line of a JSONL file, as `scan_jsonl` read it.

    `record` is the object, or None when the line is not one; `problem` says what is wrong in
    words that follow "FILE line N" ("is not valid JSON (...)"), and is also set for a record
    kept with bytes that are not UTF-8 (`keep_undecodable`). `kind` names the problem for
    callers that count them: "undecodable", "malformed", "not_object" or "torn" (a last line
    without its newline that does not parse: what a killed writer leaves).
    """

    path: Path
    lineno: int
    record: dict[str, Any] | None
    problem: str | None = None
    kind: str | None = None

    @property
    def where(self) -> str:
        return f"{self.path} line {self.lineno}"


def _open_bytes(path: Path) -> Any:
    if not path.exists():
        raise UserError(f"{path} does not exist; check the path.")
    if path.is_dir():
        raise UserError(f"{path} is a directory; pass a JSONL file.")
    try:
        return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")
    except OSError as err:
        raise UserError(f"{path} cannot be read ({err.strerror}); check its permissions.") from None


def _read_line(path: Path, lineno: int, raw: bytes, keep_undecodable: bool) -> JsonlLine:
    if raw.startswith(_BOM):
        # Windows editors start a UTF-8 file with a byte-order mark; json refuses it, and files
        # joined with `cat` carry one at the start of a later line too.
        raw = raw[len(_BOM) :]
    try:
        text = raw.decode("utf-8")
        undecodable: str | None = None
    except UnicodeDecodeError as err:
        undecodable = f"is not valid UTF-8 (byte 0x{raw[err.start]:02x} at column {err.start + 1})"
        if not keep_undecodable:
            return JsonlLine(path, lineno, None, undecodable, "undecodable")
        # Kept as surrogate escapes, so that the caller can judge the record (a sample with a
        # broken completion is a failed sample of its task, not a lost one).
        text = raw.decode("utf-8", "surrogateescape")
    try:
        obj = json.loads(text)  # JSON whitespace includes the \r of a CRLF line end
    except json.JSONDecodeError as err:
        if undecodable:  # binary garbage: the bytes are the problem, not the JSON they break
            return JsonlLine(path, lineno, None, undecodable, "undecodable")
        return JsonlLine(
            path, lineno, None, f"is not valid JSON ({err.msg} at column {err.colno})", "malformed"
        )
    if not isinstance(obj, dict):
        return JsonlLine(
            path,
            lineno,
            None,
            f"holds a {type(obj).__name__}, not a JSON object",
            "not_object",
        )
    return JsonlLine(path, lineno, obj, undecodable, "undecodable" if undecodable else None)


def scan_jsonl(
    path: str | os.PathLike[str], *, keep_undecodable: bool = False
) -> Iterator[JsonlLine]:
    """Every non-blank line of a JSONL file (plain or .gz), read one way for every reader.

    Streamed, so a large corpus is never held in memory. Handles a UTF-8 byte-order mark, CRLF
    line ends and blank lines (which hold no record and are passed over); a line that is not
    UTF-8, not JSON or not an object comes back with `record` None and its `problem`, and a
    last line without its newline that does not parse comes back as kind "torn". The callers
    decide what a bad line means: `iter_jsonl` refuses it, lenient readers report it on the
    console with `report_bad_lines`.
    """
    path = Path(path)
    with _open_bytes(path) as handle:
        try:
            for lineno, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                line = _read_line(path, lineno, raw, keep_undecodable)
                if line.record is None and not raw.endswith(b"\n"):
                    line = JsonlLine(
                        path,
                        lineno,
                        None,
                        f"is cut off: no newline at the end of the file, and it {line.problem}",
                        "torn",
                    )
                yield line
        except (OSError, EOFError) as err:
            if path.suffix == ".gz":
                raise UserError(
                    f"{path} is not a valid gzip file ({err}); decompress it or pass the .jsonl."
                ) from None
            raise UserError(f"{path} cannot be read ({err}); check the file.") from None


def report_bad_lines(
    lines: Iterable[JsonlLine], consequence: str, *, stream: TextIO | None = None
) -> int:
    """Say on the console (stderr) which lines a lenient reader could not use, and what became
    of them (`consequence`: "skipped", "counted as failed samples"); returns how many.

    The first lines are listed with their problem, the rest by number, so nothing is dropped
    or failed without a word.
    """
    bad = [line for line in lines if line.problem is not None]
    if not bad:
        return 0
    stream = stream or sys.stderr
    files = sorted({str(line.path) for line in bad})
    noun = "line" if len(bad) == 1 else "lines"
    print(f"warning: {len(bad)} {noun} of {', '.join(files)} {consequence}:", file=stream)
    for line in bad[:_LISTED]:
        print(f"  {line.where} {line.problem}", file=stream)
    if len(bad) > _LISTED:
        rest = ", ".join(str(line.lineno) for line in bad[_LISTED : _LISTED + 200])
        more = " ..." if len(bad) > _LISTED + 200 else ""
        print(f"  and {len(bad) - _LISTED} more: lines {rest}{more}", file=stream)
    return len(bad)


def iter_jsonl(
    path: str | os.PathLike[str], *, tolerate_torn_tail: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a JSONL file; a line that is not
    a JSON object is refused with a sentence naming the file and line.

    With `tolerate_torn_tail`, a last line without its newline that does not parse (what a
    killed writer leaves) is skipped, with a note on the console, instead of raising.
    """
    for line in scan_jsonl(path):
        if line.record is None:
            if tolerate_torn_tail and line.kind == "torn":
                report_bad_lines([line], "skipped (left by an interrupted writer)")
                return
            raise UserError(f"{line.where} {line.problem}; {_REMEDY[line.kind or 'malformed']}.")
        yield line.lineno, line.record


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


def require_strings(
    path: str | os.PathLike[str], lineno: int, obj: dict[str, Any], fields: Iterable[str]
) -> None:
    """Raise a UserError naming the first of `fields` (present in the record at `lineno`: see
    `require_fields`) whose value is not a string, and what it is instead."""
    for field in fields:
        value = obj[field]
        if not isinstance(value, str):
            raise UserError(
                f"{path} line {lineno}: field {field!r} must be a string, not "
                f"{type(value).__name__}."
            )


def require_new_id(
    path: str | os.PathLike[str],
    lineno: int,
    task_id: str,
    seen: dict[str, int],
    *,
    needs: str = "task ids must be unique",
) -> None:
    """Raise a UserError when `task_id` already appeared in the file (`seen`: task id -> the
    line it first appeared on, which this records); `needs` says what the file must hold."""
    if task_id in seen:
        raise UserError(
            f"{path} line {lineno}: task_id {task_id!r} already appeared on line "
            f"{seen[task_id]}; {needs}."
        )
    seen[task_id] = lineno


def dumps(obj: Any) -> str:
    """One JSONL line (without newline): UTF-8, deterministic key order as given."""
    return json.dumps(obj, ensure_ascii=False)


def write_jsonl(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> int:
    """Write records atomically (temporary file + rename); returns the number written."""
    count = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(dumps(record) + "\n")
            count += 1
        handle.flush()
        os.fsync(handle.fileno())
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
            tail = _read_line(self.path, data.count(b"\n") + 1, data[keep:], False)
            if tail.record is not None:
                # A whole record that only lacks its newline (a hand-edited log): keep it.
                with open(self.path, "ab") as handle:
                    handle.write(b"\n")
                return
            # Said on the console: the record is redone, but nothing is dropped without a word.
            print(
                f"note: {tail.where} was cut off by an interrupted run; dropped it (its work "
                "is redone).",
                file=sys.stderr,
            )
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


class KeyedLog:
    """An append-only JSONL log of values by key, read into memory when opened: the one store
    behind every cache a run keeps on disk (generated samples, classifier probabilities, critic
    scores). A key is written once; a torn last line is dropped (`JsonlAppender`), so a killed
    run loses at most what was in flight.

    `key_of` reads a record's key (None: not a record of this log, refused with `what` when
    `strict`, skipped otherwise: a log shared by several scorers keeps the others' records);
    `value_of` its value.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        key_of: Callable[[dict[str, Any]], str | None],
        value_of: Callable[[dict[str, Any]], Any],
        *,
        what: str = "",
    ) -> None:
        self.path = Path(path)
        self._log = JsonlAppender(self.path)
        self._values: dict[str, Any] = {}
        try:
            records = _keyed(self.path, self._log.existing, key_of, what)
        except UserError:
            self._log.close()
            raise
        for key, record in records:
            self._values[key] = value_of(record)

    @staticmethod
    def read(
        path: str | os.PathLike[str],
        key_of: Callable[[dict[str, Any]], str | None],
        *,
        what: str = "",
    ) -> list[dict[str, Any]]:
        """The records of a log someone else keeps (another run's cache given as input), read
        only: the file is opened for reading alone, never appended to or cut, so a read-only
        file is read as any other, and a torn last line is skipped with a note instead of
        dropped from the file. Records `key_of` does not read are refused (`what`) or skipped,
        as when the log is opened."""
        path = Path(path)
        existing = [obj for _, obj in iter_jsonl(path, tolerate_torn_tail=True)]
        return [record for _, record in _keyed(path, existing, key_of, what)]

    @property
    def existing(self) -> list[dict[str, Any]]:
        """The records the log held when it was opened (another cache copies them)."""
        return self._log.existing

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: str) -> bool:
        return key in self._values

    def get(self, key: str) -> Any:
        return self._values.get(key)

    def put(self, key: str, value: Any, record: dict[str, Any]) -> bool:
        """Store `value` under `key` as `record` (the line written); False when the key was
        already there (nothing written)."""
        if key in self._values:
            return False
        self._log.append(record)
        self._values[key] = value
        return True

    def close(self) -> None:
        self._log.close()

    def __enter__(self) -> KeyedLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _keyed(
    path: Path,
    records: list[dict[str, Any]],
    key_of: Callable[[dict[str, Any]], str | None],
    what: str,
) -> list[tuple[str, dict[str, Any]]]:
    """(key, record) for each record of a keyed log that `key_of` reads; one it does not is
    refused in one sentence when `what` says what such a line lacks, skipped otherwise."""
    keyed: list[tuple[str, dict[str, Any]]] = []
    for record in records:
        key = key_of(record)
        if key is None:
            if what:
                raise UserError(f"{path} has a line that {what}")
            continue
        keyed.append((key, record))
    return keyed
