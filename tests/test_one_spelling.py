"""One spelling of "analyze" (issue 47): the command is `boi analyze`, so our own text and
identifiers spell the verb and its forms with a z. Third-party data (any `data/` folder) keeps
its own spelling."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The verb's British forms; "analyses" is left alone: it is also the plural of "analysis".
BRITISH = re.compile(r"\banaly(s(e|ed|er|ers|ing|able)\b)", re.IGNORECASE)
TEXT = {".py", ".md", ".yaml", ".yml", ".toml", ".cfg", ".sh", ".txt", ".j2", ".html", ".css"}
SKIP = {
    ".git",
    ".venv",
    "build",
    "node_modules",
    "__pycache__",
    "data",
    "site",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
}


def our_text_files() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.endswith(".egg-info")]
        found += [Path(folder, f) for f in files if Path(f).suffix in TEXT or f == "Makefile"]
    return found


def test_analyze_has_one_spelling() -> None:
    files = our_text_files()
    assert any(p.name == "architecture.md" for p in files)  # the walk reads our docs
    found = [
        f"{path.relative_to(ROOT)}:{number}: {match.group(0)}"
        for path in files
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        )
        for match in BRITISH.finditer(line)
        if path != Path(__file__).resolve()
    ]
    assert found == [], "spell it analyze (as `boi analyze`): " + "; ".join(found)
