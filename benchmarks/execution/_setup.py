"""The worker's set-up room: what a sandbox worker does once, at start, and how it then makes
each sandboxed process.

`Setup.start` (in the zygote, before it splits in two; see `_zygote.main`) tries to enter
namespaces of the worker's own, makes the filesystem read-only with a private scratch tmpfs and
the hidden directories covered, chooses the unprivileged uid pair, prepares the Landlock
rulesets and the seccomp filter and proves them in a throw-away child. What it found is the
worker's *isolation facts*, reported to the harness.

Two narrow handles then make the worker's processes, each in a process just forked:

- `Setup.enter_sample`, the spawner's: a sample (generated code), in namespaces of its own
  where the worker has them, under the sandbox uid, confined by Landlock (the worker's ruleset
  or its toolchain's) and the seccomp filter;
- `Setup.enter_tests_process`, the jobs process's for its tests process (trusted code): the site
  directories visible again, under the tests uid, out of the samples' cgroups, not confined.

The jobs room (`_zygote.Zygote`) reads the facts (`isolation`, `config`, `scratch_root()`,
`devnull`, `cgroup_read_fds`, `builds_for`) and never changes them.

Standard library only, loaded by the zygote from its file (see `_zygote._load_sibling`); the
confinement layers (`_landlock.py`, `_seccomp.py`) are loaded by path too, through the loader
the zygote hands over, so that one that cannot load is reported, not fatal.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import gc
import importlib
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from typing import Any

if __package__:  # imported as benchmarks.execution._setup (the tests); in the worker, the
    from . import _kernel, _wire  # zygote hands this module its siblings as it loads it by path

# The exit code of a process that could not give up root of the worker's user namespace (it
# would have held capabilities over the tests process): it runs nothing.
EXIT_NO_USER_NAMESPACE = 72

# A run with candidate libraries: their thread pools (numpy's OpenBLAS, OpenMP, MKL, numexpr)
# run one thread in a sample and in the tests process, so that they fit the per-sample process
# cap and spawn no thread per core (set before the program starts, when they are read).
THREAD_CAPS = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
}

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


def _remount_read_only(mount_point: str, options: set[str]) -> None:
    """Remount the bind mount at `mount_point` read-only, keeping its locked flags."""
    flags = _kernel.MS_REMOUNT | _kernel.MS_BIND | _kernel.MS_RDONLY
    for name, flag in _KEPT_MOUNT_FLAGS.items():
        if name in options:
            flags |= flag
    _kernel.mount(None, mount_point, None, flags)


def _hide_all_but(directory: str, entries: list[str]) -> None:
    """Cover `directory` with a read-only tmpfs that holds read-only bind mounts of its
    `entries` alone (a site directory of which a run lets candidates import some libraries):
    everything else in it disappears, and nothing in it can be written."""
    handles = {}
    for entry in entries:
        try:
            handles[entry] = os.open(os.path.join(directory, entry), os.O_PATH | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # removed since the harness listed it: nothing to reveal
    try:
        _kernel.mount(
            "boi-hidden",
            directory,
            "tmpfs",
            _kernel.MS_NOSUID | _kernel.MS_NODEV,
            "size=4k,mode=0755",
        )
        for entry, fd in handles.items():
            target = os.path.join(directory, entry)
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.mkdir(target, 0o755)
            else:
                os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
            _kernel.mount(f"/proc/self/fd/{fd}", target, None, _kernel.MS_BIND | _kernel.MS_REC)
    finally:
        for fd in handles.values():
            os.close(fd)
    # A bind mount is writable whatever its source was: each one (and what it holds) read-only.
    root = os.path.realpath(directory)
    for mount_point, options in _mounts():
        if _is_under(mount_point, root) and os.path.realpath(mount_point) != root:
            if "ro" not in options:
                _remount_read_only(mount_point, options)
    _kernel.mount(
        None,
        directory,
        None,
        _kernel.MS_REMOUNT
        | _kernel.MS_RDONLY
        | _kernel.MS_NOSUID
        | _kernel.MS_NODEV
        | _kernel.MS_NOEXEC,
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


class Setup:
    """One worker's sandbox, set up once (`start`), and the two handles that make its processes
    (`enter_sample`, `enter_tests_process`). `load` loads a confinement layer's module by name
    from beside this file (`_zygote._load_sibling`)."""

    def __init__(self, config: dict, keep_fds: tuple[int, ...], load: Callable[[str], Any]) -> None:
        self.config = config
        self.keep_fds = keep_fds
        self._load = load
        self.isolation: dict = {"errors": []}
        self._root: str | None = None
        self.cgroup_fds: list[int] = []
        self.cgroup_read_fds: list[int] = []
        self.cgroup_procs: list[str] = config.get("cgroup_procs", [])
        self.sample_proc = True  # does a sample get a /proc of its own PID namespace?
        self.site_mounts: list[str] = []  # site directories covered for samples (see start)
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
        # The run's candidate libraries (`_libraries.CandidateLibraries.worker_config`): per
        # site directory, the entries a sample may read; those site directories then go on a
        # sample's sys.path after the standard library's.
        self.reveal: dict[str, list[str]] = {
            str(site): [str(e) for e in entries]
            for site, entries in dict(config.get("reveal") or {}).items()
        }
        self.sample_path: list[str] = []
        # The worker's own PID namespace, to return to after forking a sample into a new one
        # (the spawner's; None where samples get no namespaces of their own).
        self.pid_namespace_fd: int | None = None

    def scratch_root(self) -> str:
        if self._root is None:  # set by start(), which main() always runs before serving
            raise RuntimeError("the worker's scratch root is known only after start()")
        return self._root

    def builds_for(self, toolchain: str) -> bool:
        """Can a build job of `toolchain` be confined here? (Without Landlock there is no
        ruleset to choose, and the seccomp filter is the same for every job.)"""
        return self.landlock is None or toolchain in self.toolchain_rulesets

    # ---- start-up -------------------------------------------------------------------------

    def start(self) -> dict:
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
        if self._root is None:
            # Without a private mount namespace the scratch space is a directory the harness made.
            self._root = config["fallback_scratch"]
        if root:
            self._choose_uids(config.get("sandbox_uids") or [])
        self.isolation["scratch_root"] = self._root
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
        becomes the spawner (see `_zygote.main`), and if it dies the kernel kills every process
        of the namespace. The shim dies with the harness (death signal), and PID 1 dies with
        the shim.
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
            self._root = scratch
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
        scratch = os.path.join(self.scratch_root(), "probe-namespaces")
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
                module = self._load("_landlock")
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
                module = self._load("_seccomp")
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
        self.sample_path = [*self.stdlib_path, *self.reveal]
        # Built once here, enforced in each sample: a sample then pays for a few system calls,
        # not for assembling ~300 Landlock rules and a BPF program (4.6 ms per sample).
        try:
            if self.landlock is not None:
                if self.isolation["filesystem"]:
                    # Only now, with every sibling of ours loaded: an installed (not editable)
                    # boi lives in a site directory itself.
                    self._hide_site_dirs(self.landlock.site_dirs())
                policy = self.landlock.default_policy(
                    (self.scratch_root(),), site_dirs_hidden=bool(self.site_mounts)
                )
                if self.read_paths:
                    policy = dataclasses.replace(policy, read=(*policy.read, *self.read_paths))
                if self.reveal:
                    # The revealed entries readable, their site directories listable (the
                    # import system lists a sys.path entry): where the site directories are
                    # not hidden by mounts, the other entries' names show, never their files.
                    policy = dataclasses.replace(
                        policy,
                        read=(
                            *policy.read,
                            *(
                                os.path.join(site, e)
                                for site, ent in self.reveal.items()
                                for e in ent
                            ),
                        ),
                        list_dirs=(*(policy.list_dirs or ()), *self.reveal),
                    )
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
        probe_dir = os.path.join(self.scratch_root(), "probe")
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
        tests process gets them back (`_reveal_site_dirs`): the tests may import what the
        harness's interpreter has. All or nothing: a mount that fails undoes the others, and
        the ruleset then goes around the site directories."""
        done: list[str] = []
        revealed = {os.path.realpath(site): entries for site, entries in self.reveal.items()}
        try:
            for path in site_dirs:
                entries = revealed.get(os.path.realpath(path))
                if entries:
                    done.append(path)  # before the mounts: a failure half-way undoes them too
                    _hide_all_but(path, entries)
                else:
                    _hide(path)
                    done.append(path)
        except OSError as err:
            for path in reversed(done):
                try:
                    _kernel.detach(path)  # lazily, with the bind mounts beneath it
                except OSError:
                    pass  # an empty read-only tmpfs left over a site directory hides it, no more
            self.isolation["errors"].append(f"site directories not hidden by mounts ({err})")
            return
        self.site_mounts = done

    def _reveal_site_dirs(self) -> None:
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

    # ---- the handles that make the worker's processes -------------------------------------

    def enter_sample(
        self,
        scratch: str,
        stdin_fd: int | None,
        stdout_fd: int | None,
        fds: tuple[int, ...],
        cpu_seconds: int,
        toolchain: str | None = None,
    ) -> None:
        """The spawner's handle, in a process it just forked: become a confined sample in
        `scratch` (in namespaces of its own where the worker has them), with `stdin_fd` and
        `stdout_fd` (None: /dev/null) and `fds` from 3 on. A build job's `toolchain` chooses
        its Landlock ruleset (the default read set plus the toolchain's paths). Raises if any
        step fails: the caller then exits without running anything."""
        uid = self.isolation["sandbox_uid"]
        if self.pid_namespace_fd is not None:
            self._enter_own_namespaces(scratch, uid)
        self._become_sample(
            scratch,
            self.devnull if stdin_fd is None else stdin_fd,
            self.devnull if stdout_fd is None else stdout_fd,
            fds,
            cpu_seconds,
            uid,
            bool(self.isolation["pid_namespace"]),
            confine=True,
            ruleset=self.toolchain_rulesets.get(toolchain or ""),
        )

    def enter_tests_process(self, home: str, control_fd: int) -> None:
        """The jobs process's handle for its tests process, in a process it just forked: the
        site directories visible again (`_reveal_site_dirs`), `home` as working directory and
        `control_fd` as descriptor 3. It runs no generated code, so it is not confined."""
        self._reveal_site_dirs()
        self._become_sample(
            home,
            self.devnull,
            self.devnull,
            (control_fd,),
            None,  # a CPU rlimit would add up over runs: the wall deadline bounds it
            # Under a uid of their own (root), or the worker's while the candidate sits in a
            # nested user namespace (no root). Out of the sample's cgroups: a candidate that
            # exhausts the process or memory cap cannot make the tests fail in its place.
            self.isolation["tests_uid"],
            bool(self.isolation["pid_namespace"]),
            join_cgroups=False,
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
        if self.reveal:
            os.environ.update(THREAD_CAPS)
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
                    os._exit(EXIT_NO_USER_NAMESPACE)
            self._confine(scratch, ruleset)
            if keep >= 0:
                os.close(keep)
            # Only the standard library on the path (and the site directories of the run's
            # candidate libraries): the harness's packages are unreadable under Landlock
            # anyway, and their cached directory listings must not be used.
            sys.path[:] = self.sample_path
            if self.reveal:
                sys.path_hooks.insert(0, _revealed_finder(self.reveal))
            sys.path_importer_cache.clear()


def _revealed_finder(reveal: dict[str, list[str]]) -> Callable[[str], Any]:
    """A path hook for the site directories of a run's candidate libraries: their finder sees
    only the revealed entries. Where the site directories are not hidden by mounts (Landlock
    alone), the others' names can be listed though not read, and a library probing for an
    optional one (pandas: `try: import pyarrow except ImportError`) would meet a
    PermissionError instead of the ModuleNotFoundError it expects (and gets where mounts hide
    them). The confinement does not rest on this: Landlock and the mounts do."""
    import importlib.machinery as machinery

    loaders = (
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (machinery.SourceFileLoader, machinery.SOURCE_SUFFIXES),
        (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES),
    )
    # A revealed entry's module name: a package directory's, a module file's without its
    # suffixes (six.py, _cffi_backend.cpython-311-x86_64-linux-gnu.so); the rest (numpy.libs,
    # *.dist-info) name no module of their own.
    allowed = {
        site: frozenset(entry.split(".")[0] for entry in entries)
        for site, entries in reveal.items()
    }

    class RevealedFinder(machinery.FileFinder):
        def find_spec(self, fullname: str, target: Any = None) -> Any:
            # Only top-level modules are looked up here (a package's submodules are found
            # on its own __path__).
            if fullname.rpartition(".")[2] not in allowed[self.path]:
                return None
            return super().find_spec(fullname, target)

    def hook(path: str) -> machinery.FileFinder:
        if path not in allowed:
            raise ImportError("not a revealed site directory")
        return RevealedFinder(path, *loaders)

    return hook


def _is_stdlib_path(path: str) -> bool:
    return "site-packages" not in path and "dist-packages" not in path


def _high_fd(ruleset: Any) -> Any:
    """`ruleset` with its descriptor moved out of the way of those a sample's layout
    overwrites (0-6)."""
    high = fcntl.fcntl(ruleset.fd, fcntl.F_DUPFD_CLOEXEC, 64)
    os.close(ruleset.fd)
    return dataclasses.replace(ruleset, fd=high)
