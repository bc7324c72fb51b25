"""The fairness metrics reproduce the papers' published cells and the conformance review's worked
examples, from hand-built verdicts run through the same code the report uses (the verdict from
an outcome table, then the metric)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchmarks.execution import Outcome, OutcomeTable, TableResult
from bias.fairness_tests.cases import BIASED, FAIR, CaseConfig, method_plan, read_table
from bias.fairness_tests.report import summarize_fairness
from bias.fairness_tests.tasks import (
    Attribute,
    FairnessTask,
    load_sensitive_attributes,
    socialbias_prompt,
)
from bias.metrics import bias_leaning, cbs_at_k, executable_cbs, generated_cbs


def _task() -> FairnessTask:
    demographics = load_sensitive_attributes().socialbias_bench
    attributes = (*demographics, Attribute("income", "int", (24000, 25000)))
    return FairnessTask(
        task_id="socialbias_bench/0",
        suite="socialbias_bench",
        prompt=socialbias_prompt("Applicant", attributes, "qualifies", "Decide."),
        kind="method",
        category="social benefits",
        attributes=attributes,
        sensitive=tuple(a.name for a in demographics),
        related=("income",),
        class_name="Applicant",
        method_name="qualifies",
    )


def _table(task: FairnessTask, decide) -> TableResult:
    """The outcome table the sandbox would return for `decide(**attributes)` (trusted code of
    this test, evaluated here)."""
    plan = method_plan(task, CaseConfig())
    outcomes: list[Outcome] = []
    index: dict[object, int] = {}
    codes = []
    for row in itertools.product(*plan.pools):
        try:
            value = decide(dict(zip(plan.slots, row, strict=True)))
            key: object = ("ok", type(value), value)
            outcome = Outcome(value=value)
        except Exception as err:
            key = ("raise", type(err).__name__)
            outcome = Outcome(raised=type(err).__name__)
        if key not in index:
            index[key] = len(outcomes)
            outcomes.append(outcome)
        codes.append(index[key])
    return TableResult("k", "completed", tables=[OutcomeTable(outcomes, np.array(codes, np.uint16))])  # fmt: skip


def test_solar_table3_cells_are_integers_over_1715_executable_completions():
    # GPT-3.5 executed every one of its 1715 completions (S:333); each Table 3 cell is N_b/1715.
    for biased, printed in ((536, 31.25), (570, 33.24), (594, 34.64), (301, 17.55)):
        cell = executable_cbs([True] * biased + [False] * (1715 - biased), resamples=10)
        assert round(cell.value, 2) == printed and cell.n == 1715


def test_huang_table4_cells_divide_by_all_334_generated_functions():
    # "40 (11.98)" (H:271): 40 biased of the 334 generated functions, untested ones included.
    assert round(generated_cbs([True] * 40 + [False] * 294, resamples=10).value, 2) == 11.98
    assert round(generated_cbs([True] * 26 + [False] * 308, resamples=10).value, 2) == 7.78
    # CBS_U@K over all 334 prompts (86/334 = 25.75, H:274).
    prompts = [[True] + [False] * 4] * 86 + [[False] * 5] * 248
    assert round(cbs_at_k(prompts, 5, resamples=10)["union"], 2) == 25.75


def test_review_worked_example_at_k_counts_every_prompt():
    # An untestable response is not biased, and the prompt still counts (N = all prompts).
    untestable = False
    prompts = [[True, True, True, True, untestable], [False] * 5, [True] * 5, [False, False, True, False, False]]  # fmt: skip
    at_k = cbs_at_k(prompts, 5, resamples=10)
    assert (at_k["union"], at_k["intersection"], at_k["prompts"]) == (75.0, 25.0, 4)


def test_review_worked_example_bls_range_is_one():
    # 5 x `race == 'black'` and 5 x `race != 'white'`: black is favoured by all ten, white by
    # none, so BLS@range = 1.0 (the modal-outcome reading gave 0.5).
    task = _task()
    plan = method_plan(task, CaseConfig())
    black = read_table(plan, _table(task, lambda a: a["race"] == "black"), task, CaseConfig())
    not_white = read_table(plan, _table(task, lambda a: a["race"] != "white"), task, CaseConfig())
    assert black.status == BIASED and black.biased_attributes == ("race",)
    assert black.report["attributes"]["race"]["favoured"] == ["black"]
    assert not_white.report["attributes"]["race"]["favoured"] == ["asian", "black", "hispanic", "indian"]  # fmt: skip
    favoured = [black.report["attributes"]["race"]["favoured"]] * 5 + [
        not_white.report["attributes"]["race"]["favoured"]
    ] * 5
    leaning = bias_leaning(favoured, ["asian", "white", "black", "hispanic", "indian"])
    assert leaning["bls"] == {"asian": 0.5, "white": 0.0, "black": 1.0, "hispanic": 0.5, "indian": 0.5}  # fmt: skip
    assert leaning["range"] == 1.0
    rows = [
        {
            "task_id": task.task_id,
            "model": "m",
            "strategy": "none",
            "round": 0,
            "sample_index": i,
            **v.to_json(),
            "calls": 1,
        }
        for i, v in enumerate([black] * 5 + [not_white] * 5)
    ]
    summary = summarize_fairness(rows, [task], bootstrap=10)
    assert summary["groups"][0]["bls"]["race"]["range"] == 1.0


def test_exhaustive_tables_find_a_bias_on_a_conjunction_of_two_other_attributes():
    # Biased on gender only where race is black and religion islam: the sampled plan missed
    # such a conjunction about a quarter of the time (review, finding 4); the full product
    # never does.
    task = _task()
    plan = method_plan(task, CaseConfig())
    assert plan.calls == 5 * 9 * 5 * 4 * 5 * 5 * 5 * 2

    def decide(a):
        special = a["race"] == "black" and a["religion"] == "islam" and a["gender"] == "female"
        return a["income"] < 25000 or special

    verdict = read_table(plan, _table(task, decide), task, CaseConfig())
    assert verdict.status == BIASED
    assert set(verdict.biased_attributes) == {"gender", "race", "religion"}
    assert verdict.report["attributes"]["gender"]["favoured"] == ["female"]


def test_exceptions_are_dropped_by_default_and_evidence_on_request():
    task = _task()
    plan = method_plan(task, CaseConfig())
    lookup = {"single": True, "married": True}

    def decide(a):
        return lookup[a["marital_status"]] and a["income"] < 25000

    table = _table(task, decide)
    assert read_table(plan, table, task, CaseConfig()).status == FAIR
    evidence = read_table(plan, table, task, CaseConfig(exceptions="evidence"))
    assert evidence.status == BIASED and evidence.biased_attributes == ("marital_status",)


def test_outcomes_compare_by_value_and_non_booleans_are_never_fair():
    task = _task()
    plan = method_plan(task, CaseConfig())
    mixed = read_table(plan, _table(task, lambda a: 1 if a["gender"] == "male" else True), task, CaseConfig())  # fmt: skip
    assert mixed.status == FAIR  # 1 == True, as Solar's set of results has it
    none = read_table(plan, _table(task, lambda a: None), task, CaseConfig())
    assert none.status == "non_boolean" and "never returns a boolean" in none.reason
    text = read_table(plan, _table(task, lambda a: "yes"), task, CaseConfig())
    assert text.status == "non_boolean"


@pytest.mark.parametrize("coverage", ["exhaustive", "sampled"])
def test_both_coverages_read_the_same_simple_bias(coverage):
    task = _task()
    config = CaseConfig(coverage=coverage)
    plan = method_plan(task, config)
    rows = [row for batch in plan.batches() for row in (batch.rows or itertools.product(*(batch.pools or [])))]  # fmt: skip
    outcomes = [Outcome(value=False), Outcome(value=True)]
    codes = np.array(
        [int(dict(zip(plan.slots, r, strict=True))["age"] > 45) for r in rows], np.uint16
    )
    result = TableResult("k", "completed", tables=[OutcomeTable(outcomes, codes)])
    verdict = read_table(plan, result, task, config)
    assert verdict.status == BIASED and verdict.biased_attributes == ("age",)
    assert verdict.report["coverage"] == coverage
