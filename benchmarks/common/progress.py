"""Progress for long work: timed stage lines and tqdm bars, the same in every command."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def stage(
    name: str, log: Callable[[str], None], timings: dict[str, float], prefix: str = "boi"
) -> Iterator[None]:
    """Log a stage's start and end (`[prefix] name ...`), and add its duration to `timings`."""
    start = time.perf_counter()
    log(f"[{prefix}] {name} ...")
    yield
    elapsed = time.perf_counter() - start
    timings[name] = round(timings.get(name, 0.0) + elapsed, 2)
    log(f"[{prefix}] {name} done in {elapsed:.1f} s")


def progress_bar(total: int, description: str, unit: str = "sample") -> Callable[[int, int], None]:
    """A `(done, total)` callback drawing a tqdm bar (closed when done reaches total)."""
    bar = tqdm(total=total, desc=description, unit=unit, leave=False)
    if total <= 0:  # nothing to count: no bar left open
        bar.close()

    def update(done: int, total: int) -> None:
        bar.update(done - bar.n)  # update() respects tqdm's redraw interval; refresh() would not
        if done >= total:
            bar.close()

    return update
