"""Tokens and units: code cut into tokens (comments and whitespace dropped), the shingles and
shingle hashes a MinHash is made of, and the units of a document that are indexed (function
bodies, short whole documents)."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.copy_index._config import IndexConfig

# Bump when tokens or units change meaning: it is part of the parameters an index is checked
# against, so a stale index is rebuilt rather than compared with new queries.
TOKENIZER_VERSION = 1

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


def token_id(token: str) -> int:
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


def line_starts(text: str) -> np.ndarray:
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return np.concatenate(([0], np.flatnonzero(codes == 10) + 1))


def function_bodies(text: str, tokens: Sequence[str], offsets: Sequence[int]) -> list[Unit]:
    """Every `def`'s body: from the token after the header's colon to the first later line that
    is indented no deeper than the `def` (comments and string contents do not count: they are
    not tokens), or to the end of the line for a one-line function."""
    if "def" not in tokens:
        return []
    starts = line_starts(text)
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
