"""Per-worker cgroups for the sandbox's zygote workers: process, memory and CPU caps.

Every worker `i` gets a cgroup `w<i>` in a tree `<own cgroup>/boi-<pid>-<pidns>-<token>` per
hierarchy; each sample writes "0" into the worker's `cgroup.procs` files (`procs_files(i)`)
to join them. The caps live in the kernel, so a sample cannot lift them the way it can undo
`sched_setaffinity` or raise a soft rlimit:

- processes: `pids.max` = `config.processes` per worker;
- memory: v2 `memory.max` + `memory.swap.max = 0`, v1 `memory.limit_in_bytes` (+ the memsw
  limit where swap accounting is on) = `config.memory_mb` per worker;
- CPU: one CPU of bandwidth per worker (v2 `cpu.max = "100000 100000"`, v1
  `cpu.cfs_quota_us = cpu.cfs_period_us = 100000`) and, where the cpuset controller is
  there, `cpuset.cpus` = the one CPU the zygote pins the worker's samples to (`cpu_of(i)`,
  the same formula as the zygote's `pair_cpu`; v1 also needs `cpuset.mems`).

cgroup v1 (one hierarchy per controller, co-mounted ones share a tree) is straightforward.
cgroup v2 (one hierarchy; what most hosts run now) has three rules that shape the code:

1. Controllers are enabled top-down: a controller is usable in a cgroup only when its parent
   lists it in `cgroup.subtree_control`. What the harness's own cgroup lists in
   `cgroup.controllers` is what its parent delegated; we never write above our own cgroup
   (outside the delegated subtree; systemd owns it). We enable the controllers in our own
   cgroup's `cgroup.subtree_control`, then in the tree's.
2. No internal processes: a non-root cgroup with processes cannot enable domain
   controllers (memory) for its children (EBUSY; the kernel lets the threaded ones, pids,
   cpu and cpuset, through). The accepted fix in a delegated cgroup is to move
   its processes into a leaf (systemd's DelegateSubgroup=, rootlesskit's
   --evacuate-cgroup2, the docker-in-docker entrypoint). We do that, into
   `<own>/boi-<pid>-<pidns>-harness`, only when every process in the cgroup is the harness
   or one of its descendants, i.e. the cgroup is ours (`systemd-run --user --scope -p
   Delegate=yes boi ...`, or boi as a container's main process), and before enabling any
   controller, so that the cgroup ends up in the plain state. Otherwise the processes are
   someone else's and we leave them alone with a note saying how to run boi. The last pool
   of the process to close moves the harness back and disables the controllers it enabled,
   as long as nothing else lives beside the leaf (stale controllers in a service's
   `cgroup.subtree_control` make its next start fail with EBUSY, systemd #41278).
3. Delegation to a user is ownership of the subtree: we do not check owners, we try, and an
   EACCES becomes a note.

The v2 tree is created even where no controller is available (e.g. a hybrid host whose
controllers are all bound to v1, like the hosts this project's tests run on): it still contains each worker's
samples, so `kill(i)` and `close()` end every leftover process with `cgroup.kill`
(v2, kernel 5.14+; v1 and older kernels: SIGKILL every pid in `cgroup.procs` until empty).
Trees of harnesses that died (pid gone, same PID namespace) are killed and removed when the
next pool starts. Every failure becomes a one-line entry in `notes`, never an exception.

What the tests (tests/test_sandbox_cgroups.py) exercise, and where:

- a real cgroup2 mount (a private mount of the unified hierarchy in a forked child; this
  host binds pids/memory/cpu/cpuset to v1, so v2 offers only hugetlb): the tree and worker
  cgroups, samples joining via `procs_files`, `cgroup.kill` of a worker with its escaped
  descendants, removal at close, stale trees of dead harnesses killed and removed,
  top-down enabling of a controller (hugetlb), the real EBUSY of the no-internal-processes
  rule, moving the harness into its leaf and back, refusing to move a foreign process;
- a fake cgroup2 tree (a temp dir with kernel rules for mkdir/write/rmdir): the values
  written (`memory.max`, `memory.swap.max`, `pids.max`, `cpu.max`, `cpuset.cpus`), pids,
  memory, cpu and cpuset enabled top-down, the caps report, the harness's move and its
  undoing by the last of two pools, the root cgroup's exemption, stale trees (dead, alive,
  other PID namespace, old names, a dead harness's leaf), and the one-line notes for a
  read-only `cgroup.subtree_control`, EBUSY, controllers not delegated, an unwritable
  cgroup, a cgroup holding other processes, a refused limit, no swap accounting;
- real cgroup v1 on this host: `pids.max` holding against a fork loop, the CPU quota
  holding 3 spinning processes to ~1 CPU, a cpuset that a sample cannot widen with
  `sched_setaffinity`, the memory limits written;
- not exercised here: enforcement of `memory.max`, `pids.max`, `cpu.max` and
  `cpuset.cpus` by a real v2 kernel (those controllers are v1-bound on this host), a real
  non-root delegation (ownership) and the fallback for kernels without `cgroup.kill`.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.execution._config import ExecutionConfig

CGROUP_PREFIX = "boi-"
# The controllers the workers use, from v1 where it has them, else from v2.
CONTROLLERS = ("memory", "pids", "cpu", "cpuset")
CPU_PERIOD_US = 100_000  # with an equal quota: one CPU of bandwidth per worker
_TREE_NAME = re.compile(r"boi-(\d+)-(\d+)-(?:[0-9a-f]+|harness)")
_OLD_TREE_NAME = re.compile(r"boi-(\d+)-[0-9a-f]{6}")  # before the PID namespace was in the name
_HARNESS_LEAF = re.compile(r"boi-\d+-\d+-harness")
_KILL_SECONDS = 1.0


@dataclass(frozen=True)
class CgroupBases:
    """Where this process's own cgroups are: per v1 controller, and in the v2 hierarchy."""

    v1: dict[str, Path] = field(default_factory=dict)
    v2: Path | None = None


def _unescape(field_text: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field_text)


def _below(mount_point: Path, mount_root: str, path: str) -> Path | None:
    """The directory of cgroup `path` under a mount of the hierarchy rooted at `mount_root`."""
    root = mount_root.rstrip("/")
    if path != root and not path.startswith(root + "/"):
        return None  # the mount shows another part of the hierarchy (a container's, say)
    return mount_point / path[len(root) :].lstrip("/")


def parse_cgroup_bases(mountinfo: str, proc_cgroup: str) -> CgroupBases:
    """The contents of /proc/self/mountinfo and /proc/self/cgroup -> this process's cgroups."""
    v1_mounts: list[tuple[set[str], str, Path]] = []
    v2_mounts: list[tuple[str, Path]] = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        mount_root, mount_point = _unescape(fields[3]), Path(_unescape(fields[4]))
        if tail[0] == "cgroup":
            v1_mounts.append((set(tail[2].split(",")), mount_root, mount_point))
        elif tail[0] == "cgroup2":
            v2_mounts.append((mount_root, mount_point))
    v1: dict[str, Path] = {}
    v2: Path | None = None
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            for mount_root, mount_point in v2_mounts:
                v2 = v2 or _below(mount_point, mount_root, path)
            continue
        for controller in controllers.split(","):
            if controller not in CONTROLLERS or controller in v1:
                continue
            for options, mount_root, mount_point in v1_mounts:
                found = _below(mount_point, mount_root, path) if controller in options else None
                if found is not None:
                    v1[controller] = found
                    break
    return CgroupBases(v1=v1, v2=v2)


def cgroup_bases() -> CgroupBases:
    with (
        open("/proc/self/mountinfo", encoding="utf-8") as mountinfo,
        open("/proc/self/cgroup", encoding="utf-8") as proc_cgroup,
    ):
        return parse_cgroup_bases(mountinfo.read(), proc_cgroup.read())


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---- file access (the tests' fake cgroup2 tree replaces these) ---------------------------------


def _read(path: Path) -> str:
    with open(path, encoding="ascii") as handle:
        return handle.read()


def _write(path: Path, text: str) -> None:
    # One unbuffered write(2) and no O_CREAT: cgroupfs takes each write as one value and
    # reports a refusal from write(2) itself (a buffered write reports it at close, or not at
    # all), and a missing interface file must fail rather than become a regular file.
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)


def _mkdir(path: Path) -> None:
    os.mkdir(path)


def _rmdir(path: Path) -> None:
    os.rmdir(path)


def _pids(cgroup: Path) -> list[int]:
    return [int(pid) for pid in _read(cgroup / "cgroup.procs").split()]


def _why(err: OSError) -> str:
    return err.strerror or str(err)


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            pid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def kill_cgroup(path: Path, version: int) -> None:
    """SIGKILL every process in cgroup `path` (v2: and in the cgroups below it)."""
    if version == 2:
        try:
            _write(path / "cgroup.kill", "1")  # atomic, and it catches processes mid-fork
            return
        except FileNotFoundError:
            pass  # kernels before 5.14: pid by pid (one level only)
        except OSError:
            return
    deadline = time.monotonic() + _KILL_SECONDS
    while time.monotonic() < deadline:
        try:
            pids = _pids(path)
        except (OSError, ValueError):
            return
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


def remove_tree(root: Path, version: int, kill: bool = True) -> None:
    """Kill what is left in a tree's worker cgroups (if `kill`) and remove them and the root."""
    try:
        workers = sorted((p for p in root.iterdir() if p.is_dir()), reverse=True)
    except OSError:
        return
    if kill and version == 2 and (root / "cgroup.kill").exists():
        kill_cgroup(root, 2)  # the whole tree at once
    elif kill:
        for worker in workers:
            kill_cgroup(worker, version)
    for worker in workers:
        _rmdir_quietly(worker, kill)
    _rmdir_quietly(root, kill)


def _rmdir_quietly(path: Path, wait: bool) -> None:
    # A killed process leaves its cgroup a moment after the signal (EBUSY until then); a
    # cgroup we did not kill in stays (a later sweep removes it once it is empty).
    deadline = time.monotonic() + (_KILL_SECONDS if wait else 0.0)
    while True:
        try:
            _rmdir(path)
            return
        except OSError as err:
            if err.errno != errno.EBUSY or time.monotonic() >= deadline:
                return
            time.sleep(0.01)


# ---- the harness's own v2 cgroup: controllers for its children ---------------------------------


@dataclass
class _Own:
    """What the pools of this process changed in their own v2 cgroup, to undo at the end."""

    leaf: Path | None = None  # where the harness's processes moved (no internal processes)
    enabled: list[str] = field(default_factory=list)  # controllers we enabled for children
    users: int = 0


_OWN: dict[Path, _Own] = {}
_OWN_LOCK = threading.Lock()  # pools may start and close in several threads


def _evacuate(own: Path, record: _Own, notes: list[str]) -> bool:
    """Move the processes in `own` into a leaf if all are the harness's; True if `own` is empty."""
    harness = os.getpid()
    leaf = own / f"{CGROUP_PREFIX}{harness}-{_pid_namespace()}-harness"
    try:
        for _ in range(5):  # a thread of the harness may start a process meanwhile
            pids = _pids(own)
            if not pids:
                return True
            foreign = [pid for pid in pids if not _descends_from(pid, harness)]
            if foreign:
                notes.append(
                    f"cgroup v2: the harness's cgroup {own} holds processes that are not the "
                    f"harness's (pid {', '.join(map(str, foreign[:3]))}), so it cannot "
                    "delegate controllers (run boi under `systemd-run --user --scope -p "
                    "Delegate=yes`, or in a container with a cgroup namespace)"
                )
                return False
            if not leaf.is_dir():
                _mkdir(leaf)
            record.leaf = leaf
            for pid in pids:
                try:
                    _write(leaf / "cgroup.procs", str(pid))
                except ProcessLookupError:
                    pass
    except (OSError, ValueError) as err:
        notes.append(f"cgroup v2: cannot move the harness into {leaf} ({_why_any(err)})")
        return False
    notes.append(f"cgroup v2: could not empty {own} of the harness's processes")
    return False


def enable_controllers(
    cgroup: Path, controllers: Sequence[str], notes: list[str], *, own: bool = False
) -> list[str]:
    """Enable `controllers` for the children of `cgroup`; return those enabled.

    With `own` (the harness's own cgroup; pair it with `release_own`): a non-root cgroup
    that holds processes is first emptied into a leaf when they are all the harness's, and
    what we change is recorded so that the last pool of the process can undo it.
    """
    subtree = cgroup / "cgroup.subtree_control"
    # The real root (no cgroup.type) is exempt from the rule and shared by the whole
    # machine: nothing to evacuate there, and nothing of it to undo.
    if own and not (cgroup / "cgroup.type").exists():
        own = False
    with _OWN_LOCK:
        record = None
        if own:
            record = _OWN.setdefault(cgroup, _Own())
            record.users += 1
        try:
            active = set(_read(subtree).split())
            missing = [c for c in controllers if c not in active]
            refused = False
            if record is not None and missing and _pids(cgroup):
                refused = not _evacuate(cgroup, record, notes)
        except (OSError, ValueError) as err:
            notes.append(f"cgroup v2: cannot read {cgroup} ({_why_any(err)})")
            return []
        enabled = []
        for controller in controllers:
            if controller in active:
                enabled.append(controller)
                continue
            try:
                _write(subtree, f"+{controller}")
            except OSError as err:
                if not (refused and err.errno == errno.EBUSY):  # else _evacuate said why
                    notes.append(
                        f"cgroup v2: cannot enable {controller} in {subtree} ({_why(err)})"
                    )
                continue
            enabled.append(controller)
            if record is not None:
                record.enabled.append(controller)
        return enabled


def release_own(own: Path) -> None:
    """The last pool of the process disables what it enabled in `own` and moves back."""
    with _OWN_LOCK:
        record = _OWN.get(own)
        if record is None:
            return
        record.users -= 1
        if record.users > 0:
            return
        del _OWN[own]
        try:
            if any(p.is_dir() and p != record.leaf for p in own.iterdir()):
                return  # cgroups beside ours (another harness's) may rely on the controllers
            if record.enabled:
                disable = " ".join(f"-{c}" for c in reversed(record.enabled))
                _write(own / "cgroup.subtree_control", disable)
            if record.leaf is not None:
                for pid in _pids(record.leaf):
                    try:
                        _write(own / "cgroup.procs", str(pid))
                    except ProcessLookupError:
                        pass
                _rmdir(record.leaf)
        except (OSError, ValueError):
            pass  # best effort: a later harness's sweep removes the leaf once it is empty


def _why_any(err: Exception) -> str:
    return _why(err) if isinstance(err, OSError) else str(err)


# ---- the per-worker cgroups -----------------------------------------------------------------


@dataclass
class _Tree:
    version: int
    root: Path
    workers: list[Path]
    capped: list[str] = field(default_factory=list)


class Cgroups:
    """Per-worker pids, memory, cpu and cpuset cgroups under this process's own cgroups.

    `roots` and `workers` hold, per capped controller, the tree root and the worker
    cgroups; `caps()` says in words what holds; `procs_files(i)` are the files a sample of
    worker i writes "0" into to join (one per hierarchy); `notes` say what failed and why.
    """

    def __init__(
        self,
        workers: int,
        config: ExecutionConfig,
        *,
        bases: CgroupBases | None = None,
        cpus: Sequence[int] | None = None,
    ) -> None:
        self.roots: dict[str, Path] = {}
        self.workers: dict[str, list[Path]] = {}
        self.notes: list[str] = []
        self._count = workers
        self._config = config
        self._cpus = sorted(cpus if cpus is not None else os.sched_getaffinity(0))
        self._trees: list[_Tree] = []
        self._versions: dict[str, int] = {}  # capped controller -> its cgroup version
        self._swap_off = False
        self._own: Path | None = None  # our own v2 cgroup, if we enabled controllers there
        if not config.use_cgroups:
            return
        if bases is None:
            try:
                bases = cgroup_bases()
            except (OSError, ValueError) as err:
                self.notes.append(f"cgroups: cannot read this process's cgroups ({err})")
                return
        self._tag = f"{CGROUP_PREFIX}{os.getpid()}-{_pid_namespace()}-{secrets.token_hex(4)}"
        # v1: one tree per hierarchy (co-mounted controllers such as cpu,cpuacct share one).
        hierarchies: dict[Path, list[str]] = {}
        for controller in CONTROLLERS:
            if controller in bases.v1:
                hierarchies.setdefault(bases.v1[controller], []).append(controller)
        for base, controllers in hierarchies.items():
            try:
                self._setup_v1(base, controllers)
            except (OSError, ValueError) as err:  # what the steps do not expect: still a note
                self.notes.append(f"cgroup v1 {','.join(controllers)}: {_why_any(err)}")
        if bases.v2 is not None:
            try:
                self._setup_v2(bases.v2, [c for c in CONTROLLERS if c not in bases.v1])
            except (OSError, ValueError) as err:
                self.notes.append(f"cgroup v2: {_why_any(err)}")
        if not bases.v1 and bases.v2 is None:
            self.notes.append("cgroups: none mounted, no cgroup caps")

    # -- set-up --

    def cpu_of(self, index: int) -> int:
        """The CPU worker `index` is pinned to (the zygote's formula for `pair_cpu`)."""
        return self._cpus[index % len(self._cpus)]

    def _setup_v1(self, base: Path, controllers: list[str]) -> None:
        self._remove_stale(base, 1)
        root = base / self._tag
        label = f"cgroup v1 {','.join(controllers)}"
        try:
            _mkdir(root)
            if "cpuset" in controllers:
                # A new v1 cpuset has no CPUs and no memory nodes: nothing could join it.
                _write(root / "cpuset.cpus", _read(base / "cpuset.cpus").strip())
                _write(root / "cpuset.mems", _read(base / "cpuset.mems").strip())
            paths = self._make_workers(root)
        except OSError as err:
            self.notes.append(f"{label}: cannot create {root} ({_why(err)})")
            remove_tree(root, 1, kill=False)
            return
        tree = _Tree(1, root, paths)
        self._limit(tree, controllers, base)
        if tree.capped:
            self._trees.append(tree)
        else:
            remove_tree(root, 1, kill=False)

    def _setup_v2(self, own: Path, wanted: list[str]) -> None:
        if _HARNESS_LEAF.fullmatch(own.name):
            own = own.parent  # a pool of this process (or a parent boi) moved us to the leaf
        self._remove_stale(own, 2)
        try:
            available = _read(own / "cgroup.controllers").split()
        except OSError as err:
            self.notes.append(f"cgroup v2: cannot read {own}/cgroup.controllers ({_why(err)})")
            return
        usable = [c for c in wanted if c in available]
        missing = [c for c in wanted if c not in available and c != "cpuset"]
        if missing:
            self.notes.append(
                f"cgroup v2: {', '.join(missing)} not delegated to {own} (not in its "
                "cgroup.controllers)"
            )
        root = own / self._tag
        try:
            _mkdir(root)
        except OSError as err:
            # A tree without controllers only helps clean up: no note unless caps were due.
            if usable:
                self.notes.append(
                    f"cgroup v2: cannot create a cgroup in {own} ({_why(err)}; run boi under "
                    "`systemd-run --user --scope -p Delegate=yes` to get a delegated cgroup)"
                )
            return
        if usable:
            self._own = own
            enabled = enable_controllers(own, usable, self.notes, own=True)
            usable = enable_controllers(root, enabled, self.notes)
        try:
            paths = self._make_workers(root)
        except OSError as err:
            self.notes.append(f"cgroup v2: cannot create {root}/w* ({_why(err)})")
            remove_tree(root, 2, kill=False)
            return
        tree = _Tree(2, root, paths)
        self._limit(tree, usable, own)
        self._trees.append(tree)

    def _make_workers(self, root: Path) -> list[Path]:
        """One cgroup per worker under `root` (w0, w1, ...), made; an OSError is the caller's
        note, for either version."""
        paths = [root / f"w{index}" for index in range(self._count)]
        for path in paths:
            _mkdir(path)
        return paths

    def _limit(self, tree: _Tree, controllers: list[str], base: Path) -> None:
        """Write the per-worker limits; a controller counts as a cap only if all succeed."""
        for controller in controllers:
            try:
                v1_cpuset = controller == "cpuset" and tree.version == 1
                mems = _read(base / "cpuset.mems").strip() if v1_cpuset else ""
                for index, path in enumerate(tree.workers):
                    self._limit_one(tree.version, controller, path, index, mems)
            except OSError as err:
                self.notes.append(
                    f"cgroup v{tree.version} {controller}: cannot set the limit ({_why(err)})"
                )
                continue
            tree.capped.append(controller)
            self._versions[controller] = tree.version
            self.roots[controller] = tree.root
            self.workers[controller] = tree.workers

    def _limit_one(self, version: int, controller: str, path: Path, index: int, mems: str) -> None:
        config = self._config
        memory = str(config.memory_mb * 2**20)
        if controller == "pids":
            _write(path / "pids.max", str(config.processes))
        elif controller == "memory" and version == 2:
            _write(path / "memory.max", memory)
            if (path / "memory.swap.max").exists():  # absent without swap accounting
                _write(path / "memory.swap.max", "0")
                self._swap_off = True
        elif controller == "memory":
            _write(path / "memory.limit_in_bytes", memory)
            try:  # memory + swap; must come after (and be >=) the memory limit
                _write(path / "memory.memsw.limit_in_bytes", memory)
                self._swap_off = True
            except OSError:
                pass  # swap accounting off: the memory limit alone
        elif controller == "cpu" and version == 2:
            _write(path / "cpu.max", f"{CPU_PERIOD_US} {CPU_PERIOD_US}")
        elif controller == "cpu":
            _write(path / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(path / "cpu.cfs_quota_us", str(CPU_PERIOD_US))
        elif controller == "cpuset":
            _write(path / "cpuset.cpus", str(self.cpu_of(index)))
            if version == 1:
                _write(path / "cpuset.mems", mems)

    def _remove_stale(self, base: Path, version: int) -> None:
        """Kill and remove the trees of harnesses that died without cleaning up (SIGKILL)."""
        try:
            names = [p.name for p in base.iterdir() if p.name.startswith(CGROUP_PREFIX)]
        except OSError:
            return
        namespace = _pid_namespace()
        for name in names:
            current = _TREE_NAME.fullmatch(name)
            old = _OLD_TREE_NAME.fullmatch(name)
            if current is not None:
                pid, kill = int(current.group(1)), not name.endswith("-harness")
                if int(current.group(2)) != namespace:
                    continue  # its pid means nothing in our PID namespace
            elif old is not None:
                pid, kill = int(old.group(1)), False
            else:
                continue
            if pid != os.getpid() and not pid_alive(pid):
                # A harness leaf holds the dead harness's other descendants: not ours to kill.
                remove_tree(base / name, version, kill=kill)

    # -- use --

    def procs_files(self, index: int) -> list[str]:
        """The cgroup.procs files a sample of worker `index` writes "0" into (one per tree)."""
        return [str(tree.workers[index] / "cgroup.procs") for tree in self._trees]

    def caps(self) -> dict[str, str]:
        """What the cgroups cap, in words: keys "processes", "memory" and "cpu"."""
        config, versions = self._config, self._versions
        caps = {}
        if "pids" in versions:
            caps["processes"] = f"pids cgroup v{versions['pids']} ({config.processes} per worker)"
        if "memory" in versions:
            swap = ", no swap" if self._swap_off else ""
            caps["memory"] = (
                f"memory cgroup v{versions['memory']} ({config.memory_mb} MiB per worker{swap})"
            )
        cpu = []
        if "cpu" in versions:
            cpu.append(f"cpu cgroup v{versions['cpu']} (1 CPU per worker)")
        if "cpuset" in versions:
            pinned = sorted({self.cpu_of(i) for i in range(self._count)})
            cpu.append(
                f"cpuset cgroup v{versions['cpuset']} (each worker on one CPU: "
                f"{', '.join(map(str, pinned))})"
            )
        if cpu:
            caps["cpu"] = " + ".join(cpu)
        return caps

    def kill(self, index: int) -> None:
        """SIGKILL every process left in worker `index`'s cgroups."""
        for tree in self._trees:
            kill_cgroup(tree.workers[index], tree.version)

    def close(self) -> None:
        for tree in reversed(self._trees):
            remove_tree(tree.root, tree.version)
        self._trees.clear()
        self.roots.clear()
        self.workers.clear()
        if self._own is not None:
            release_own(self._own)
            self._own = None
