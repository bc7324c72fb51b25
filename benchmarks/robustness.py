"""Robustness of pass@k under transformations: drops, flips, bootstrap intervals, ReCode metrics.

All functions take plain data. For one transformation:

- `original`: source task id -> list of booleans, one per sample index, on the original problem;
- `variants`: source task id -> {variant task id -> list of booleans} on its perturbed versions
  (one variant for most transformations; several for Drop One, one per keyword, or for random
  transformations run with several seeds).

Sample index i of a variant is paired with sample index i of the original (same seed and
sampling position), which is what ReCode's per-sample worst case needs; lists of one problem
must therefore have the same length. `benchmarks.report` builds these mappings from result rows
and problem records (`source_task_id`, `lineage[-1].transform`).

*Solved* and *flip* have one meaning everywhere (`solved`, `flip_table`): a problem or variant is
solved when at least a threshold fraction of its samples passed (and at least one did); a flip
is a (problem, variant) pair whose verdict differs between the original and the variant. The
report uses `ANY_SAMPLE` (one passing sample is enough); `boi analyze hints` and `minimal` take
`--pass-threshold`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchmarks.passk import pass_at_k
from benchmarks.stats import mean, percentile_interval

ORIGINAL = "original"
ANY_SAMPLE = 0.0
"""The report's threshold for `solved`: one passing sample is enough (pass@n > 0)."""

Outcomes = Mapping[str, Sequence[bool]]
Variants = Mapping[str, Mapping[str, Sequence[bool]]]


def _estimate(passed: Sequence[bool], k: int) -> float:
    return pass_at_k(len(passed), sum(bool(p) for p in passed), k)


def _paired_tasks(original: Outcomes, variants: Variants, k: int) -> list[str]:
    tasks = []
    for task_id in sorted(set(original) & set(variants)):
        if len(original[task_id]) < k or not variants[task_id]:
            continue
        if any(len(v) < k for v in variants[task_id].values()):
            continue
        tasks.append(task_id)
    return tasks


def relative_drop(original_score: float, perturbed_score: float) -> float:
    """(original - perturbed) / original: 0.25 means a quarter of the score was lost."""
    if original_score == 0:
        return float("nan")
    return (original_score - perturbed_score) / original_score


def transform_pass_at_k(original: Outcomes, variants: Variants, k: int) -> dict[str, float]:
    """Mean pass@k on the originals and on the variants (averaged per problem), and the drop.

    Only problems with n >= k on the original and on every variant are counted.
    """
    tasks = _paired_tasks(original, variants, k)
    orig = mean(_estimate(original[t], k) for t in tasks)
    pert = mean(mean(_estimate(v, k) for v in variants[t].values()) for t in tasks)
    return {
        "problems": len(tasks),
        "original": orig,
        "perturbed": pert,
        "relative_drop": relative_drop(orig, pert),
    }


def solved(passed: int, samples: int, threshold: float = ANY_SAMPLE) -> bool:
    """Whether a problem or variant counts as solved: at least one of its `samples` passed, and
    at least the fraction `threshold` of them (the report: `ANY_SAMPLE`; the analyses: their
    `--pass-threshold`, default 0.5)."""
    return samples > 0 and passed > 0 and passed / samples >= threshold


def flip_table(
    original: Outcomes, variants: Variants, threshold: float = ANY_SAMPLE
) -> dict[str, Any]:
    """Per (problem, variant): `solved` originally vs on the variant.

    Returns the four counts and the task ids that flipped each way: `lost` were solved
    originally and not on the variant, `gained` the reverse.
    """
    table: dict[str, Any] = {"kept_solved": 0, "kept_failed": 0, "lost": [], "gained": []}
    for task_id in sorted(set(original) & set(variants)):
        before = solved(sum(map(bool, original[task_id])), len(original[task_id]), threshold)
        for variant_id, passed in sorted(variants[task_id].items()):
            after = solved(sum(map(bool, passed)), len(passed), threshold)
            if before and after:
                table["kept_solved"] += 1
            elif not before and not after:
                table["kept_failed"] += 1
            elif before:
                table["lost"].append(variant_id)
            else:
                table["gained"].append(variant_id)
    return table


def paired_bootstrap_drop(
    original: Outcomes,
    variants: Variants,
    k: int,
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, float]:
    """Relative drop of pass@k with a paired bootstrap confidence interval.

    Problems are resampled with replacement, each keeping its original and perturbed scores
    together (the pairing removes between-problem variance from the interval).
    """
    tasks = _paired_tasks(original, variants, k)
    if not tasks:
        return {"drop": float("nan"), "low": float("nan"), "high": float("nan"), "problems": 0}
    pairs = [
        (_estimate(original[t], k), mean(_estimate(v, k) for v in variants[t].values()))
        for t in tasks
    ]
    rng = random.Random(seed)
    drops = []
    for _ in range(resamples):
        sample = [pairs[rng.randrange(len(pairs))] for _ in pairs]
        drop = relative_drop(mean(p[0] for p in sample), mean(p[1] for p in sample))
        if drop == drop:  # skip resamples whose original score is 0 (drop undefined)
            drops.append(drop)
    drops.sort()
    point = relative_drop(mean(p[0] for p in pairs), mean(p[1] for p in pairs))
    low, high = percentile_interval(drops, confidence)
    return {"drop": point, "low": low, "high": high, "problems": len(tasks)}


def _per_index(variants: Mapping[str, Sequence[bool]], n: int, combine: Any) -> list[bool]:
    return [combine(bool(v[i]) for v in variants.values()) for i in range(n)]


def robust_pass_at_k(original: Outcomes, variants: Variants, k: int) -> float:
    """ReCode's Robust Pass_s@k: sample i counts only if it passes on every variant (worst case).

    rc_s = number of sample indices correct on all s variants; RP_s@k = mean over problems of
    1 - C(n - rc_s, k) / C(n, k).
    """
    tasks = _paired_tasks(original, variants, k)
    values = []
    for t in tasks:
        n = len(original[t])
        robust = _per_index(variants[t], n, all)
        values.append(pass_at_k(n, sum(robust), k))
    return mean(values)


def robust_drop_at_k(original: Outcomes, variants: Variants, k: int) -> float:
    """ReCode's Robust Drop_s@k: (pass@k - Robust Pass_s@k) / pass@k on the same problems."""
    tasks = _paired_tasks(original, variants, k)
    nominal = mean(_estimate(original[t], k) for t in tasks)
    return relative_drop(nominal, robust_pass_at_k(original, variants, k))


def robust_relative_at_k(original: Outcomes, variants: Variants, k: int) -> float:
    """ReCode's Robust Relative_s@k: how often a sample's verdict changes under any variant.

    rc- counts sample indices correct on the original but wrong on some variant, rc+ those
    wrong on the original but correct on some variant; RR_s@k = mean over problems of
    [1 - C(n - rc-, k)/C(n, k)] + [1 - C(n - rc+, k)/C(n, k)].
    """
    tasks = _paired_tasks(original, variants, k)
    values = []
    for t in tasks:
        n = len(original[t])
        nominal = [bool(p) for p in original[t][:n]]
        any_wrong = _per_index(variants[t], n, lambda xs: not all(xs))
        any_right = _per_index(variants[t], n, any)
        worse = sum(1 for i in range(n) if nominal[i] and any_wrong[i])
        better = sum(1 for i in range(n) if not nominal[i] and any_right[i])
        values.append(pass_at_k(n, worse, k) + pass_at_k(n, better, k))
    return mean(values)


def robustness_report(
    original: Outcomes,
    transformed: Mapping[str, Variants],
    ks: Iterable[int] = (1,),
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Everything above, per transformation and k, as one JSON-ready dict."""
    report: dict[str, Any] = {}
    for transform, variants in sorted(transformed.items()):
        entry: dict[str, Any] = {"flips": flip_table(original, variants)}
        for k in sorted(set(ks)):
            entry[f"pass@{k}"] = {
                **transform_pass_at_k(original, variants, k),
                "bootstrap": paired_bootstrap_drop(
                    original, variants, k, resamples=resamples, seed=seed
                ),
                "robust_pass": robust_pass_at_k(original, variants, k),
                "robust_drop": robust_drop_at_k(original, variants, k),
                "robust_relative": robust_relative_at_k(original, variants, k),
            }
        report[transform] = entry
    return report
