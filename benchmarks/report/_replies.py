"""How a run's chat replies were read: counts per (dataset, model, setting), so a reader can tell
a model that cannot code from a reader that cannot read.

Rows carry `reply_status` and `reply_shape` where a chat reply was read for code
(`benchmarks.generation.replies`); completion-mode rows carry neither and are not counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchmarks.report._html import esc, html_table

# Column -> (title, what counts): the reply's status, or a note of its shape.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("replies", "replies"),
    ("extracted", "code found"),
    ("no_code", "no code"),
    ("truncated", "cut off"),
    ("helpers kept", "helpers kept"),
    ("constants kept", "constants kept"),
    ("several blocks", "several blocks"),
    ("several candidates", "a later version chosen"),
    ("body only", "body only"),
    ("another name", "function renamed"),
)


def reply_reading_counts(results: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (dataset, model, setting) that read chat replies, in first-seen order: how
    many replies, and how many had each status and shape note (COLUMNS)."""
    groups: dict[tuple[str, str, str], Counter[str]] = {}
    for row in results:
        status = row.get("reply_status")
        if not isinstance(status, str):
            continue
        key = (str(row.get("dataset", "")), str(row.get("model", "")), str(row.get("setting", "")))
        counts = groups.setdefault(key, Counter())
        counts["replies"] += 1
        counts[status] += 1
        shape = str(row.get("reply_shape", ""))
        for column, _ in COLUMNS[4:]:
            counts[column] += column in shape
    return [
        {"dataset": d, "model": m, "setting": s, **{c: counts[c] for c, _ in COLUMNS}}
        for (d, m, s), counts in groups.items()
    ]


def _header() -> list[str]:
    return ["dataset", "model", "setting", *(title for _, title in COLUMNS)]


def _cells(row: Mapping[str, Any]) -> list[str]:
    return [row["dataset"], row["model"], row["setting"], *(str(row[c]) for c, _ in COLUMNS)]


def reply_reading_markdown(counts: Sequence[Mapping[str, Any]]) -> str:
    """The counts as a Markdown section ('' without chat replies)."""
    if not counts:
        return ""
    lines = ["", "## How replies were read", ""]
    lines.append("| " + " | ".join(_header()) + " |")
    lines.append("|" + "---|" * len(_header()))
    lines += ["| " + " | ".join(_cells(row)) + " |" for row in counts]
    lines += ["", READING_NOTE, ""]
    return "\n".join(lines)


READING_NOTE = (
    "A reply without the function's code (no code) or cut off by the token limit (cut off) is "
    "judged failed without running anything; helpers, constants and imports the function uses "
    "are kept after it, examples, prints and tests are left out."
)


def reply_reading_html(counts: Sequence[Mapping[str, Any]]) -> str:
    """The counts as the report page's section ('' without chat replies)."""
    if not counts:
        return ""
    table = html_table(_header(), (_cells(row) for row in counts))
    return f"<h2>How replies were read</h2>{table}<p>{esc(READING_NOTE)}</p>"
