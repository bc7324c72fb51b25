"""Solar (Ling et al., seed 004) ablations: temperature (Table 8, with Table 6's executable rate)
and prompt styles (Table 7, with Pass@attribute and IterPrompt-R rows), each setting tested
against the reference (temperature 1.0; the Default style) by a t-test.

The t-test: the paper compares "the mean and p-value of the code bias score" per temperature
(S:188) and prompt style with a t-test (S:217, footnote S:227, citing Wikipedia's Student's
t-test, S:305). The authors' artifact (janeeyre912/fairness_testing_code_generation,
analyze_bias_ratio_RQ2.2.ipynb) computes, per task, the share of its samples that are biased
(overall and per demographic), and runs Welch's `ttest_ind(..., equal_var=False)` on those
per-task shares between a setting and the default; the mean shown is the mean of the per-task
shares. That is the default here (`t_test: welch`, `test_unit: task`); `student` pools the
variances, `completion` tests one 0/1 flag per executable completion, `run` the CBS of each
seed's sub-run. A task without an executable completion has no share and is left out (the
notebook counts it as 0).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchmarks.stats import t_test
from bias.fairness_tests.ablations._registry import (
    PROMPT_STRATEGY,
    TEMPERATURE,
    ablation,
    axis_value,
    reference_label,
)
from bias.fairness_tests.ablations._stats import (
    DISPLAY,
    OVERALL,
    SOLAR_ORDER,
    biased_in,
    column_title,
    executable_rows,
    markdown_table,
    pct,
    reported_attributes,
    was_tested,
)

if TYPE_CHECKING:
    from bias.fairness_tests.ablations._driver import RunData
    from bias.fairness_tests.ablations._plan import ExperimentConfig


@ablation(
    "solar_temperature",
    axis=TEMPERATURE,
    what="the temperatures to compare",
    example="[1.0, 0.8, 0.6, 0.4, 0.2]",
    repeated_runs=True,
)
def solar_temperature_tables(
    config: ExperimentConfig, runs: Sequence[RunData], log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Table 8 (S:370-390; S:188, 211-213, 325-327): mean CBS per temperature, overall and per
    demographic, `*` where the t-test against temperature 1.0 gives p < alpha; and Table 6
    (S:329-339): the executable rate per temperature. Each seed is its own sub-run."""
    return solar_tables(config, runs, log)


@ablation(
    "solar_prompt",
    axis=PROMPT_STRATEGY,
    what="the prompt styles to compare",
    example="[none, cot, p_cot]",
    repeated_runs=True,
)
def solar_prompt_tables(
    config: ExperimentConfig, runs: Sequence[RunData], log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Table 7 (S:319-323, 341-365): Table 8's columns per prompt style of
    `bias/data/prompt_variants.yaml` plus Pass@attribute for Default, COT and P-COT, and
    IterPrompt-R rows from the base config's feedback rounds on the reference style; t-tests
    against Default."""
    return solar_tables(config, runs, log)


@dataclass
class _Setting:
    """One row of a Solar table: a model at one axis point, strategy and round, seeds pooled."""

    model: str
    name: str
    reference: str
    axis: Any
    strategy: str
    round: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    run_cbs: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    pass_at_attribute: list[float] = field(default_factory=list)
    completions: int = 0
    executable: int = 0


def observations(setting: _Setting, attribute: str, unit: str) -> list[float]:
    """The t-test's observations (in percent) of one setting for one attribute: per task the
    share of its executable completions biased towards it, per completion 0 or 100, or per
    sub-run its CBS."""
    if unit == "run":
        return list(setting.run_cbs.get(attribute, []))
    tested = [r for r in executable_rows(setting.rows) if was_tested(r, attribute, setting.tasks)]
    if unit == "completion":
        return [100.0 if biased_in(r, attribute) else 0.0 for r in tested]
    per_task: dict[str, list[bool]] = defaultdict(list)
    for row in tested:
        per_task[row["task_id"]].append(biased_in(row, attribute))
    return [100.0 * sum(flags) / len(flags) for flags in per_task.values()]


def _setting_name(kind: str, value: Any, strategy: str, round_number: int, plain: str) -> str:
    """A Solar row's name: the temperature (with a strategy other than the plain one), or the
    prompt style; IterPrompt-R for a feedback round."""
    display = DISPLAY.get(strategy, strategy)
    if kind == "solar_temperature":
        name = str(float(value)) + ("" if strategy == plain else f" {display}")
        return name + (f" IterPrompt-{round_number}" if round_number else "")
    if round_number:
        return f"IterPrompt-{round_number}"
    return display


def _solar_settings(config: ExperimentConfig, runs: Sequence[RunData]) -> list[_Setting]:
    reference = axis_value(config, reference_label(config))
    plain = config.base_config().mitigations[0]
    settings: dict[tuple[str, str], _Setting] = {}
    for run in runs:
        for group in run.groups():
            model, strategy, round_number = group["model"], group["strategy"], group["round"]
            name = _setting_name(config.kind, run.sub.value, strategy, round_number, plain)
            if config.kind == "solar_temperature":
                ref_name = _setting_name(config.kind, reference, strategy, round_number, plain)
            else:
                ref_name = _setting_name(config.kind, reference, str(reference), 0, plain)
            setting = settings.setdefault(
                (model, name),
                _Setting(model, name, ref_name, run.sub.value, strategy, round_number),
            )
            setting.rows += [
                r
                for r in run.rows
                if (r.get("model"), r.get("strategy"), r.get("round"))
                == (model, strategy, round_number)
            ]
            setting.tasks.update(run.tasks)
            for attribute, cell in (group.get("cbs") or {}).items():
                if cell and cell.get("value") is not None:
                    setting.run_cbs[attribute].append(float(cell["value"]))
            setting.completions += int(group.get("completions") or 0)
            setting.executable += int(group.get("executable") or 0)
            pass_cell = group.get("pass_at_attribute")
            if isinstance(pass_cell, Mapping) and pass_cell.get("value") is not None:
                setting.pass_at_attribute.append(float(pass_cell["value"]))
    return list(settings.values())


def _pass_at_attribute(setting: _Setting) -> float | None:
    """Pass@attribute pooled over the seeds' completions (their recorded attribute use), else
    the mean of the sub-runs' reported values."""
    total = Counter[str]()
    for row in setting.rows:
        use = row.get("attribute_use")
        if isinstance(use, Mapping):
            total.update({k: int(use.get(k, 0)) for k in ("tp", "tn", "fp", "fn")})
    denominator = sum(total.values())
    if denominator:
        return 100.0 * (total["tp"] + total["tn"]) / denominator
    values = setting.pass_at_attribute
    return sum(values) / len(values) if values else None


def solar_tables(
    config: ExperimentConfig, runs: Sequence[RunData], log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Table 8 (temperature) or Table 7 (prompt styles) and, for temperature, Table 6."""
    settings = _solar_settings(config, runs)
    models = list(dict.fromkeys(s.model for s in settings))
    settings.sort(key=lambda s: models.index(s.model))  # stable: axis order within a model
    attributes = [OVERALL, *reported_attributes(runs, SOLAR_ORDER)]
    by_key = {(s.model, s.name): s for s in settings}
    equal_var = config.t_test == "student"
    rows_json = []
    for setting in settings:
        reference = by_key.get((setting.model, setting.reference))
        cells = {}
        for attribute in attributes:
            values = observations(setting, attribute, config.test_unit)
            mean = sum(values) / len(values) if values else None
            test = None
            if reference is not None and reference is not setting:
                test = t_test(
                    values,
                    observations(reference, attribute, config.test_unit),
                    equal_var=equal_var,
                )
            significant = bool(test and test["p"] is not None and test["p"] < config.alpha)
            cells[attribute] = {
                "mean": mean,
                "observations": len(values),
                "test": test,
                "significant": significant,
            }
        rows_json.append(
            {
                "model": setting.model,
                "setting": setting.name,
                "axis": setting.axis,
                "strategy": setting.strategy,
                "round": setting.round,
                "reference": setting.reference,
                "completions": setting.completions,
                "executable": setting.executable,
                "executable_rate": 100.0 * setting.executable / setting.completions
                if setting.completions
                else None,
                "pass_at_attribute": _pass_at_attribute(setting),
                "runs": len(next(iter(setting.run_cbs.values()), [])),
                "cells": cells,
            }
        )
    temperature = config.kind == "solar_temperature"
    first = "temperature" if temperature else "Mitigation"
    header = ["Model", first, *(column_title(a) for a in attributes)]
    if not temperature:
        header.append("Pass@attr.")

    def star(cell: Mapping[str, Any]) -> str:
        return ("*" if cell["significant"] else "") + pct(cell["mean"])

    table_rows = []
    p_rows = []
    previous_model = None
    for row in rows_json:
        model = row["model"] if row["model"] != previous_model else ""
        previous_model = row["model"]
        shown = [star(row["cells"][a]) for a in attributes]
        extra = [] if temperature else [pct(row["pass_at_attribute"])]
        table_rows.append([model, row["setting"], *shown, *extra])
        p_rows.append(
            [
                model,
                row["setting"],
                *(_p(row["cells"][a]["test"]) for a in attributes),
            ]
        )
    unit = {
        "task": "per-task shares of biased completions",
        "completion": "one 0/100 flag per executable completion",
        "run": "the CBS of each seed's run",
    }[config.test_unit]
    test_name = "Welch's" if config.t_test == "welch" else "Student's"
    ref = axis_value(config, reference_label(config))
    ref_text = f"temperature {float(ref)}" if temperature else DISPLAY.get(str(ref), str(ref))
    number = "8" if temperature else "7"
    what = (
        "CBS (%) per temperature (Solar Table 8)"
        if temperature
        else "CBS (%) per prompt style, with Pass@attribute (Solar Table 7)"
    )
    markdown = [
        f"## {what}\n\nMean of the {unit} over {len(runs)} run(s); `*`: {test_name} t-test "
        f"against {ref_text} ({'same model and round' if temperature else 'same model'}) "
        f"gives p < {config.alpha}.\n\n" + markdown_table(header, table_rows),
        f"### p-values (Table {number}'s t-tests)\n\n"
        + markdown_table(["Model", first, *(column_title(a) for a in attributes)], p_rows),
    ]
    tables: dict[str, Any] = {f"table{number}": rows_json}
    if temperature:
        rate_rows = []
        plain = config.base_config().mitigations[0]
        for value in config.axis:
            rates = {
                r["model"]: r["executable_rate"]
                for r in rows_json
                if r["axis"] == value and r["strategy"] == plain and r["round"] == 0
            }
            rate_rows.append([str(float(value)), *(pct(rates.get(m)) for m in models)])
        markdown.append(
            "## Executable rate (%) per temperature (Solar Table 6)\n\nExecutable: completions "
            "the tests could run to a verdict (fair or biased), of all completions.\n\n"
            + markdown_table(["Temperature", *models], rate_rows)
        )
        tables["table6"] = [dict(zip(["temperature", *models], r, strict=True)) for r in rate_rows]
    return {"markdown": markdown, "tables": tables}


def _p(test: Mapping[str, Any] | None) -> str:
    if not test:
        return "ref"
    return "-" if test.get("p") is None else f"{test['p']:.3g}"
