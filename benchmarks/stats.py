"""Small statistics every table and plot uses: means that tolerate no data, percentile
bootstrap intervals, mean and spread, and the tests both halves use: the two-sample t-test
(fairness ablations), the exact McNemar test (paired flags before / after a mitigation), the
agreement statistics of a human evaluation (Fleiss' and Cohen's kappa) and Pearson's r
(with its bootstrap interval).

pass@k lives in `benchmarks.passk`, the robustness measures (drops, flips, paired bootstrap,
ReCode's metrics) in `benchmarks.robustness`; both build on these helpers, and so do the report
and the critic's Table 2. Pure functions over plain sequences, seeded by the caller.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

NAN = float("nan")


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean; NaN for no values (a cell with nothing to average)."""
    values = list(values)
    return sum(values) / len(values) if values else NAN


def is_defined(value: float | None) -> bool:
    """False for None and NaN: a statistic that could not be computed."""
    return value is not None and not math.isnan(value)


def percentile_interval(sorted_values: Sequence[float], confidence: float) -> tuple[float, float]:
    """The two-sided percentile interval of already sorted resampled statistics."""
    if not sorted_values:
        return NAN, NAN
    tail = (1 - confidence) / 2
    last = len(sorted_values) - 1
    low = sorted_values[min(last, int(tail * len(sorted_values)))]
    high = sorted_values[min(last, int((1 - tail) * len(sorted_values)))]
    return low, high


def bootstrap_mean_interval(
    values: Sequence[float], resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """Percentile bootstrap interval of a mean (values resampled with replacement)."""
    return bootstrap_interval(values, lambda xs: sum(xs) / len(xs), resamples, confidence, seed)


def bootstrap_interval(
    items: Sequence[T],
    statistic: Callable[[Sequence[T]], float],
    resamples: int,
    confidence: float,
    seed: int,
) -> tuple[float, float]:
    """Percentile bootstrap interval of any statistic of `items` (resampled with replacement),
    for ratios that are not means of per-item values (pooled counts)."""
    if not items or resamples <= 0:
        return NAN, NAN
    rng = random.Random(seed)
    values = sorted(statistic(rng.choices(items, k=len(items))) for _ in range(resamples))
    return percentile_interval(values, confidence)


def mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    """(mean, population standard deviation), (None, None) for no values."""
    if not values:
        return None, None
    return statistics.fmean(values), statistics.pstdev(values)


def t_test(first: Sequence[float], second: Sequence[float], *, equal_var: bool) -> dict[str, Any]:
    """Two-sample t-test, two-sided: Student's (pooled variance, df = n1 + n2 - 2) or Welch's
    (Welch-Satterthwaite df), as scipy's `ttest_ind`. p is None where it is undefined (fewer
    than two observations on a side); two constant samples give p = 1 when their means are
    equal and 0 when they differ."""
    n1, n2 = len(first), len(second)
    result: dict[str, Any] = {"n": [n1, n2], "t": None, "df": None, "p": None}
    if n1 < 2 or n2 < 2:
        return result
    m1, m2 = sum(first) / n1, sum(second) / n2
    v1 = sum((x - m1) ** 2 for x in first) / (n1 - 1)
    v2 = sum((x - m2) ** 2 for x in second) / (n2 - 1)
    if equal_var:
        df = n1 + n2 - 2.0
        pooled = ((n1 - 1) * v1 + (n2 - 1) * v2) / df
        se2 = pooled * (1 / n1 + 1 / n2)
    else:
        a, b = v1 / n1, v2 / n2
        se2 = a + b
        df = se2**2 / (a**2 / (n1 - 1) + b**2 / (n2 - 1)) if se2 > 0 else n1 + n2 - 2.0
    if se2 <= 0:
        same = math.isclose(m1, m2, abs_tol=1e-12)
        return {**result, "t": 0.0 if same else math.copysign(math.inf, m1 - m2), "df": df, "p": 1.0 if same else 0.0}  # fmt: skip
    from scipy import stats  # heavy; only when a table is built

    t = (m1 - m2) / math.sqrt(se2)
    return {**result, "t": t, "df": df, "p": float(2 * stats.t.sf(abs(t), df))}


def mcnemar(before: Sequence[bool], after: Sequence[bool]) -> dict[str, float | int]:
    """Exact two-sided McNemar test on paired flags (biased before / after, same prompt and
    sample): b = biased only before, c = only after; p = P(as extreme | b + c discordant, 1/2)."""
    b = sum(1 for x, y in zip(before, after, strict=True) if x and not y)
    c = sum(1 for x, y in zip(before, after, strict=True) if y and not x)
    n = b + c
    if n == 0:
        return {"only_before": b, "only_after": c, "p_value": 1.0}
    tail = sum(math.comb(n, i) for i in range(0, min(b, c) + 1)) / 2**n
    return {"only_before": b, "only_after": c, "p_value": min(1.0, 2 * tail)}


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa (1971) of a subjects x categories table of rating counts, every subject
    rated by the same number n >= 2 of raters; None when undefined (no subjects, or every
    rating in one category)."""
    rows = [list(map(int, r)) for r in counts]
    if not rows:
        return None
    n = sum(rows[0])
    if n < 2 or any(sum(r) != n for r in rows):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per subject")
    subjects = len(rows)
    p_bar = sum((sum(c * c for c in r) - n) / (n * (n - 1)) for r in rows) / subjects
    totals = [sum(r[j] for r in rows) for j in range(len(rows[0]))]
    p_e = sum((t / (subjects * n)) ** 2 for t in totals)
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def cohen_kappa(first: Sequence[int], second: Sequence[int]) -> float | None:
    """Cohen's kappa of two raters' 0/1 labels (scikit-learn); None when undefined (no items,
    or both raters give one and the same label to everything)."""
    if not first or len(set(first) | set(second)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score  # heavy: keeps `boi --help` fast

    return float(cohen_kappa_score(list(first), list(second), labels=[0, 1]))


def pearson(xs: Sequence[float], ys: Sequence[float]) -> tuple[float | None, float | None]:
    """Pearson's r and its two-sided p-value (scipy); (None, None) with fewer than two points
    or a constant side."""
    if len(xs) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None, None
    from scipy.stats import pearsonr  # heavy: keeps `boi --help` fast

    result = pearsonr(xs, ys)
    return float(result.statistic), float(result.pvalue)


def pearson_interval(
    xs: Sequence[float], ys: Sequence[float], resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """Percentile bootstrap interval of Pearson's r over the (x, y) pairs, resampled with
    replacement. Resamples where r is undefined (a constant side) are left out; (NaN, NaN) when
    r itself is undefined or fewer than half of the resamples define it."""
    pairs = list(zip(xs, ys, strict=True))
    if resamples <= 0 or pearson(xs, ys)[0] is None:
        return NAN, NAN
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        sample = rng.choices(pairs, k=len(pairs))
        r, _ = pearson([x for x, _ in sample], [y for _, y in sample])
        if r is not None:
            values.append(r)
    if 2 * len(values) < resamples:
        return NAN, NAN
    return percentile_interval(sorted(values), confidence)
