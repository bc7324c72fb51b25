"""`boi run`'s report: the tables and page of a run (or of merged shards), and its summary
line."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.problem import Problem
from benchmarks.report import ReportPaths, build_report
from benchmarks.report.sections import report_sections
from boi.runner.config import RunConfig
from perturb.transforms import transform_baselines, transform_labels

__all__ = ["build_run_report", "summary_line"]


def build_run_report(
    config: RunConfig,
    out: Path,
    results: list[dict[str, Any]],
    problems: Mapping[str, Problem],
    similarity: Mapping[str, float],
) -> ReportPaths:
    """The report of a run (or of merged shards): its settings' ks, bootstrap and seed."""
    return build_report(
        results,
        dict(problems),
        {s.label: list(s.ks) for s in config.settings},
        out / "report",
        critic=dict(similarity) or None,
        bootstrap=config.bootstrap,
        seed=config.perturb_seed,
        title=f"boi run {out.name}",
        labels=transform_labels(),
        baselines=transform_baselines(),
        sections=report_sections(out),
    )


def summary_line(
    out: Path,
    table_json: Path,
    results: Sequence[dict[str, Any]],
    generation: dict[str, int],
    verb: str = "generated",
) -> str:
    """One line: what ran, and the first column's Original vs worst transformation. `verb`:
    what the run's backends did to a sample (`sample_verb`: a file's are read)."""
    table = json.loads(table_json.read_text(encoding="utf-8"))
    parts = [
        f"{len(results)} samples executed",
        f"{generation['generated']} {verb} ({generation['cache_hits']} from cache)",
    ]
    if table["columns"]:
        column = table["columns"][0]
        values = {
            row["transform"]: row["cells"][0]
            for row in table["rows"]
            if row["cells"][0].get("pass_at_k") is not None
        }
        original = values.get("original", {}).get("pass_at_k")
        perturbed = {t: c for t, c in values.items() if t not in ("original", "name_only")}
        label = f"pass@{column['k']} {column['dataset']}/{column['model']}/{column['setting']}"
        if original is not None and perturbed:
            # Every transformation at the lowest value is named: picking the first of a tie
            # called one transformation the worst when all of them scored the same.
            lowest = min(c["pass_at_k"] for c in perturbed.values())
            tied = [t for t, c in perturbed.items() if c["pass_at_k"] == lowest]
            if len(tied) == len(perturbed) > 1:
                worst = f"every transformation {100 * lowest:.1f}"
            else:
                worst = f"worst {', '.join(tied)} {100 * lowest:.1f}"
            parts.append(f"{label}: original {100 * original:.1f}, {worst}")
    return f"boi run: {', '.join(parts)}; report: {out / 'report' / 'report.html'}"
