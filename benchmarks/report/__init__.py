"""Reports: the paper's Table 3 (Markdown, CSV, JSON) and a static HTML report with plots.

The page shell (`html_document`, `esc`, `figure_html`, `markdown_html`), a table readers sort and
filter without script (`filtered_tables`) and the drawing primitives (`bar_chart`, `heatmap`,
`line_chart`, `scatter_chart`) are public: every boi report (the social-bias one included) is
built from them, so all reports share one style and one Content-Security-Policy. So are the
severity ranking's column names (`column_name`, `column_names`), which `boi rank` prints.

Inputs are plain data, so the runner and other tools can call it: result rows (one per sample
after execution), the problem records they came from, and which pass@k to report per decoding
setting. `build_report` writes everything into a folder; `summarize_results` and
`format_table_markdown` give the numbers and the table without writing files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.execution import result_status
from benchmarks.problem import Problem
from benchmarks.report._data import (
    TransformNames,
    collect_runs,
    join_external_results,
)
from benchmarks.report._html import (
    esc,
    figure_html,
    filtered_tables,
    html_document,
    markdown_html,
    natural_key,
    render_html,
)
from benchmarks.report._plots import (
    PLOTS,
    Figure,
    PlotContext,
    bar_chart,
    heatmap,
    line_chart,
    plot,
    scatter_chart,
)
from benchmarks.report._replies import (
    reply_reading_counts,
    reply_reading_html,
    reply_reading_markdown,
)
from benchmarks.report._severity import (
    column_name,
    column_names,
    format_severity_markdown,
    severity_ranking,
)
from benchmarks.report._table import (
    format_name_only_csv,
    format_table_csv,
    format_table_markdown,
    jsonable,
    summarize_runs,
)

__all__ = [
    "PLOTS",
    "Figure",
    "PlotContext",
    "TransformNames",
    "plot",
    "bar_chart",
    "esc",
    "figure_html",
    "filtered_tables",
    "heatmap",
    "html_document",
    "markdown_html",
    "natural_key",
    "line_chart",
    "scatter_chart",
    "ReportPaths",
    "build_report",
    "column_name",
    "column_names",
    "format_severity_markdown",
    "format_table_markdown",
    "join_external_results",
    "read_results",
    "reply_reading_counts",
    "results_files",
    "severity_ranking",
    "summarize_results",
]


@dataclass(frozen=True)
class ReportPaths:
    """The files `build_report` wrote."""

    out_dir: Path
    table_md: Path
    table_csv: Path
    table_json: Path
    html: Path
    name_only_csv: Path | None
    """Per-problem name-only results; None when the results hold no name-only rows."""


def summarize_results(
    results: Iterable[Mapping[str, Any]],
    problems: Mapping[str, Problem],
    ks_by_setting: Mapping[str, Sequence[int]],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    labels: Mapping[str, str] | None = None,
    baselines: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The table's numbers (JSON-ready: NaN as None) without writing anything.

    `labels` names the transformations' rows, in order (`perturb.transform_labels()`); without
    it rows carry the catalogue names. `baselines` (`perturb.transform_baselines()`) names the
    transformations measured against another than the original.

    Keys: `columns` (dataset, model, setting, k), `rows` (transform, label, one cell per column:
    problems, pass_at_k, ci_low/ci_high, original_same_problems, relative_drop,
    drop_ci_low/drop_ci_high, robust_pass_at_k; None where the transformation has no data),
    `flips`, `name_only`, `bootstrap`, `ks_by_setting`. Values are fractions (0-1).
    """
    runs = collect_runs(results, problems, TransformNames(labels or {}, baselines or {}))
    table = summarize_runs(
        runs, ks_by_setting, bootstrap=bootstrap, seed=seed, confidence=confidence
    )
    json_table: dict[str, Any] = jsonable(table)
    return json_table


@dataclass(frozen=True)
class ReportSection:
    """A section added to a report page by a later stage (`boi analyze`): its anchor, its
    navigation title and its HTML, built with this package's primitives (every text escaped)."""

    anchor: str
    title: str
    html: str


def build_report(
    results: Iterable[Mapping[str, Any]],
    problems: Mapping[str, Problem],
    ks_by_setting: Mapping[str, Sequence[int]],
    out_dir: str | os.PathLike[str],
    critic: Mapping[str, float] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    *,
    confidence: float = 0.95,
    completions_per_variant: int = 3,
    title: str = "boi report",
    labels: Mapping[str, str] | None = None,
    baselines: Mapping[str, str] | None = None,
    notes: Sequence[str] = (),
    sections: Sequence[ReportSection] = (),
) -> ReportPaths:
    """Write table.md, table.csv, table.json, name_only.csv (if any) and report.html to `out_dir`.

    Each file is written atomically; report.html goes last, so its presence means the rest is
    there. `critic` maps variant task ids to their critic similarity in percent (see
    `critic.similarity.read_similarities`); `labels` names and orders the transformations' rows
    (`perturb.transform_labels()`, the paper's Table 3 names); `baselines`
    (`perturb.transform_baselines()`) names those measured against another than the original; `notes` (what the input lacked
    and what was assumed, e.g. from `join_external_results`) head table.md and the HTML page;
    `sections` (the analyses of a run directory) follow the HTML page's own sections.
    matplotlib is imported only when plots are drawn (Agg backend).
    """
    if completions_per_variant < 0:
        raise UserError(
            f"completions_per_variant {completions_per_variant} is negative; use 0 to hide completions."
        )
    results = list(results)
    notes = [*notes, *judging_notes(results, problems)]
    runs = collect_runs(results, problems, TransformNames(labels or {}, baselines or {}))
    table = jsonable(
        summarize_runs(runs, ks_by_setting, bootstrap=bootstrap, seed=seed, confidence=confidence)
    )
    out = Path(out_dir)
    paths = ReportPaths(
        out_dir=out,
        table_md=out / "table.md",
        table_csv=out / "table.csv",
        table_json=out / "table.json",
        html=out / "report.html",
        name_only_csv=(out / "name_only.csv") if table["name_only"] else None,
    )
    ranking = severity_ranking([table])
    readings = reply_reading_counts(results)
    if readings:
        table["reply_reading"] = readings
    document = render_html(
        table,
        runs,
        problems,
        critic=critic,
        completions_per_variant=completions_per_variant,
        title=title,
        notes=notes,
        extra_sections=[
            *([("replies", "Replies", reply_reading_html(readings))] if readings else []),
            *((s.anchor, s.title, s.html) for s in sections),
        ],
        severity=ranking if len(ranking) > 1 else None,
    )
    noted = "".join(f"> Note: {n}\n" for n in notes) + ("\n" if notes else "")
    severity = (
        "\n## Severity ranking\n\n" + format_severity_markdown(ranking) if len(ranking) > 1 else ""
    )
    replies = reply_reading_markdown(readings)
    write_text_atomic(paths.table_md, noted + format_table_markdown(table) + severity + replies)
    write_text_atomic(paths.table_csv, format_table_csv(table))
    write_text_atomic(
        paths.table_json, json.dumps(table, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    )
    if paths.name_only_csv is not None:
        write_text_atomic(paths.name_only_csv, format_name_only_csv(table))
    write_text_atomic(paths.html, document)
    for path in (
        paths.table_md,
        paths.table_csv,
        paths.table_json,
        paths.name_only_csv,
        paths.html,
    ):
        if path is not None:
            # Temporary files are created private; a report is meant to be shared.
            path.chmod(0o644)
    return paths


def judging_notes(
    results: Sequence[Mapping[str, Any]], problems: Mapping[str, Problem]
) -> list[str]:
    """What a reader must know about how outputs were judged: problems that accept several
    answers were compared with one expected output, so their failures may be correct programs."""
    failed: dict[str, int] = {}
    for row in results:
        problem = problems.get(row.get("task_id", ""))
        if problem is not None and problem.is_stdio and problem.output_judge.several_answers:
            failed.setdefault(problem.source_task_id, 0)
            failed[problem.source_task_id] += not row.get("passed")
    if not failed:
        return []
    listed = ", ".join(f"{task} ({n} failed)" for task, n in sorted(failed.items()))
    return [
        f"{len(failed)} problem(s) accept several correct outputs and have no special judge "
        f"here, so they were compared with the expected output only; a failure on them may be "
        f"a correct program: {listed}."
    ]


def results_files(run_dir: str | os.PathLike[str]) -> list[Path]:
    """The executed-sample files of a run directory: results/<model label>/<setting label>.jsonl
    (files only: a model's folder may end in .jsonl too, as `completions-FILE.jsonl` does)."""
    return sorted(p for p in Path(run_dir, "results").rglob("*.jsonl") if p.is_file())


def read_results(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Result rows from a results JSONL file, or from every results file of a run directory
    (`results_files`; a directory holding one results.jsonl instead reads that).

    Each row needs task_id, completion and passed (what `boi execute` writes for any harness's
    samples), and is given its `status`; the other fields a report needs come from the run or, for other harnesses, from
    `join_external_results`."""
    if Path(path).is_dir():
        files = results_files(path)
        if not files and Path(path, "results.jsonl").is_file():
            files = [Path(path, "results.jsonl")]
        if not files:
            raise UserError(
                f"{path} has no results yet (results/<model>/<setting>.jsonl); let its run "
                "finish first, or pass a results JSONL file."
            )
        return [row for file in files for row in read_results(file)]
    rows = []
    for lineno, obj in iter_jsonl(path):
        require_fields(
            path,
            lineno,
            obj,
            ("task_id", "completion", "passed"),
            what="result",
            needs="run the samples through boi execute first (it adds passed)",
        )
        # Every row read carries its status as data; rows of files written before the field
        # get it from the one legacy reading (result_status), and a bad value is one sentence.
        obj["status"] = result_status(obj).value
        rows.append(obj)
    if not rows:
        raise UserError(f"{path} is empty; expected one result row per line.")
    return rows
