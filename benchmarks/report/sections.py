"""A run directory's stored report sections: what a later stage (an analysis of a `boi run`
directory) adds to the run's report page. Each keeps its files under `RUN_DIR/analysis/NAME/`
(`analysis_dir`) and stores its section there (`write_section`: anchor, title, HTML built with
this package's primitives); every later report build of the directory shows them all
(`report_sections`), in name order.

It knows the directory layout only, nothing of the analyses, so the runner and the report
builders read the sections without importing the analyses that wrote them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.report import ReportSection

SECTION_FILE = "section.json"


def analysis_dir(run_dir: str | os.PathLike[str], name: str) -> Path:
    """Where analysis `name` keeps its files in a run directory (created)."""
    path = Path(run_dir) / "analysis" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_section(run_dir: str | os.PathLike[str], name: str, title: str, html: str) -> Path:
    """Store analysis `name`'s report section (shown by every later report build)."""
    anchor = "analysis-" + re.sub(r"[^a-z0-9-]+", "-", name.lower())
    path = analysis_dir(run_dir, name) / SECTION_FILE
    write_text_atomic(path, json.dumps({"anchor": anchor, "title": title, "html": html}) + "\n")
    return path


def report_sections(run_dir: str | os.PathLike[str]) -> list[ReportSection]:
    """The sections every analysis of `run_dir` has stored, in analysis-name order."""
    sections = []
    for path in sorted(Path(run_dir).glob(f"analysis/*/{SECTION_FILE}")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            sections.append(ReportSection(data["anchor"], data["title"], data["html"]))
        except (json.JSONDecodeError, KeyError, UnicodeDecodeError):
            raise UserError(f"{path} is damaged; rerun that analysis to rewrite it.") from None
    return sections
