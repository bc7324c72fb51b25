"""A near-duplicate index of a code corpus, built once on disk and reused (by `boi analyze copies`;
any stage that must find training-data copies, such as decontaminating fine-tuning data, can
import it: it depends on benchmarks.common alone).

What is indexed: every function body (the tokens after a `def ...:` header; methods and nested
functions included) and every whole document of at most `max_doc_tokens` tokens, since a
completion is either a function body (HumanEval style) or a whole program (stdin/stdout). A
short completion set against a whole long file has a tiny Jaccard similarity even when it was
copied from it verbatim, which is why the units are functions, not files. A unit whose tokens
are exactly those of an earlier one (vendored or generated code) is indexed once, and its
places are listed with every match of the first.

How: code is cut into tokens (names, keywords, numbers, strings, operators; comments and
whitespace dropped), a unit into shingles of `shingle` consecutive tokens, and each unit's
shingle set into a MinHash (`datasketch.MinHash`, `num_perm` permutations) that a
`datasketch.MinHashLSH` (Jaccard threshold `threshold`) indexes. The LSH's band tables live in
SQLite (`_BandTable`, a datasketch storage backend) instead of datasketch's in-memory dicts, so
an index opens at once and grows with the disk rather than the memory. The documents (text,
tokens, token offsets) and the MinHash signatures sit beside them, so a candidate is verified
exactly (shingle Jaccard, containment, longest common token run) without rereading the corpus.

The folder is written as a temporary sibling and renamed into place; its manifest holds the
parameters and the corpus fingerprint (each file's path, size and modification time; a data
file's size and time; a dataset's name and split), and the index is rebuilt only when either
changed.
"""

from __future__ import annotations

import contextlib
import difflib
import gzip
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import sqlite3
import sysconfig
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from fnmatch import fnmatch
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common.atomic import recover_dir, replace_dir, write_text_atomic
from benchmarks.common.cache import cache_dir
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import scan_jsonl
from benchmarks.common.outputs import output_dir
from benchmarks.common.progress import progress_bar
from benchmarks.common.provenance import config_hash

FORMAT = "boi-copy-index/1"
# Bump when tokens or units change meaning: it is part of the parameters an index is checked
# against, so a stale index is rebuilt rather than compared with new queries.
TOKENIZER_VERSION = 1
MINHASH_SEED = 1
STDLIB = "stdlib"
SITE_PACKAGES = "site-packages"
# A corpus row's code and name, when the user names no field: the usual column names of code
# datasets (The Stack and CodeParrot: content / path; MBPP-like files: code; plain dumps: text).
TEXT_FIELDS = ("content", "code", "text", "completion", "source", "solution")
NAME_FIELDS = (
    "path",
    "max_stars_repo_path",
    "file_path",
    "filepath",
    "repo_path",
    "task_id",
    "id",
)
# Folders that hold tool state, not corpus files.
PRUNED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__"})
SKIP_REASONS = ("binary", "undecodable", "large", "malformed", "unreadable")
SKIPPED_EXAMPLES = 10  # paths kept per skip reason in the manifest, for the report


@dataclass(frozen=True)
class IndexConfig:
    """How a corpus is cut, hashed and indexed (an index is rebuilt when any of these change)."""

    shingle: int = field(default=5, metadata={"help": "tokens per shingle"})
    num_perm: int = field(default=128, metadata={"help": "MinHash permutations"})
    threshold: float = field(
        default=0.5,
        metadata={
            "help": "MinHashLSH Jaccard threshold: units less similar than this are rarely "
            "candidates"
        },
    )
    min_tokens: int = field(
        default=20,
        metadata={
            "help": "units (and completions) with fewer tokens are not indexed (searched): too "
            "short to be evidence of copying"
        },
    )
    max_doc_tokens: int = field(
        default=2000,
        metadata={"help": "a whole document is a unit too when it has at most this many tokens"},
    )
    max_file_bytes: int = field(
        default=1_000_000,
        metadata={"help": "larger corpus files (generated or minified code) are skipped, counted"},
    )
    include: tuple[str, ...] = field(
        default=(),
        metadata={"help": "only corpus files whose name matches one of these globs (empty: all)"},
    )
    text_field: str = field(
        default="",
        metadata={
            "help": "the code field of a JSONL/Parquet/dataset corpus (empty: the first of "
            + ", ".join(TEXT_FIELDS)
            + ")"
        },
    )
    split: str = field(default="train", metadata={"help": "the split of a dataset corpus"})

    def __post_init__(self) -> None:
        if self.shingle < 1:
            raise UserError(f"shingle must be at least 1, not {self.shingle}.")
        if self.num_perm < 16:
            raise UserError(f"num_perm must be at least 16, not {self.num_perm}.")
        if not 0.0 < self.threshold < 1.0:
            raise UserError(f"threshold must be between 0 and 1, not {self.threshold}.")
        if self.min_tokens < self.shingle:
            raise UserError(
                f"min_tokens ({self.min_tokens}) must be at least shingle ({self.shingle})."
            )


# ---------------------------------------------------------------------------------------------
# Tokens and units

# Python's tokens, matched by one regular expression: on valid Python it gives what `tokenize`
# gives once comments, newlines and indentation are dropped (checked on 1,500 standard-library
# modules, and in the tests), at four times its speed, and it never fails, so function-body
# fragments, truncated completions and other languages get tokens too. Alternatives are tried
# in order: comment (dropped), string (with prefix, before names swallow the prefix), name,
# number, operator, any other visible character.
_TOKEN = re.compile(
    r"""
  \#[^\r\n]*
| [rRbBuUfF]{0,2}(?:\"\"\"(?:\\[\s\S]|[^\\])*?\"\"\"|'''(?:\\[\s\S]|[^\\])*?'''
                  |"(?:\\[\s\S]|[^"\\\r\n])*"|'(?:\\[\s\S]|[^'\\\r\n])*')
| [^\W\d]\w*
| 0[xXoObB][\da-fA-F_]+
| (?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d[\d_]*)?[jJ]?
| \*\*=|//=|>>=|<<=|\.\.\.|->|:=|[-+*/%&|^@<>=!]=|\*\*|//|<<|>>
| [^\s\\]
""",
    re.VERBOSE,
)
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def tokenize_code(text: str) -> tuple[list[str], list[int]]:
    """The tokens of `text` and the character offset where each starts."""
    tokens, offsets = [], []
    for match in _TOKEN.finditer(text):
        token = match[0]
        if token[0] != "#":
            tokens.append(token)
            offsets.append(match.start())
    return tokens, offsets


def shingles(tokens: Sequence[str], k: int) -> set[tuple[str, ...]]:
    """The set of runs of `k` consecutive tokens (exact, for verification)."""
    return set(zip(*(tokens[i:] for i in range(k)), strict=False))


_TOKEN_IDS: dict[str, int] = {}


def _token_id(token: str) -> int:
    # crc32 rather than hash(): Python's string hash changes with every process, and the ids
    # must agree between the build and every later search.
    found = _TOKEN_IDS.get(token)
    if found is None:
        if len(_TOKEN_IDS) > 2_000_000:
            _TOKEN_IDS.clear()  # bounded memory on huge vocabularies (long strings)
        found = _TOKEN_IDS[token] = zlib.crc32(token.encode("utf-8", "surrogatepass"))
    return found


def shingle_hashes(ids: np.ndarray, k: int) -> list[int]:
    """Distinct 32-bit hashes of the `k`-token shingles of a token-id array (MinHash input)."""
    n = len(ids) - k + 1
    if n <= 0:
        return []
    combined = np.zeros(n, dtype=np.uint64)
    for j in range(k):  # a polynomial over the window; uint64 arithmetic wraps, as intended
        combined = combined * np.uint64(1_000_003) + ids[j : j + n]
    folded = (combined ^ (combined >> np.uint64(32))) & np.uint64(0xFFFFFFFF)
    result: list[int] = np.unique(folded).tolist()
    return result


@dataclass(frozen=True)
class Unit:
    """A span of a document's tokens that is indexed: a function body or the whole document;
    where it is (lines) and what it is (a digest of its tokens) are filled in by `prepare`."""

    start: int
    stop: int
    label: str
    first_line: int = 0
    last_line: int = 0
    digest: bytes = b""


def _line_starts(text: str) -> np.ndarray:
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return np.concatenate(([0], np.flatnonzero(codes == 10) + 1))


def function_bodies(text: str, tokens: Sequence[str], offsets: Sequence[int]) -> list[Unit]:
    """Every `def`'s body: from the token after the header's colon to the first later line that
    is indented no deeper than the `def` (comments and string contents do not count: they are
    not tokens), or to the end of the line for a one-line function."""
    if "def" not in tokens:
        return []
    starts = _line_starts(text)
    line = np.searchsorted(starts, np.asarray(offsets, dtype=np.int64), side="right") - 1
    column = (np.asarray(offsets, dtype=np.int64) - starts[line]).tolist()
    lines = line.tolist()
    first = [0, *[i for i in range(1, len(tokens)) if lines[i] != lines[i - 1]]]
    first_set = set(first)
    units = []
    for i, token in enumerate(tokens):
        if token != "def" or i + 1 >= len(tokens):  # noqa: S105 - a code token
            continue
        head = i - 1 if i and tokens[i - 1] == "async" else i
        if head not in first_set:
            continue  # `def` inside an expression or after `;`: not a function definition
        depth, colon = 0, -1
        for j in range(i + 1, min(len(tokens), i + 400)):
            if tokens[j] in _OPEN:
                depth += 1
            elif tokens[j] in _CLOSE:
                depth -= 1
            elif tokens[j] == ":" and depth == 0:
                colon = j
                break
        if colon < 0 or colon + 1 >= len(tokens):
            continue
        body = colon + 1
        indent = column[head]
        if lines[body] == lines[colon]:  # `def f(x): return x`
            stop = body
            while stop < len(tokens) and lines[stop] == lines[colon]:
                stop += 1
        else:
            position = _bisect(first, body)
            stop = len(tokens)
            for k in first[position:]:
                if column[k] <= indent:
                    stop = k
                    break
        units.append(Unit(body, stop, f"def {tokens[i + 1]}"))
    return units


def _bisect(values: Sequence[int], value: int) -> int:
    low, high = 0, len(values)
    while low < high:
        middle = (low + high) // 2
        if values[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low


def document_units(
    text: str, tokens: Sequence[str], offsets: Sequence[int], config: IndexConfig
) -> list[Unit]:
    """The units of one document that are long enough to index."""
    units = [
        u for u in function_bodies(text, tokens, offsets) if u.stop - u.start >= config.min_tokens
    ]
    if config.min_tokens <= len(tokens) <= config.max_doc_tokens:
        units.append(Unit(0, len(tokens), "whole file"))
    return units


# ---------------------------------------------------------------------------------------------
# Corpora


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


def _name_of(row: dict[str, Any], where: str) -> str:
    for name in NAME_FIELDS:
        value = row.get(name)
        if isinstance(value, str | int) and str(value):
            return f"{where} ({value})"
    return where


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
        text = row.get(text_field)
        if not isinstance(text, str):
            yield RawDocument(where, skip="malformed")
            continue
        yield RawDocument(_name_of(row, where), text=text)


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
            if not isinstance(text, str):
                yield RawDocument(where, skip="malformed")
                continue
            yield RawDocument(_name_of(row, where), text=text)


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
    number = 0
    for row in _chain_one(first, rows):
        number += 1
        where = f"{source.location}:{config.split}:{number}"
        text = row.get(text_field)
        if not isinstance(text, str):
            yield RawDocument(where, skip="malformed")
            continue
        yield RawDocument(_name_of(row, where), text=text)


def _chain_one(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


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


# ---------------------------------------------------------------------------------------------
# Preparing documents (in worker processes)


@dataclass(frozen=True)
class Prepared:
    """A document ready to store: compressed text, tokens and offsets, its units, and one MinHash
    signature per unit (uint32 bytes, `num_perm` per unit)."""

    name: str
    text: bytes
    tokens: bytes
    offsets: bytes
    units: tuple[Unit, ...]
    signatures: bytes


def _minhash_template(num_perm: int) -> Any:
    from datasketch import MinHash  # heavy (scipy); imported where MinHashes are made

    cached = _TEMPLATES.get(num_perm)
    if cached is None:
        # hashfunc=int: the inputs are already 32-bit shingle hashes (shingle_hashes).
        cached = _TEMPLATES[num_perm] = MinHash(num_perm=num_perm, seed=MINHASH_SEED, hashfunc=int)
    return cached


_TEMPLATES: dict[int, Any] = {}


def minhash(hashes: Sequence[int], num_perm: int) -> Any:
    """A datasketch MinHash of shingle hashes."""
    template = _minhash_template(num_perm)
    sketch = template.copy()
    sketch.update_batch(hashes)
    return sketch


def _read(document: RawDocument, config: IndexConfig) -> str:
    """The document's text, or raise _Skip with the reason it cannot be indexed."""
    if document.skip:
        raise _Skip(document.skip)
    if document.text is not None:
        if "\0" in document.text:
            raise _Skip("binary")
        return document.text
    assert document.path is not None
    try:
        size = os.path.getsize(document.path)
        if size > config.max_file_bytes:
            raise _Skip("large")
        with open(document.path, "rb") as handle:
            data = handle.read()
    except OSError:
        raise _Skip("unreadable") from None
    if b"\0" in data:
        raise _Skip("binary")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _Skip("undecodable") from None


class _Skip(Exception):
    pass


def prepare(document: RawDocument, config: IndexConfig) -> Prepared | tuple[str, str]:
    """Read, tokenize and sketch one document; (name, reason) when it is skipped."""
    try:
        text = _read(document, config)
    except _Skip as skip:
        return document.name, str(skip)
    if len(text) > config.max_file_bytes:
        return document.name, "large"
    tokens, offsets = tokenize_code(text)
    units = document_units(text, tokens, offsets, config)
    if not units:
        return Prepared(document.name, b"", b"", b"", (), b"")
    ids = np.fromiter(map(_token_id, tokens), dtype=np.uint64, count=len(tokens))
    starts = _line_starts(text)
    ends = [offsets[u.stop - 1] + len(tokens[u.stop - 1]) - 1 for u in units]
    first = np.searchsorted(starts, [offsets[u.start] for u in units], side="right").tolist()
    last = np.searchsorted(starts, ends, side="right").tolist()
    units = [
        replace(
            u,
            first_line=first[i],
            last_line=last[i],
            # The exact tokens, so identical copies (vendored or generated code) are indexed
            # once and reported together.
            digest=hashlib.blake2b(ids[u.start : u.stop].tobytes(), digest_size=16).digest(),
        )
        for i, u in enumerate(units)
    ]
    signatures = b"".join(
        minhash(shingle_hashes(ids[u.start : u.stop], config.shingle), config.num_perm)
        .hashvalues.astype(np.uint32)
        .tobytes()
        for u in units
    )
    return Prepared(
        name=document.name,
        text=zlib.compress(text.encode("utf-8", "surrogatepass"), 1),
        tokens=zlib.compress("\0".join(tokens).encode("utf-8", "surrogatepass"), 1),
        offsets=zlib.compress(np.asarray(offsets, dtype=np.uint32).tobytes(), 1),
        units=tuple(units),
        signatures=signatures,
    )


# ---------------------------------------------------------------------------------------------
# The LSH's storage: SQLite rows instead of in-memory dicts


def band_digest(data: bytes) -> bytes:
    """MinHashLSH's `hashfunc`: a band's bytes to 8 (one SQLite integer per band entry)."""
    return hashlib.blake2b(data, digest_size=8).digest()


class _Database:
    """The index's SQLite file, with a write buffer for the band rows of a build."""

    def __init__(self, path: Path, *, write: bool) -> None:
        if write:
            self.connection = sqlite3.connect(path)
            self.connection.executescript(
                "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                "CREATE TABLE docs(id INTEGER PRIMARY KEY, name TEXT NOT NULL, text BLOB NOT NULL,"
                " tokens BLOB NOT NULL, offsets BLOB NOT NULL);"
                "CREATE TABLE units(id INTEGER PRIMARY KEY, doc INTEGER NOT NULL,"
                " start INTEGER NOT NULL, stop INTEGER NOT NULL, label TEXT NOT NULL,"
                " first_line INTEGER NOT NULL, last_line INTEGER NOT NULL);"
                "CREATE TABLE duplicates(unit INTEGER NOT NULL, doc INTEGER NOT NULL,"
                " first_line INTEGER NOT NULL, last_line INTEGER NOT NULL);"
                "CREATE TABLE bands(band INTEGER NOT NULL, h INTEGER NOT NULL,"
                " unit INTEGER NOT NULL);"
            )
        else:
            self.connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        self.pending: list[tuple[int, int, int]] = []

    def flush(self) -> None:
        if self.pending:
            self.connection.executemany("INSERT INTO bands VALUES (?, ?, ?)", self.pending)
            self.pending.clear()

    def finish(self) -> None:
        """Index the band rows (one sort at the end is much faster than an index kept up to date
        during millions of inserts) and close."""
        self.flush()
        self.connection.execute("CREATE INDEX bands_h ON bands(band, h)")
        self.connection.execute("CREATE INDEX duplicates_unit ON duplicates(unit)")
        self.connection.commit()
        self.connection.close()


class _BandTable:
    """One LSH band's hash table as rows (band, h, unit) of the SQLite `bands` table: the storage
    interface of `datasketch.storage.UnorderedStorage` (band hash -> set of unit ids), so
    datasketch's MinHashLSH does the banding and the lookups. An index is rebuilt, never edited:
    removal is not supported."""

    def __init__(self, database: _Database, band: int) -> None:
        self.database = database
        self.band = band

    @staticmethod
    def _h(key: bytes) -> int:
        return int.from_bytes(key, "little", signed=True)

    def insert(self, key: bytes, *values: int, **_: Any) -> None:
        pending = self.database.pending
        h = self._h(key)
        for value in values:
            pending.append((self.band, h, value))
        if len(pending) >= 200_000:
            self.database.flush()

    def get(self, key: bytes) -> set[int]:
        rows = self.database.connection.execute(
            "SELECT unit FROM bands WHERE band = ? AND h = ?", (self.band, self._h(key))
        )
        return {unit for (unit,) in rows}

    def getmany(self, *keys: bytes) -> list[set[int]]:
        return [self.get(key) for key in keys]

    def keys(self) -> list[bytes]:
        rows = self.database.connection.execute(
            "SELECT DISTINCT h FROM bands WHERE band = ?", (self.band,)
        )
        return [h.to_bytes(8, "little", signed=True) for (h,) in rows]

    def has_key(self, key: bytes) -> bool:
        return bool(self.get(key))

    def size(self) -> int:
        row = self.database.connection.execute(
            "SELECT COUNT(DISTINCT h) FROM bands WHERE band = ?", (self.band,)
        ).fetchone()
        return int(row[0])

    def itemcounts(self, **_: Any) -> dict[bytes, int]:
        rows = self.database.connection.execute(
            "SELECT h, COUNT(*) FROM bands WHERE band = ? GROUP BY h", (self.band,)
        )
        return {h.to_bytes(8, "little", signed=True): n for h, n in rows}

    def remove(self, *keys: Any, **_: Any) -> None:
        raise NotImplementedError("a copy index is rebuilt, never edited")

    def remove_val(self, key: Any, value: Any) -> None:
        raise NotImplementedError("a copy index is rebuilt, never edited")

    def empty_buffer(self) -> None:
        self.database.flush()

    def __len__(self) -> int:
        return self.size()


class _UnitKeys:
    """MinHashLSH's key storage (`datasketch.storage.OrderedStorage`): datasketch keeps each
    key's band hashes there only to remove keys later, which an index that is rebuilt, never
    edited does not need; the unit ids themselves are the `units` table's."""

    def __init__(self, database: _Database) -> None:
        self.database = database

    def insert(self, key: int, *values: Any, **_: Any) -> None:
        pass  # the builder writes the unit row itself

    def has_key(self, key: int) -> bool:
        row = self.database.connection.execute("SELECT 1 FROM units WHERE id = ?", (key,))
        return row.fetchone() is not None

    def __contains__(self, key: int) -> bool:
        return self.has_key(key)

    def get(self, key: int) -> list[bytes]:
        return []

    def keys(self) -> Iterator[int]:
        for (unit,) in self.database.connection.execute("SELECT id FROM units"):
            yield unit

    def size(self) -> int:
        return int(self.database.connection.execute("SELECT COUNT(*) FROM units").fetchone()[0])

    def empty_buffer(self) -> None:
        pass


def _lsh(config: IndexConfig, database: _Database, params: tuple[int, int] | None) -> Any:
    from datasketch import MinHashLSH  # heavy (scipy); imported where an index is opened

    lsh = MinHashLSH(
        threshold=config.threshold,
        num_perm=config.num_perm,
        params=params,
        hashfunc=band_digest,
    )
    lsh.hashtables = [_BandTable(database, band) for band in range(lsh.b)]
    lsh.keys = _UnitKeys(database)
    return lsh


# ---------------------------------------------------------------------------------------------
# Building and opening

MANIFEST = "manifest.json"
DATABASE = "index.sqlite"
SIGNATURES = "signatures.u32"


def index_params(config: IndexConfig) -> dict[str, Any]:
    """What an index was built with; an index whose parameters differ is rebuilt."""
    return {
        **asdict(config),
        "include": list(config.include),
        "tokenizer": TOKENIZER_VERSION,
        "minhash_seed": MINHASH_SEED,
        "datasketch": importlib.metadata.version("datasketch"),
    }


def default_index_dir(sources: Sequence[CorpusSource]) -> Path:
    return cache_dir("copy-index") / corpus_identity(sources)


def _batches(items: Iterable[RawDocument], size: int) -> Iterator[list[RawDocument]]:
    batch: list[RawDocument] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _pool(workers: int) -> Any:
    """Worker processes for reading the corpus (None: read in this process). Forked where the
    platform can (a spawned worker re-imports the caller's main module, which a script read from
    stdin does not have), and before the build opens its database or progress bar, so no
    thread or connection of ours is copied into them."""
    if workers <= 1:
        return None
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method).Pool(workers)


def _prepared(
    corpus: Corpus, pool: Any, workers: int, progress: Callable[[int], None]
) -> Iterator[Prepared | tuple[str, str]]:
    work = partial(prepare, config=corpus.config)
    if pool is None:
        for done, document in enumerate(corpus.documents(), 1):
            yield work(document)
            progress(done)
        return
    done = 0
    # Bounded batches rather than one imap over the corpus: Pool.imap reads its whole input
    # ahead, which for a corpus of rows means the whole corpus in memory.
    for batch in _batches(corpus.documents(), 64 * workers):
        for result in pool.imap(work, batch, chunksize=8):
            yield result
            done += 1
            progress(done)


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build_index(
    corpus: Corpus,
    final: Path,
    *,
    workers: int = 1,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Build the index of `corpus` into the folder `final` (atomically); returns its manifest."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.building-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    config = corpus.config
    started = time.perf_counter()
    pool = _pool(workers)
    try:
        database = _Database(tmp / DATABASE, write=True)
        lsh = _lsh(config, database, None)
        sketch = _minhash_template(config.num_perm).copy()
        counts: dict[str, int] = {
            "documents": 0,
            "indexed": 0,
            "units": 0,
            "duplicate_units": 0,
            "no_units": 0,
        }
        # digest -> unit id of the first copy (16 bytes + an int per distinct unit: a corpus of
        # tens of millions of units needs a few GB here)
        seen: dict[bytes, int] = {}
        counts.update({reason: 0 for reason in SKIP_REASONS})
        examples: dict[str, list[str]] = {reason: [] for reason in SKIP_REASONS}
        bar = progress_bar(corpus.total, "index corpus", unit="doc") if corpus.total else None

        def progress(done: int) -> None:
            if bar is not None:
                bar(done, corpus.total)

        unit_id = 0
        with open(tmp / SIGNATURES, "wb") as signatures:
            for result in _prepared(corpus, pool, workers, progress):
                counts["documents"] += 1
                if isinstance(result, tuple):
                    name, reason = result
                    counts[reason] += 1
                    if len(examples[reason]) < SKIPPED_EXAMPLES:
                        examples[reason].append(name)
                    continue
                if not result.units:
                    counts["no_units"] += 1
                    continue
                doc = counts["indexed"]
                counts["indexed"] += 1
                values = np.frombuffer(result.signatures, dtype=np.uint32).reshape(
                    len(result.units), config.num_perm
                )
                fresh = 0
                for unit, hashvalues in zip(result.units, values, strict=True):
                    first = seen.get(unit.digest)
                    if first is not None:
                        database.connection.execute(
                            "INSERT INTO duplicates VALUES (?, ?, ?, ?)",
                            (first, doc, unit.first_line, unit.last_line),
                        )
                        counts["duplicate_units"] += 1
                        continue
                    seen[unit.digest] = unit_id
                    database.connection.execute(
                        "INSERT INTO units VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (unit_id, doc, unit.start, unit.stop, unit.label)
                        + (unit.first_line, unit.last_line),
                    )
                    sketch.hashvalues = hashvalues  # one MinHash reused: insert reads only these
                    lsh.insert(unit_id, sketch, check_duplication=False)
                    signatures.write(hashvalues.tobytes())
                    unit_id += 1
                    fresh += 1
                # A document whose units are all copies keeps only its name (for the copies'
                # paths): nothing is ever verified against its text.
                blobs = (result.text, result.tokens, result.offsets) if fresh else (b"",) * 3
                database.connection.execute(
                    "INSERT INTO docs VALUES (?, ?, ?, ?, ?)", (doc, result.name, *blobs)
                )
        if bar is not None:
            bar(corpus.total, corpus.total)
        counts["units"] = unit_id
        database.finish()
        manifest = {
            "format": FORMAT,
            "corpus": {
                "sources": [asdict(s) for s in corpus.sources],
                "fingerprint": corpus.fingerprint,
            },
            "params": index_params(config),
            "lsh": {"b": lsh.b, "r": lsh.r},
            "counts": counts,
            "skipped_examples": {k: v for k, v in examples.items() if v},
            "build_seconds": round(time.perf_counter() - started, 2),
            "workers": workers,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        manifest["size_bytes"] = _dir_size(tmp)
        write_text_atomic(tmp / MANIFEST, json.dumps(manifest, indent=1) + "\n")
        replace_dir(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return manifest


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """An index folder's manifest; None where there is none or it is not one of ours."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(manifest, dict) or not str(manifest.get("format", "")).startswith(
        "boi-copy-index/"
    ):
        return None
    return manifest


def stale_reason(manifest: dict[str, Any] | None, corpus: Corpus) -> str | None:
    """Why an index cannot serve `corpus` (None: it can)."""
    if manifest is None:
        return "no index yet"
    if manifest.get("format") != FORMAT:
        return f"its format {manifest.get('format')} is not {FORMAT}"
    if manifest.get("params") != index_params(corpus.config):
        return "the index parameters changed"
    if manifest.get("corpus", {}).get("fingerprint") != corpus.fingerprint:
        return "the corpus changed"
    return None


def _remove_stale_builds(final: Path) -> None:
    for tmp in final.parent.glob(f".{final.name}.building-*"):
        try:
            os.kill(int(tmp.name.rsplit("-", 1)[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(tmp, ignore_errors=True)  # left by a killed build
        except (ValueError, PermissionError, OSError):
            continue


def ensure_index(
    corpus: Corpus,
    folder: Path,
    *,
    workers: int = 1,
    log: Callable[[str], None] = print,
) -> tuple[CopyIndex, bool]:
    """The index of `corpus` in `folder`, built first where missing or stale; (index, built)."""
    # Resolved once: sqlite opens the index by URI, which needs an absolute path.
    folder = output_dir(folder, option="--index", ours=(MANIFEST,))
    recover_dir(folder)
    if folder.exists() and any(folder.iterdir()) and read_manifest(folder) is None:
        raise UserError(
            f"{folder} exists and is not a boi copy index; pass --index a new or empty folder "
            "(nothing there was changed)."
        )
    _remove_stale_builds(folder)
    reason = stale_reason(read_manifest(folder), corpus)
    built = reason is not None
    if reason is not None:
        log(f"[copies] building the index in {folder} ({reason}) ...")
        manifest = build_index(corpus, folder, workers=workers, log=log)
        log(
            f"[copies] indexed {manifest['counts']['units']} units of "
            f"{manifest['counts']['indexed']} documents in {manifest['build_seconds']} s"
        )
    return CopyIndex(folder), built


# ---------------------------------------------------------------------------------------------
# Searching


@dataclass(frozen=True)
class Match:
    """A corpus unit near a completion: where it is, and how much they share."""

    unit: int  # the unit's id in this index (`CopyIndex.places` lists all its places)
    path: str
    label: str
    lines: tuple[int, int]  # the unit's first and last line in its document
    copies: tuple[str, ...]  # other places with exactly the same tokens ("path:first-last")
    copies_total: int  # how many there are (copies lists at most COPIES_LISTED)
    jaccard: float  # of the shingle sets (exact)
    containment: float  # share of the completion's shingles found in the unit
    longest_run: int  # longest common run of tokens
    run_lines: tuple[int, int]  # where that run is in the document
    snippet: str  # the document's lines holding that run (cut at SNIPPET_LINES)

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["lines"] = list(self.lines)
        record["run_lines"] = list(self.run_lines)
        record["copies"] = list(self.copies)
        return record


@dataclass(frozen=True)
class SearchResult:
    tokens: int
    candidates: int  # units the LSH proposed
    verified: int  # of which checked exactly (the best estimated, at most max_candidates)
    matches: tuple[Match, ...]


SNIPPET_LINES = 40
COPIES_LISTED = 10


class CopyIndex:
    """An opened index: `search(text)` finds the corpus units near a piece of code."""

    def __init__(self, folder: Path) -> None:
        manifest = read_manifest(folder)
        if manifest is None or manifest.get("format") != FORMAT:
            raise UserError(f"{folder} holds no usable copy index; rerun to rebuild it.")
        self.folder = folder
        self.manifest = manifest
        params = manifest["params"]
        self.config = IndexConfig(
            **{k: v for k, v in params.items() if k in IndexConfig.__dataclass_fields__}
            | {"include": tuple(params["include"])}
        )
        self.database = _Database(folder / DATABASE, write=False)
        self.lsh = _lsh(self.config, self.database, (manifest["lsh"]["b"], manifest["lsh"]["r"]))
        units = int(manifest["counts"]["units"])
        self.signatures = (
            np.memmap(
                folder / SIGNATURES, dtype=np.uint32, mode="r", shape=(units, self.config.num_perm)
            )
            if units
            else np.zeros((0, self.config.num_perm), dtype=np.uint32)
        )
        self._documents: OrderedDict[int, tuple[str, str, list[str], np.ndarray]] = OrderedDict()

    def close(self) -> None:
        self.database.connection.close()

    def _document(self, doc: int) -> tuple[str, str, list[str], np.ndarray]:
        cached = self._documents.get(doc)
        if cached is not None:
            self._documents.move_to_end(doc)
            return cached
        name, text, tokens, offsets = self.database.connection.execute(
            "SELECT name, text, tokens, offsets FROM docs WHERE id = ?", (doc,)
        ).fetchone()
        loaded = (
            name,
            zlib.decompress(text).decode("utf-8", "surrogatepass"),
            zlib.decompress(tokens).decode("utf-8", "surrogatepass").split("\0"),
            np.frombuffer(zlib.decompress(offsets), dtype=np.uint32),
        )
        self._documents[doc] = loaded
        if len(self._documents) > 256:
            self._documents.popitem(last=False)
        return loaded

    def places(self, unit: int) -> list[str]:
        """Every place ("path:first-last") that holds exactly the tokens of `unit`: the unit's
        own first, then its identical copies by path."""
        connection = self.database.connection
        own = connection.execute(
            "SELECT docs.name, units.first_line, units.last_line FROM units"
            " JOIN docs ON docs.id = units.doc WHERE units.id = ?",
            (unit,),
        ).fetchall()
        copies = connection.execute(
            "SELECT docs.name, duplicates.first_line, duplicates.last_line FROM duplicates"
            " JOIN docs ON docs.id = duplicates.doc WHERE duplicates.unit = ?"
            " ORDER BY docs.name, duplicates.first_line",
            (unit,),
        ).fetchall()
        return [f"{path}:{first}-{last}" for path, first, last in own + copies]

    def search(self, text: str, *, top: int = 5, max_candidates: int = 50) -> SearchResult:
        """The `top` units nearest to `text` (exact Jaccard, then longest run), among the
        `max_candidates` LSH candidates with the highest estimated Jaccard."""
        k = self.config.shingle
        tokens, _ = tokenize_code(text)
        if len(tokens) < self.config.min_tokens:
            return SearchResult(len(tokens), 0, 0, ())
        ids = np.fromiter(map(_token_id, tokens), dtype=np.uint64, count=len(tokens))
        query = minhash(shingle_hashes(ids, k), self.config.num_perm)
        candidates = np.fromiter(self.lsh.query(query), dtype=np.int64)
        chosen = candidates
        if len(candidates) > max_candidates:
            estimate = (
                self.signatures[np.sort(candidates)] == query.hashvalues.astype(np.uint32)
            ).mean(axis=1)
            chosen = np.sort(candidates)[np.argsort(-estimate, kind="stable")[:max_candidates]]
        own = shingles(tokens, k)
        found = []
        for unit in sorted(chosen.tolist()):
            found.append(self._verify(unit, tokens, own))
        found.sort(key=lambda m: (-m.jaccard, -m.longest_run, m.path, m.lines))
        return SearchResult(len(tokens), len(candidates), len(chosen), tuple(found[:top]))

    def _verify(self, unit: int, tokens: list[str], own: set[tuple[str, ...]]) -> Match:
        connection = self.database.connection
        doc, start, stop, label, first_line, last_line = connection.execute(
            "SELECT doc, start, stop, label, first_line, last_line FROM units WHERE id = ?",
            (unit,),
        ).fetchone()
        copies = self.places(unit)[1:]
        name, text, doc_tokens, offsets = self._document(doc)
        theirs_tokens = doc_tokens[start:stop]
        theirs = shingles(theirs_tokens, self.config.shingle)
        shared = len(own & theirs)
        union = len(own | theirs)
        longest = difflib.SequenceMatcher(None, tokens, theirs_tokens, autojunk=False)
        _, b, size = longest.find_longest_match(0, len(tokens), 0, len(theirs_tokens))
        first_char = int(offsets[start + b]) if size else int(offsets[start])
        last_token = start + b + size - 1 if size else start
        last_char = int(offsets[last_token]) + len(doc_tokens[last_token])
        return Match(
            unit=unit,
            path=name,
            label=label,
            lines=(first_line, last_line),
            copies=tuple(copies[:COPIES_LISTED]),
            copies_total=len(copies),
            jaccard=round(shared / union, 4) if union else 0.0,
            containment=round(shared / len(own), 4) if own else 0.0,
            longest_run=size,
            run_lines=(_line_of(text, first_char), _line_of(text, last_char)),
            snippet=_snippet(text, first_char, last_char),
        )


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _snippet(text: str, first: int, last: int) -> str:
    begin = text.rfind("\n", 0, first) + 1
    end = text.find("\n", last)
    lines = text[begin : len(text) if end < 0 else end].split("\n")
    if len(lines) > SNIPPET_LINES:
        lines = [*lines[:SNIPPET_LINES], f"... ({len(lines) - SNIPPET_LINES} more lines)"]
    return "\n".join(lines)
