"""The paper's Table 3 from runs: pass@k per transformation, relative drops, CIs, flips.

The statistics come from `benchmarks.passk` and `benchmarks.robustness`; this module only
decides which numbers go in which cell and formats them. A transformation's pass@k is the mean
over the problems where it applies of the per-problem mean over its variants; its relative drop
is measured against Original on those same problems (paired), with a paired bootstrap CI.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from benchmarks.common.errors import UserError
from benchmarks.passk import pass_at_k, pass_at_k_by_task
from benchmarks.report._data import NAME_ONLY, ORIGINAL, Run, TransformNames
from benchmarks.robustness import (
    flip_table,
    paired_bootstrap_drop,
    robust_drop_at_k,
    robust_pass_at_k,
    robust_relative_at_k,
    transform_pass_at_k,
)
from benchmarks.stats import bootstrap_mean_interval, is_defined, mean

CELL_FIELDS = (
    "problems",
    "pass_at_k",
    "ci_low",
    "ci_high",
    "original_same_problems",
    "relative_drop",
    "drop_ci_low",
    "drop_ci_high",
    "robust_pass_at_k",
    "robust_drop_at_k",
    "robust_relative_at_k",
)


class _Row(TypedDict):
    """One row of the summary table: a transformation and its cell per column (None: no data)."""

    transform: str
    label: str
    cells: list[dict[str, Any] | None]


def _check_ks(runs: Sequence[Run], ks_by_setting: Mapping[str, Sequence[int]]) -> None:
    for run in runs:
        if run.setting not in ks_by_setting:
            raise UserError(
                f"the results have setting {run.setting!r} but no k is configured for it; "
                f"add it to ks_by_setting (known: {sorted(ks_by_setting)})."
            )
        original = run.original()
        if not original:
            raise UserError(
                f"{run.dataset} / {run.model} / {run.setting} has no samples on the original problems; "
                "drops are measured against Original, so generate those too."
            )
        for name, baseline in run.missing_baselines():
            raise UserError(
                f"{run.dataset} / {run.model} / {run.setting}: {name} is measured against "
                f"{baseline}, which the results lack; add {baseline} to the transformations."
            )
        most = max(len(v) for v in original.values())
        if not ks_by_setting[run.setting]:
            raise UserError(
                f"no k is configured for setting {run.setting!r}; give at least one (e.g. [1])."
            )
        for k in ks_by_setting[run.setting]:
            if not isinstance(k, int) or isinstance(k, bool) or k < 1:
                raise UserError(f"k={k!r} for setting {run.setting!r} is not a positive integer.")
            if k > most:
                raise UserError(
                    f"pass@{k} for setting {run.setting!r} needs at least {k} samples per problem, but "
                    f"{run.dataset} / {run.model} has at most {most}; lower k or generate more samples."
                )


def _original_cell(
    original: Mapping[str, Sequence[bool]], k: int, resamples: int, confidence: float, seed: int
) -> dict[str, Any]:
    values = [
        row[f"pass@{k}"] for row in pass_at_k_by_task(original, [k]).values() if f"pass@{k}" in row
    ]
    low, high = bootstrap_mean_interval(values, resamples, confidence, seed)
    return {
        "problems": len(values),
        "pass_at_k": mean(values),
        "ci_low": low,
        "ci_high": high,
        "original_same_problems": mean(values),
        "relative_drop": None,
        "drop_ci_low": None,
        "drop_ci_high": None,
        "robust_pass_at_k": None,
        "robust_drop_at_k": None,
        "robust_relative_at_k": None,
    }


def _transform_cell(
    original: Mapping[str, Sequence[bool]],
    variants: Mapping[str, Mapping[str, Sequence[bool]]],
    k: int,
    resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any] | None:
    summary = transform_pass_at_k(original, variants, k)
    if not summary["problems"]:
        return None
    # The same problems transform_pass_at_k counted: n >= k on the original and every variant.
    per_problem = [
        mean([pass_at_k(len(v), sum(v), k) for v in variants[t].values()])
        for t in sorted(set(original) & set(variants))
        if len(original[t]) >= k and all(len(v) >= k for v in variants[t].values())
    ]
    assert len(per_problem) == summary["problems"]
    low, high = bootstrap_mean_interval(per_problem, resamples, confidence, seed)
    drop = paired_bootstrap_drop(
        original, variants, k, resamples=resamples, confidence=confidence, seed=seed
    )
    # ReCode's per-sample worst case pairs sample i across variants: only where all have n samples.
    same_n = all(
        len(v) == len(original[t])
        for t in set(original) & set(variants)
        for v in variants[t].values()
    )
    return {
        "problems": summary["problems"],
        "pass_at_k": summary["perturbed"],
        "ci_low": low,
        "ci_high": high,
        "original_same_problems": summary["original"],
        "relative_drop": summary["relative_drop"],
        "drop_ci_low": drop["low"],
        "drop_ci_high": drop["high"],
        "robust_pass_at_k": robust_pass_at_k(original, variants, k) if same_n else None,
        "robust_drop_at_k": robust_drop_at_k(original, variants, k) if same_n else None,
        "robust_relative_at_k": robust_relative_at_k(original, variants, k) if same_n else None,
    }


def _name_only(run: Run) -> dict[str, Any] | None:
    variants = run.variants(NAME_ONLY)
    if not variants:
        return None
    original = run.original()
    problems = []
    for source in sorted(variants):
        outcomes = list(variants[source].values())
        n = sum(len(v) for v in outcomes)
        c = sum(sum(v) for v in outcomes)
        problems.append(
            {
                "source_task_id": source,
                "n": n,
                "c": c,
                "pass_at_1": mean([pass_at_k(len(v), sum(v), 1) for v in outcomes if v]),
                "original_pass_at_1": (
                    pass_at_k(len(original[source]), sum(original[source]), 1)
                    if original.get(source)
                    else None
                ),
                "solvable": c > 0,
            }
        )
    return {
        "dataset": run.dataset,
        "model": run.model,
        "setting": run.setting,
        "solvable": sum(p["solvable"] for p in problems),
        "problems": problems,
    }


def _row_label(naming: TransformNames, name: str) -> str:
    """The row's name, saying what it is measured against where that is not the original."""
    baseline = naming.baseline(name)
    suffix = f" (vs {naming.label(baseline)})" if baseline != ORIGINAL else ""
    return naming.label(name) + suffix


def summarize_runs(
    runs: Sequence[Run],
    ks_by_setting: Mapping[str, Sequence[int]],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The report's numbers as one JSON-ready dict (NaN where undefined; see `jsonable`)."""
    if bootstrap < 0:
        raise UserError(
            f"bootstrap resamples {bootstrap} is negative; use 0 for none or e.g. 1000."
        )
    if not 0 < confidence < 1:
        raise UserError(f"confidence {confidence} is outside (0, 1); use e.g. 0.95.")
    _check_ks(runs, ks_by_setting)
    columns = [
        {"dataset": run.dataset, "model": run.model, "setting": run.setting, "k": k}
        for run in runs
        for k in sorted(set(ks_by_setting[run.setting]))
    ]
    naming = runs[0].names if runs else TransformNames()
    names = naming.order({t for run in runs for t in run.transforms()})
    rows: list[_Row] = [{"transform": ORIGINAL, "label": naming.label(ORIGINAL), "cells": []}]
    rows += [{"transform": t, "label": _row_label(naming, t), "cells": []} for t in names]
    flips = []
    for run in runs:
        original = run.original()
        variants = {t: run.variants(t) for t in run.transforms()}
        baselines = {t: run.baseline(t) for t in run.transforms()}
        for k in sorted(set(ks_by_setting[run.setting])):
            for row in rows:
                cell: dict[str, Any] | None
                name = row["transform"]
                if name == ORIGINAL:
                    cell = _original_cell(original, k, bootstrap, confidence, seed)
                elif name in variants:
                    cell = _transform_cell(
                        baselines[name], variants[name], k, bootstrap, confidence, seed
                    )
                else:
                    cell = None
                row["cells"].append(cell)
        flips.append(
            {
                "dataset": run.dataset,
                "model": run.model,
                "setting": run.setting,
                "transforms": {t: flip_table(baselines[t], v) for t, v in variants.items()},
            }
        )
    name_only = [entry for run in runs if (entry := _name_only(run)) is not None]
    return {
        "bootstrap": {"resamples": bootstrap, "seed": seed, "confidence": confidence},
        "ks_by_setting": {s: sorted(set(ks)) for s, ks in ks_by_setting.items()},
        "columns": columns,
        "rows": rows,
        "flips": flips,
        "name_only": name_only,
    }


def jsonable(value: Any) -> Any:
    """The table with NaN as null (JSON has no NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, Mapping):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def _points(value: float) -> float:
    """100 * value, rounded for display without a '-0.0'."""
    return round(100 * value, 1) + 0.0


def format_percent(value: float | None) -> str:
    """A fraction as a percentage with one decimal ('n/a' when undefined)."""
    # is_defined() is False for None; the `is not None` test lets mypy see that too.
    return f"{_points(value):.1f}" if value is not None and is_defined(value) else "n/a"


def format_change(cell: Mapping[str, Any]) -> str:
    """'-20.4% [-28.1, -12.0]': change vs Original on the same problems, with its CI."""
    drop = cell.get("relative_drop")
    if drop is None or not is_defined(drop):  # is_defined(None) is False; narrowed for mypy
        return "n/a"
    text = f"{_points(-drop):+.1f}%"
    low, high = cell.get("drop_ci_low"), cell.get("drop_ci_high")
    if low is not None and high is not None and is_defined(low) and is_defined(high):
        text += f" [{_points(-high):+.1f}, {_points(-low):+.1f}]"
    return text


def format_cell(cell: Mapping[str, Any] | None, transform: str) -> str:
    """One table cell: pass@k in percent, then the change vs Original for transformations."""
    if cell is None:
        return "-"
    value = format_percent(cell["pass_at_k"])
    return value if transform == ORIGINAL else f"{value} ({format_change(cell)})"


def column_title(column: Mapping[str, Any]) -> str:
    return f"pass@{column['k']} ({column['setting']})"


def column_groups(table: Mapping[str, Any]) -> list[tuple[tuple[str, str], list[int]]]:
    """(dataset, model) -> indices of its columns, in first-appearance order."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, column in enumerate(table["columns"]):
        groups.setdefault((column["dataset"], column["model"]), []).append(index)
    return list(groups.items())


def problems_counted(row: Mapping[str, Any], indices: Sequence[int]) -> str:
    """Problems a row counts in these columns ('164', or '164 / 160' where k or setting differ)."""
    counts = [row["cells"][i]["problems"] for i in indices if row["cells"][i] is not None]
    distinct = list(dict.fromkeys(counts))
    return " / ".join(str(c) for c in distinct) if distinct else "0"


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


ROBUST_NOTE = (
    "ReCode's worst case over a problem's variants, in percent: robust pass@k (sample i counts "
    "only if it passes on every variant), robust drop@k (how much lower than pass@k on the same "
    "problems) and robust relative@k (how often a sample's verdict changes under some variant, "
    "either way, so up to 200). n/a where samples per variant differ."
)


def robust_rows(table: Mapping[str, Any], indices: Sequence[int]) -> list[tuple[str, list[str]]]:
    """(row label, one 'RP / RD / RR' cell per column) for every transformation with data."""
    out = []
    for row in table["rows"]:
        if row["transform"] == ORIGINAL or all(row["cells"][i] is None for i in indices):
            continue
        cells = []
        for i in indices:
            cell = row["cells"][i]
            cells.append(
                " / ".join(
                    format_percent(cell.get(name)) if cell else "-"
                    for name in ("robust_pass_at_k", "robust_drop_at_k", "robust_relative_at_k")
                )
            )
        out.append((row["label"], cells))
    return out


def robust_table_markdown(table: Mapping[str, Any], indices: Sequence[int]) -> list[str]:
    rows = robust_rows(table, indices)
    if not rows:
        return []
    header = ["Method"] + [
        f"{column_title(table['columns'][i])}: robust pass / drop / relative" for i in indices
    ]
    lines = ["| " + " | ".join(_md_escape(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += [f"| {_md_escape(label)} | " + " | ".join(cells) + " |" for label, cells in rows]
    return [*lines, "", ROBUST_NOTE, ""]


def format_table_markdown(table: Mapping[str, Any]) -> str:
    """The paper-style table(s), one per (dataset, model), and the name-only probe, as Markdown."""
    boot = table["bootstrap"]
    lines = []
    for (dataset, model), indices in column_groups(table):
        lines += [f"### {_md_escape(dataset)} / {_md_escape(model)}", ""]
        header = ["Method"] + [column_title(table["columns"][i]) for i in indices] + ["problems"]
        lines.append("| " + " | ".join(_md_escape(h) for h in header) + " |")
        lines.append("|" + "---|" * len(header))
        for row in table["rows"]:
            if all(row["cells"][i] is None for i in indices):
                continue
            cells = [format_cell(row["cells"][i], row["transform"]) for i in indices]
            lines.append(
                f"| {_md_escape(row['label'])} | "
                + " | ".join(cells)
                + f" | {problems_counted(row, indices)} |"
            )
        lines.append("")
        lines += robust_table_markdown(table, indices)
    lines.append(
        "pass@k in percent (unbiased estimator); a transformation's value is the mean over the "
        "problems where it applies of the mean over its variants. In parentheses: the change "
        f"relative to Original on the same problems, with its {100 * boot['confidence']:g}% paired "
        f"bootstrap interval ({boot['resamples']} resamples, seed {boot['seed']})."
    )
    for entry in table["name_only"]:
        total = len(entry["problems"])
        lines += [
            "",
            f"### Name-only probe: {_md_escape(entry['dataset'])} / {_md_escape(entry['model'])} / {_md_escape(entry['setting'])}",
            "",
            f"Solvable from the name alone (at least one passing sample): {entry['solvable']} of {total} problems.",
        ]
        solvable = [p for p in entry["problems"] if p["solvable"]]
        if solvable:
            lines += ["", "| problem | name-only pass@1 | original pass@1 |", "|---|---|---|"]
            for p in solvable:
                lines.append(
                    f"| {_md_escape(p['source_task_id'])} | {format_percent(p['pass_at_1'])} | "
                    f"{format_percent(p['original_pass_at_1'])} |"
                )
    return "\n".join(lines) + "\n"


def _csv_value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(value) if isinstance(value, float) else value


def format_table_csv(table: Mapping[str, Any]) -> str:
    """One line per (dataset, model, setting, k, transformation); fractions at full precision."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["dataset", "model", "setting", "k", "transform", "label", *CELL_FIELDS])
    for row in table["rows"]:
        for column, cell in zip(table["columns"], row["cells"], strict=True):
            if cell is None:
                continue
            writer.writerow(
                [column["dataset"], column["model"], column["setting"], column["k"]]
                + [row["transform"], row["label"]]
                + [_csv_value(cell[name]) for name in CELL_FIELDS]
            )
    return out.getvalue()


def format_name_only_csv(table: Mapping[str, Any]) -> str:
    """Per source problem: name-only pass@1 next to the original's, and whether it is solvable."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    fields = ["source_task_id", "n", "c", "pass_at_1", "original_pass_at_1", "solvable"]
    writer.writerow(["dataset", "model", "setting", *fields])
    for entry in table["name_only"]:
        for p in entry["problems"]:
            writer.writerow(
                [entry["dataset"], entry["model"], entry["setting"]]
                + [_csv_value(p[f]) for f in fields]
            )
    return out.getvalue()
