"""Preparing documents (in worker processes): read, tokenize and sketch one document into what
the build stores (`prepare`), and the MinHash of a set of shingle hashes (`minhash`), which
searching makes of a query the same way."""

from __future__ import annotations

import functools
import hashlib
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from benchmarks.copy_index._config import IndexConfig
from benchmarks.copy_index._corpus import RawDocument
from benchmarks.copy_index._tokens import (
    Unit,
    document_units,
    line_starts,
    shingle_hashes,
    token_id,
    tokenize_code,
)

MINHASH_SEED = 1


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


@functools.cache
def minhash_template(num_perm: int) -> Any:
    from datasketch import MinHash  # heavy (scipy); imported where MinHashes are made

    # hashfunc=int: the inputs are already 32-bit shingle hashes (shingle_hashes).
    return MinHash(num_perm=num_perm, seed=MINHASH_SEED, hashfunc=int)


def minhash(hashes: Sequence[int], num_perm: int) -> Any:
    """A datasketch MinHash of shingle hashes."""
    template = minhash_template(num_perm)
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
    ids = np.fromiter(map(token_id, tokens), dtype=np.uint64, count=len(tokens))
    starts = line_starts(text)
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
