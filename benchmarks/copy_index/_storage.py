"""An index folder on disk: its files (manifest, SQLite database, signatures) and the LSH's
storage, SQLite rows instead of datasketch's in-memory dicts."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.copy_index._config import IndexConfig

FORMAT = "boi-copy-index/1"
MANIFEST = "manifest.json"
DATABASE = "index.sqlite"
SIGNATURES = "signatures.u32"


def band_digest(data: bytes) -> bytes:
    """MinHashLSH's `hashfunc`: a band's bytes to 8 (one SQLite integer per band entry)."""
    return hashlib.blake2b(data, digest_size=8).digest()


class Database:
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

    def __init__(self, database: Database, band: int) -> None:
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

    def __init__(self, database: Database) -> None:
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


def make_lsh(config: IndexConfig, database: Database, params: tuple[int, int] | None) -> Any:
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
