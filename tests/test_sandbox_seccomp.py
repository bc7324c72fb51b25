"""The seccomp filter for candidate programs (benchmarks/execution/_seccomp.py).

Three kinds of check: the syscall tables against libseccomp (an independent source, where it is
installed); the BPF program run through a small interpreter, for both architectures, so that the
aarch64 program is checked on an x86_64 host too; and the filter on the running kernel, each
call in a forked child that installs it. A refusal test first makes the same call without the
filter, in another child, and skips where that already fails the same way, so every refusal
test can fail. The arguments make an allowed call fail harmlessly (EBADF, EFAULT, EINVAL) or
do nothing: no test reboots, mounts or creates anything if the filter lets the call through.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import errno
import importlib.util
import mmap
import multiprocessing
import os
import pickle
import resource
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

MODULE_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "execution" / "_seccomp.py"


def _load() -> ModuleType:
    """The module as the zygote loads it: by path, not through the `benchmarks` package."""
    spec = importlib.util.spec_from_file_location("boi_sandbox_seccomp", MODULE_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


seccomp = _load()
NATIVE = os.uname().machine
TABLE: dict[str, int] = seccomp.TABLES.get(NATIVE, {})
needs_filter = pytest.mark.skipif(not seccomp.SUPPORTED, reason=f"no seccomp table for {NATIVE}")
x86_64_only = pytest.mark.skipif(NATIVE != "x86_64", reason="x86_64 ABI check")

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_ARM = 0x40000028
ALLOW = 0x7FFF0000
KILL_PROCESS = 0x80000000
EPERM = 0x00050000 | errno.EPERM
ENOSYS = 0x00050000 | errno.ENOSYS

CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
CLONE_THREAD = 0x00010000
THREAD_FLAGS = 0x003D0F00  # what glibc's pthread_create passes to clone
TIOCSTI, TIOCLINUX, TCGETS, FIONREAD = 0x5412, 0x541C, 0x5401, 0x541B
AF_UNIX, AF_INET, AF_NETLINK = 1, 2, 16
U64 = 0xFFFFFFFFFFFFFFFF

# The policy as specified, written out independently of the module's own lists.
SCHEDULING = {
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "setpriority",
}
SPECIFIED = (
    {"socket", "connect", "bind", "listen", "accept", "accept4"}
    | {"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "pidfd_open"}
    | {"kcmp", "process_madvise", "perf_event_open"}
    | {"mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree"}
    | {"open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick"}
    | {"mount_setattr", "clone3"}
    | {"add_key", "request_key", "keyctl", "mq_open", "mq_unlink", "mq_timedsend"}
    | {"mq_timedreceive", "mq_notify", "mq_getsetattr", "msgget", "msgsnd", "msgrcv"}
    | {"msgctl", "semget", "semop", "semtimedop", "semctl", "shmget", "shmat", "shmdt"}
    | {"shmctl", "bpf", "userfaultfd", "io_uring_setup", "io_uring_enter"}
    | {"io_uring_register", "setsid", "setpgid"}
    | {"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid"}
    | {"setfsgid", "setgroups", "capset", "acct", "swapon", "swapoff", "reboot"}
    | {"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"}
    | {"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname"}
    | {"setdomainname", "iopl", "ioperm", "open_by_handle_at", "name_to_handle_at"}
    | {"lookup_dcookie", "quotactl", "quotactl_fd", "vhangup", "fanotify_init", "syslog"}
    | {"mincore", "readahead", "fadvise64", "cachestat", "getrusage"}
    | SCHEDULING
)
X86_ONLY = {"iopl", "ioperm"}
CONDITIONAL = {"socketpair", "clone", "kill", "ioctl", "personality"} | {
    "madvise",
    "preadv2",
    "pwritev2",
    "wait4",
    "waitid",
}
MADV_DONTNEED, MADV_FREE, MADV_WILLNEED, MADV_COLD, MADV_PAGEOUT = 4, 8, 3, 20, 21
RWF_HIPRI, RWF_NOWAIT = 0x1, 0x8

# Arguments for a refused call: -1 everywhere (a bad fd, pointer, flag or id) except here.
IPC_KEY = 0x626F6931  # a System V key nobody uses; flags 0 never create an object
ARGS: dict[str, tuple[int, ...]] = {
    "msgget": (IPC_KEY, 0),
    "semget": (IPC_KEY, 0, 0),
    "shmget": (IPC_KEY, 0, 0),
    "init_module": (0, 0, 0),  # an empty image: ENOEXEC
}


# --- helpers ------------------------------------------------------------------------------------


def _syscall(nr: int, *args: int) -> tuple[int, int]:
    """(return value, errno) of a raw syscall, errno 0 on success; arguments are 64-bit."""
    ctypes.set_errno(0)
    result = int(LIBC.syscall(ctypes.c_long(nr), *(ctypes.c_long(arg) for arg in args)))
    return result, ctypes.get_errno() if result == -1 else 0


def _in_child(
    body: Callable[[], Any],
    *,
    filtered: bool = True,
    protect_affinity: bool = True,
    new_session: bool = True,
) -> tuple[str, Any]:
    """Run `body` in a forked child, under the filter unless `filtered` is false.

    ("ok", value), ("raised", "Type: message"), ("signal", number) if it was killed, or
    ("exit", status) if it died without reporting. With `new_session` the child first leaves
    the terminal's session, so that a vhangup let through hangs up nothing.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(15)  # a hung child fails its test instead of hanging the run
            try:
                if new_session:
                    os.setsid()
                if filtered:
                    seccomp.install(protect_affinity=protect_affinity)
                result: tuple[str, Any] = ("ok", body())
            except BaseException as err:
                result = ("raised", f"{type(err).__name__}: {err}")
            os.write(write_fd, pickle.dumps(result))
        finally:
            os._exit(0)
    os.close(write_fd)
    with open(read_fd, "rb") as reader:
        data = reader.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "signal", os.WTERMSIG(status)
    if not data:
        return "exit", os.waitstatus_to_exitcode(status)
    outcome: tuple[str, Any] = pickle.loads(data)
    return outcome


def _assert_refused(
    call: Callable[[], tuple[int, int]], want: int = errno.EPERM, *, new_session: bool = True
) -> None:
    """`call` fails with `want` under the filter, and differently without it."""
    kind, baseline = _in_child(call, filtered=False, new_session=new_session)
    assert kind == "ok", baseline
    if baseline == (-1, want):
        pytest.skip(f"fails with {errno.errorcode[want]} here even without the filter")
    assert _in_child(call, new_session=new_session) == ("ok", (-1, want))


def _run_bpf(program: bytes, nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """Run a classic BPF program on a struct seccomp_data, as the kernel does; its return."""
    data = struct.pack("<IIQ6Q", nr & 0xFFFFFFFF, arch, 0, *args, *[0] * (6 - len(args)))
    insns = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]  # an IndexError is a jump past the end
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            assert k % 4 == 0 and k < len(data), k
            (acc,) = struct.unpack_from("<I", data, k)
            pc += 1
        elif code == 0x06:  # BPF_RET | BPF_K
            return int(k)
        elif code in (0x15, 0x35, 0x45):  # BPF_JMP | JEQ / JGE / JSET, BPF_K
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: acc & k != 0}[code]
            pc += 1 + (jt if taken else jf)
        else:
            raise AssertionError(f"unexpected BPF opcode {code:#x} at {pc}")


# --- the module itself --------------------------------------------------------------------------


def test_module_imports_only_the_standard_library() -> None:
    script = (
        "import importlib.util, sys\n"
        "before = set(sys.modules)\n"
        f"spec = importlib.util.spec_from_file_location('s', {str(MODULE_PATH)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "names = {name.partition('.')[0] for name in set(sys.modules) - before}\n"
        "print(sorted(names - set(sys.stdlib_module_names)))\n"
    )
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_denied_names_follow_the_policy() -> None:
    assert set(seccomp.denied(machine="x86_64")) == SPECIFIED
    assert set(seccomp.denied(machine="aarch64")) == SPECIFIED - X86_ONLY
    assert set(seccomp.denied(machine="x86_64", protect_affinity=False)) == SPECIFIED - SCHEDULING
    assert seccomp.denied() == seccomp.DENIED
    assert seccomp.denied(machine="riscv64") == ()
    for table in seccomp.TABLES.values():
        assert CONDITIONAL | {"seccomp"} <= set(table)
        assert len(set(table.values())) == len(table), "two names share a number"


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_tables_match_libseccomp(machine: str) -> None:
    path = ctypes.util.find_library("seccomp")
    if path is None:
        pytest.skip("libseccomp not installed")
    resolve = ctypes.CDLL(path).seccomp_syscall_resolve_name_arch
    resolve.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
    resolve.restype = ctypes.c_int
    table = seccomp.TABLES[machine]
    unknown = []
    for name, nr in table.items():
        found = resolve(AUDIT_ARCH[machine], name.encode())
        if found == -1:  # __NR_SCMP_ERROR: a syscall newer than this libseccomp
            unknown.append(name)
        else:
            assert found == nr, f"{machine} {name}: ours {nr}, libseccomp {found}"
    # Those it does not know must be in the range numbered alike on every architecture (424+,
    # include/uapi/asm-generic/unistd.h); open_tree_attr (467, Linux 6.15) postdates 2.5.
    assert set(unknown) <= {"open_tree_attr"}
    for name in unknown:
        assert table[name] >= 424 and len({t[name] for t in seccomp.TABLES.values()}) == 1
    # A policy syscall this architecture lacks is a pseudo-syscall (negative) to libseccomp.
    for name in set(seccomp.TABLES["x86_64"]) - set(table):
        assert resolve(AUDIT_ARCH[machine], name.encode()) < 0, name


# --- the BPF program, interpreted ---------------------------------------------------------------


@pytest.mark.parametrize("protect_affinity", [True, False])
@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_program_applies_the_policy(machine: str, protect_affinity: bool) -> None:
    program = seccomp.build_filter(protect_affinity=protect_affinity, machine=machine)
    assert len(program) % 8 == 0 and len(program) // 8 <= 4096
    table = seccomp.TABLES[machine]
    names = {nr: name for name, nr in table.items()}
    refused = SPECIFIED - (set() if protect_affinity else SCHEDULING)
    arch = AUDIT_ARCH[machine]
    for nr in range(1024):  # every syscall either architecture has, and some to spare
        name = names.get(nr, "")
        if name in CONDITIONAL:
            continue
        want = ENOSYS if name == "clone3" else EPERM if name in refused else ALLOW
        # Arguments never matter here: all ones in both halves must not change the answer.
        assert _run_bpf(program, nr, arch) == want, (name, nr)
        assert _run_bpf(program, nr, arch, (U64,) * 6) == want, (name, nr)


CONDITIONAL_CASES = [
    ("kill", (U64, 0), EPERM),
    ("kill", (0xFFFFFFFF, 9), EPERM),  # the kernel reads pid as an int: still -1
    ("kill", (1234, 9), ALLOW),
    ("kill", (U64 - 1233, 9), ALLOW),  # -1234: its own process group, say
    ("kill", (0, 9), ALLOW),
    ("socketpair", (AF_UNIX, 1, 0, 0), ALLOW),
    ("socketpair", (AF_INET, 1, 0, 0), EPERM),
    ("socketpair", (AF_NETLINK, 3, 0, 0), EPERM),
    ("clone", (17,), ALLOW),  # SIGCHLD: fork
    ("clone", (THREAD_FLAGS,), ALLOW),
    *[("clone", (flag | 17,), EPERM) for flag in CLONE_NEW.values()],
    ("clone", (CLONE_NEW["CLONE_NEWUSER"] | 1 << 32,), EPERM),
    ("ioctl", (0, TIOCSTI), EPERM),
    ("ioctl", (0, TIOCLINUX), EPERM),
    ("ioctl", (0, 1 << 32 | TIOCSTI), EPERM),  # the kernel reads the request as an unsigned int
    ("ioctl", (0, TCGETS), ALLOW),
    ("ioctl", (0, FIONREAD), ALLOW),
    ("personality", (0xFFFFFFFF,), ALLOW),
    ("personality", (U64,), ALLOW),
    ("personality", (0,), EPERM),
    ("personality", (0x0040000,), EPERM),  # ADDR_NO_RANDOMIZE
    # The page cache: no read-ahead or eviction by advice, no probe by RWF_NOWAIT, no child's
    # major-fault count; what allocators and waitpid use stays allowed.
    ("madvise", (0, 4096, MADV_WILLNEED), EPERM),
    ("madvise", (0, 4096, MADV_COLD), EPERM),
    ("madvise", (0, 4096, MADV_PAGEOUT), EPERM),
    ("madvise", (0, 4096, MADV_DONTNEED), ALLOW),
    ("madvise", (0, 4096, MADV_FREE), ALLOW),
    ("preadv2", (3, 0, 1, 0, 0, RWF_NOWAIT), EPERM),
    ("preadv2", (3, 0, 1, 0, 0, RWF_NOWAIT | RWF_HIPRI), EPERM),
    ("preadv2", (3, 0, 1, 0, 0, 0), ALLOW),
    ("pwritev2", (3, 0, 1, 0, 0, RWF_NOWAIT), EPERM),
    ("pwritev2", (3, 0, 1, 0, 0, 0), ALLOW),
    ("wait4", (U64, 0, 0, 0), ALLOW),  # glibc's waitpid
    ("wait4", (U64, 0, 0, 0x7FFF0000), EPERM),
    ("wait4", (U64, 0, 0, 1 << 32), EPERM),  # a buffer at a 4 GiB boundary: the high half
    ("waitid", (0, 0, 0, 4, 0), ALLOW),
    ("waitid", (0, 0, 0, 4, 0x7FFF0000), EPERM),
    ("waitid", (0, 0, 0, 4, 1 << 33), EPERM),
]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize(
    ("name", "args", "want"),
    CONDITIONAL_CASES,
    ids=[f"{name}({','.join(map(hex, args))})" for name, args, _ in CONDITIONAL_CASES],
)
def test_program_checks_arguments(
    machine: str, name: str, args: tuple[int, ...], want: int
) -> None:
    program = seccomp.build_filter(machine=machine)
    assert _run_bpf(program, seccomp.TABLES[machine][name], AUDIT_ARCH[machine], args) == want


def test_program_kills_foreign_abis() -> None:
    x86 = seccomp.build_filter(machine="x86_64")
    arm = seccomp.build_filter(machine="aarch64")
    assert _run_bpf(x86, 20, AUDIT_ARCH_I386) == KILL_PROCESS  # int 0x80 getpid
    assert _run_bpf(x86, 0x40000000 | 39, AUDIT_ARCH["x86_64"]) == KILL_PROCESS  # x32 getpid
    assert _run_bpf(x86, 0xFFFFFFFE, AUDIT_ARCH["x86_64"]) == KILL_PROCESS
    assert _run_bpf(x86, 0xFFFFFFFF, AUDIT_ARCH["x86_64"]) == ALLOW  # -1: ENOSYS from the kernel
    assert _run_bpf(x86, 41, AUDIT_ARCH["aarch64"]) == KILL_PROCESS
    assert _run_bpf(arm, 20, AUDIT_ARCH_ARM) == KILL_PROCESS
    assert _run_bpf(arm, 198, AUDIT_ARCH["x86_64"]) == KILL_PROCESS


def test_unsupported_machine_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(OSError, match="riscv64"):
        seccomp.build_filter(machine="riscv64")
    monkeypatch.setattr(seccomp, "SUPPORTED", False)
    assert seccomp.available()[0] is False
    # In a child: were install() not to refuse, the filter must not land on the test process.
    kind, message = _in_child(seccomp.install, filtered=False)
    assert kind == "raised" and message.startswith(f"OSError: [Errno {errno.ENOTSUP}]"), message


# --- on the running kernel: refused -------------------------------------------------------------


@needs_filter
def test_available() -> None:
    assert seccomp.available() == (True, "")


@needs_filter
@pytest.mark.parametrize("name", seccomp.DENIED)
def test_denied_syscall_is_refused(name: str) -> None:
    nr = TABLE[name]
    args = ARGS.get(name, (-1,) * 6)
    want = errno.ENOSYS if name == "clone3" else errno.EPERM
    # setsid succeeds only outside a session leader, which the children otherwise are.
    _assert_refused(lambda: _syscall(nr, *args), want, new_session=name != "setsid")


@needs_filter
@pytest.mark.parametrize("flag", CLONE_NEW.values(), ids=CLONE_NEW.keys())
def test_clone_into_a_new_namespace_is_refused(flag: int) -> None:
    # CLONE_THREAD without CLONE_SIGHAND makes an allowed call fail (EINVAL) before it creates
    # anything, so the call without the filter is harmless.
    _assert_refused(lambda: _syscall(TABLE["clone"], flag | CLONE_THREAD, 0, 0, 0, 0))


@needs_filter
@pytest.mark.parametrize("pid", [-1, 0xFFFFFFFF], ids=["-1", "low-half-only"])
def test_kill_everyone_is_refused(pid: int) -> None:
    _assert_refused(lambda: _syscall(TABLE["kill"], pid, 0))  # signal 0: a permission check


@needs_filter
@pytest.mark.parametrize("command", [TIOCSTI, TIOCLINUX, 1 << 32 | TIOCSTI])
def test_terminal_injection_ioctls_are_refused(command: int) -> None:
    _assert_refused(lambda: _syscall(TABLE["ioctl"], -1, command, 0))


@needs_filter
def test_socketpair_outside_af_unix_is_refused() -> None:
    pair = (ctypes.c_int * 2)()
    _assert_refused(lambda: _syscall(TABLE["socketpair"], AF_INET, 1, 0, ctypes.addressof(pair)))


@needs_filter
def test_personality_can_be_queried_not_changed() -> None:
    def change() -> tuple[int, int]:
        current, _ = _syscall(TABLE["personality"], 0xFFFFFFFF)
        return _syscall(TABLE["personality"], current)  # the same value: harmless if allowed

    _assert_refused(change)
    kind, (persona, error) = _in_child(lambda: _syscall(TABLE["personality"], 0xFFFFFFFF))
    assert kind == "ok" and persona >= 0 and error == 0


@needs_filter
@x86_64_only
def test_x32_syscall_kills_the_process() -> None:
    getpid_x32 = 0x40000000 | 39
    kind, _ = _in_child(lambda: _syscall(getpid_x32), filtered=False)
    assert kind == "ok"  # without the filter: a pid, or ENOSYS without x32 support
    assert _in_child(lambda: _syscall(getpid_x32)) == ("signal", signal.SIGSYS)
    assert _in_child(lambda: _syscall(-1)) == ("ok", (-1, errno.ENOSYS))


def _int80_getpid() -> int:
    """getpid through the i386 entry point (int 0x80) of a 64-bit process."""
    code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])  # mov eax, 20; int 0x80; ret
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return int(ctypes.CFUNCTYPE(ctypes.c_int)(address)())


@needs_filter
@x86_64_only
def test_i386_syscall_kills_the_process() -> None:
    if _in_child(lambda: _int80_getpid() == os.getpid(), filtered=False) != ("ok", True):
        pytest.skip("no i386 syscalls (int 0x80) on this kernel")
    assert _in_child(_int80_getpid) == ("signal", signal.SIGSYS)


def _python_socket() -> None:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()


def _stdlib_fd() -> int:
    return os.open(os.__file__, os.O_RDONLY)


def _mapped_stdlib() -> mmap.mmap:
    with open(os.__file__, "rb") as handle:
        return mmap.mmap(handle.fileno(), 0, prot=mmap.PROT_READ)


def _wait4_child() -> object:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        return os.wait4(pid, 0)
    finally:
        os.waitpid(pid, 0)  # reaped whether or not wait4 was refused


PYTHON_REFUSALS: dict[str, Callable[[], object]] = {
    # The page cache: probes of what another sample read, and evictions.
    "posix_fadvise(DONTNEED)": lambda: os.posix_fadvise(_stdlib_fd(), 0, 0, os.POSIX_FADV_DONTNEED),
    "readahead by fadvise(WILLNEED)": lambda: os.posix_fadvise(
        _stdlib_fd(), 0, 0, os.POSIX_FADV_WILLNEED
    ),
    "preadv(RWF_NOWAIT)": lambda: os.preadv(_stdlib_fd(), [bytearray(64)], 0, os.RWF_NOWAIT),
    "madvise(MADV_PAGEOUT)": lambda: _mapped_stdlib().madvise(MADV_PAGEOUT),
    "madvise(MADV_COLD)": lambda: _mapped_stdlib().madvise(MADV_COLD),
    "madvise(MADV_WILLNEED)": lambda: _mapped_stdlib().madvise(mmap.MADV_WILLNEED),
    "getrusage (major faults)": lambda: resource.getrusage(resource.RUSAGE_SELF),
    "wait4 (a child's major faults)": _wait4_child,
    "socket(AF_INET)": _python_socket,
    "socket(AF_UNIX)": lambda: socket.socket(socket.AF_UNIX).close(),
    "socketpair(AF_INET)": lambda: socket.socketpair(socket.AF_INET),
    "setsid": os.setsid,
    "setpgid": lambda: os.setpgid(0, 0),
    "kill(-1)": lambda: os.kill(-1, 0),
    "sched_setaffinity": lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)),
    "nice": lambda: os.nice(1),
}


@needs_filter
@pytest.mark.parametrize("call", PYTHON_REFUSALS.values(), ids=PYTHON_REFUSALS.keys())
def test_python_calls_get_permission_error(call: Callable[[], object]) -> None:
    # Outside a new session, so that setsid and setpgid would succeed without the filter.
    kind, message = _in_child(call, filtered=False, new_session=False)
    assert kind == "ok" or not message.startswith("PermissionError"), message
    kind, message = _in_child(call, new_session=False)
    assert kind == "raised" and message.startswith("PermissionError"), message


@needs_filter
def test_without_protect_affinity_scheduling_is_allowed() -> None:
    def reschedule() -> None:
        os.sched_setaffinity(0, os.sched_getaffinity(0))
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0))

    assert _in_child(reschedule, protect_affinity=False) == ("ok", None)
    kind, message = _in_child(os.setsid, protect_affinity=False, new_session=False)
    assert kind == "raised" and message.startswith("PermissionError"), message


@needs_filter
def test_filter_is_inherited_across_exec() -> None:
    def child() -> tuple[str, int, str]:
        status = Path("/proc/self/status").read_text()
        mode = next(line for line in status.splitlines() if line.startswith("Seccomp:"))
        script = "import socket; socket.socket()"
        run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True)
        return mode.split()[1], run.returncode, run.stderr.strip().splitlines()[-1]

    kind, (mode, returncode, error) = _in_child(child)
    assert kind == "ok" and mode == "2" and returncode == 1
    assert error.startswith("PermissionError"), error


@needs_filter
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to change uid")
def test_installs_as_an_unprivileged_user() -> None:
    # As in the zygote: the uid is dropped first, and no_new_privs is what lets it install.
    def drop_then_install() -> None:
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
        seccomp.install()
        _python_socket()

    kind, message = _in_child(drop_then_install, filtered=False)
    assert kind == "raised" and message.startswith("PermissionError"), message


@needs_filter
def test_install_reports_the_kernels_refusal() -> None:
    # The kernel caps the instructions of all filters stacked on a process (32768): stacking
    # ours until it refuses gives install()'s error path a real refusal, ENOMEM.
    def stack() -> tuple[int, int | None]:
        for count in range(1, 1000):
            try:
                seccomp.install()
            except OSError as err:
                return count, err.errno
        return 1000, None

    kind, (count, error) = _in_child(stack)
    assert kind == "ok" and count > 1 and error == errno.ENOMEM


# --- on the running kernel: still working -------------------------------------------------------


def _threads() -> bool:
    seen: list[int] = []
    threads = [threading.Thread(target=seen.append, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(seen) == [0, 1, 2, 3]


def _fork() -> bool:
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7


def _raw_clone() -> bool:
    pid, error = _syscall(TABLE["clone"], signal.SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(3)
    return error == 0 and os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 3


def _kill_own_child() -> bool:
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    os.kill(pid, signal.SIGKILL)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == -signal.SIGKILL


def _signal_self_and_group() -> bool:
    os.kill(os.getpid(), 0)
    os.killpg(os.getpgrp(), 0)
    return True


def _socketpair() -> bool:
    left, right = socket.socketpair()
    left.sendall(b"x")
    return right.recv(1) == b"x"


def _pipe() -> bool:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"x")
    return os.read(read_fd, 1) == b"x"


def _files() -> bool:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "f.txt"
        path.write_text("x")
        return path.read_text() == "x"


def _pool() -> bool:
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(abs, [-1, -2, 3]) == [1, 2, 3]


def _sleep_and_getpid() -> bool:
    time.sleep(0.01)
    return os.getpid() > 1


def _python_start() -> str:
    script = "import asyncio, json, multiprocessing, subprocess, threading; print('up')"
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True)
    return run.stdout + run.stderr


ALLOWED: dict[str, tuple[Callable[[], object], object]] = {
    "threading": (_threads, True),
    "fork": (_fork, True),
    "raw clone(SIGCHLD)": (_raw_clone, True),
    "subprocess": (lambda: subprocess.run(["/bin/true"]).returncode, 0),
    "shell pipeline": (
        lambda: subprocess.run(["/bin/sh", "-c", "echo hi | cat"], capture_output=True).stdout,
        b"hi\n",
    ),
    "python start-up": (_python_start, "up\n"),
    "socketpair": (_socketpair, True),
    "pipe": (_pipe, True),
    "files": (_files, True),
    "signal self and group": (_signal_self_and_group, True),
    "kill own child": (_kill_own_child, True),
    "multiprocessing pool": (_pool, True),
    "asyncio": (lambda: asyncio.run(asyncio.sleep(0, result=True)), True),
    "sleep and getpid": (_sleep_and_getpid, True),
    "ioctl TCGETS": (lambda: _syscall(TABLE["ioctl"], -1, TCGETS, 0), (-1, errno.EBADF)),
    "rlimits": (lambda: resource.getrlimit(resource.RLIMIT_NOFILE)[0] > 0, True),
    "madvise(MADV_DONTNEED)": (lambda: _mapped_stdlib().madvise(mmap.MADV_DONTNEED), None),
    "preadv": (lambda: os.preadv(_stdlib_fd(), [bytearray(4)], 0), 4),
}


@needs_filter
@pytest.mark.parametrize(("call", "want"), ALLOWED.values(), ids=ALLOWED.keys())
def test_allowed_behaviour_still_works(call: Callable[[], object], want: object) -> None:
    assert _in_child(call) == ("ok", want)
