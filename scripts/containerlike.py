"""Run a command as it would run in a default Docker container, on a host where we are root.

    python3 scripts/containerlike.py -- COMMAND [ARGS...]

Docker's default leaves the container's root without CAP_SYS_ADMIN and its seccomp profile
refuses new user namespaces, so inside one nothing can create a mount, PID or network namespace
or write the host's cgroups; root can still change uid (CAP_SETUID). This reproduces that:
the command runs as uid 0 of a new user namespace mapping host uids 0-69999, with
CAP_SYS_ADMIN dropped from every capability set (through `capsh`, from libcap2-bin) and the
user-namespace limit set to 0 inside. CI runs the sandbox suites in it so that the
unprivileged isolation tier is tested where most users run `boi`.

An image's Python is readable by every user; a Python under a private home directory (pyenv
in a 0700 /root, as on some hosts) is not, and no sandbox uid could import from it. So, as in
such an image, every directory above the command's interpreter that other users cannot enter
is made enterable (in a mount namespace of the emulated container only: a 0711 tmpfs over it
holding bind mounts of its entries; the host's directories are not changed).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import time

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
MAPPED_UIDS = 70_000


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    command = argv[argv.index("--") + 1 :]
    if os.geteuid() != 0:
        print(
            "containerlike: must run as root (it maps host uids into the container)",
            file=sys.stderr,
        )
        return 2
    capsh = shutil.which("capsh")
    if capsh is None:
        print("containerlike: capsh not found (apt-get install libcap2-bin)", file=sys.stderr)
        return 2
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready_w)
        libc = ctypes.CDLL(None, use_errno=True)
        _make_interpreter_enterable(libc, command[0])
        if libc.unshare(CLONE_NEWUSER) != 0:
            os.write(2, f"containerlike: unshare: {os.strerror(ctypes.get_errno())}\n".encode())
            os._exit(2)
        os.read(ready_r, 1)  # our uid and gid maps are written
        os.setgroups([])
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
        with open("/proc/sys/user/max_user_namespaces", "w") as handle:
            handle.write("0")
        os.execv(capsh, [capsh, "--drop=cap_sys_admin", "--", "-c", 'exec "$0" "$@"', *command])
    os.close(ready_r)
    own = os.readlink("/proc/self/ns/user")
    while os.readlink(f"/proc/{child}/ns/user") == own:
        time.sleep(0.002)
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{child}/{name}", "w") as handle:
            handle.write(f"0 0 {MAPPED_UIDS}\n")
    os.write(ready_w, b"x")
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status)


def _make_interpreter_enterable(libc: ctypes.CDLL, program: str) -> None:
    """Make every directory above `program`'s real path enterable by other users, in a mount
    namespace of our own (see the module's docstring)."""
    found = shutil.which(program)
    if found is None:
        return
    parts = os.path.realpath(found).strip("/").split("/")
    blocked = []
    for depth in range(1, len(parts)):
        ancestor = "/" + "/".join(parts[:depth])
        if not os.stat(ancestor).st_mode & 0o001:
            blocked.append(ancestor)
    if not blocked:
        return

    def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str) -> None:
        if libc.mount(
            source and source.encode(), target.encode(), fstype and fstype.encode(), flags,
            data.encode(),
        ) != 0:  # fmt: skip
            raise OSError(ctypes.get_errno(), f"mount {target}")

    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    mount(None, "/", None, MS_REC | MS_PRIVATE, "")
    for directory in blocked:
        entries = {}
        for name in os.listdir(directory):
            try:
                entries[name] = os.open(os.path.join(directory, name), os.O_PATH)
            except OSError:  # a dangling link: nothing to show through
                continue
        mount("containerlike", directory, "tmpfs", 0, "mode=0711")
        for name, fd in entries.items():
            target = os.path.join(directory, name)
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.mkdir(target)
            else:
                os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o600))
            mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC, "")
            os.close(fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
