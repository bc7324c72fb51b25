"""Python: judged by the Python-specific sandbox path (separated tests and candidate)."""

from __future__ import annotations

import keyword

from benchmarks.languages import Language

LANGUAGE = Language(
    name="python",
    display_name="Python",
    extension=".py",
    line_comment="#",
    block_comment=None,
    naming="snake_case",
    reserved_words=frozenset([*keyword.kwlist, *keyword.softkwlist]),
    function_definition=r"^[ \t]*(?:async[ \t]+)?def[ \t]+(?P<name>[A-Za-z_]\w*)",
)
