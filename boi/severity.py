"""`boi rank`: which perturbation hurts most, across one or more `boi run` directories (models).

The numbers are the runs' own report tables (`report/table.json`), ranked by
`benchmarks.report.severity_ranking`; this module adds what only the catalogue knows (each
transformation's family and ReCode name), the plot, and the files.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_bytes_atomic, write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.report import (
    bar_chart,
    column_name,
    column_names,
    esc,
    figure_html,
    format_severity_markdown,
    html_document,
    markdown_html,
    severity_ranking,
)
from boi.run_reader import open_run
from perturb.transforms import TRANSFORMS


@dataclass(frozen=True)
class Ranking:
    """The ranking and the files it was written to (None: not written)."""

    entries: list[dict[str, Any]]
    markdown: str
    out_dir: Path | None


def _table(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    run = open_run(run_dir)  # a shard is refused there
    if run.manifest.get("completed") is False:
        # An unfinished run's table (or one left from before a resume) is not its numbers.
        raise UserError(
            f"{run.path} is an unfinished run (its manifest says completed: false); rerun the "
            "same `boi run` command to finish it, then rank it."
        )
    return run.report_table()


def _catalogue_columns(entries: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Family and ReCode name of each ranked transformation, from the registry."""
    families, recode = [], []
    for entry in entries:
        factory = TRANSFORMS.get(entry["transform"])
        families.append((factory.family or "") if factory else "not registered")
        recode.append((factory.recode_name or "") if factory else "")
    return {"family": families, "ReCode name": recode}


def rank_runs(
    run_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str] | None = None
) -> Ranking:
    """Every transformation of `run_dirs` ranked by its effect, most harmful first; with `out`,
    written there as severity.md, severity.json, severity.png and severity.html."""
    if not run_dirs:
        raise UserError("give at least one boi run directory to rank.")
    tables = [_table(d) for d in run_dirs]
    names = [Path(d).name for d in run_dirs]
    # Two runs' columns stay apart by the run's folder name (the same model may run twice).
    entries = severity_ranking(tables, names if len(run_dirs) > 1 else None)
    extra = _catalogue_columns(entries)
    for entry, family, recode in zip(entries, extra["family"], extra["ReCode name"], strict=True):
        entry["family"], entry["recode_name"] = family or None, recode or None
    markdown = format_severity_markdown(entries, extra)
    if out is None:
        return Ranking(entries, markdown, None)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    record = {"runs": [str(Path(d)) for d in run_dirs], "ranking": entries}
    write_text_atomic(out_dir / "severity.json", json.dumps(record, indent=1) + "\n")
    write_text_atomic(out_dir / "severity.md", markdown)
    image = severity_plot(entries)
    body = f"<h2>Severity ranking</h2>{markdown_html(markdown)}"
    if image is not None:
        write_bytes_atomic(out_dir / "severity.png", base64.b64decode(image))
        caption = "Relative drop of pass@k per transformation, most harmful first, with intervals."
        body += figure_html(image, caption)
    runs = ", ".join(esc(str(d)) for d in run_dirs)
    write_text_atomic(
        out_dir / "severity.html",
        html_document("boi rank", f"runs: {runs}", [], [body]),
    )
    return Ranking(entries, markdown, out_dir)


def severity_plot(entries: Sequence[dict[str, Any]]) -> str | None:
    """Grouped bars (base64 PNG): each transformation's change of pass@k per column, in percent
    and signed as in the report table (a drop is negative), with its paired bootstrap interval;
    None when no drop is defined."""
    names = column_names(entries)
    if not names or all(e["mean_relative_drop"] is None for e in entries):
        return None
    series = []
    for name in names:
        values: list[float | None] = []
        intervals: list[tuple[float | None, float | None]] = []
        for entry in entries:
            column = next((c for c in entry["columns"] if column_name(c) == name), None)
            scale = (lambda v: None if v is None else -100 * v) if column else (lambda v: None)
            values.append(scale(column["relative_drop"]) if column else None)
            intervals.append(
                (scale(column["drop_ci_high"]), scale(column["drop_ci_low"]))
                if column
                else (None, None)
            )
        series.append((name, values, intervals))
    labels = [e["label"] for e in entries]
    return bar_chart(labels, series, "change of pass@k vs baseline (%)", "Severity ranking")
