from __future__ import annotations

import math
import random

import pytest

from benchmarks.passk import mean_pass_at_k, pass_at_k, pass_at_k_by_task, pass_at_k_summary
from benchmarks.robustness import (
    ANY_SAMPLE,
    flip_table,
    paired_bootstrap_drop,
    robust_drop_at_k,
    robust_pass_at_k,
    robust_relative_at_k,
    robustness_report,
    solved,
    transform_pass_at_k,
)


def exact(n: int, c: int, k: int) -> float:
    return 1 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 37, 200])
def test_pass_at_k_matches_the_binomial_formula(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(exact(n, c, k), abs=1e-12)


def test_pass_at_k_is_stable_for_large_n():
    # Direct binomials overflow floats here; the product form must not.
    value = pass_at_k(2000, 3, 100)
    assert 0 < value < 1
    assert value == pytest.approx(exact(2000, 3, 100), rel=1e-9)
    assert pass_at_k(10, 1, 1) == pytest.approx(0.1)


def test_pass_at_k_rejects_impossible_counts():
    with pytest.raises(ValueError):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError):
        pass_at_k(5, 2, 6)


def test_pass_at_k_reported_only_where_n_at_least_k():
    outcomes = {"a": [True, False, False], "b": [True] * 10, "c": []}
    table = pass_at_k_by_task(outcomes, [1, 5])
    assert set(table) == {"a", "b"}
    assert set(table["a"]) == {"pass@1"}
    assert table["b"]["pass@5"] == 1.0
    means = mean_pass_at_k(outcomes, [1, 5, 100])
    assert means["pass@1"] == pytest.approx((1 / 3 + 1) / 2)
    assert means["pass@5"] == 1.0  # only b has 5 samples
    assert "pass@100" not in means
    summary = pass_at_k_summary(outcomes, [1, 5])
    assert summary["tasks_counted"] == {"pass@1": 2, "pass@5": 1}
    assert summary["tasks"]["a"] == {"n": 3, "c": 1, "pass@1": pytest.approx(1 / 3)}


ORIGINAL = {"p1": [True, True, False, False], "p2": [True, True, True, True], "p3": [False] * 4}
VARIANTS = {
    "p1": {"p1/v0": [True, False, False, False], "p1/v1": [True, True, True, False]},
    "p2": {"p2/v0": [True, True, True, True], "p2/v1": [True, False, True, True]},
    "p3": {"p3/v0": [False, False, True, False], "p3/v1": [False] * 4},
}


def test_relative_drop_per_transformation():
    stats = transform_pass_at_k(ORIGINAL, VARIANTS, 1)
    original = (0.5 + 1 + 0) / 3
    perturbed = ((0.25 + 0.75) / 2 + (1 + 0.75) / 2 + (0.25 + 0) / 2) / 3
    assert stats["original"] == pytest.approx(original)
    assert stats["perturbed"] == pytest.approx(perturbed)
    assert stats["relative_drop"] == pytest.approx((original - perturbed) / original)


def test_flip_table_counts_both_directions():
    original = {"a": [True], "b": [False], "c": [True]}
    variants = {"a": {"a/x": [False]}, "b": {"b/x": [True]}, "c": {"c/x": [True], "c/y": [False]}}
    table = flip_table(original, variants)
    assert table["lost"] == ["a/x", "c/y"]
    assert table["gained"] == ["b/x"]
    assert table["kept_solved"] == 1 and table["kept_failed"] == 0


def test_solved_is_one_rule_with_a_threshold():
    # The report's rule (ANY_SAMPLE): one passing sample is enough.
    assert solved(1, 10) and solved(1, 10, ANY_SAMPLE)
    assert not solved(0, 10) and not solved(0, 0)
    # The analyses' rule: at least the fraction passed (0.5 by default there), exactly at it too.
    assert solved(5, 10, 0.5) and not solved(4, 10, 0.5)
    assert solved(3, 10, 0.3)  # 3/10 is exactly 0.3, not 0.30000000000000004
    assert solved(10, 10, 1.0) and not solved(9, 10, 1.0)


def test_flip_table_takes_the_analyses_threshold():
    original = {"a": [True, True, False, False]}
    variants = {"a": {"a/x": [True, False, False, False]}}
    assert flip_table(original, variants)["kept_solved"] == 1  # any sample: still solved
    assert flip_table(original, variants, 0.5)["lost"] == ["a/x"]  # half: 2/4 -> 1/4 flips


def test_recode_robust_metrics_by_hand():
    # p1: per-index all-variants correct: [T, F, F, F] -> rc=1; p2: [T, F, T, T] -> 3; p3: 0.
    rp = robust_pass_at_k(ORIGINAL, VARIANTS, 1)
    assert rp == pytest.approx((1 / 4 + 3 / 4 + 0) / 3)
    nominal = (0.5 + 1 + 0) / 3
    assert robust_drop_at_k(ORIGINAL, VARIANTS, 1) == pytest.approx((nominal - rp) / nominal)
    # rc-: p1 index 1 (T then F on v0) -> 1; p2 index 1 -> 1; p3 0.
    # rc+: p1 index 2 (F then T on v1) -> 1; p2 0; p3 index 2 -> 1.
    rr = robust_relative_at_k(ORIGINAL, VARIANTS, 1)
    assert rr == pytest.approx(((1 / 4 + 1 / 4) + (1 / 4 + 0) + (0 + 1 / 4)) / 3)


def test_robust_pass_equals_pass_when_variants_equal_original():
    same = {t: {f"{t}/v": list(p)} for t, p in ORIGINAL.items()}
    assert robust_drop_at_k(ORIGINAL, same, 1) == pytest.approx(0)
    assert robust_relative_at_k(ORIGINAL, same, 1) == pytest.approx(0)


def test_paired_bootstrap_interval_covers_the_drop_and_is_reproducible():
    rng = random.Random(1)
    original = {f"t{i}": [rng.random() < 0.6 for _ in range(10)] for i in range(80)}
    variants = {
        t: {f"{t}/v": [p and rng.random() < 0.7 for p in passed]} for t, passed in original.items()
    }
    first = paired_bootstrap_drop(original, variants, 1, resamples=500, seed=3)
    again = paired_bootstrap_drop(original, variants, 1, resamples=500, seed=3)
    assert first == again
    assert first["low"] < first["drop"] < first["high"]
    assert 0.15 < first["drop"] < 0.45  # true drop is 0.3
    assert first["problems"] == 80


def test_robustness_report_counts_a_lost_problem():
    orig = {"P/1": [True, False]}
    transformed = {"drop_all": {"P/1": {"P/1@drop_all": [False, False]}}}
    report = robustness_report(orig, transformed, ks=[1], resamples=50)
    assert report["drop_all"]["pass@1"]["relative_drop"] == pytest.approx(1.0)
    assert report["drop_all"]["flips"]["lost"] == ["P/1@drop_all"]
