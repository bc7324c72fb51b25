"""The harness side of the sandbox: cgroups, a pool of zygote workers, the isolation report."""

from __future__ import annotations

import json
import os
import queue
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.execution import _zygote
from benchmarks.execution._config import ExecutionConfig

_ZYGOTE_SCRIPT = Path(_zygote.__file__).resolve()
# A uid range no distribution hands out, one uid per worker so that RLIMIT_NPROC counts one
# sample's processes only (it does not bind root, so the sample must not be root).
SANDBOX_UID_BASE = 1_990_000_000
HIDDEN_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run", "/sys/fs/cgroup")
CGROUP_PREFIX = "boi-"


@dataclass
class Isolation:
    """What the sandbox achieved on this machine; `level` is full, namespaces or weak."""

    level: str
    network: bool
    filesystem: bool
    pid_namespace: bool
    uid_drop: bool
    process_cap: str | None
    memory_cap: str
    hidden: list[str] = field(default_factory=list)
    user_namespace: bool = False
    private_proc: bool = False
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        parts = [
            f"network {'isolated' if self.network else 'OPEN'}",
            f"filesystem {'read-only + private scratch' if self.filesystem else 'WRITABLE'}",
            f"processes {'PID namespace per sample' if self.pid_namespace else 'NOT contained'}"
            + (", own /proc" if self.private_proc else ""),
            f"process cap {self.process_cap or 'NONE'}",
            f"memory cap {self.memory_cap}",
            f"uid {'unprivileged' if self.uid_drop else 'not dropped'}",
        ]
        return f"isolation level: {self.level} ({'; '.join(parts)})"

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def isolation_from_report(report: dict[str, Any], cgroups: Mapping[str, Path]) -> Isolation:
    if "pids" in cgroups:
        process_cap = "pids cgroup"
    elif report["uid_drop"]:
        process_cap = "RLIMIT_NPROC (one uid per worker)"
    elif report["user_namespace"]:
        process_cap = "RLIMIT_NPROC (user namespace)"
    else:
        process_cap = None
    memory_cap = "memory cgroup + RLIMIT_AS" if "memory" in cgroups else "RLIMIT_AS"
    contained = (
        report["network"] and report["filesystem"] and report["pid_namespace"] and process_cap
    )
    if contained and report["uid_drop"]:
        level = "full"
    elif contained:
        level = "namespaces"
    else:
        level = "weak"
    return Isolation(
        level=level,
        network=report["network"],
        filesystem=report["filesystem"],
        pid_namespace=report["pid_namespace"],
        uid_drop=report["uid_drop"],
        process_cap=process_cap,
        memory_cap=memory_cap,
        hidden=list(report.get("hidden", [])),
        user_namespace=report["user_namespace"],
        private_proc=bool(report.get("private_proc")),
        notes=list(report.get("errors", [])),
    )


# ---- cgroups ----------------------------------------------------------------------------------


def _cgroup_bases() -> dict[str, Path]:
    """controller -> the directory of this process's own cgroup for it (v1, or v2 unified)."""
    mounts: dict[str, Path] = {}
    v2_mount: Path | None = None
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            left, _, right = line.partition(" - ")
            fstype, _, super_options = right.split(" ", 2)
            mount_point = Path(left.split()[4])
            if fstype == "cgroup":
                for option in super_options.strip().split(","):
                    if option in ("pids", "memory"):
                        mounts[option] = mount_point
            elif fstype == "cgroup2":
                v2_mount = mount_point
    bases: dict[str, Path] = {}
    with open("/proc/self/cgroup", encoding="utf-8") as handle:
        for line in handle:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(","):
                if controller in mounts:
                    bases[controller] = mounts[controller] / path.lstrip("/")
            if controllers == "" and v2_mount is not None:
                enabled = v2_mount / path.lstrip("/") / "cgroup.controllers"
                try:
                    available = enabled.read_text().split()
                except OSError:
                    available = []
                for controller in ("pids", "memory"):
                    if controller in available and controller not in bases:
                        bases[controller] = v2_mount / path.lstrip("/")
    return bases


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_cgroup_tree(path: Path) -> None:
    for child in sorted(path.glob("w*"), reverse=True):
        try:
            child.rmdir()
        except OSError:
            pass
    try:
        path.rmdir()
    except OSError:
        pass


class Cgroups:
    """Per-worker pids and memory cgroups under this process's own cgroup, where writable."""

    def __init__(self, workers: int, config: ExecutionConfig) -> None:
        self.roots: dict[str, Path] = {}
        self.workers: dict[str, list[Path]] = {}
        self.notes: list[str] = []
        if not config.use_cgroups:
            return
        tag = f"{CGROUP_PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
        for controller, base in _cgroup_bases().items():
            self._remove_stale(base)
            try:
                self._create(controller, base / tag, workers, config)
            except OSError as err:
                self.notes.append(f"{controller} cgroup unavailable ({err.strerror or err})")
                _remove_cgroup_tree(base / tag)

    @staticmethod
    def _remove_stale(base: Path) -> None:
        # Trees left by harnesses that were killed (their workers are empty by now).
        try:
            stale = [p for p in base.iterdir() if p.name.startswith(CGROUP_PREFIX)]
        except OSError:
            return
        for path in stale:
            try:
                pid = int(path.name[len(CGROUP_PREFIX) :].split("-")[0])
            except ValueError:
                continue
            if not _pid_alive(pid):
                _remove_cgroup_tree(path)

    def _create(self, controller: str, root: Path, workers: int, config: ExecutionConfig) -> None:
        root.mkdir()
        v2 = (root / "cgroup.subtree_control").exists()
        if v2:
            (root / "cgroup.subtree_control").write_text(f"+{controller}")
        paths = []
        for index in range(workers):
            path = root / f"w{index}"
            path.mkdir()
            if controller == "pids":
                (path / "pids.max").write_text(str(config.processes))
            elif v2:
                (path / "memory.max").write_text(str(config.memory_mb * 2**20))
                (path / "memory.swap.max").exists() and (path / "memory.swap.max").write_text("0")
            else:
                (path / "memory.limit_in_bytes").write_text(str(config.memory_mb * 2**20))
            paths.append(path)
        self.roots[controller] = root
        self.workers[controller] = paths

    def procs_files(self, index: int) -> list[str]:
        return [str(paths[index] / "cgroup.procs") for paths in self.workers.values()]

    def close(self) -> None:
        for root in self.roots.values():
            _remove_cgroup_tree(root)
        self.roots.clear()


# ---- the worker pool --------------------------------------------------------------------------


class WorkerDied(RuntimeError):
    pass


class _Worker:
    def __init__(self, index: int, pool: WorkerPool) -> None:
        self.index = index
        self.pool = pool
        self.proc: subprocess.Popen | None = None
        self.job_w = -1
        self.result_r = -1
        self.report: dict[str, Any] = {}

    def start(self) -> dict[str, Any]:
        pool = self.pool
        config = pool.config
        job_r, job_w = os.pipe()
        result_r, result_w = os.pipe()
        # The zygote's JSON start-up config (mixed values; _zygote.py reads it as a plain dict).
        zygote_config: dict[str, Any] = {
            "harness_pid": os.getpid(),
            "worker_index": self.index,
            "namespaces": config.use_namespaces,
            "sandbox_uid": SANDBOX_UID_BASE + self.index if config.drop_uid else None,
            "fallback_scratch": str(pool.fallback_scratch / f"w{self.index}"),
            "scratch_mb": config.scratch_mb,
            "scratch_inodes": config.scratch_inodes,
            "hide": list(HIDDEN_DIRS),
            "cgroup_procs": pool.cgroups.procs_files(self.index),
            "preload": list(config.preload),
            "max_output_mb": config.max_output_mb,
            "limits": {
                "memory_mb": config.memory_mb,
                "processes": config.processes,
                "file_size_mb": config.file_size_mb,
            },
        }
        Path(zygote_config["fallback_scratch"]).mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-I",
                str(_ZYGOTE_SCRIPT),
                json.dumps(zygote_config),
                str(job_r),
                str(result_w),
            ],
            pass_fds=(job_r, result_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None if config.debug else subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C in the terminal reaches the harness only
        )
        os.close(job_r)
        os.close(result_w)
        self.job_w, self.result_r = job_w, result_r
        ready = self._receive(config.startup_timeout)
        if not ready or not ready.get("ready"):
            self.stop()
            raise WorkerDied("the sandbox worker failed to start")
        self.report = ready["report"]
        return self.report

    def _receive(self, timeout: float) -> dict[str, Any] | None:
        readable, _, _ = select.select([self.result_r], [], [], timeout)
        if not readable:
            return None
        try:
            return _zygote._recv(self.result_r)
        except (OSError, ValueError):
            return None

    def run(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            _zygote._send(self.job_w, job)
        except OSError:
            raise WorkerDied("the sandbox worker is gone") from None
        outcome = self._receive(timeout)
        if outcome is None:
            raise WorkerDied("the sandbox worker stopped answering")
        return outcome

    def stop(self) -> None:
        for fd in (self.job_w, self.result_r):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.job_w = self.result_r = -1
        if self.proc is not None:
            try:
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                self.proc.kill()  # its monitors and samples die with it (PR_SET_PDEATHSIG)
                self.proc.wait()
            self.proc = None


class WorkerPool:
    """N zygote workers; `map` runs jobs on them and yields (index, outcome) as they finish."""

    def __init__(self, config: ExecutionConfig) -> None:
        self.config = config
        self.size = config.resolved_workers()
        _remove_stale_scratch()
        self.fallback_scratch = Path(tempfile.mkdtemp(prefix=f"boi-sandbox-{os.getpid()}-"))
        self.cgroups = Cgroups(self.size, config)
        self.workers = [_Worker(i, self) for i in range(self.size)]
        self._lock = threading.Lock()
        try:
            report = self.workers[0].start()
            self.isolation = isolation_from_report(report, self.cgroups.roots)
            self.isolation.notes += self.cgroups.notes
            if self.isolation.level == "weak" and not config.allow_weak_isolation:
                raise UserError(
                    f"refusing to run untrusted code: {self.isolation.describe()}; run as root or "
                    "enable user namespaces, or pass --allow-weak-isolation to accept the risk."
                )
            for worker in self.workers[1:]:
                worker.start()
        except BaseException:
            self.close()
            raise

    def map(
        self, jobs: Iterable[tuple[int, dict[str, Any], float]]
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """Run (key, job, harness deadline seconds) jobs; yield (key, outcome) in finish order."""
        source = iter(jobs)
        done: queue.Queue = queue.Queue()
        stop = threading.Event()

        def next_job() -> tuple[int, dict[str, Any], float] | None:
            with self._lock:
                return next(source, None)

        def serve(worker: _Worker) -> None:
            try:
                while not stop.is_set():
                    item = next_job()
                    if item is None:
                        break
                    key, job, deadline = item
                    done.put((key, self._run_with_restart(worker, job, deadline)))
            except BaseException as err:  # surfaced in the consumer
                done.put((None, err))
            finally:
                done.put((None, None))

        threads = [threading.Thread(target=serve, args=(w,), daemon=True) for w in self.workers]
        for thread in threads:
            thread.start()
        running = len(threads)
        try:
            while running:
                key, outcome = done.get()
                if key is None:
                    if isinstance(outcome, BaseException):
                        raise outcome
                    running -= 1
                    continue
                yield key, outcome
        finally:
            stop.set()

    def _run_with_restart(
        self, worker: _Worker, job: dict[str, Any], deadline: float
    ) -> dict[str, Any]:
        for attempt in range(2):
            try:
                if worker.proc is None:
                    worker.start()
                return worker.run(job, deadline)
            except WorkerDied as err:
                worker.stop()
                if attempt == 1:
                    return {"status": "error", "result": f"error: {err}", "duration": 0.0}
        raise AssertionError("unreachable")

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.cgroups.close()
        shutil.rmtree(self.fallback_scratch, ignore_errors=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remove_stale_scratch() -> None:
    """Scratch directories of harnesses that were killed (SIGKILL leaves no time to clean up)."""
    for path in Path(tempfile.gettempdir()).glob("boi-sandbox-*-*"):
        try:
            pid = int(path.name.split("-")[2])
        except (IndexError, ValueError):
            continue
        if not _pid_alive(pid):
            shutil.rmtree(path, ignore_errors=True)


def calibrate_speed(reference_seconds: float, runs: int = 3) -> float:
    """How much slower this machine runs a fixed pure-Python workload than the reference one.

    Returns max(1, best-of-`runs` time / `reference_seconds`): timeouts are only ever scaled up,
    so a slow or loaded machine does not turn correct code into timeouts.
    """
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        _workload()
        best = min(best, time.perf_counter() - started)
    return max(1.0, best / reference_seconds)


def _workload() -> int:
    total = 0
    table: dict[int, int] = {}
    for i in range(200_000):
        total += (i * i) % 7
        table[i % 1000] = total
    return total + len(sorted(str(v) for v in table.values()))
