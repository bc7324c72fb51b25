"""Small, exact helpers over Python source text (tokens, not regexes)."""

from __future__ import annotations

import io
import tokenize


def _line_offsets(source: str) -> list[int]:
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def identifier_spans(
    source: str, name: str, skip_definitions: bool = False
) -> list[tuple[int, int]]:
    """Character spans of the identifier token `name` in `source` (not inside strings/comments).

    With `skip_definitions`, the name right after `def`/`class` is left out (a test's own
    `def check` stays when the function under test is also called `check`).
    Raises `tokenize.TokenError` / `SyntaxError` when the source does not tokenize.
    """
    offsets = _line_offsets(source)
    spans = []
    previous = ""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if (
            tok.type == tokenize.NAME
            and tok.string == name
            and not (skip_definitions and previous in ("def", "class"))
        ):
            start = offsets[tok.start[0] - 1] + tok.start[1]
            spans.append((start, start + len(name)))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = tok.string
    return spans


def rename_identifier(source: str, old: str, new: str, skip_definitions: bool = False) -> str:
    """`source` with every identifier token `old` replaced by `new`; everything else unchanged."""
    out, last = [], 0
    for start, end in identifier_spans(source, old, skip_definitions):
        out += [source[last:start], new]
        last = end
    out.append(source[last:])
    return "".join(out)
