"""Where the sections of a LiveCodeBench statement start: the cuts `perturb.blocks` makes blocks of.

A LiveCodeBench prompt (`benchmarks.loaders.livecodebench`) is an optional import header, the
statement as a module docstring and, for a functional problem, the starter code after it. The
statement keeps its platform's headers, each alone on its line: AtCoder's `Constraints`,
`Input`, `Output`, `Sample Input 1`; Codeforces' `Input`, `Output`, `Examples`, `Note`;
LeetCode's `Example 1:`, `Constraints:`, `Follow-up: ...`. Each header starts a block of its
kind (`io_spec`, `constraints`, `examples`, `notes`) in the order it comes, and a kind appears
once: a header of a kind already met continues the block it is in (Codeforces' examples repeat
`Input`/`Output` headers; they stay examples). The text before the first header is the
`description`; the header and opening quotes are the `prefix`, the closing quotes the `suffix`,
and a functional problem's starter code (`class Solution` and its method) the `name`.
"""

from __future__ import annotations

import re

from perturb.docstring_sections import header_kind

HEADERS = (
    ("constraints", re.compile(r"Constraints?\s*:?")),
    ("io_spec", re.compile(r"(?:Input|Output)(?:\s+Format)?\s*:?")),
    ("examples", re.compile(r"(?:Examples?|Sample(?:\s+(?:Input|Output))?)(?:\s*\d+)?\s*:?")),
    ("notes", re.compile(r"Notes?\s*:?|Follow[- ]?up\b.*")),
)
"""Header lines (stripped, matched whole) and the block kind each starts."""
_QUOTES = re.compile(r"^[rR]?(\"\"\"|''')\n", re.MULTILINE)
LOOKED_FOR = {
    "io_spec": "no 'Input'/'Output' header before the examples",
    "constraints": "no 'Constraints' header",
    "examples": "no 'Example'/'Sample' header",
}


def statement_cuts(prompt: str) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """(kind, start offset) of each block in prompt order, and the kinds looked for and not
    found with why; ValueError when the prompt holds no statement docstring."""
    opener = _QUOTES.search(prompt)
    if opener is None:
        raise ValueError("the prompt holds no statement docstring (a line of opening quotes)")
    quote = opener.group(1)
    closing = prompt.find(f"\n{quote}\n", opener.end() - 1)
    if closing < 0:
        raise ValueError("the statement docstring is not closed on a line of its own")
    closing += 1  # the closing quotes' line starts after the newline
    cuts: list[tuple[str, int]] = [("prefix", 0), ("description", opener.end())]
    seen = {"description"}
    for line in re.finditer(r"^.*$", prompt[opener.end() : closing], re.MULTILINE):
        kind = header_kind(line.group(), HEADERS)
        if kind is None or kind in seen or (kind == "io_spec" and "examples" in seen):
            continue
        seen.add(kind)
        cuts.append((kind, opener.end() + line.start()))
    absent = {kind: why for kind, why in LOOKED_FOR.items() if kind not in seen}
    if cuts[2:] and cuts[2][1] == opener.end():
        absent["description"] = "the statement starts with a section header"
    after = prompt.index("\n", closing) + 1
    cuts.append(("suffix", closing))
    if prompt[after:].strip():
        cuts.append(("name", after))
    return cuts, absent
