"""Which perturbation hurts most: every transformation of one or more reports ranked by its effect.

ReCode's users ask it (amazon-science/recode issue 8) and no peer answers it. The ranking reads
summarized tables (`summarize_runs`, `table.json`), so it ranks one run, or several runs (models)
side by side, without recomputing anything:

- per column (dataset, model, setting, at that setting's smallest k): the relative drop against
  the transformation's baseline with its paired bootstrap interval, ReCode's robust drop@k, and
  the flips (problems lost and gained);
- across columns: the mean relative drop, which orders the ranking (most harmful first; ties by
  mean robust drop, then name, and marked `tied`). Each column keeps its own interval: problems
  differ between datasets, so there is no paired interval of the mean across them.

Shown (Markdown, HTML), the ranking uses the report table's sign: the change of pass@k against
the baseline (`format_change`: -20.0% is a drop), most negative first, and a rank shared by a
tie reads `2=`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.report._data import NAME_ONLY, ORIGINAL
from benchmarks.report._table import format_change, format_percent
from benchmarks.stats import mean


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _first_k_columns(table: Mapping[str, Any]) -> list[int]:
    """Indices of each (dataset, model, setting)'s smallest-k column."""
    first: dict[tuple[str, str, str], int] = {}
    for index, column in enumerate(table["columns"]):
        key = (column["dataset"], column["model"], column["setting"])
        if key not in first or column["k"] < table["columns"][first[key]]["k"]:
            first[key] = index
    return sorted(first.values())


def severity_ranking(
    tables: Sequence[Mapping[str, Any]], runs: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Every transformation of `tables` (summarized report tables), most harmful first.
    `runs` names each table's run (its columns then say which run they come from, so two runs
    of the same model and setting stay apart).

    Each entry: `rank`, `tied` (its mean relative drop, to the 0.1% shown, equals another
    entry's: the order between them is decided by robust drop, then name), `transform`,
    `label`, `mean_relative_drop` (fraction, a drop positive; None where no column has one),
    `mean_robust_drop_at_k`, `lost`, `gained` (flips summed over columns) and
    `columns` (dataset, model, setting, k, relative_drop, drop_ci_low, drop_ci_high,
    robust_drop_at_k, problems, lost, gained, and `run` when `runs` is given)."""
    if runs is not None and len(runs) != len(tables):
        raise ValueError(f"{len(runs)} run names for {len(tables)} tables")
    entries: dict[str, dict[str, Any]] = {}
    for position, table in enumerate(tables):
        run = {"run": runs[position]} if runs is not None else {}
        flips = {(f["dataset"], f["model"], f["setting"]): f["transforms"] for f in table["flips"]}
        indices = _first_k_columns(table)
        for row in table["rows"]:
            name = row["transform"]
            if name in (ORIGINAL, NAME_ONLY):
                continue
            entry = entries.setdefault(name, {"transform": name, "label": row["label"]})
            for index in indices:
                cell, column = row["cells"][index], table["columns"][index]
                if cell is None:
                    continue
                flip = flips.get((column["dataset"], column["model"], column["setting"]), {})
                table_flips = flip.get(name, {"lost": [], "gained": []})
                entry.setdefault("columns", []).append(
                    {
                        **run,
                        **{key: column[key] for key in ("dataset", "model", "setting", "k")},
                        "problems": cell["problems"],
                        "relative_drop": _number(cell["relative_drop"]),
                        "drop_ci_low": _number(cell["drop_ci_low"]),
                        "drop_ci_high": _number(cell["drop_ci_high"]),
                        "robust_drop_at_k": _number(cell["robust_drop_at_k"]),
                        "lost": len(table_flips["lost"]),
                        "gained": len(table_flips["gained"]),
                    }
                )
    ranking = []
    for entry in entries.values():
        columns = entry.setdefault("columns", [])
        drops = [c["relative_drop"] for c in columns if c["relative_drop"] is not None]
        robust = [c["robust_drop_at_k"] for c in columns if c["robust_drop_at_k"] is not None]
        entry["mean_relative_drop"] = mean(drops) if drops else None
        entry["mean_robust_drop_at_k"] = mean(robust) if robust else None
        entry["lost"] = sum(c["lost"] for c in columns)
        entry["gained"] = sum(c["gained"] for c in columns)
        ranking.append(entry)

    def order(entry: dict[str, Any]) -> tuple[bool, float, float, str]:
        drop, robust = entry["mean_relative_drop"], entry["mean_robust_drop_at_k"]
        return (drop is None, -(drop or 0.0), -(robust or 0.0), entry["transform"])

    ranking.sort(key=order)
    shown = [_mean_change_text(e["mean_relative_drop"]) for e in ranking]
    return [
        {"rank": rank, "tied": shown.count(shown[rank - 1]) > 1, **entry}
        for rank, entry in enumerate(ranking, 1)
    ]


def _mean_change_text(drop: float | None) -> str:
    """A mean relative drop as the table's signed change (a drop of 0.2 is -20.0%)."""
    return "–" if drop is None else f"{-100 * drop + 0.0:+.1f}%"  # + 0.0: no "-0.0%"


def _rank_text(ranking: Sequence[Mapping[str, Any]], index: int) -> str:
    """`3`, or `2=` for each entry of a tie (the rank of the tie's first entry)."""
    entry = ranking[index]
    if not entry.get("tied"):
        return str(entry["rank"])
    mean = _mean_change_text(entry["mean_relative_drop"])
    first = next(e for e in ranking if _mean_change_text(e["mean_relative_drop"]) == mean)
    return f"{first['rank']}="


def column_names(ranking: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ranking's columns, `dataset / model / setting pass@k`, in first-seen order."""
    names: dict[str, None] = {}
    for entry in ranking:
        for column in entry["columns"]:
            names[column_name(column)] = None
    return list(names)


def column_name(column: Mapping[str, Any]) -> str:
    """`[run: ]dataset / model / setting pass@k`."""
    run = f"{column['run']}: " if column.get("run") else ""
    return f"{run}{column['dataset']} / {column['model']} / {column['setting']} pass@{column['k']}"


def severity_rows(
    ranking: Sequence[Mapping[str, Any]], extra: Mapping[str, Sequence[str]] | None = None
) -> tuple[list[str], list[list[str]]]:
    """Header and text rows of the ranking table; `extra` adds columns after the name
    (header -> one value per entry, e.g. the family)."""
    names = column_names(ranking)
    extra = extra or {}
    header = ["rank", "transformation", *extra, "mean change", *names]
    header += ["robust drop@k", "lost", "gained"]
    rows = []
    for index, entry in enumerate(ranking):
        by_name = {column_name(c): c for c in entry["columns"]}
        robust = entry["mean_robust_drop_at_k"]
        rows.append(
            [
                _rank_text(ranking, index),
                entry["label"],
                *(values[index] for values in extra.values()),
                _mean_change_text(entry["mean_relative_drop"]),
                *(format_change(by_name[n]) if n in by_name else "" for n in names),
                "–" if robust is None else format_percent(robust),
                str(entry["lost"]),
                str(entry["gained"]),
            ]
        )
    return header, rows


SEVERITY_NOTE = (
    "Most harmful first: by the mean over columns of the change of pass@k (each setting's "
    "smallest k) against the transformation's baseline (the original, or the partial code for "
    "ReCode's partial-code families), as in the table, most negative first; each column's "
    "change with its paired bootstrap interval. A rank written 2= is a tie on the mean change "
    "(ordered by robust drop, then name). "
    "Robust drop@k: ReCode's worst case over a problem's variants (seeds), averaged over columns. "
    "Lost / gained: problems solved on the baseline and not under the transformation, and back."
)


def format_severity_markdown(
    ranking: Sequence[Mapping[str, Any]], extra: Mapping[str, Sequence[str]] | None = None
) -> str:
    """The ranking as a Markdown table with its note."""
    header, rows = severity_rows(ranking, extra)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n\n" + SEVERITY_NOTE + "\n"
