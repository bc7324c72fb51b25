"""Source text of the brace languages (C++, Java, JavaScript, Go), read from a `Language`'s facts.

Not a parser: a scanner that knows where comments and string literals are (so a renaming
never touches a string, and a prompt that ends inside a comment is seen to), plus the
function definitions a `Language.function_definition` pattern finds in the code that is left.
Python has its exact, tokenizer-based helpers in `benchmarks.pysource`; these serve every
other language with only the facts its module declares, so adding a language adds no code here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from benchmarks.languages import Language

SegmentKind = Literal["code", "line_comment", "block_comment", "string"]


@dataclass(frozen=True)
class Segment:
    """A slice `text[start:end]` of one kind; `closed` is False for a comment or string that
    the text ends inside (a reply cut off there), or a string its line ends inside."""

    kind: SegmentKind
    start: int
    end: int
    closed: bool = True


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


def _openers(language: Language) -> re.Pattern[str]:
    markers = []
    if language.block_comment:
        markers.append(re.escape(language.block_comment[0]))
    if language.line_comment:
        markers.append(re.escape(language.line_comment))
    markers += [re.escape(q) for q in language.string_quotes]
    return _compiled("|".join(markers))


def segments(text: str, language: Language) -> list[Segment]:
    """`text` cut into code, comments and string literals, in order, covering all of it.

    A string in `"` or `'` ends at its closing quote or at the end of its line (an unclosed
    literal in a prompt's prose must not swallow the rest of the file); a backquoted one (a
    JavaScript template, a Go raw string) may span lines. A backslash escapes the next
    character, except in a Go raw string."""
    out: list[Segment] = []
    opener = _openers(language)
    block = language.block_comment
    position = code_start = 0
    while True:
        match = opener.search(text, position)
        if match is None:
            break
        start, token = match.start(), match.group()
        if block and token == block[0]:
            close = text.find(block[1], match.end())
            kind: SegmentKind = "block_comment"
            end, closed = (len(text), False) if close < 0 else (close + len(block[1]), True)
        elif token == language.line_comment:
            newline = text.find("\n", start)
            kind, end, closed = "line_comment", len(text) if newline < 0 else newline, True
        else:
            kind = "string"
            end, closed = _string_end(text, match.end(), token, language)
        if start > code_start:
            out.append(Segment("code", code_start, start))
        out.append(Segment(kind, start, end, closed))
        position = code_start = end
    if code_start < len(text):
        out.append(Segment("code", code_start, len(text)))
    return out


def _string_end(text: str, i: int, quote: str, language: Language) -> tuple[int, bool]:
    escapes = not (quote == "`" and language.name == "go")
    while i < len(text):
        char = text[i]
        if char == "\\" and escapes:
            i += 2
            continue
        if char == quote:
            return i + 1, True
        if char == "\n" and quote != "`":
            return i, False
        i += 1
    return len(text), False  # the text ends inside the literal, whichever its quote


def code_only(text: str, language: Language) -> str:
    """`text` with every comment and string literal blanked (newlines kept), so positions in
    it are positions in `text` and a pattern over it sees code only."""
    parts = []
    for segment in segments(text, language):
        piece = text[segment.start : segment.end]
        parts.append(piece if segment.kind == "code" else re.sub(r"[^\n]", " ", piece))
    return "".join(parts)


def ends_in_code(text: str, language: Language) -> bool:
    """Whether `text` ends outside any block comment or multi-line string (a prompt the
    model continues with code must)."""
    found = segments(text, language)
    return not found or found[-1].closed


def _definition(language: Language) -> re.Pattern[str]:
    if not language.function_definition:
        raise ValueError(f"language {language.name} declares no function_definition pattern")
    return _compiled(language.function_definition)


def definitions(text: str, language: Language) -> list[tuple[str, int]]:
    """The functions `text` defines, as (name, offset of the definition's line), in order.
    Comments and strings are not looked in; a reserved word is never a name (`if (x) {`)."""
    code = code_only(text, language)
    return [
        (m.group("name"), code.rfind("\n", 0, m.start("name")) + 1)
        for m in _definition(language).finditer(code)
        if m.group("name") not in language.reserved_words
    ]


def identifier_pattern(name: str) -> re.Pattern[str]:
    """`name` as a whole identifier (`$` and `_` count as identifier characters)."""
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def rename_in_code(text: str, old: str, new: str, language: Language) -> tuple[str, int]:
    """`text` with the identifier `old` renamed `new` wherever it is code (a call, a
    definition, `s.old(`), never inside a comment or a string; and how many were renamed."""
    pattern = identifier_pattern(old)
    code = code_only(text, language)
    out, last, count = [], 0, 0
    for match in pattern.finditer(code):
        out += [text[last : match.start()], new]
        last = match.end()
        count += 1
    out.append(text[last:])
    return "".join(out), count


def parameter_names(signature: str, language: Language) -> list[str]:
    """The parameters' names in the first parenthesised list of `signature` (a definition's
    line): each parameter's first identifier where the language writes the name first (Go,
    JavaScript), else its last (C++, Java: `vector<float> numbers`)."""
    code = code_only(signature, language)
    open_at = code.find("(")
    if open_at < 0:
        return []
    depth, pieces, current = 0, [], ""
    for char in code[open_at + 1 :]:
        if char in "(<[{":
            depth += 1
        elif char in ")>]}":
            if depth == 0 and char == ")":
                break
            depth -= 1
        if char == "," and depth == 0:
            pieces.append(current)
            current = ""
        else:
            current += char
    pieces.append(current)
    names = []
    for piece in pieces:
        words = re.findall(r"[A-Za-z_$][\w$]*", piece.split("=")[0])
        words = [w for w in words if w not in language.reserved_words or w == words[-1]]
        if words:
            names.append(words[0] if language.parameter_name == "first" else words[-1])
    return names


def comment_prose(text: str, language: Language) -> str:
    """`text` (a comment, or part of one) with its comment markers blanked: what a reader
    reads, for the keyword extractor (`//`, `/*`, `/**`, `*/` and a Javadoc line's `*`)."""
    markers = []
    if language.line_comment:
        markers.append(re.escape(language.line_comment) + "+")
    if language.block_comment:
        opening, closing = language.block_comment
        markers += [re.escape(opening) + r"\**", r"\**" + re.escape(closing)]
    text = re.sub("|".join(markers), lambda m: " " * len(m.group()), text) if markers else text
    # A Javadoc's continuation lines start with `*`.
    return re.sub(r"(?m)^([ \t]*)\*(?=\s)", r"\1 ", text)
