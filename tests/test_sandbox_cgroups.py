"""The sandbox's per-worker cgroups (benchmarks/execution/_cgroups.py).

Three kinds of test, as the module docstring lists: a real cgroup2 mount made in a forked
child (what this host's unified hierarchy can show), a fake cgroup2 tree with the kernel's
rules (the controllers this host binds to v1: pids, memory, cpu, cpuset), and real cgroup v1
on this host (the caps holding against real processes).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

from benchmarks.execution import _cgroups
from benchmarks.execution._cgroups import (
    CONTROLLERS,
    CgroupBases,
    Cgroups,
    cgroup_bases,
    enable_controllers,
    parse_cgroup_bases,
    release_own,
)
from benchmarks.execution._config import ExecutionConfig

CONFIG = ExecutionConfig(processes=4, memory_mb=256)
NS = os.stat("/proc/self/ns/pid").st_ino


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _one_line(notes: list[str]) -> None:
    assert all(note and "\n" not in note and "Traceback" not in note for note in notes), notes


# ---- parsing /proc/self/mountinfo and /proc/self/cgroup -----------------------------------------

HYBRID_MOUNTINFO = """\
24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:5 - cgroup2 cgroup2 rw,nsdelegate
"""
HYBRID_CGROUP = """\
9:name=systemd:/user.slice/user-1000.slice/session-2.scope
8:pids:/user.slice/user-1000.slice/session-2.scope
4:memory:/user.slice/user-1000.slice/session-2.scope
3:cpuset:/
2:cpu,cpuacct:/user.slice
0::/user.slice/user-1000.slice/session-2.scope
"""


def test_parse_hybrid_layout():
    bases = parse_cgroup_bases(HYBRID_MOUNTINFO, HYBRID_CGROUP)
    scope = "user.slice/user-1000.slice/session-2.scope"
    assert bases.v1 == {
        "pids": Path("/sys/fs/cgroup/pids") / scope,
        "memory": Path("/sys/fs/cgroup/memory") / scope,
        "cpuset": Path("/sys/fs/cgroup/cpuset"),
        "cpu": Path("/sys/fs/cgroup/cpu,cpuacct/user.slice"),  # co-mounted; cpuacct unused
    }
    assert bases.v2 == Path("/sys/fs/cgroup/unified") / scope


def test_parse_v1_only_layout():
    mountinfo = "\n".join(HYBRID_MOUNTINFO.splitlines()[:-1])  # no unified mount
    cgroup = "\n".join(HYBRID_CGROUP.splitlines()[:-1])  # and no 0:: line
    bases = parse_cgroup_bases(mountinfo, cgroup)
    assert set(bases.v1) == {"pids", "memory", "cpuset", "cpu"}
    assert bases.v2 is None


def test_parse_v2_only_layout():
    mountinfo = (
        "23 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
        "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 "
        "cgroup2 rw,nsdelegate,memory_recursiveprot\n"
    )
    cgroup = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n"
    bases = parse_cgroup_bases(mountinfo, cgroup)
    assert bases.v1 == {}
    assert bases.v2 == Path(
        "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope"
    )


def test_parse_container_layouts():
    # v2 with a cgroup namespace: the container's cgroup is "/" and the mount's root.
    v2 = parse_cgroup_bases(
        "600 500 0:30 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw\n", "0::/\n"
    )
    assert v2.v2 == Path("/sys/fs/cgroup")
    # v1 without one: the mount shows the container's part of the hierarchy only.
    v1 = parse_cgroup_bases(
        "700 600 0:36 /docker/abc /sys/fs/cgroup/pids ro - cgroup cgroup rw,pids\n"
        "701 600 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
        "8:pids:/docker/abc/inner\n4:memory:/elsewhere\n",
    )
    assert v1.v1 == {"pids": Path("/sys/fs/cgroup/pids/inner")}  # memory is not visible


def test_parse_escapes_and_garbage():
    bases = parse_cgroup_bases(
        "garbage\n\n41 31 0:38 / /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw\n1 2 3\n",
        "nonsense\n0::/a b\n",
    )
    assert bases.v2 == Path("/mnt/my cgroups/a b")
    assert parse_cgroup_bases("", "") == CgroupBases()


def test_cgroup_bases_reads_this_process():
    bases = cgroup_bases()
    for path in [*bases.v1.values(), *([bases.v2] if bases.v2 else [])]:
        assert (path / "cgroup.procs").exists(), path


# ---- a fake cgroup2 tree --------------------------------------------------------------------------

INTERFACE = {
    "pids": {"pids.max": "max"},
    "memory": {"memory.max": "max", "memory.swap.max": "max"},
    "cpu": {"cpu.max": "max 100000"},
    "cpuset": {"cpuset.cpus": "", "cpuset.mems": ""},
}


class FakeCgroup2:
    """A temp dir laid out like a cgroup2 mount, with the kernel's rules for mkdir/write/rmdir.

    mkdir creates the interface files of the controllers the parent enables; subtree_control
    takes "+c -c" tokens for controllers listed in cgroup.controllers (ENOENT otherwise), and
    refuses to enable any with processes in a non-root cgroup (EBUSY; the kernel lets
    threaded controllers (pids, cpu, cpuset) through, so this is the stricter case);
    cgroup.procs refuses a cgroup with controllers enabled for children (EBUSY); cgroup.kill
    empties the subtree; rmdir refuses a populated cgroup or one with children.
    """

    def __init__(self, root: Path, swap: bool = True) -> None:
        self.root = root
        self.swap = swap
        self.read_only: set[Path] = set()  # as root, chmod cannot make a file unwritable
        self.no_mkdir: set[Path] = set()
        self.killed: list[int] = []
        root.mkdir()
        (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
        (root / "cgroup.subtree_control").write_text("")
        (root / "cgroup.procs").write_text("")
        # No cgroup.type: that is how the real root looks.

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(_cgroups, "_write", self.write)
        monkeypatch.setattr(_cgroups, "_mkdir", self.mkdir)
        monkeypatch.setattr(_cgroups, "_rmdir", self.rmdir)

    def set(self, path: Path, values: str) -> None:
        path.write_text(values)

    def procs(self, cgroup: Path) -> list[int]:
        return [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]

    def subtree(self, cgroup: Path) -> list[str]:
        return (cgroup / "cgroup.subtree_control").read_text().split()

    def mkdir(self, path: Path) -> None:
        if path.parent in self.no_mkdir:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        os.mkdir(path)
        enabled = self.subtree(path.parent)
        for name, value in {
            "cgroup.procs": "",
            "cgroup.controllers": " ".join(enabled),
            "cgroup.subtree_control": "",
            "cgroup.type": "domain",
            "cgroup.kill": "",
            "cgroup.events": "populated 0\nfrozen 0\n",
        }.items():
            (path / name).write_text(value)
        self._add_interface(path, enabled)

    def _add_interface(self, path: Path, controllers: list[str]) -> None:
        for controller in controllers:
            for name, value in INTERFACE.get(controller, {}).items():
                if name != "memory.swap.max" or self.swap:
                    (path / name).write_text(value)

    def rmdir(self, path: Path) -> None:
        if self.procs(path) or any(p.is_dir() for p in path.iterdir()):
            raise OSError(errno.EBUSY, "Device or resource busy", str(path))
        for child in path.iterdir():
            child.unlink()
        os.rmdir(path)

    def write(self, path: Path, text: str) -> None:
        if path in self.read_only:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        if not path.is_file():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        cgroup = path.parent
        if path.name == "cgroup.subtree_control":
            self._subtree_control(cgroup, text)
        elif path.name == "cgroup.procs":
            if cgroup != self.root and self.subtree(cgroup):
                raise OSError(errno.EBUSY, "Device or resource busy", str(path))
            pid = int(text) or os.getpid()
            for other in self.root.rglob("cgroup.procs"):
                other.write_text(" ".join(str(p) for p in self.procs(other.parent) if p != pid))
            path.write_text(" ".join(map(str, [*self.procs(cgroup), pid])))
        elif path.name == "cgroup.kill":
            for procs in cgroup.rglob("cgroup.procs"):
                self.killed += self.procs(procs.parent)
                procs.write_text("")
        else:
            path.write_text(text)

    def _subtree_control(self, cgroup: Path, text: str) -> None:
        active = self.subtree(cgroup)
        available = (cgroup / "cgroup.controllers").read_text().split()
        for token in text.split():
            sign, controller = token[0], token[1:]
            if controller not in available:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory")
            if sign == "+" and controller not in active:
                if cgroup != self.root and self.procs(cgroup):
                    raise OSError(errno.EBUSY, "Device or resource busy")
                active.append(controller)
            elif sign == "-" and controller in active:
                active.remove(controller)
        order = (cgroup / "cgroup.controllers").read_text().split()
        active.sort(key=order.index)
        (cgroup / "cgroup.subtree_control").write_text(" ".join(active))
        for child in (p for p in cgroup.iterdir() if p.is_dir()):
            (child / "cgroup.controllers").write_text(" ".join(active))
            self._add_interface(child, active)

    def delegated_scope(self, *pids: int) -> Path:
        """A systemd-like `user.slice/boi.scope` with everything delegated, holding `pids`."""
        self.write(self.root / "cgroup.subtree_control", "+cpuset +cpu +memory +pids")
        user = self.root / "user.slice"
        self.mkdir(user)
        self.write(user / "cgroup.subtree_control", "+cpuset +cpu +memory +pids")
        scope = user / "boi.scope"
        self.mkdir(scope)
        for pid in pids:
            self.write(scope / "cgroup.procs", str(pid))
        return scope


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCgroup2:
    cgroupfs = FakeCgroup2(tmp_path / "cgroup")
    cgroupfs.install(monkeypatch)
    monkeypatch.setattr(_cgroups, "_OWN", {})  # a failed test leaves no record to the next
    return cgroupfs


def _v2(fake: FakeCgroup2, own: Path, workers: int = 2) -> Cgroups:
    return Cgroups(workers, CONFIG, bases=CgroupBases(v2=own), cpus=[0, 1])


def test_fake_v2_delegated_scope_moves_the_harness_and_sets_every_limit(fake):
    own = fake.delegated_scope(os.getpid())
    cgroups = _v2(fake, own)
    _one_line(cgroups.notes)
    assert cgroups.notes == []
    leaf = own / f"boi-{os.getpid()}-{NS}-harness"
    assert fake.procs(own) == [] and fake.procs(leaf) == [os.getpid()]
    (tree,) = {cgroups.roots[c] for c in CONTROLLERS}
    assert tree.parent == own and tree.name.startswith(f"boi-{os.getpid()}-{NS}-")
    # Enabled top-down: in our own cgroup, then in the tree; the leaf is left without any.
    assert fake.subtree(own) == ["cpuset", "cpu", "memory", "pids"]
    assert fake.subtree(tree) == ["cpuset", "cpu", "memory", "pids"]
    for index in (0, 1):
        worker = tree / f"w{index}"
        assert (worker / "memory.max").read_text() == str(256 * 2**20)
        assert (worker / "memory.swap.max").read_text() == "0"
        assert (worker / "pids.max").read_text() == "4"
        assert (worker / "cpu.max").read_text() == "100000 100000"
        assert (worker / "cpuset.cpus").read_text() == str(index)
        assert cgroups.procs_files(index) == [str(worker / "cgroup.procs")]  # one hierarchy
    assert cgroups.caps() == {
        "processes": "pids cgroup v2 (4 per worker)",
        "memory": "memory cgroup v2 (256 MiB per worker, no swap)",
        "cpu": "cpu cgroup v2 (1 CPU per worker) + cpuset cgroup v2 (each worker on one CPU: 0, 1)",
    }
    # A leftover sample is killed at close; then the scope is as we found it.
    fake.write(tree / "w1" / "cgroup.procs", "424242")
    cgroups.close()
    assert 424242 in fake.killed
    assert not tree.exists() and not leaf.exists()
    assert fake.subtree(own) == [] and fake.procs(own) == [os.getpid()]
    assert cgroups.roots == {} and cgroups.procs_files(0) == []


def test_fake_v2_second_pool_shares_the_leaf_and_the_last_one_restores(fake):
    own = fake.delegated_scope(os.getpid())
    first = _v2(fake, own)
    leaf = own / f"boi-{os.getpid()}-{NS}-harness"
    # /proc/self/cgroup now names the leaf: the second pool must work beside it, not in it.
    second = _v2(fake, leaf)
    assert second.notes == [] and second.roots["memory"].parent == own
    first.close()
    assert fake.subtree(own) and fake.procs(leaf) == [os.getpid()]  # still in use
    second.close()
    assert fake.subtree(own) == [] and not leaf.exists()


def test_fake_v2_foreign_process_in_own_cgroup_is_left_alone_with_a_note(fake):
    own = fake.delegated_scope(os.getpid(), 1)  # pid 1 is not the harness's
    cgroups = _v2(fake, own)
    _one_line(cgroups.notes)
    assert len(cgroups.notes) == 1, cgroups.notes
    assert "holds processes that are not the harness's (pid 1)" in cgroups.notes[0]
    assert "systemd-run --user --scope -p Delegate=yes" in cgroups.notes[0]
    assert fake.procs(own) == [os.getpid(), 1] and fake.subtree(own) == []
    assert cgroups.caps() == {}
    # The tree still contains the workers' samples, for cgroup.kill.
    assert len(cgroups.procs_files(0)) == 1
    cgroups.close()
    assert [p.name for p in own.iterdir() if p.is_dir()] == []


def test_fake_v2_read_only_subtree_control_is_a_note(fake):
    own = fake.delegated_scope()  # nothing in it: no move needed
    fake.read_only.add(own / "cgroup.subtree_control")
    cgroups = _v2(fake, own)
    _one_line(cgroups.notes)
    assert len(cgroups.notes) == 4  # one per controller
    assert all("Permission denied" in note for note in cgroups.notes)
    assert cgroups.caps() == {} and cgroups.roots == {}
    cgroups.close()


def test_fake_v2_ebusy_is_one_note(fake):
    # A process we cannot vouch for (gone from /proc, so not a descendant): one note only,
    # not one more per controller for the EBUSY that follows.
    own = fake.delegated_scope(_dead_pid())
    cgroups = _v2(fake, own)
    _one_line(cgroups.notes)
    assert len(cgroups.notes) == 1 and "not the harness's" in cgroups.notes[0]
    cgroups.close()
    # The kernel's EBUSY itself, on a cgroup that is not ours to empty.
    other = fake.root / "other"
    fake.mkdir(other)
    fake.write(other / "cgroup.procs", str(os.getpid()))
    notes: list[str] = []
    assert enable_controllers(other, ["memory"], notes) == []
    _one_line(notes)
    assert notes == [
        f"cgroup v2: cannot enable memory in {other / 'cgroup.subtree_control'} "
        "(Device or resource busy)"
    ]


def test_fake_v2_controllers_not_delegated(fake):
    fake.write(fake.root / "cgroup.subtree_control", "+pids")  # the parent passes pids only
    own = fake.root / "svc"
    fake.mkdir(own)
    cgroups = _v2(fake, own)
    _one_line(cgroups.notes)
    assert cgroups.notes == [f"cgroup v2: memory, cpu not delegated to {own} (not in its "
                             "cgroup.controllers)"]  # fmt: skip
    assert set(cgroups.caps()) == {"processes"}
    cgroups.close()


def test_fake_v2_unwritable_cgroup(fake):
    own = fake.delegated_scope()
    fake.no_mkdir.add(own)
    cgroups = _v2(fake, own)
    _one_line(cgroups.notes)
    assert len(cgroups.notes) == 1 and "Permission denied" in cgroups.notes[0]
    assert "Delegate=yes" in cgroups.notes[0]
    assert cgroups.procs_files(0) == [] and cgroups.caps() == {}
    cgroups.close()


def test_fake_v2_root_cgroup_needs_no_move_and_is_not_undone(fake):
    fake.write(fake.root / "cgroup.procs", str(os.getpid()))
    cgroups = _v2(fake, fake.root)
    assert cgroups.notes == [] and fake.procs(fake.root) == [os.getpid()]
    assert set(cgroups.caps()) == {"processes", "memory", "cpu"}
    cgroups.close()
    assert fake.subtree(fake.root) == ["cpuset", "cpu", "memory", "pids"]  # machine-wide


def test_fake_v2_without_swap_accounting_and_with_a_failing_limit(fake, monkeypatch):
    fake.swap = False
    own = fake.delegated_scope()
    original = fake.write

    def refuse_cpu_max(path: Path, text: str) -> None:
        if path.name == "cpu.max":
            raise OSError(errno.EINVAL, "Invalid argument", str(path))
        original(path, text)

    monkeypatch.setattr(_cgroups, "_write", refuse_cpu_max)
    cgroups = _v2(fake, own)
    _one_line(cgroups.notes)
    assert cgroups.notes == ["cgroup v2 cpu: cannot set the limit (Invalid argument)"]
    caps = cgroups.caps()
    assert caps["memory"] == "memory cgroup v2 (256 MiB per worker)"
    assert caps["cpu"] == "cpuset cgroup v2 (each worker on one CPU: 0, 1)"
    assert "cpu" not in cgroups.roots
    cgroups.close()


def test_fake_v2_stale_trees(fake):
    own = fake.delegated_scope()
    dead, alive = _dead_pid(), os.getppid()
    stale = {
        "dead": f"boi-{dead}-{NS}-0123abcd",
        "alive": f"boi-{alive}-{NS}-0123abcd",
        "other_ns": f"boi-{dead}-{NS + 1}-0123abcd",
        "old_format": f"boi-{dead}-abc123",
        "dead_leaf": f"boi-{dead}-{NS}-harness",
        "not_ours": "boi-something",
    }
    for name in stale.values():
        fake.mkdir(own / name)
        if not name.endswith(("harness", "something")):
            fake.mkdir(own / name / "w0")
    fake.write(own / stale["dead"] / "w0" / "cgroup.procs", "777777")
    fake.write(own / stale["dead_leaf"] / "cgroup.procs", "888888")  # not killed: not a worker
    cgroups = _v2(fake, own)
    left = {p.name for p in own.iterdir() if p.is_dir() and p.name in stale.values()}
    assert left == {stale[k] for k in ("alive", "other_ns", "dead_leaf", "not_ours")}
    assert fake.killed == [777777]
    cgroups.close()


# ---- a real cgroup2 mount -------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS = 0x00020000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _procs(cgroup: Path) -> list[int]:
    return [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]


def _wait_for(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    """Poll `condition` until it holds (True) or `seconds` pass (False). The bound only ends a
    wait for what did not happen, so it is generous: a fork or an exit on a loaded machine
    may take longer than the 2 s it was."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _remove_all(cgroup: Path) -> None:
    for child in sorted((p for p in cgroup.rglob("*") if p.is_dir()), reverse=True):
        _wait_for(partial(_try_rmdir, child), 1.0)
    _wait_for(partial(_try_rmdir, cgroup), 1.0)


def _try_rmdir(path: Path) -> bool:
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


_UNDO: list[Callable[[], None]] = []  # run in the child after its cgroups are gone


def _in_cgroup2(test: Callable[[Path, Path], str | None]) -> None:
    """Run `test(mount, cgroup)` in a child that sits alone in `cgroup` of a cgroup2 mount.

    The child unshares its mount namespace (the mount stays private to it) and mounts the
    unified hierarchy; the cgroups it makes are the machine's, so it removes them again.
    `test` returns None, or "skip: why".
    """
    if os.geteuid() != 0:
        pytest.skip("mounting cgroup2 needs root")
    result_r, result_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(result_r)
        outcome = "ok"
        mount = Path(tempfile.mkdtemp(prefix="boi-test-cgroup2-"))
        cgroup = mount / f"cgtest-{os.getpid()}"
        try:
            _check(_libc.unshare(CLONE_NEWNS), "unshare")
            _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "private /")
            _check(_libc.mount(b"cgroup2", bytes(mount), b"cgroup2", 0, b""), "mount cgroup2")
            os.mkdir(cgroup)
            _write(cgroup / "cgroup.procs", "0")
        except OSError as err:
            outcome = f"skip: {err}"
        if outcome == "ok":
            try:
                outcome = test(mount, cgroup) or "ok"
            except BaseException:
                outcome = traceback.format_exc()
            try:
                _write(mount / "cgroup.procs", "0")
                _write(cgroup / "cgroup.kill", "1")
                _remove_all(cgroup)
                for undo in _UNDO:
                    undo()
            except BaseException:
                outcome += "\ncleanup: " + traceback.format_exc()
        os.write(result_w, outcome.encode())
        os._exit(0)
    os.close(result_w)
    chunks = []
    while chunk := os.read(result_r, 1 << 16):
        chunks.append(chunk)
    os.close(result_r)
    os.waitpid(child, 0)
    outcome = b"".join(chunks).decode()
    if outcome.startswith("skip: "):
        pytest.skip(outcome)
    assert outcome == "ok", outcome


def _usable_v2(cgroup: Path) -> list[str]:
    available = (cgroup / "cgroup.controllers").read_text().split()
    return [c for c in CONTROLLERS if c in available]


def test_real_v2_tree_samples_join_and_are_killed():
    def test(mount: Path, own: Path) -> None:
        cgroups = Cgroups(2, CONFIG, bases=CgroupBases(v2=own), cpus=[0, 1])
        _one_line(cgroups.notes)
        usable = _usable_v2(own)  # on this host: none (all four are bound to v1)
        assert sorted(cgroups.roots) == sorted(usable), cgroups.notes
        (procs,) = cgroups.procs_files(0)
        worker = Path(procs).parent
        assert worker.parent.parent == own and worker.name == "w0"
        if "pids" in usable:
            assert (worker / "pids.max").read_text().strip() == "4"
        # A "sample" joins the way the zygote's samples do, then leaves an orphan behind.
        sample = os.fork()
        if sample == 0:
            _write(Path(procs), "0")
            if os.fork() == 0:
                os.setsid()
                time.sleep(30)
                os._exit(0)
            time.sleep(30)
            os._exit(0)
        assert _wait_for(lambda: len(_procs(worker)) == 2)
        assert (worker / "cgroup.events").read_text().split()[1] == "1"
        cgroups.kill(0)
        assert os.waitpid(sample, 0)[1] == signal.SIGKILL
        assert _wait_for(lambda: _procs(worker) == []), _procs(worker)
        cgroups.close()
        assert not worker.parent.exists()
        assert [p for p in own.iterdir() if p.is_dir()] == []

    _in_cgroup2(test)


def test_real_v2_stale_tree_of_a_dead_harness_is_killed_and_removed():
    def test(mount: Path, own: Path) -> None:
        stale = own / f"boi-{_dead_pid()}-{NS}-feedf00d"
        alive = own / f"boi-{os.getppid()}-{NS}-feedf00d"
        for tree in (stale, alive):
            os.mkdir(tree)
            os.mkdir(tree / "w0")
        leftover = os.fork()
        if leftover == 0:
            _write(stale / "w0" / "cgroup.procs", "0")
            time.sleep(30)
            os._exit(0)
        assert _wait_for(lambda: _procs(stale / "w0") == [leftover])
        cgroups = Cgroups(1, CONFIG, bases=CgroupBases(v2=own))
        assert os.waitpid(leftover, 0)[1] == signal.SIGKILL
        assert not stale.exists() and alive.exists()
        cgroups.close()

    _in_cgroup2(test)


def _hugetlb(mount: Path) -> str | None:
    """Enable hugetlb (v2's only free controller here) at the root, for our test cgroup.

    Returns "skip: why" where it is not free; `_in_cgroup2` disables it again at the end.
    """
    if "hugetlb" not in (mount / "cgroup.controllers").read_text().split():
        return "skip: no controller free for cgroup v2 on this host (hugetlb bound to v1?)"
    if "hugetlb" not in (mount / "cgroup.subtree_control").read_text().split():
        _write(mount / "cgroup.subtree_control", "+hugetlb")
        _UNDO.append(partial(_write, mount / "cgroup.subtree_control", "-hugetlb"))
    return None


def test_real_v2_no_internal_processes_moves_the_harness_into_a_leaf_and_back():
    def test(mount: Path, own: Path) -> str | None:
        skip = _hugetlb(mount)
        if skip:
            return skip
        try:
            # The kernel's rule, for real: our cgroup holds us, so it cannot pass hugetlb on.
            with pytest.raises(OSError) as busy:
                _write(own / "cgroup.subtree_control", "+hugetlb")
            assert busy.value.errno == errno.EBUSY
            notes: list[str] = []
            assert enable_controllers(own, ["hugetlb"], notes, own=True) == ["hugetlb"]
            assert notes == []
            leaf = own / f"boi-{os.getpid()}-{NS}-harness"
            assert _procs(own) == [] and _procs(leaf) == [os.getpid()]
            line = Path("/proc/self/cgroup").read_text().splitlines()[-1]
            assert line == f"0::/{own.name}/{leaf.name}"
            # Top-down: a child of our cgroup gets it, and passes it on in turn.
            child = own / "child"
            os.mkdir(child)
            assert "hugetlb" in (child / "cgroup.controllers").read_text().split()
            assert enable_controllers(child, ["hugetlb"], notes) == ["hugetlb"]
            assert (child / "cgroup.subtree_control").read_text().split() == ["hugetlb"]
            _write(child / "cgroup.subtree_control", "-hugetlb")
            os.rmdir(child)
            release_own(own)
            assert _procs(own) == [os.getpid()] and not leaf.exists()
            assert (own / "cgroup.subtree_control").read_text().split() == []
            return None
        finally:
            _cgroups._OWN.clear()  # whatever happened, _in_cgroup2 cleans up the cgroups

    _in_cgroup2(test)


def test_real_v2_foreign_process_is_not_moved():
    def test(mount: Path, own: Path) -> str | None:
        skip = _hugetlb(mount)
        if skip:
            return skip
        pid_r, pid_w = os.pipe()
        middle = os.fork()
        if middle == 0:  # its child outlives it: an orphan in our cgroup that is not ours
            orphan = os.fork()
            if orphan == 0:
                time.sleep(30)
                os._exit(0)
            os.write(pid_w, str(orphan).encode())
            os._exit(0)
        os.waitpid(middle, 0)
        orphan = int(os.read(pid_r, 32))
        try:
            notes: list[str] = []
            assert enable_controllers(own, ["hugetlb"], notes, own=True) == []
            _one_line(notes)
            assert len(notes) == 1 and f"(pid {orphan})" in notes[0], notes
            assert sorted(_procs(own)) == sorted([os.getpid(), orphan])
            release_own(own)
            return None
        finally:
            os.kill(orphan, signal.SIGKILL)

    _in_cgroup2(test)


# ---- real cgroup v1 on this host --------------------------------------------------------------------


@pytest.fixture
def v1() -> Iterator[Cgroups]:
    bases = cgroup_bases()
    if not {"pids", "cpu"} <= set(bases.v1):
        pytest.skip("no cgroup v1 pids and cpu hierarchies here")
    cgroups = Cgroups(2, CONFIG, bases=CgroupBases(v1=bases.v1), cpus=[0, 1])
    if not {"pids", "cpu"} <= set(cgroups.roots):
        cgroups.close()
        pytest.skip(f"cgroup v1 not writable here: {cgroups.notes}")
    yield cgroups
    cgroups.close()


def _v1_procs(cgroups: Cgroups, controller: str, index: int) -> Path:
    return cgroups.workers[controller][index] / "cgroup.procs"


def _in_child(body: Callable[[], int]) -> int:
    """Run `body` in a forked child; its return value is the exit status."""
    pid = os.fork()
    if pid == 0:
        status = 99
        try:
            status = body()
        finally:
            os._exit(status)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_real_v1_pids_cap_holds_against_a_fork_loop(v1):
    procs = _v1_procs(v1, "pids", 0)

    def body() -> int:
        _write(procs, "0")
        forked = 0
        for _ in range(10):
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                forked += 1
            except BlockingIOError:  # EAGAIN: pids.max reached
                pass
        return forked

    assert _in_child(body) == 3  # 4 processes: the child and 3 more
    v1.kill(0)
    assert _wait_for(lambda: _procs(procs.parent) == [])


def test_real_v1_cpu_quota_holds_spinners_to_one_cpu(v1):
    procs = _v1_procs(v1, "cpu", 1)  # the cpu cgroup only: not the cpuset, which alone pins
    assert (procs.parent / "cpu.cfs_quota_us").read_text().strip() == "100000"
    assert (procs.parent / "cpu.cfs_period_us").read_text().strip() == "100000"
    started = time.monotonic()
    spinners = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            _write(procs, "0")
            while time.monotonic() < started + 1.0:
                pass
            os._exit(0)
        spinners.append(pid)
    used = 0.0
    for pid in spinners:
        _, _, usage = os.wait4(pid, 0)
        used += usage.ru_utime + usage.ru_stime
    wall = time.monotonic() - started
    stat = dict(line.split() for line in (procs.parent / "cpu.stat").read_text().splitlines())
    # Periods are counted only while a quota applies: proof that it did, however busy the
    # machine (on a loaded 2-core host 3 uncapped spinners may get less than 1 CPU anyway).
    assert int(stat["nr_periods"]) > 0, stat
    assert used <= 1.2 * wall, f"{used:.2f} CPU-seconds in {wall:.2f} s ({stat})"


def test_real_v1_cpuset_cannot_be_widened_by_the_sample(v1):
    if "cpuset" not in v1.roots:
        pytest.skip(f"no cgroup v1 cpuset here: {v1.notes}")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: nothing to widen to")
    procs = _v1_procs(v1, "cpuset", 1)
    pinned = v1.cpu_of(1)

    def body() -> int:
        _write(procs, "0")
        if os.sched_getaffinity(0) != {pinned}:
            return 1
        others = set(range(os.cpu_count() or 1)) - {pinned}
        try:
            os.sched_setaffinity(0, others)  # outside the cpuset: refused
            return 2
        except OSError as err:
            if err.errno != errno.EINVAL:
                return 3
        os.sched_setaffinity(0, others | {pinned})  # wider: cut back to the cpuset
        return 0 if os.sched_getaffinity(0) == {pinned} else 4

    assert _in_child(body) == 0


def test_real_v1_limits_and_caps_report(v1):
    caps = v1.caps()
    assert caps["processes"] == "pids cgroup v1 (4 per worker)"
    assert caps["cpu"].startswith("cpu cgroup v1 (1 CPU per worker)")
    for worker in v1.workers["pids"]:
        assert (worker / "pids.max").read_text().strip() == "4"
    if "memory" in v1.workers:
        assert caps["memory"].startswith("memory cgroup v1 (256 MiB per worker")
        for worker in v1.workers["memory"]:
            assert (worker / "memory.limit_in_bytes").read_text().strip() == str(256 * 2**20)
    # One cgroup.procs per hierarchy, each in that hierarchy's tree.
    files = v1.procs_files(0)
    assert len(files) == len(set(files)) == len({root for root in v1.roots.values()})
    assert json.loads(json.dumps(caps)) == caps


def test_real_v1_close_kills_leftovers_and_removes_the_trees(v1):
    procs = _v1_procs(v1, "pids", 1)
    leftover = os.fork()
    if leftover == 0:
        _write(procs, "0")
        time.sleep(30)
        os._exit(0)
    assert _wait_for(lambda: _procs(procs.parent) == [leftover])
    roots = list(v1.roots.values())
    v1.close()
    assert os.waitpid(leftover, 0)[1] == signal.SIGKILL
    assert not any(root.exists() for root in roots)
