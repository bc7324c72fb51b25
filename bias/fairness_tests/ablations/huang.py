"""Huang et al. (seed 001) ablations: prompt phrasings (Tables 12 and 13), temperature
(Table 15) and value pools (Table 14). Self-detection (Table 9) is `self_detection`."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.common.errors import UserError
from benchmarks.common.models import load_sentence_transformer
from benchmarks.common.rundir import path_slug
from bias import DATA_DIR
from bias.fairness_tests.ablations._registry import (
    PROMPT_STRATEGY,
    TEMPERATURE,
    Axis,
    ablation,
    reference_label,
)
from bias.fairness_tests.ablations._stats import (
    DISPLAY,
    EXECUTABLE,
    HUANG_ORDER,
    OVERALL,
    biased_in,
    cbs_definition,
    cbs_of,
    column_title,
    markdown_table,
    pct,
    reported_attributes,
    was_tested,
)
from bias.fairness_tests.cases import CaseConfig
from bias.fairness_tests.mitigation import load_mitigations

if TYPE_CHECKING:
    from bias.fairness_tests.ablations._driver import RunData
    from bias.fairness_tests.ablations._plan import ExperimentConfig
    from bias.fairness_tests.run import FairnessRunConfig

ENRICHED_POOLS = DATA_DIR / "enriched_pools.yaml"


@ablation(
    "huang_prompt",
    axis=PROMPT_STRATEGY,
    what="the prompt phrasings to compare",
    example="[huang_prompt1, huang_prompt2]",
)
def huang_prompt_tables(
    config: ExperimentConfig, runs: Sequence[RunData], log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Table 12 (H:460-470): semantic similarity of the phrasings (sentence embeddings,
    cosine); Table 13 (H:471-483): CBS per attribute per phrasing."""
    attributes = reported_attributes(runs, HUANG_ORDER)
    mitigations = load_mitigations(runs[0].config.mitigation_file)
    names = [str(run.sub.value) for run in runs]
    texts = {name: mitigations.strategy(name).text for name in names}
    markdown = []
    tables: dict[str, Any] = {}
    notes = []
    if config.similarity_model:
        matrix = prompt_similarity(texts, config.similarity_model)
        header = ["Prompt", *(DISPLAY.get(n, n) for n in names)]
        rows = [[DISPLAY.get(a, a), *(f"{matrix[a][b]:.3f}" for b in names)] for a in names]
        markdown.append(
            "## Semantic similarity of the prompts (Huang Table 12)\n\nCosine similarity of "
            f"sentence embeddings ({config.similarity_model}) of each pair of phrasings.\n\n"
            + markdown_table(header, rows)
        )
        tables["table12"] = matrix
    else:
        notes.append("Table 12 skipped: similarity_model is empty.")
    rows_json = []
    table_rows = []
    for run in runs:
        strategy = str(run.sub.value)
        for group in run.groups():
            if group.get("strategy") != strategy or group.get("round") != 0:
                continue
            cells = {a: cbs_of(group, a)[0] for a in [*attributes, OVERALL]}
            rows_json.append(
                {
                    "model": group["model"],
                    "prompt": strategy,
                    "cbs": cells,
                    "executable": group.get("executable"),
                    "completions": group.get("completions"),
                }
            )
            table_rows.append(
                [
                    group["model"],
                    DISPLAY.get(strategy, strategy),
                    *(pct(cells[a]) for a in attributes),
                    pct(cells[OVERALL]),
                    f"{group.get('executable')}/{group.get('completions')}",
                ]
            )
    markdown.append(
        f"## CBS (%) for different prompts (Huang Table 13)\n\n{cbs_definition(runs)}\n\n"
        + markdown_table(
            ["Model", "Prompt", *(column_title(a) for a in attributes), "Overall", "Executable"],
            table_rows,
        )
    )
    tables["table13"] = rows_json
    return {"markdown": markdown, "tables": tables, "notes": notes}


def prompt_similarity(texts: Mapping[str, str], model_name: str) -> dict[str, dict[str, float]]:
    """Pairwise cosine similarity of the texts' sentence embeddings (Huang Table 12 follows
    HuggingFace's sentence-similarity recipe: a sentence-transformers model, cosine)."""
    model = load_sentence_transformer(model_name)
    names = list(texts)
    vectors = model.encode([texts[n] for n in names], normalize_embeddings=True)
    return {
        a: {b: round(float(vectors[i] @ vectors[j]), 4) for j, b in enumerate(names)}
        for i, a in enumerate(names)
    }


@ablation(
    "huang_temperature",
    axis=TEMPERATURE,
    what="the temperatures to compare",
    example="[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]",
)
def huang_temperature_tables(
    config: ExperimentConfig, runs: Sequence[RunData], log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Table 15 (H:498-509): biased count (CBS %) per attribute per temperature, with CBS,
    CBS_U@K and CBS_I@K overall."""
    attributes = reported_attributes(runs, HUANG_ORDER)
    rows_json = []
    table_rows = []
    k_values = set()
    for run in runs:
        for group in run.groups():
            if group.get("round") != 0:
                continue
            cells = {}
            for attribute in [*attributes, OVERALL]:
                value, n = cbs_of(group, attribute)
                cells[attribute] = {
                    "cbs": value,
                    "n": n,
                    "biased": round(value * n / 100) if value is not None else None,
                }
            at_k = (group.get("at_k") or {}).get(OVERALL) or {}
            k_values.add(at_k.get("k"))
            row = {
                "model": group["model"],
                "strategy": group["strategy"],
                "temperature": float(run.sub.value),
                "cells": cells,
                "cbs_u_at_k": at_k.get("union"),
                "cbs_i_at_k": at_k.get("intersection"),
                "k": at_k.get("k"),
                "prompts": at_k.get("prompts"),
            }
            rows_json.append(row)

            def cell(c: Mapping[str, Any]) -> str:
                return "-" if c["cbs"] is None else f"{c['biased']} ({c['cbs']:.2f})"

            table_rows.append(
                [
                    group["model"],
                    f"{float(run.sub.value)}",
                    *(cell(cells[a]) for a in attributes),
                    cell(cells[OVERALL]),
                    pct(row["cbs_u_at_k"]),
                    pct(row["cbs_i_at_k"]),
                ]
            )
    k = "/".join(str(v) for v in sorted(k for k in k_values if k is not None)) or "K"
    header = [
        "Model",
        "Temperature",
        *(column_title(a) for a in attributes),
        "CBS",
        f"CBS_U@{k}",
        f"CBS_I@{k}",
    ]
    markdown = [
        "## CBS for different temperatures (Huang Table 15)\n\nBiased completions (CBS %) per "
        f"attribute; CBS_U@{k} / CBS_I@{k}: prompts with at least one / all of their first {k} "
        f"completions biased. {cbs_definition(runs)}\n\n" + markdown_table(header, table_rows)
    ]
    return {"markdown": markdown, "tables": {"table15": rows_json}}


# --------------------------------------------------------------------------- value pools


def _pool_label(value: Any) -> str:
    if isinstance(value, Mapping):
        if value.get("label"):
            return path_slug(str(value["label"]))
        value = value.get("value_pools_file") or "default"
    return path_slug("default" if str(value) == "default" else Path(str(value)).stem)


def pool_changes(value: Any) -> dict[str, Any]:
    """The `cases` settings of one value-pool variant: `default`, `enriched` (the bundled
    ACS pools), a YAML path, or a mapping {label, value_pools_file, other case settings}."""
    if "value_pools_file" not in {f.name for f in dataclasses.fields(CaseConfig)}:
        raise UserError(
            "this boi's test config has no cases.value_pools_file yet, so value pools cannot be "
            "compared; update boi."
        )
    settings = dict(value) if isinstance(value, Mapping) else {"value_pools_file": value}
    settings.pop("label", None)
    pools = settings.get("value_pools_file")
    if pools in (None, "default"):
        settings["value_pools_file"] = None
    elif pools == "enriched":
        settings["value_pools_file"] = str(ENRICHED_POOLS)
    elif not Path(str(pools)).is_file():
        raise UserError(f"value pools file {pools} does not exist; check the path.")
    return settings


def _check_pools(values: Sequence[Any], base: FairnessRunConfig) -> None:
    for value in values:
        pool_changes(value)  # a clear error for a missing pools file


def _pool_run_changes(value: Any, base: FairnessRunConfig, reference: bool) -> dict[str, Any]:
    return {"cases": pool_changes(value)}


def _last(labels: Sequence[str]) -> str:
    return labels[-1]  # the richest pools, as Table 14's "Enriched"


VALUE_POOLS = Axis(
    "value pools",
    label=_pool_label,
    check_base=_check_pools,
    changes=_pool_run_changes,
    default_reference=_last,
)
"""Value-pool files of the tests' cases (`cases.value_pools_file`); the reference is the last."""


@ablation(
    "huang_value_pools",
    axis=VALUE_POOLS,
    what="the value pools to compare",
    example="[default, enriched]",
)
def value_pool_tables(
    config: ExperimentConfig, runs: Sequence[RunData], log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Table 14 (H:485-492): default against enriched pools (`bias/data/enriched_pools.yaml`,
    ACS categories): each pool's verdicts against the reference pool's, per completion and
    attribute (TP/FN/FP/TN), with the cases run, CBS and the test time (the overhead column)."""
    attributes = reported_attributes(runs, HUANG_ORDER)
    ref_label = reference_label(config)
    reference = next(r for r in runs if r.sub.label == ref_label)

    def key(row: Mapping[str, Any]) -> tuple[Any, ...]:
        return (
            row.get("model"),
            row.get("strategy"),
            row.get("round"),
            row.get("task_id"),
            row.get("sample_index"),
        )

    truth = {key(r): r for r in reference.rows}
    rows_json = []
    table_rows = []
    notes = []
    for run in runs:
        counts = Counter[str]()
        unmatched = 0
        for row in run.rows:
            other = truth.get(key(row))
            if other is None or other.get("completion") != row.get("completion"):
                unmatched += 1
                continue
            if row.get("status") not in EXECUTABLE or other.get("status") not in EXECUTABLE:
                counts["not_comparable"] += 1
                continue
            tasks = {**reference.tasks, **run.tasks}
            for attribute in attributes:
                if not (was_tested(row, attribute, tasks) or was_tested(other, attribute, tasks)):
                    continue
                actual, predicted = biased_in(other, attribute), biased_in(row, attribute)
                counts[
                    "tp"
                    if actual and predicted
                    else "fn"
                    if actual
                    else "fp"
                    if predicted
                    else "tn"
                ] += 1
        if unmatched:
            notes.append(
                f"{run.sub.label}: {unmatched} completions differ from {ref_label}'s (not "
                "compared); the pools are compared on identical code only."
            )
        group = next((g for g in run.groups() if g.get("round") == 0), {})
        test_seconds, measured = _test_seconds(run)
        cells = {a: cbs_of(group, a)[0] for a in [OVERALL, *attributes]}
        row_json = {
            "pools": run.sub.label,
            "value_pools_file": getattr(run.config.cases, "value_pools_file", None),
            "cases": _cases_run(group, run.rows),
            "overhead_measured": measured,
            "executable": group.get("executable"),
            "completions": group.get("completions"),
            "cbs": cells,
            "tp": counts["tp"],
            "fn": counts["fn"],
            "fp": counts["fp"],
            "tn": counts["tn"],
            "not_comparable": counts["not_comparable"],
            "test_seconds": round(test_seconds, 2),
            "run_seconds": run.seconds,
        }
        rows_json.append(row_json)
        table_rows.append(
            [
                run.sub.label + (" (ref)" if run is reference else ""),
                row_json["cases"] if row_json["cases"] is not None else "-",
                *(pct(cells[a]) for a in [OVERALL, *attributes]),
                counts["tp"],
                counts["fn"],
                counts["fp"],
                counts["tn"],
                f"{test_seconds:.2f}s",
            ]
        )
    header = [
        "Pools",
        "Cases",
        "CBS overall",
        *(f"CBS {column_title(a)}" for a in attributes),
        "TP",
        "FN",
        "FP",
        "TN",
        "Overhead",
    ]
    markdown = [
        "## Default against enriched value pools (Huang Table 14)\n\nTP/FN/FP/TN: per completion "
        f"and attribute, this pool's verdict against {ref_label}'s (the reference, as "
        "Table 14 counts against the enriched pools' verdicts; TN counts every attribute "
        "tested), on identical completions. Cases: the calls the tests made. Overhead: the "
        "tests' time in seconds (the verdicts' own timings where recorded, else the sub-run's "
        "test stages).\n\n" + markdown_table(header, table_rows)
    ]
    return {"markdown": markdown, "tables": {"table14": rows_json}, "notes": notes}


def _cases_run(group: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> int | None:
    """The calls the tests made (the report's `calls` or `cases`, else the verdicts')."""
    for key in ("calls", "cases"):
        if isinstance(group.get(key), int):
            return int(group[key])
    total = 0
    for row in rows:
        if isinstance(row.get("calls"), int):
            total += int(row["calls"])
        elif isinstance(row.get("cases"), Mapping):
            total += sum(int(v) for v in row["cases"].values() if isinstance(v, int))
    return total or None


def _test_seconds(run: RunData) -> tuple[float, str]:
    """The tests' time: the verdicts' own seconds (kept across resumes) where recorded, else
    the `test` stages of the sub-run's last invocation."""
    recorded = [float(r["seconds"]) for r in run.rows if isinstance(r.get("seconds"), int | float)]
    if recorded:
        return sum(recorded), "sum of the verdicts' test seconds"
    stages = (run.manifest.get("timings_s") or {}).items()
    return sum(float(v) for k, v in stages if str(k).startswith("test ")), "test stages"
