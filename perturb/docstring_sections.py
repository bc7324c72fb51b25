"""The sections of a structured docstring (BigCodeBench's): the cuts `perturb.blocks` makes blocks of.

A BigCodeBench prompt is the imports (`prefix`), `def task_func(...)` (`name`) and a docstring
whose sections each open with a header alone on its line: `Parameters:` / `Args:`, `Returns:`,
`Raises:` (the `io_spec`: what goes in and comes out), `Requirements:` (`requirements`: the
libraries to use, a hint of its own), `Note:` / `Notes:` (`notes`) and `Example:` /
`Examples:` (`examples`). The docstring's opening quotes and the prose before the first header
are the `description`; the closing quotes the `suffix`. Each header starts a block of its kind
in the order the docstring has them; sections of one kind that follow each other are one
block, and a kind may come back later (`Parameters`, `Requirements`, `Returns` is io_spec,
requirements, io_spec), so that dropping the requirements drops nothing else. Header-like lines
that are none of these (`Constants:`, `DataFrame:`) stay in the section they are in.
"""

from __future__ import annotations

import re

from benchmarks.problem import Block

HEADERS = (
    (
        "io_spec",
        re.compile(
            r"(?:Parameters?|Params|Args|Arguments|Returns?|Raises?|Yields?|Errors|Exceptions?)"
            r"\s*:"
        ),
    ),
    ("requirements", re.compile(r"Requirements?\s*:")),
    ("examples", re.compile(r"(?:Examples?|Example [Uu]sage)\s*:")),
    ("notes", re.compile(r"(?:Additional )?Notes?\s*:")),
)
"""Header lines (stripped, matched whole) and the block kind each starts."""
LOOKED_FOR = {
    "io_spec": "no 'Parameters', 'Args', 'Returns' or 'Raises' header in the docstring",
    "requirements": "no 'Requirements' header in the docstring",
    "examples": "no 'Example(s)' header in the docstring",
}


def header_kind(line: str, headers: tuple[tuple[str, re.Pattern[str]], ...]) -> str | None:
    """The block kind `line` starts as a header of `headers` (matched whole once stripped):
    a docstring's (`HEADERS`) or a statement's (`perturb.statement_sections.HEADERS`)."""
    stripped = line.strip()
    return next((kind for kind, header in headers if header.fullmatch(stripped)), None)


def section_cuts(
    prompt: str, blocks: tuple[Block, ...], absent: dict[str, str]
) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """(kind, start offset) of each block in prompt order, and the kinds looked for and not
    found with why, from the function split (`split_function_prompt`'s `blocks` and `absent`):
    its prefix and name are kept, the docstring (description to suffix) cut again at its
    section headers. ValueError when the function has no docstring."""
    starts: dict[str, int] = {}
    offset = 0
    for block in blocks:
        starts.setdefault(block.kind, offset)
        offset += len(block.text)
    doc_kinds = [k for k in ("description", "examples") if k in starts]
    if not doc_kinds:
        raise ValueError(absent.get("description") or "the function has no docstring")
    doc_start = min(starts[k] for k in doc_kinds)
    doc_end = starts.get("suffix", len(prompt))
    cuts: list[tuple[str, int]] = [(k, starts[k]) for k in ("prefix", "name") if k in starts]
    cuts.append(("description", doc_start))
    seen = set()
    for line in re.finditer(r"^.*$", prompt[doc_start:doc_end], re.MULTILINE):
        kind = header_kind(line.group(), HEADERS)
        if kind is None:
            continue
        seen.add(kind)
        if kind != cuts[-1][0]:
            cuts.append((kind, doc_start + line.start()))
    cuts.append(("suffix", doc_end))
    found = {k: why for k, why in LOOKED_FOR.items() if k not in seen}
    after = cuts[cuts.index(("description", doc_start)) + 1][1]
    if not prompt[doc_start:after].strip().lstrip("rRuU").strip("\"' \t\n"):
        found["description"] = "the docstring has no prose before its first section"
    return cuts, found
