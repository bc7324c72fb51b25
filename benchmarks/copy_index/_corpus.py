"""Corpora: what a --corpus value names (a folder, a JSONL or Parquet file, one text file, a
Hugging Face dataset), the documents each yields, read tolerantly (a bad row is skipped with its
reason, never fatal), and the fingerprint an index is checked against."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import itertools
import os
import sysconfig
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import scan_jsonl
from benchmarks.common.provenance import config_hash
from benchmarks.copy_index._config import NAME_FIELDS, TEXT_FIELDS, IndexConfig

STDLIB = "stdlib"
SITE_PACKAGES = "site-packages"
# Folders that hold tool state, not corpus files.
PRUNED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__"})


@dataclass(frozen=True)
class CorpusSource:
    """One corpus given with --corpus: a folder, a file (JSONL, Parquet, or any one text file),
    or a Hugging Face dataset name."""

    kind: str  # folder | jsonl | parquet | file | dataset
    location: str
    pruned: tuple[str, ...] = ()  # folder names left out (the stdlib's own site-packages)

    def describe(self) -> str:
        return self.location if self.kind != "dataset" else f"dataset {self.location}"


def resolve_corpus(spec: str) -> CorpusSource:
    """What a --corpus value names (one sentence when it names nothing usable)."""
    if spec == STDLIB:
        return CorpusSource(
            "folder", sysconfig.get_paths()["stdlib"], ("site-packages", "dist-packages")
        )
    if spec == SITE_PACKAGES:
        return CorpusSource("folder", sysconfig.get_paths()["purelib"])
    path = Path(spec).expanduser()
    if path.is_dir():
        return CorpusSource("folder", str(path.resolve()))
    if path.is_file():
        name = path.name.lower()
        if name.endswith((".jsonl", ".jsonl.gz")):
            return CorpusSource("jsonl", str(path.resolve()))
        if name.endswith(".parquet"):
            return CorpusSource("parquet", str(path.resolve()))
        return CorpusSource("file", str(path.resolve()))
    # A dataset name is `name` or `owner/name`; anything else that names no file was a path.
    if (
        spec.startswith(("/", ".", "~"))
        or spec.count("/") > 1
        or "\\" in spec
        or spec.lower().endswith((".jsonl", ".gz", ".parquet", ".py"))
    ):
        raise UserError(
            f"Corpus {spec} does not exist; pass a folder, a .jsonl or .parquet file, "
            f"'{STDLIB}', '{SITE_PACKAGES}', or a Hugging Face dataset name."
        )
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on"):
        raise UserError(
            f"Corpus {spec} is not a local file or folder, and reading it as a Hugging Face "
            "dataset needs the hub, which HF_HUB_OFFLINE=1 forbids; pass a local corpus or set "
            "HF_HUB_OFFLINE=0."
        )
    return CorpusSource("dataset", spec)


@dataclass(frozen=True)
class RawDocument:
    """A document to index: a file to read, or a row's text; `skip` when it is already known to
    be unusable (an undecodable or malformed row)."""

    name: str
    path: str | None = None
    text: str | None = None
    skip: str | None = None


def _folder_files(source: CorpusSource, include: Sequence[str]) -> list[Path]:
    files = []
    pruned = PRUNED_DIRS | set(source.pruned)
    for root, dirs, names in os.walk(source.location):
        dirs[:] = sorted(d for d in dirs if d not in pruned)
        for name in sorted(names):
            if not include or any(fnmatch(name, pattern) for pattern in include):
                files.append(Path(root, name))
    return files


def _count_lines(path: str) -> int:
    opener: Callable[..., Any] = gzip.open if path.endswith(".gz") else open
    count = 0
    with opener(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
    return count


def _pick(fields: Iterable[str], wanted: str, candidates: Sequence[str], where: str) -> str:
    names = list(fields)
    if wanted:
        if wanted not in names:
            raise UserError(
                f"{where} has no field {wanted!r}; its fields are {', '.join(names[:20])}."
            )
        return wanted
    for name in candidates:
        if name in names:
            return name
    raise UserError(
        f"{where} has none of the code fields {', '.join(candidates)}; pass --text-field NAME "
        f"(its fields are {', '.join(names[:20])})."
    )


def _row_document(row: dict[str, Any], text: Any, where: str) -> RawDocument:
    """A row's document: its `text`, named by `where` and the row's own name field (a row
    without a text string is malformed)."""
    if not isinstance(text, str):
        return RawDocument(where, skip="malformed")
    for name in NAME_FIELDS:
        value = row.get(name)
        if isinstance(value, str | int) and str(value):
            return RawDocument(f"{where} ({value})", text=text)
    return RawDocument(where, text=text)


def _jsonl_rows(source: CorpusSource, config: IndexConfig) -> Iterator[RawDocument]:
    # Streamed line by line (a corpus may not fit in memory) through the one JSONL reader (so a
    # byte-order mark or CRLF means what it means everywhere), and tolerant: a bad row is counted
    # and skipped, with examples in the index's summary, never fatal, unlike
    # benchmarks.common.jsonl's strict readers of our own files.
    text_field = config.text_field
    for line in scan_jsonl(source.location):
        where = f"{source.location}:{line.lineno}"
        row = line.record
        if row is None:
            yield RawDocument(
                where, skip="undecodable" if line.kind == "undecodable" else "malformed"
            )
            continue
        if not text_field:
            text_field = _pick(row, config.text_field, TEXT_FIELDS, source.location)
        yield _row_document(row, row.get(text_field), where)


def _parquet_rows(source: CorpusSource, config: IndexConfig) -> Iterator[RawDocument]:
    import pyarrow.parquet as pq  # heavy; only a Parquet corpus needs it

    try:
        parquet = pq.ParquetFile(source.location)
    except Exception as err:  # pyarrow raises several types for a file that is not Parquet
        raise UserError(
            f"{source.location} is not a readable Parquet file ({type(err).__name__}); check the file."
        ) from None
    names = parquet.schema_arrow.names
    text_field = _pick(names, config.text_field, TEXT_FIELDS, source.location)
    columns = [text_field, *[n for n in NAME_FIELDS if n in names][:1]]
    row_number = 0
    for batch in parquet.iter_batches(batch_size=512, columns=columns):
        for row in batch.to_pylist():
            row_number += 1
            where = f"{source.location}:{row_number}"
            text = row.get(text_field)
            if isinstance(text, bytes):
                try:
                    text = text.decode("utf-8")
                except UnicodeDecodeError:
                    yield RawDocument(where, skip="undecodable")
                    continue
            yield _row_document(row, text, where)


def _dataset_rows(source: CorpusSource, config: IndexConfig) -> Iterator[RawDocument]:
    try:
        from datasets import load_dataset  # heavy; only a dataset corpus needs it

        rows = iter(load_dataset(source.location, split=config.split, streaming=True))
        first = next(rows, None)
    except Exception as err:  # the hub raises many types: missing, gated, offline, no split
        raise UserError(
            f"Cannot read the dataset {source.location!r} split {config.split!r} "
            f"({type(err).__name__}: {str(err)[:120]}); check the name, the split and network access."
        ) from None
    if first is None:
        return
    text_field = _pick(first, config.text_field, TEXT_FIELDS, f"dataset {source.location}")
    for number, row in enumerate(itertools.chain([first], rows), start=1):
        where = f"{source.location}:{config.split}:{number}"
        yield _row_document(row, row.get(text_field), where)


@dataclass
class Corpus:
    """The documents of every --corpus source, with the fingerprint an index is checked against
    and how many documents there are (0: unknown, a streamed dataset)."""

    sources: tuple[CorpusSource, ...]
    config: IndexConfig
    fingerprint: str = field(init=False, default="")
    total: int = field(init=False, default=0)
    _files: dict[int, list[Path]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        digest = hashlib.sha256()
        total = 0
        for index, source in enumerate(self.sources):
            digest.update(f"{source.kind}\0{source.location}\0{source.pruned}\n".encode())
            if source.kind == "folder":
                files = _folder_files(source, self.config.include)
                self._files[index] = files
                total += len(files)
                for path in files:
                    try:
                        stat = path.stat()
                    except OSError:
                        continue  # a dangling link: counted as unreadable when read
                    digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
            elif source.kind == "dataset":
                digest.update(f"{self.config.split}\n".encode())
            else:
                stat = Path(source.location).stat()
                digest.update(f"{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
                if source.kind == "jsonl":
                    total += _count_lines(source.location)
                elif source.kind == "file":
                    total += 1
                else:
                    import pyarrow.parquet as pq  # heavy; only a Parquet corpus needs it

                    # unreadable: _parquet_rows says so in one sentence
                    with contextlib.suppress(Exception):
                        total += pq.ParquetFile(source.location).metadata.num_rows
        self.fingerprint = digest.hexdigest()[:24]
        self.total = 0 if any(s.kind == "dataset" for s in self.sources) else total

    def files(self) -> list[Path]:
        """The files of the folder sources (what the index reads from them)."""
        return [path for files in self._files.values() for path in files]

    def documents(self) -> Iterator[RawDocument]:
        for index, source in enumerate(self.sources):
            if source.kind == "folder":
                for path in self._files[index]:
                    yield RawDocument(str(path), path=str(path))
            elif source.kind == "file":
                yield RawDocument(source.location, path=source.location)
            elif source.kind == "jsonl":
                yield from _jsonl_rows(source, self.config)
            elif source.kind == "parquet":
                yield from _parquet_rows(source, self.config)
            else:
                yield from _dataset_rows(source, self.config)


def corpus_identity(sources: Sequence[CorpusSource]) -> str:
    """A short hash of what the corpus is (not of its contents): the default index folder's name,
    so a changed corpus rebuilds its index in place instead of leaving the old one behind."""
    return config_hash([asdict(s) for s in sources])
