"""`call_tables`: a candidate's outcomes on many plain-data inputs, computed in the sandbox.

Property tests that compare a candidate with itself (fairness tests: does changing one
attribute change the outcome?) need no expected value, only the candidate's outcome on every
input of a large table: tens of thousands of calls per completion. Sending each call across the
sandbox's pipe would cost a round trip per call, so a table job carries its inputs as a few
plain-data batches (a product of value pools, or explicit rows), the candidate runs them all in
its own sandboxed process, and one reply per batch brings back the outcomes: the distinct ones
as plain data, and a uint16 index per row. Nothing is judged in the sandbox: the caller reads
the table on the trusted side (`OutcomeTable`) and decides.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.execution import _wire
from benchmarks.execution._config import REFERENCE_WORKLOAD_SECONDS, ExecutionConfig
from benchmarks.execution._pool import Isolation, WorkerPool, calibrate_speed

# How long the harness waits beyond a job's own timeout before it declares a worker hung.
_GRACE_SECONDS = 30.0


@dataclass(frozen=True)
class TableBatch:
    """Inputs of one round trip: the full product of `pools` (rows in itertools.product order)
    or the explicit `rows`. Each row is the positional arguments of one call."""

    pools: Sequence[Sequence[Any]] | None = None
    rows: Sequence[Sequence[Any]] | None = None

    def __post_init__(self) -> None:
        if (self.pools is None) == (self.rows is None):
            raise ValueError("a table batch has either pools or rows")

    @property
    def size(self) -> int:
        if self.rows is not None:
            return len(self.rows)
        return int(np.prod([len(p) for p in self.pools or ()], dtype=np.int64))

    def to_json(self) -> dict[str, Any]:
        if self.pools is not None:
            return {"values": _wire.encode_plain([list(p) for p in self.pools])}
        return {"rows": _wire.encode_plain([list(r) for r in self.rows or ()])}


@dataclass(frozen=True)
class TableJob:
    """One program and the batches to call its `entry_point` on."""

    key: str
    program: str
    entry_point: str
    batches: Sequence[TableBatch]


@dataclass(frozen=True)
class Outcome:
    """One distinct outcome: the value returned, or the name of the exception raised."""

    value: Any = None
    raised: str | None = None


@dataclass
class OutcomeTable:
    """A batch's outcomes: `codes[row]` indexes `outcomes`."""

    outcomes: list[Outcome]
    codes: np.ndarray


@dataclass
class TableResult:
    """What the sandbox gave for a job: `status` "completed", "timed out", "failed" or "error";
    `reason` says why when not completed; one table per batch when completed."""

    key: str
    status: str
    reason: str = ""
    tables: list[OutcomeTable] = field(default_factory=list)
    seconds: float = 0.0


def _decode_table(data: Any, rows: int) -> OutcomeTable:
    """A table as the candidate sent it, checked: every code indexes an outcome, one per row."""
    if type(data) is not dict or type(data.get("outcomes")) is not list:
        raise ValueError("a table without outcomes")
    outcomes = []
    for item in data["outcomes"]:
        if type(item) is not dict or len(item) != 1:
            raise ValueError("a malformed outcome")
        if "raise" in item:
            outcomes.append(Outcome(raised=str(item["raise"])[:200]))
        elif "ok" in item:
            outcomes.append(Outcome(value=_wire.decode_plain(item["ok"], {})))
        else:
            raise ValueError("a malformed outcome")
    raw = base64.b64decode(str(data.get("codes", "")), validate=True)
    codes = np.frombuffer(raw, dtype="<u2").astype(np.uint16)
    if len(codes) != rows:
        raise ValueError(f"{len(codes)} outcomes for {rows} inputs")
    if len(codes) and int(codes.max()) >= len(outcomes):
        raise ValueError("an outcome index out of range")
    return OutcomeTable(outcomes, codes)


def _result(job: TableJob, outcome: Mapping[str, Any]) -> TableResult:
    seconds = float(outcome.get("run_seconds", 0.0))
    status = str(outcome.get("status", "error"))
    if status != "passed":
        reason = str(outcome.get("result", "")).removeprefix("failed: ")
        return TableResult(job.key, status, reason, seconds=seconds)
    data = outcome.get("tables")
    try:
        if type(data) is not list or len(data) != len(job.batches):
            raise ValueError("not one table per batch")
        tables = [_decode_table(t, b.size) for t, b in zip(data, job.batches, strict=True)]
    except (ValueError, TypeError, KeyError, RecursionError) as err:
        return TableResult(
            job.key, "failed", f"the candidate sent a malformed table ({err})", seconds=seconds
        )
    return TableResult(job.key, "completed", tables=tables, seconds=seconds)


def table_timeout(config: ExecutionConfig) -> float:
    """The wall-clock seconds one table job may take: the configured timeout scaled by this
    machine's speed (never down), capped by `max_timeout`."""
    speed = calibrate_speed(REFERENCE_WORKLOAD_SECONDS) if config.calibrate else 1.0
    return min(config.max_timeout, config.timeout * speed)


def call_tables(
    jobs: Iterable[TableJob],
    config: ExecutionConfig,
    *,
    timeout: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_isolation: Callable[[Isolation], None] | None = None,
) -> Iterator[TableResult]:
    """Run every job in the sandbox pool; yield results in finish order.

    `timeout` (default `table_timeout(config)`) bounds each job's wall-clock time. Raises
    UserError, as `execute_samples` does, when isolation is weak and not allowed.
    """
    listed = list(jobs)
    if not listed:
        return
    seconds = table_timeout(config) if timeout is None else timeout
    with WorkerPool(config) as pool:
        if on_isolation is not None:
            on_isolation(pool.isolation)
        work = (
            (
                index,
                {
                    "id": job.key,
                    "mode": "table",
                    "candidate_program": job.program,
                    "entry_point": job.entry_point,
                    "prefix_classes": [],
                    "batches": [b.to_json() for b in job.batches],
                    "timeout": seconds,
                },
                seconds * 1.5 + _GRACE_SECONDS,
            )
            for index, job in enumerate(listed)
        )
        for done, (index, outcome) in enumerate(pool.map(work), start=1):
            if progress is not None:
                progress(done, len(listed))
            yield _result(listed[index], outcome)
