"""A seccomp filter for sandboxed candidate programs, written in classic BPF by hand.

Why by hand, and not with libseccomp's Python bindings or pyseccomp: the sandbox worker
(`_zygote.py`) runs as `python -I` and imports only the standard library, by design, so that a
candidate sees a plain interpreter and cannot import the harness; and libseccomp (the C library
those bindings need) is not guaranteed on users' hosts. This module is therefore plain standard
library (ctypes + struct) and imports nothing of ours: the zygote loads it by path with
`importlib.util.spec_from_file_location`. The program is small and linear, so the hand-written
assembler below stays readable; tests/test_sandbox_seccomp.py checks the syscall tables against
libseccomp where it is installed, runs the program through a BPF interpreter for both
architectures, and checks every rule against the running kernel.

The policy (default allow; a denied call fails with EPERM, so a candidate sees an ordinary
PermissionError rather than dying):

1. The syscall must use the native ABI: `seccomp_data.arch` other than x86_64 / aarch64 (an
   i386 `int 0x80` or an arm32 compat call, whose numbers mean different syscalls) and, on
   x86_64, an x32 number (bit 0x40000000) kill the process. A CPython program makes such calls
   only to slip past this table, so a visible SIGSYS is the right answer. -1 is let through,
   as libseccomp does: the kernel answers it with ENOSYS.
2. No networking: `socket` for every family, and `connect`, `bind`, `listen`, `accept`,
   `accept4` (meaningless on the pipes and socketpairs a candidate is handed, whose read, write,
   sendmsg and recvmsg keep working). `socketpair` stays allowed for AF_UNIX only, because
   asyncio's self-pipe and `multiprocessing.Pipe()` use it. Consequence: anything that needs
   an AF_UNIX *socket* (multiprocessing managers, the forkserver start method, syslog) fails.
3. No tracing or cross-process memory access: ptrace, process_vm_readv/writev, pidfd_open,
   pidfd_getfd, kcmp, process_madvise, perf_event_open.
4. No mounts or namespaces: mount, umount2, pivot_root, chroot, unshare, setns, the new mount
   API (open_tree, open_tree_attr, move_mount, fsopen, fsconfig, fsmount, fspick,
   mount_setattr) and `clone` with any CLONE_NEW* flag. `clone3` fails with ENOSYS: its flags
   live in memory that BPF cannot read, and glibc and CPython then fall back to `clone`, whose
   flags are a register we can inspect (threads, fork and posix_spawn keep working).
   CLONE_NEWTIME (0x80) is not checked in `clone`: there that bit is part of the exit signal,
   and a time namespace can only be asked for through clone3 or unshare, both denied.
5. No kernel objects that outlive the process or bypass this filter: keyrings, POSIX message
   queues, System V IPC, bpf, userfaultfd and io_uring (whose requests the filter never sees).
6. The process cannot leave its process group or session (the zygote kills the sample as a
   group), and with `protect_affinity` cannot change its CPU affinity, scheduling policy or
   priority (the pool pins each worker to a CPU): setsid and setpgid always;
   sched_setaffinity, sched_setscheduler, sched_setparam, sched_setattr and setpriority
   (glibc's nice() is setpriority) with `protect_affinity`.
7. No broadcast signal: `kill(-1, ...)` is denied. Signals to other process groups are left to
   the other layers (the PID namespace, the sandbox uid, Landlock's signal scoping where the
   kernel has it); a BPF filter cannot tell whose process group a pid names.
8. No privilege or administration calls: set*id, setgroups, capset, acct, swapon/off, reboot,
   kexec, module loading, clock and time setting, host and domain names, iopl/ioperm (x86),
   file handles, lookup_dcookie, quotactl, vhangup, fanotify_init, syslog; `personality`
   except the query `personality(0xffffffff)`; `ioctl` with TIOCSTI or TIOCLINUX (both can
   push keystrokes into a terminal the candidate shares with someone else).
9. No probing or evicting the page cache, which every sample shares (a sample that marks
   pages of the standard library as read or evicted could pass what it learnt to a later
   sample): mincore, cachestat, readahead, fadvise64 and getrusage (its major-fault count
   tells a cached page from one read from disk); madvise with MADV_WILLNEED, MADV_COLD or
   MADV_PAGEOUT; preadv2 and pwritev2 with RWF_NOWAIT; wait4 and waitid asking for the
   resource usage of a child (NULL is allowed: glibc's waitpid passes it). What is left is the
   time a read takes; docs/explanation/sandbox.md says so.

Argument checks compare 32 bits only (classic BPF has 32-bit registers), and they check the
low half only on purpose: every argument inspected is a C int for the kernel (pid, family,
ioctl request) or, for clone, a flags word whose upper half the kernel ignores. Checking the
upper half too would let a candidate pass 0x00000000ffffffff where -1 is meant.

The program is a linear list of checks, one per syscall; every check that loads an argument
ends in a RET, so the accumulator still holds the syscall number wherever a check falls
through. That keeps every jump offset small, and lets the kernel's action cache (5.11+)
prove that all other syscalls are always allowed and skip the filter for them.

The filter is installed with flags 0, so it covers the calling thread and its future children
only: call `install` in a single-threaded process (the zygote calls it in the freshly forked
sample, after dropping privileges). It survives exec and cannot be removed.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long

# Classic BPF opcodes (linux/bpf_common.h).
_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS: A = 32-bit word at offset k
_JEQ = 0x05 | 0x10  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x05 | 0x30  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x05 | 0x40  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_MAX_INSNS = 4096  # BPF_MAXINSNS
_SOCK_FILTER = struct.Struct("=HBBI")  # struct sock_filter: code, jt, jf, k

# Filter return values (linux/seccomp.h).
_RET_KILL_PROCESS = 0x80000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
_NR = 0
_ARCH = 4


def _arg_low(index: int) -> int:
    """Offset of the low 32 bits of args[index] (this module supports little-endian only)."""
    return 16 + 8 * index


_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_SYSCALL_BIT = 0x40000000

_AF_UNIX = 1
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
_PERSONALITY_QUERY = 0xFFFFFFFF
# madvise advice that reads ahead into (WILLNEED) or evicts from (COLD, PAGEOUT) the page cache.
_MADV_PAGE_CACHE = (3, 20, 21)
_RWF_NOWAIT = 0x8  # preadv2: fail instead of reading a page that is not cached (a probe)
_PID_ALL = 0xFFFFFFFF  # kill(-1): every process the caller may signal
_CLONE_NEW_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_SET_MODE_FILTER = 1

# The syscalls this policy names, plus `seccomp` itself (for install). Numbers from the kernel's
# arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h (aarch64);
# the tests check them against libseccomp. Since 424 the numbers are the same everywhere.
_X86_64 = {
    "socket": 41,
    "socketpair": 53,
    "connect": 42,
    "bind": 49,
    "listen": 50,
    "accept": 43,
    "accept4": 288,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "pidfd_open": 434,
    "pidfd_getfd": 438,
    "kcmp": 312,
    "process_madvise": 440,
    "perf_event_open": 298,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "unshare": 272,
    "setns": 308,
    "open_tree": 428,
    "open_tree_attr": 467,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "clone": 56,
    "clone3": 435,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "mq_open": 240,
    "mq_unlink": 241,
    "mq_timedsend": 242,
    "mq_timedreceive": 243,
    "mq_notify": 244,
    "mq_getsetattr": 245,
    "msgget": 68,
    "msgsnd": 69,
    "msgrcv": 70,
    "msgctl": 71,
    "semget": 64,
    "semop": 65,
    "semtimedop": 220,
    "semctl": 66,
    "shmget": 29,
    "shmat": 30,
    "shmdt": 67,
    "shmctl": 31,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "sched_setaffinity": 203,
    "sched_setscheduler": 144,
    "sched_setparam": 142,
    "sched_setattr": 314,
    "setpriority": 141,
    "setsid": 112,
    "setpgid": 109,
    "kill": 62,
    "setuid": 105,
    "setgid": 106,
    "setreuid": 113,
    "setregid": 114,
    "setresuid": 117,
    "setresgid": 119,
    "setfsuid": 122,
    "setfsgid": 123,
    "setgroups": 116,
    "capset": 126,
    "acct": 163,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "settimeofday": 164,
    "clock_settime": 227,
    "clock_adjtime": 305,
    "adjtimex": 159,
    "sethostname": 170,
    "setdomainname": 171,
    "iopl": 172,
    "ioperm": 173,
    "open_by_handle_at": 304,
    "name_to_handle_at": 303,
    "lookup_dcookie": 212,
    "quotactl": 179,
    "quotactl_fd": 443,
    "vhangup": 153,
    "personality": 135,
    "fanotify_init": 300,
    "syslog": 103,
    "ioctl": 16,
    "mincore": 27,
    "madvise": 28,
    "readahead": 187,
    "fadvise64": 221,
    "cachestat": 451,
    "preadv2": 327,
    "pwritev2": 328,
    "getrusage": 98,
    "wait4": 61,
    "waitid": 247,
    "seccomp": 317,
}
# aarch64 uses the generic table: no iopl/ioperm (x86 only), and no legacy calls.
_AARCH64 = {
    "socket": 198,
    "socketpair": 199,
    "connect": 203,
    "bind": 200,
    "listen": 201,
    "accept": 202,
    "accept4": 242,
    "ptrace": 117,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "pidfd_open": 434,
    "pidfd_getfd": 438,
    "kcmp": 272,
    "process_madvise": 440,
    "perf_event_open": 241,
    "mount": 40,
    "umount2": 39,
    "pivot_root": 41,
    "chroot": 51,
    "unshare": 97,
    "setns": 268,
    "open_tree": 428,
    "open_tree_attr": 467,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "clone": 220,
    "clone3": 435,
    "add_key": 217,
    "request_key": 218,
    "keyctl": 219,
    "mq_open": 180,
    "mq_unlink": 181,
    "mq_timedsend": 182,
    "mq_timedreceive": 183,
    "mq_notify": 184,
    "mq_getsetattr": 185,
    "msgget": 186,
    "msgsnd": 189,
    "msgrcv": 188,
    "msgctl": 187,
    "semget": 190,
    "semop": 193,
    "semtimedop": 192,
    "semctl": 191,
    "shmget": 194,
    "shmat": 196,
    "shmdt": 197,
    "shmctl": 195,
    "bpf": 280,
    "userfaultfd": 282,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "sched_setaffinity": 122,
    "sched_setscheduler": 119,
    "sched_setparam": 118,
    "sched_setattr": 274,
    "setpriority": 140,
    "setsid": 157,
    "setpgid": 154,
    "kill": 129,
    "setuid": 146,
    "setgid": 144,
    "setreuid": 145,
    "setregid": 143,
    "setresuid": 147,
    "setresgid": 149,
    "setfsuid": 151,
    "setfsgid": 152,
    "setgroups": 159,
    "capset": 91,
    "acct": 89,
    "swapon": 224,
    "swapoff": 225,
    "reboot": 142,
    "kexec_load": 104,
    "kexec_file_load": 294,
    "init_module": 105,
    "finit_module": 273,
    "delete_module": 106,
    "settimeofday": 170,
    "clock_settime": 112,
    "clock_adjtime": 266,
    "adjtimex": 171,
    "sethostname": 161,
    "setdomainname": 162,
    "open_by_handle_at": 265,
    "name_to_handle_at": 264,
    "lookup_dcookie": 18,
    "quotactl": 60,
    "quotactl_fd": 443,
    "vhangup": 58,
    "personality": 92,
    "fanotify_init": 262,
    "syslog": 116,
    "ioctl": 29,
    "mincore": 232,
    "madvise": 233,
    "readahead": 213,
    "fadvise64": 223,
    "cachestat": 451,
    "preadv2": 286,
    "pwritev2": 287,
    "getrusage": 165,
    "wait4": 260,
    "waitid": 95,
    "seccomp": 277,
}
TABLES: dict[str, dict[str, int]] = {"x86_64": _X86_64, "aarch64": _AARCH64}

# Denied outright with EPERM, in the order of the policy above.
_ALWAYS = (
    # 2. networking
    "socket",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    # 3. tracing and other processes' memory
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_open",
    "pidfd_getfd",
    "kcmp",
    "process_madvise",
    "perf_event_open",
    # 4. mounts and namespaces
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "open_tree",
    "open_tree_attr",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    # 5. kernel objects that outlive the process or bypass the filter
    "add_key",
    "request_key",
    "keyctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "bpf",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    # 6. sessions and process groups
    "setsid",
    "setpgid",
    # 8. privilege and administration
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setfsuid",
    "setfsgid",
    "setgroups",
    "capset",
    "acct",
    "swapon",
    "swapoff",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "iopl",
    "ioperm",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "quotactl",
    "quotactl_fd",
    "vhangup",
    "fanotify_init",
    "syslog",
    # 9. the page cache: probing and evicting it
    "mincore",
    "readahead",
    "fadvise64",
    "cachestat",
    "getrusage",
)
# 6. denied with EPERM only when protect_affinity is set.
_SCHEDULING = (
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "setpriority",
)
_ENOSYS = ("clone3",)  # 4. so that callers fall back to clone, whose flags we can check

RESTRICTED = (
    "socketpair: AF_UNIX only",
    "clone: no CLONE_NEW* flag",
    "kill: not pid -1",
    "ioctl: not TIOCSTI or TIOCLINUX",
    "personality: query (0xffffffff) only",
    "madvise: not MADV_WILLNEED, MADV_COLD or MADV_PAGEOUT",
    "preadv2, pwritev2: not RWF_NOWAIT",
    "wait4, waitid: no resource usage asked for",
)
"""The syscalls allowed only with some arguments (for the isolation report)."""

_MACHINE = os.uname().machine
# The arch check would kill a 32-bit interpreter on a 64-bit kernel (its own syscalls are
# i386/arm32 ones), and the argument offsets assume little-endian words: refuse those too.
SUPPORTED = (
    sys.platform.startswith("linux")
    and _MACHINE in TABLES
    and struct.calcsize("P") == 8
    and sys.byteorder == "little"
)
"""Whether `install` can work on this machine (a 64-bit little-endian x86_64 or aarch64)."""


def denied(*, protect_affinity: bool = True, machine: str | None = None) -> tuple[str, ...]:
    """The syscalls the filter refuses outright on `machine` (default: this one), clone3 last.

    Empty for a machine without a table. Those an architecture lacks (ioperm on aarch64) are
    left out; the conditional rules are listed in RESTRICTED.
    """
    table = TABLES.get(_MACHINE if machine is None else machine, {})
    names = _ALWAYS + (_SCHEDULING if protect_affinity else ()) + _ENOSYS
    return tuple(name for name in names if name in table)


DENIED = denied()
"""The syscalls refused outright here under the default policy (clone3 with ENOSYS, the rest
with EPERM); empty where not SUPPORTED."""


class _Program:
    """A tiny classic-BPF assembler: forward jumps to labels, resolved by `assemble`."""

    def __init__(self) -> None:
        # (code, jump-if-true, jump-if-false, k); a jump is a label or 0 (the next instruction).
        self._code: list[tuple[int, str | int, str | int, int]] = []
        self._labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        assert name not in self._labels, name
        self._labels[name] = len(self._code)

    def load(self, offset: int) -> None:
        self._code.append((_LD_W_ABS, 0, 0, offset))

    def jump(self, test: int, k: int, true: str | int = 0, false: str | int = 0) -> None:
        self._code.append((test, true, false, k))

    def ret(self, action: int) -> None:
        self._code.append((_RET, 0, 0, action))

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (code, true, false, k) in enumerate(self._code):
            jt, jf = (self._offset(index, target) for target in (true, false))
            out += _SOCK_FILTER.pack(code, jt, jf, k)
        if len(self._code) > _MAX_INSNS:
            raise ValueError(f"BPF program too long ({len(self._code)} instructions)")
        return bytes(out)

    def _offset(self, index: int, target: str | int) -> int:
        if isinstance(target, int):
            return target
        offset = self._labels[target] - index - 1
        # Classic BPF jumps forward only, by at most 255 instructions.
        if not 0 <= offset <= 255:
            raise ValueError(f"BPF jump to {target!r} out of range ({offset})")
        return offset


def _errno(code: int) -> int:
    return _RET_ERRNO | (code & 0xFFFF)


def _arg_check(
    program: _Program, nr: int, arg: int, tests: list[tuple[int, int, int]], otherwise: int
) -> None:
    """If the syscall is `nr`: the first (test, value, action) matching the low word of args[arg]
    decides, else `otherwise`. Every branch returns, so A still holds nr after the block."""
    skip = f"not_{nr}"
    program.jump(_JEQ, nr, false=skip)
    program.load(_arg_low(arg))
    for number, (test, value, _) in enumerate(tests):
        program.jump(test, value, true=f"{nr}_{number}")
    program.ret(otherwise)
    for number, (_, _, action) in enumerate(tests):
        program.label(f"{nr}_{number}")
        program.ret(action)
    program.label(skip)


def _null_pointer_check(program: _Program, nr: int, arg: int, otherwise: int) -> None:
    """If the syscall is `nr`: allowed when args[arg] is NULL (both halves zero: a pointer's
    low half alone could be zero for a buffer mapped at a 4 GiB boundary), else `otherwise`."""
    skip = f"not_{nr}"
    program.jump(_JEQ, nr, false=skip)
    program.load(_arg_low(arg))
    program.jump(_JEQ, 0, false=f"{nr}_set")
    program.load(_arg_low(arg) + 4)
    program.jump(_JEQ, 0, false=f"{nr}_set")
    program.ret(_RET_ALLOW)
    program.label(f"{nr}_set")
    program.ret(otherwise)
    program.label(skip)


def build_filter(*, protect_affinity: bool = True, machine: str | None = None) -> bytes:
    """The policy's BPF program (an array of `struct sock_filter`) for `machine` (default: this
    one). Raises OSError for a machine without a syscall table."""
    machine = _MACHINE if machine is None else machine
    if machine not in TABLES:
        raise OSError(errno.ENOTSUP, f"no seccomp syscall table for {machine!r}")
    table = TABLES[machine]
    eperm = _errno(errno.EPERM)
    program = _Program()

    program.load(_ARCH)
    program.jump(_JEQ, _AUDIT_ARCH[machine], true="native_arch")
    program.ret(_RET_KILL_PROCESS)
    program.label("native_arch")
    program.load(_NR)
    if machine == "x86_64":
        program.jump(_JGE, _X32_SYSCALL_BIT, false="native_nr")
        program.jump(_JEQ, 0xFFFFFFFF, true="native_nr")
        program.ret(_RET_KILL_PROCESS)
        program.label("native_nr")

    # The syscalls decided by an argument; ioctl first, as the only frequent one.
    _arg_check(
        program, table["ioctl"], 1, [(_JEQ, _TIOCSTI, eperm), (_JEQ, _TIOCLINUX, eperm)], _RET_ALLOW
    )
    _arg_check(program, table["clone"], 0, [(_JSET, _CLONE_NEW_FLAGS, eperm)], _RET_ALLOW)
    _arg_check(program, table["kill"], 0, [(_JEQ, _PID_ALL, eperm)], _RET_ALLOW)
    _arg_check(program, table["socketpair"], 0, [(_JEQ, _AF_UNIX, _RET_ALLOW)], eperm)
    _arg_check(program, table["personality"], 0, [(_JEQ, _PERSONALITY_QUERY, _RET_ALLOW)], eperm)
    # 9. The page cache (probes and evictions), where decided by an argument.
    _arg_check(
        program,
        table["madvise"],
        2,
        [(_JEQ, advice, eperm) for advice in _MADV_PAGE_CACHE],
        _RET_ALLOW,
    )
    for name in ("preadv2", "pwritev2"):
        _arg_check(program, table[name], 5, [(_JSET, _RWF_NOWAIT, eperm)], _RET_ALLOW)
    _null_pointer_check(program, table["wait4"], 3, eperm)
    _null_pointer_check(program, table["waitid"], 4, eperm)

    for name in denied(protect_affinity=protect_affinity, machine=machine):
        # "if nr == N: return action", a RET right after each test keeps the offsets at 0/1.
        program.jump(_JEQ, table[name], false=1)
        program.ret(_errno(errno.ENOSYS) if name in _ENOSYS else eperm)
    program.ret(_RET_ALLOW)
    return program.assemble()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _failure(call: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{call}: {os.strerror(code)}")


def install(*, protect_affinity: bool = True, program: bytes | None = None) -> None:
    """Set no_new_privs and install the filter on the calling thread (and its future children).

    `program`: a filter `build_filter` made earlier (the sandbox builds it once per worker, so
    that a sample pays for the two system calls only, not for assembling the program).
    Irreversible. Raises OSError, with the kernel's errno, where the architecture is not
    supported or the kernel refuses (no seccomp, or too many filters already stacked).
    """
    if not SUPPORTED:
        raise OSError(
            errno.ENOTSUP,
            f"seccomp filter not supported here ({_MACHINE}, {struct.calcsize('P') * 8}-bit "
            f"{sys.byteorder}-endian {sys.platform}): needs 64-bit little-endian x86_64 or aarch64",
        )
    if program is None:
        program = build_filter(protect_affinity=protect_affinity)
    libc = _LIBC
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), *[ctypes.c_ulong(0)] * 3) != 0:
        raise _failure("prctl(PR_SET_NO_NEW_PRIVS)")
    # The kernel copies the program during the call; the buffer only has to outlive it.
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // _SOCK_FILTER.size, ctypes.cast(buffer, ctypes.c_void_p))
    pointer = ctypes.c_ulong(ctypes.addressof(fprog))
    nr = ctypes.c_long(TABLES[_MACHINE]["seccomp"])
    flags = ctypes.c_long(0)
    if libc.syscall(nr, ctypes.c_long(_SECCOMP_SET_MODE_FILTER), flags, pointer) == 0:
        return
    if ctypes.get_errno() != errno.ENOSYS:
        raise _failure("seccomp(SECCOMP_SET_MODE_FILTER)")
    # Kernels before 3.17 have no seccomp syscall, only the prctl.
    zero = ctypes.c_ulong(0)
    if libc.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER), pointer, zero, zero) != 0:
        raise _failure("prctl(PR_SET_SECCOMP)")


def available() -> tuple[bool, str]:
    """Whether the filter can be installed here, and works: (True, "") or (False, why).

    Probes in a forked child (installing is irreversible): it installs the filter and checks
    that socket(AF_INET) is then refused with EPERM.
    """
    if not SUPPORTED:
        return False, f"seccomp filter: unsupported platform ({_MACHINE}, {sys.platform})"
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError as err:  # EAGAIN at the process limit, say
        os.close(read_fd)
        os.close(write_fd)
        return False, f"cannot fork to probe seccomp: {err}"
    if pid == 0:
        try:
            os.close(read_fd)
            try:
                install()
                libc = ctypes.CDLL(None, use_errno=True)
                libc.syscall.restype = ctypes.c_long
                socket_nr = ctypes.c_long(TABLES[_MACHINE]["socket"])
                args = (ctypes.c_long(2), ctypes.c_long(1), ctypes.c_long(0))  # AF_INET, STREAM
                if libc.syscall(socket_nr, *args) == -1 and ctypes.get_errno() == errno.EPERM:
                    message = "ok"
                else:
                    message = "the filter was installed but socket() was not refused"
            except Exception as err:  # OSError from the kernel; anything else is reported too
                message = f"cannot install a seccomp filter: {err}"
            os.write(write_fd, message.encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with open(read_fd, "rb") as reader:
        message = reader.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    if message == "ok" and status == 0:
        return True, ""
    return False, message or f"the seccomp probe died (wait status {status})"
