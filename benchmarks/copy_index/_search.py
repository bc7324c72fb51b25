"""Searching: an opened index (`CopyIndex`) finds the corpus units near a piece of code, by LSH
candidates verified exactly (shingle Jaccard, containment, longest common token run)."""

from __future__ import annotations

import difflib
import zlib
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common.errors import UserError
from benchmarks.copy_index._config import IndexConfig
from benchmarks.copy_index._prepare import minhash
from benchmarks.copy_index._storage import (
    DATABASE,
    FORMAT,
    SIGNATURES,
    Database,
    make_lsh,
    read_manifest,
)
from benchmarks.copy_index._tokens import shingle_hashes, shingles, token_id, tokenize_code


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
        self.database = Database(folder / DATABASE, write=False)
        self.lsh = make_lsh(
            self.config, self.database, (manifest["lsh"]["b"], manifest["lsh"]["r"])
        )
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
        ids = np.fromiter(map(token_id, tokens), dtype=np.uint64, count=len(tokens))
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
