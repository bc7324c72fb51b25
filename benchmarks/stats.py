"""Small statistics every table and plot uses: means that tolerate no data, percentile
bootstrap intervals, mean and spread.

pass@k lives in `benchmarks.passk`, the robustness measures (drops, flips, paired bootstrap,
ReCode's metrics) in `benchmarks.robustness`; both build on these helpers, and so do the report
and the critic's Table 2. Pure functions over plain sequences, seeded by the caller.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

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
    if not values or resamples <= 0:
        return NAN, NAN
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return percentile_interval(means, confidence)


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
