"""The kernel calls the sandbox worker makes through ctypes (mount, unshare, setns, prctl), and
their constants: shared by the set-up (`_setup.py`), the spawner (`_spawner.py`) and the tests
side (`_tests_side.py`).

Standard library only, loaded by the zygote from its file (see `_zygote._load_sibling`), like
every module of the worker: a sample sees a plain interpreter and cannot import the harness.
"""

from __future__ import annotations

import ctypes
import os
import signal

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MNT_DETACH = 0x2

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
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
]
libc.unshare.argtypes = [ctypes.c_int]
libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]


# glibc's mallopt parameters.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3


def fix_malloc(threshold: int) -> bool:
    """Make glibc's malloc map every block of `threshold` bytes or more on its own (unmapped
    when freed) and give back the free top of its heap past `threshold` bytes, instead of
    raising both limits as large blocks come and go (its default). False where the C library
    has no mallopt (musl) or refuses."""
    try:
        mallopt = libc.mallopt
    except AttributeError:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, threshold)) and bool(mallopt(M_TRIM_THRESHOLD, threshold))


def malloc_trim() -> None:
    """Give the free pages of malloc's heap back to the kernel (glibc; nothing elsewhere)."""
    try:
        trim = libc.malloc_trim
    except AttributeError:
        return
    trim.argtypes = [ctypes.c_size_t]
    trim(0)


def resident_bytes() -> int | None:
    """This process's resident memory (/proc/self/statm), or None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    check(
        libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def detach(target: str) -> None:
    """Unmount `target` (lazily: MNT_DETACH, as nothing in this namespace may still use it)."""
    check(libc.umount2(target.encode(), MNT_DETACH), f"umount {target}")


def set_name(name: bytes) -> None:
    """The process's name in ps and top (one word per role: boi-spawner, boi-jobs, ...)."""
    buffer = ctypes.create_string_buffer(name[:15])
    libc.prctl(PR_SET_NAME, ctypes.addressof(buffer), 0, 0, 0)


def prctl(option: int, arg: int) -> None:
    check(libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
