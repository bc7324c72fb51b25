"""How many threads torch may use in a boi process: one place, read by every model load
(`benchmarks.common.models.configure_threads`) and recorded in every run's manifest
(`benchmarks.common.provenance.run_record`), since the count can move a model's logits in
their last digits (docs/explanation/performance.md)."""

from __future__ import annotations

import os

from benchmarks.common.errors import UserError

__all__ = ["THREADS_ENV", "default_threads"]

THREADS_ENV = "BOI_THREADS"


def default_threads() -> int:
    """torch's intra-op thread count for this process: `BOI_THREADS` when set, else half the
    CPUs this process may run on (at least 1).

    Why not torch's own default (every core): on a small machine two `boi` processes, each with
    one thread per core, oversubscribe it, and OpenMP's spinning workers then wait on each other
    (scripts/bench_threads.py measures the slowdown; docs/explanation/performance.md quotes it).
    Half the cores costs a process alone little and keeps two side by side near a fair share.
    """
    text = os.environ.get(THREADS_ENV, "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise UserError(
                f"{THREADS_ENV}={text!r} is not a positive whole number; set it to the torch "
                "threads each boi process may use (e.g. 1), or unset it."
            )
        return value
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2)
