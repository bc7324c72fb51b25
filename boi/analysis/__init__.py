"""Analyses of an existing `boi run` directory: why a model failed, and which hints it used
(`boi analyze ACTION RUN_DIR ...`). Each reads what the run wrote (problems.jsonl, results,
generations cache), so nothing is generated twice, and writes under `RUN_DIR/analysis/NAME/`:
its data (JSON/CSV), and one report section (`section.json`) that the run's report.html shows
(`report_sections`), rebuilt at the end of the analysis (`boi.reporting.rebuild_run_report`).

An analysis is one module with `add_arguments(parser)`, `run(args) -> int` and a module
docstring (the command's description), plus one line in `ANALYSES`. Modules import heavy libraries (torch,
transformers, datasketch) inside functions, so `boi --help` stays fast.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.common.rundir import RunDir
from benchmarks.report import ReportSection

# name -> (module, one-line help), as `boi.cli.COMMANDS`.
ANALYSES: dict[str, tuple[str, str]] = {
    "attention": (
        "boi.analysis.attention",
        "attention mass per Block of Influence for each generated token (HF models)",
    ),
    "hints": (
        "boi.analysis.hints",
        "per-problem hint audit across models: which block each problem depends on",
    ),
    "minimal": (
        "boi.analysis.minimal",
        "smallest critic-approved perturbation that flips a solved problem",
    ),
    "copies": (
        "boi.analysis.copies",
        "near-duplicate search of completions in a training corpus (MinHash LSH)",
    ),
    "leaks": (
        "boi.analysis.leaks",
        "hidden tests the prompt's examples show, per problem (a dataset or a run); memoriser "
        "pass share; Drop Ex effect against it",
    ),
}
SECTION_FILE = "section.json"


def analysis_dir(run_dir: str | os.PathLike[str], name: str) -> Path:
    """Where analysis `name` keeps its files in a run directory (created)."""
    path = Path(run_dir) / "analysis" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def refuse_shard(path: str | os.PathLike[str], manifest: Mapping[str, Any]) -> None:
    """One sentence when `manifest` is a shard's (`boi run --shard I/N`): its problems.jsonl is
    the whole run's but its results are a part, so a report, a ranking or an analysis of it
    would pass for the whole run's numbers."""
    shard = manifest.get("shard")
    if shard:
        raise UserError(
            f"{path} is shard {shard} of a run, not a whole run; join every shard with "
            f"`boi merge OUT SHARD_DIR ...` and pass OUT instead."
        )


def open_run(run_dir: str | os.PathLike[str]) -> RunDir:
    """A finished-or-not `boi run` directory this version can read, else one sentence saying
    what is wrong (not a run, another command's, a newer boi's, a shard of one)."""
    run = RunDir.open(run_dir, what="boi run", hint="pass the --out of a `boi run`")
    refuse_shard(run.path, run.manifest)
    if not (run.path / "problems.jsonl").is_file():
        raise UserError(
            f"{run.path} was written by an incompatible boi version (no problems.jsonl); rerun "
            "`boi run` into a new directory."
        )
    return run


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
