"""pass@k: the unbiased estimator of Chen et al. (2021), per task and averaged.

Inputs are plain data: task id -> list of booleans (one per sample, True = passed). pass@k is
reported for a task only where it has n >= k samples, and the average only over such tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from benchmarks.stats import mean


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c of them correct) passes.

    Numerically stable form of 1 - C(n-c, k) / C(n, k): a running product, no huge binomials.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    miss = 1.0
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


def pass_at_k_by_task(
    outcomes: Mapping[str, Sequence[bool]], ks: Iterable[int]
) -> dict[str, dict[str, float]]:
    """task id -> {"pass@k": value} for each k with k <= n (tasks with no samples omitted)."""
    ks = sorted(set(ks))
    table: dict[str, dict[str, float]] = {}
    for task_id, passed in outcomes.items():
        n, c = len(passed), sum(bool(p) for p in passed)
        if n:
            table[task_id] = {f"pass@{k}": pass_at_k(n, c, k) for k in ks if k <= n}
    return table


def mean_pass_at_k(outcomes: Mapping[str, Sequence[bool]], ks: Iterable[int]) -> dict[str, float]:
    """ "pass@k" -> mean over the tasks that have at least k samples (absent when none has)."""
    by_task = pass_at_k_by_task(outcomes, ks)
    means: dict[str, float] = {}
    for k in sorted(set(ks)):
        key = f"pass@{k}"
        values = [row[key] for row in by_task.values() if key in row]
        if values:
            means[key] = mean(values)
    return means


def pass_at_k_summary(outcomes: Mapping[str, Sequence[bool]], ks: Iterable[int]) -> dict:
    """Per-task n, c and pass@k, the overall means, and how many tasks each mean covers."""
    ks = sorted(set(ks))
    by_task = pass_at_k_by_task(outcomes, ks)
    tasks = {
        task_id: {"n": len(passed), "c": sum(bool(p) for p in passed), **by_task.get(task_id, {})}
        for task_id, passed in outcomes.items()
    }
    coverage = {f"pass@{k}": sum(1 for row in tasks.values() if row["n"] >= k) for k in ks}
    return {
        "overall": mean_pass_at_k(outcomes, ks),
        "tasks_counted": {key: count for key, count in coverage.items() if count},
        "tasks": tasks,
    }
