"""Small, exact helpers over Python source text (tokens, not regexes)."""

from __future__ import annotations

import io
import tokenize


def _line_offsets(source: str) -> list[int]:
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def identifier_spans(source: str, name: str) -> list[tuple[int, int]]:
    """Character spans of the identifier token `name` in `source` (not inside strings/comments).

    Raises `tokenize.TokenError` / `SyntaxError` when the source does not tokenize.
    """
    offsets = _line_offsets(source)
    spans = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string == name:
            start = offsets[tok.start[0] - 1] + tok.start[1]
            spans.append((start, start + len(name)))
    return spans


def rename_identifier(source: str, old: str, new: str) -> str:
    """`source` with every identifier token `old` replaced by `new`; everything else unchanged."""
    out, last = [], 0
    for start, end in identifier_spans(source, old):
        out += [source[last:start], new]
        last = end
    out.append(source[last:])
    return "".join(out)
