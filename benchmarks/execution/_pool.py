"""The harness side of the sandbox: cgroups, a pool of zygote workers, the isolation each worker reached."""

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
from benchmarks.execution import _wire
from benchmarks.execution._cgroups import Cgroups, pid_alive
from benchmarks.execution._config import ExecutionConfig
from benchmarks.execution._libraries import resolve_libraries
from benchmarks.execution._status import Status
from benchmarks.languages import Toolchain, language_named
from benchmarks.problem import Problem

# The worker runs as a script (`python -I`), never imported here: of its modules the harness
# imports only `_wire`, the messages both sides exchange.
_ZYGOTE_SCRIPT = Path(_wire.__file__).resolve().with_name("_zygote.py")
# Per worker, a (candidate uid, tests uid) pair: one uid per worker so that RLIMIT_NPROC counts
# one sample's processes only (it does not bind root, so the sample must not be root), and a
# second one for the tests so that the candidate can neither signal nor read them. The first
# range is one no distribution hands out; a container's user namespace may map only 65536 uids
# (0-65535), hence the second range, above the regular users (UID_MAX 60000) and below
# nobody (65534).
# Each pool takes a random slot of `size` consecutive uids in each range, so that two harnesses
# on one machine do not share uids (and so neither RLIMIT_NPROC counts nor signals).
SANDBOX_UID_BASE = 1_990_000_000
TESTS_UID_BASE = 1_990_500_000
CONTAINER_UID_BASE = 61_000
CONTAINER_TESTS_UID_BASE = 63_000
_UID_RANGES = (  # (candidate base, tests base, uids in each)
    (SANDBOX_UID_BASE, TESTS_UID_BASE, 500_000),
    (CONTAINER_UID_BASE, CONTAINER_TESTS_UID_BASE, 2_000),
)


def is_sandbox_uid(uid: int) -> bool:
    """Whether `uid` is one the sandbox hands out (to a sample or to the tests)."""
    return any(base <= uid < tests + size for base, tests, size in _UID_RANGES)


def sandbox_uid_pairs(index: int, workers: int, slot: int) -> list[list[int]]:
    """Worker `index`'s (candidate uid, tests uid) pair in each range, for the pool's `slot`."""
    return [
        [
            base + (slot % (size // workers)) * workers + index,
            tests + (slot % (size // workers)) * workers + index,
        ]
        for base, tests, size in _UID_RANGES
    ]


# The directories a worker with private mounts covers with an empty tmpfs (named here to be
# hidden, never written to: not temporary files, whatever bandit's S108 reads into "/tmp").
HIDDEN_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run", "/sys/fs/cgroup")  # noqa: S108
LEVELS = ("full", "namespaces", "unprivileged", "weak")


@dataclass
class Isolation:
    """What the sandbox achieved on this machine.

    `level`, strongest first: full (namespaces and an unprivileged uid), namespaces (without
    the uid), unprivileged (no namespaces: Landlock, the seccomp filter and a process cap, as in
    an unprivileged container), weak (none of these: refused unless the user accepts the risk).
    Landlock and seccomp confine generated code in every level where the kernel offers them.
    """

    level: str
    network: bool
    filesystem: bool
    pid_namespace: bool
    uid_drop: bool
    process_cap: str | None
    memory_cap: str
    cpu_cap: str = "CPU affinity (seccomp keeps samples from changing it)"
    hidden: list[str] = field(default_factory=list)
    user_namespace: bool = False
    private_proc: bool = False
    landlock: int = 0
    landlock_scopes: bool = False
    seccomp: bool = False
    sample_namespaces: bool = False
    notes: list[str] = field(default_factory=list)

    def open_channels(self) -> list[str]:
        """State one sample can still change and a later sample read, on this machine: what
        the sandbox leaves open, said at the start of every run (docs: the sandbox's threat
        model). Direct page-cache probes and evictions are refused in every tier."""
        channels = [
            "how long reading a file or looking up a path takes (the page and dentry caches the "
            "machine shares)",
            "the kernel's pipe and socket inode numbers (one counter per CPU)",
        ]
        if not self.sample_namespaces:
            channels.append("the PID counter (no PID namespace per sample)")
        if not self.filesystem:
            channels.append(
                "inode numbers of the scratch file system and access times of readable files "
                "(no private mounts)"
            )
        return channels

    def describe(self) -> str:
        if self.network:
            network = "isolated (network namespace)"
        elif self.seccomp:
            network = "closed (seccomp: no sockets)"
        else:
            network = "OPEN"
        if self.filesystem:
            filesystem = "read-only + private scratch"
        elif self.landlock:
            filesystem = "Landlock: system and standard library read-only, own scratch writable"
        else:
            filesystem = "WRITABLE"
        if self.sample_namespaces:
            processes = "PID and mount namespace per sample, own /proc"
        elif self.pid_namespace:
            processes = "PID namespace per worker" + (", own /proc" if self.private_proc else "")
        elif self.seccomp:
            processes = "one process group per sample (seccomp: no setsid/setpgid)"
        else:
            processes = "NOT contained"
        parts = [
            f"network {network}",
            f"filesystem {filesystem}",
            f"processes {processes}",
            f"process cap {self.process_cap or 'NONE'}",
            f"memory cap {self.memory_cap}",
            f"CPU cap {self.cpu_cap}",
            f"uid {'unprivileged' if self.uid_drop else 'not dropped'}",
            f"Landlock {f'ABI {self.landlock}' if self.landlock else 'NONE'}",
            f"seccomp filter {'on' if self.seccomp else 'OFF'}",
        ]
        return f"isolation level: {self.level} ({'; '.join(parts)})"

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def isolation_from_facts(
    facts: dict[str, Any], cgroups: Mapping[str, Path], caps: Mapping[str, str] | None = None
) -> Isolation:
    caps = caps or {}
    if not facts.get("cgroups", True):  # the worker could not open its cgroups: none holds
        cgroups, caps = {}, {}
    if "pids" in cgroups:
        process_cap = caps.get("processes", "pids cgroup")
    elif facts["uid_drop"]:
        process_cap = "RLIMIT_NPROC (one uid per worker)"
    elif facts["user_namespace"]:
        process_cap = "RLIMIT_NPROC (user namespace)"
    else:
        process_cap = None
    memory_cap = (
        f"{caps.get('memory', 'memory cgroup')} + RLIMIT_AS" if "memory" in cgroups else "RLIMIT_AS"
    )
    contained = facts["network"] and facts["filesystem"] and facts["pid_namespace"] and process_cap
    confined = bool(facts.get("seccomp")) and int(facts.get("landlock", 0)) > 0
    if contained and facts["uid_drop"]:
        level = "full"
    elif contained:
        level = "namespaces"
    elif confined and process_cap:
        level = "unprivileged"
    else:
        level = "weak"
    return Isolation(
        level=level,
        network=facts["network"],
        filesystem=facts["filesystem"],
        pid_namespace=facts["pid_namespace"],
        uid_drop=facts["uid_drop"],
        process_cap=process_cap,
        memory_cap=memory_cap,
        cpu_cap=caps.get("cpu", Isolation.cpu_cap),
        hidden=list(facts.get("hidden", [])),
        user_namespace=facts["user_namespace"],
        private_proc=bool(facts.get("private_proc")),
        landlock=int(facts.get("landlock", 0)),
        landlock_scopes=bool(facts.get("landlock_scopes")),
        seccomp=bool(facts.get("seccomp")),
        sample_namespaces=bool(facts.get("sample_namespaces")),
        notes=list(facts.get("errors", [])),
    )


def refusal_advice(isolation: Isolation) -> str:
    """What the user can do to get a safe level, for the environment the worker found."""
    if isolation.landlock and isolation.seccomp:
        return (
            "Landlock and seccomp work here but no process cap does: run as root (inside a "
            "container, root that may change uid, as Docker's default is) or give the harness "
            "a writable cgroup"
        )
    missing = [
        name
        for name, ok in (("Landlock", isolation.landlock), ("seccomp", isolation.seccomp))
        if not ok
    ]
    kernel = (
        f"this kernel does not offer {' or '.join(missing)} (Landlock needs Linux 5.13+ with "
        "'landlock' in the lsm= boot list; seccomp needs CONFIG_SECCOMP_FILTER)"
    )
    if os.geteuid() == 0:
        return (
            f"{kernel}, and root here cannot create namespaces (a container without "
            "CAP_SYS_ADMIN): run on a kernel with Landlock, or give the container its own "
            "namespaces (e.g. docker run --security-opt seccomp=unconfined --cap-add SYS_ADMIN)"
        )
    return (
        f"{kernel}, and unprivileged user namespaces are disabled (sysctl "
        "kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ "
        "kernel.apparmor_restrict_unprivileged_userns=0), so nothing here can confine a sample"
    )


# The known-good program every worker must pass before it runs anything: a sandbox whose
# candidates cannot even start would otherwise fail every sample and report pass@k = 0.
_PROBE_PROGRAM = "def add(a, b):\n    return a + b\n"
_PROBE_TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n"


def probe_jobs() -> list[dict[str, Any]]:
    """One known-good job per judging mode (separated, single-process, stdin/stdout)."""
    return [
        {
            "mode": "separated",
            "candidate_program": _PROBE_PROGRAM,
            "prefix": "",
            "test": _PROBE_TEST,
            "entry_point": "add",
            "prefix_classes": [],
        },
        {"mode": "function", "program": _PROBE_PROGRAM + "\n" + _PROBE_TEST + "\ncheck(add)\n"},
        {
            "mode": "stdio",
            "program": "print(sum(map(int, input().split())))\n",
            "tests": [["2 3\n", "5\n"]],
        },
    ]


def _toolchain_of(language: str) -> Toolchain:
    toolchain = language_named(language).toolchain
    if toolchain is None:
        raise ValueError(f"{language} has no toolchain")
    return toolchain


def _read_paths(language: str) -> tuple[str, ...]:
    toolchain = _toolchain_of(language)
    prepared = toolchain.prepare() if toolchain.prepare is not None else ()
    return (*toolchain.read_paths, *prepared)


def problem_toolchain(problem: Problem) -> Toolchain | None:
    """The toolchain that builds `problem`'s programs (None for Python, and for a language
    without one)."""
    if problem.language == "python":
        return None
    return language_named(problem.language).toolchain


def build_job(
    problem: Problem, completion: str, timeout: float, compile_timeout: float
) -> dict[str, Any]:
    """A build job (mode "build", `_builder.py`): the toolchain's files and steps for this
    sample, with an end marker of its own (random: the program cannot print it by chance, and
    it is not the sandbox's verdict token). `timeout` is the run's."""
    toolchain = problem_toolchain(problem)
    if toolchain is None:
        raise ValueError(f"{problem.language} has no toolchain")
    marker = f"boi-end-{secrets.token_hex(16)}"
    build = toolchain.assemble(problem, completion, marker)
    return {
        "mode": "build",
        "toolchain": problem.language,
        "files": dict(build.files),
        "compile": [list(step) for step in build.compile],
        "run": list(build.run),
        "env": dict(build.env),
        "end_marker": marker,
        "assert_failure": toolchain.assert_failure,
        "compile_timeout": compile_timeout,
        "timeout": timeout,
    }


def probe_problem(language: str) -> tuple[Problem, str]:
    """The known-good problem of `language`'s toolchain (`Toolchain.probe`: `add(2, 3) == 5`)
    and the completion that passes it."""
    prompt, completion, test = _toolchain_of(language).probe
    problem = Problem(
        task_id=f"probe/{language}",
        benchmark="probe",
        prompt=prompt,
        entry_point="add",
        test=test,
        metadata={"language": language},
    )
    return problem, completion


def build_probe_job(language: str) -> dict[str, Any]:
    """The known-good program of `language`'s toolchain (`Toolchain.probe`), as a build job."""
    problem, completion = probe_problem(language)
    return build_job(problem, completion, 60.0, 120.0)


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
        self.isolation_facts: dict[str, Any] = {}

    def start(self) -> dict[str, Any]:
        pool = self.pool
        config = pool.config
        job_r, job_w = os.pipe()
        result_r, result_w = os.pipe()
        # The zygote's JSON start-up config (mixed values; _zygote.py reads it as a plain dict).
        zygote_config: dict[str, Any] = {
            "harness_pid": os.getpid(),
            "worker_index": self.index,
            "cpu": pool.cgroups.cpu_of(self.index),
            "namespaces": config.use_namespaces,
            "sandbox_uids": sandbox_uid_pairs(self.index, pool.size, pool.uid_slot)
            if config.drop_uid
            else [],
            "landlock": config.use_landlock,
            "seccomp": config.use_seccomp,
            "fallback_scratch": str(pool.fallback_scratch / f"w{self.index}"),
            "scratch_mb": config.scratch_mb,
            "scratch_inodes": config.scratch_inodes,
            "hide": list(HIDDEN_DIRS),
            "cgroup_procs": pool.cgroups.procs_files(self.index),
            # What each toolchain's build jobs may read beyond the default set (Landlock).
            "toolchains": {
                language: {"read": list(paths)} for language, paths in pool.read_paths.items()
            },
            "preload": list(config.preload),
            **(self.pool.libraries.worker_config() if self.pool.libraries.names else {}),
            "max_output_mb": config.max_output_mb,
            "limits": {
                "memory_mb": config.memory_mb,
                "processes": config.processes,
                "file_size_mb": config.file_size_mb,
            },
        }
        scratch = Path(zygote_config["fallback_scratch"])
        scratch.mkdir(parents=True, exist_ok=True)
        scratch.chmod(0o711)  # the sandbox uids must reach their own directories in it
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
            # Not the harness's environment (API keys, tokens): the interpreter keeps a copy of
            # its initial environment (posix.environ) that clearing os.environ does not erase.
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
        )
        os.close(job_r)
        os.close(result_w)
        self.job_w, self.result_r = job_w, result_r
        ready = self._receive(config.startup_timeout)
        if not ready or not ready.get("ready"):
            self.stop()
            raise WorkerDied("the sandbox worker failed to start")
        self.isolation_facts = ready["isolation"]
        return self.isolation_facts

    def _receive(self, timeout: float) -> dict[str, Any] | None:
        readable, _, _ = select.select([self.result_r], [], [], timeout)
        if not readable:
            return None
        try:
            message = _wire.Channel(self.result_r).receive()
        except (OSError, ValueError, EOFError):
            return None
        # The worker answers every job with an object; anything else is a worker gone wrong.
        return message if isinstance(message, dict) else None

    def run(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            _wire.Channel(self.job_w).send(job)
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

    def __init__(self, config: ExecutionConfig, languages: Iterable[str] = ()) -> None:
        self.config = config
        # Languages other than Python this pool builds (job mode "build"): each worker
        # prepares their Landlock rulesets and proves each toolchain on a known-good program.
        self.languages = tuple(sorted(set(languages) - {"python"}))
        # What each toolchain's build jobs may read beyond the default set: its fixed paths and
        # what its `prepare` built on this machine (before any worker starts, outside it).
        self.read_paths = {language: _read_paths(language) for language in self.languages}
        # What the sandbox reveals of site-packages to candidates (nothing by default).
        self.libraries = resolve_libraries(config.candidate_libraries)
        self.size = config.resolved_workers()
        self.uid_slot = secrets.randbelow(1 << 30)
        _remove_stale_scratch()
        self.fallback_scratch = Path(tempfile.mkdtemp(prefix=f"boi-sandbox-{os.getpid()}-"))
        self.fallback_scratch.chmod(0o711)
        self.cgroups = Cgroups(self.size, config)
        self.workers = [_Worker(i, self) for i in range(self.size)]
        self._lock = threading.Lock()
        try:
            facts = self.workers[0].start()
            self.isolation = isolation_from_facts(facts, self.cgroups.roots, self.cgroups.caps())
            self.isolation.notes += self.cgroups.notes
            if self.isolation.level == "weak" and not config.allow_weak_isolation:
                raise UserError(
                    f"refusing to run untrusted code: {self.isolation.describe()}"
                    + (f" [{'; '.join(self.isolation.notes)}]" if self.isolation.notes else "")
                    + f"; {refusal_advice(self.isolation)}; or pass --allow-weak-isolation to "
                    "accept the risk."
                )
            self._check_reachable(facts)
            self._prove(self.workers[0])
            # Said when the run starts, not only in the summary: a user training against
            # execution rewards must know what a candidate could still pass to a later one.
            print(
                "sandbox: open between samples here: " + "; ".join(self.isolation.open_channels()),
                file=sys.stderr,
            )
            for worker in self.workers[1:]:
                worker.start()
                self._prove(worker)
        except BaseException:
            self.close()
            raise

    def _check_reachable(self, facts: dict[str, Any]) -> None:
        """Refuse, in one sentence, a toolchain read path the sandbox's uid cannot reach: one
        under a folder closed to other users (boi's cache under a 0700 /root) is exposed by a
        worker's mount namespace, but a tier without one (unprivileged) cannot do that."""
        if facts.get("filesystem") or not facts.get("uid_drop"):
            return
        for language, paths in self.read_paths.items():
            for path in paths:
                parts = os.path.realpath(path).strip("/").split("/")
                for depth in range(1, len(parts)):
                    ancestor = "/" + "/".join(parts[:depth])
                    if not os.stat(ancestor).st_mode & 0o001:
                        raise UserError(
                            f"{language_named(language).display_name} programs are built with "
                            f"{path}, which the sandbox's unprivileged uid cannot reach here "
                            f"({ancestor} is closed to other users, and this tier cannot expose "
                            "it); set BOI_CACHE_DIR to a folder other users can enter."
                        )

    def _prove(self, worker: _Worker) -> None:
        """Run the known-good probes on `worker`; refuse, in one sentence, if one fails."""
        jobs = [{**job, "timeout": max(10.0, self.config.timeout)} for job in probe_jobs()] + [
            build_probe_job(language) for language in self.languages
        ]
        for job in jobs:
            job = {**job, "id": -1}
            try:
                outcome = worker.run(job, self.config.startup_timeout)
            except WorkerDied as err:
                outcome = {"status": Status.ERROR.value, "result": str(err)}
            if outcome.get("status") != Status.PASSED.value:
                raise UserError(
                    f"refusing to run: the sandbox ({self.isolation.level}) cannot run a "
                    f"known-good {job.get('toolchain') or job['mode']} program here "
                    f"({outcome.get('result')}); every "
                    "sample would fail (run with --debug to see the workers' errors)."
                )

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
                    return {
                        "status": Status.ERROR.value,
                        "result": f"error: {err}",
                        "duration": 0.0,
                    }
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
        if not pid_alive(pid):
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
