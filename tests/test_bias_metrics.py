"""Liu et al.'s metrics on hand-computed examples: CBS (eq. 1), UFS (eq. 2: sign, range,
undefined), SD (eq. 3), and the report's grouping of them."""

from __future__ import annotations

import math

import pytest

from bias.metrics import (
    code_bias_score,
    demographic_counts,
    frequencies,
    frequency_sd,
    unfairness_score,
)
from bias.modifier_prompts.report import summarize_bias, tables_markdown
from bias.modifier_prompts.suite import SuiteConfig, load_suite


def test_cbs_counts_probability_at_least_one_half():
    cbs = code_bias_score([0.5, 0.49, 0.9, 0.1], resamples=200, seed=1)
    assert cbs.value == 50.0 and cbs.n == 4
    assert 0.0 <= cbs.low <= 50.0 <= cbs.high <= 100.0
    assert code_bias_score([]).value is None


def test_ufs_sign_range_and_undefined():
    # 10 biased completions: White in 6, Black in 2 (one names both).
    counts, n_bias = demographic_counts(
        [["White"]] * 5 + [["White", "Black"]] + [["Black"]] + [[]] * 3
    )
    f = frequencies(counts, n_bias)
    assert n_bias == 10 and f == {"Black": 0.2, "White": 0.6}
    assert unfairness_score(f["White"], f["Black"]) == pytest.approx((0.6 - 0.2) / 0.6)
    assert unfairness_score(f["Black"], f["White"]) == pytest.approx(-(0.6 - 0.2) / 0.6)
    assert unfairness_score(0.3, 0.0) == 1.0 and unfairness_score(0.0, 0.3) == -1.0
    assert unfairness_score(0.0, 0.0) is None  # neither appears: undefined, not 0


def test_sd_over_the_demographics_that_appear():
    assert frequency_sd({"A": 0.5, "B": 0.1}) == pytest.approx(20.0)  # percent: 50 and 10
    assert frequency_sd({"A": 0.4}) == 0.0  # one demographic: SD 0 (the paper's Politics cells)
    assert frequency_sd({}) is None
    f = {"A": 0.6, "B": 0.2, "C": 0.1}
    mean = 100 * sum(f.values()) / 3
    expected = math.sqrt(sum((100 * v - mean) ** 2 for v in f.values()) / 3)
    assert frequency_sd(f) == pytest.approx(expected)


def _row(modifier_type, dimension, probability, demographics, modifier="x"):
    return {
        "model": "m", "setting": "s", "template": "paper", "prompt_id": f"paper/{dimension}/{modifier}",
        "modifier": modifier, "modifier_type": modifier_type, "dimension": dimension,
        "probability": probability, "biased": probability >= 0.5, "sample_index": 0, "code": "",
        "lexicon": {"status": "ok", "demographics": demographics, "findings": []},
    }  # fmt: skip


def test_the_report_groups_by_modifier_type_and_dimension():
    suite = load_suite(SuiteConfig(only_dimensions=("ethnicity", "gender")))
    rows = [
        _row("roberta_neg", "ethnicity", 0.9, ["White"]),
        _row("roberta_neg", "ethnicity", 0.8, ["White"]),
        _row("roberta_neg", "ethnicity", 0.7, ["Black", "Asian"]),
        _row("roberta_neg", "ethnicity", 0.2, ["Black"]),  # not biased: not counted in f
        _row("comparative_pos", "gender", 0.6, ["Female"]),
        _row("comparative_neg", "gender", 0.1, []),
    ]
    summary = summarize_bias(rows, suite, bootstrap=50)
    group = summary["groups"][0]
    assert group["cbs"]["Tot."]["value"] == pytest.approx(100 * 4 / 6)
    assert group["cbs"]["Comp."]["value"] == 50.0 and group["cbs"]["Comp."]["n"] == 2
    assert group["cbs"]["Rand. Neg"]["value"] is None  # no completions
    ethnicity = group["ufs"]["roberta_neg"]["ethnicity"]
    assert (ethnicity["f1"], ethnicity["f2"]) == pytest.approx((2 / 3, 1 / 3))
    assert ethnicity["ufs"] == pytest.approx(0.5)
    assert group["ufs"]["comparative_pos"]["gender"]["ufs"] == -1.0  # only Female
    assert group["ufs"]["comparative_neg"]["gender"]["ufs"] is None
    # SD over White 2/3, Black 1/3, Asian 1/3 in percent.
    values = [200 / 3, 100 / 3, 100 / 3]
    mean = sum(values) / 3
    assert group["sd"]["roberta_neg"]["ethnicity"] == pytest.approx(
        math.sqrt(sum((v - mean) ** 2 for v in values) / 3)
    )
    assert group["sd"]["random_pos"]["ethnicity"] is None
    text = tables_markdown(summary)
    assert "| RoB. Neg | 0.50 | - |" in text and "| Comp. Pos | - | -1.00 |" in text
