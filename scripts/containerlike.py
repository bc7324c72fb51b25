"""Run a command as it would run in a default Docker container, on a host where we are root.

    python3 scripts/containerlike.py -- COMMAND [ARGS...]

Docker's default leaves the container's root without CAP_SYS_ADMIN and its seccomp profile
refuses new user namespaces, so inside one nothing can create a mount, PID or network namespace
or write the host's cgroups; root can still change uid (CAP_SETUID). This reproduces that:
the command runs as uid 0 of a new user namespace mapping host uids 0-69999, with
CAP_SYS_ADMIN dropped from every capability set (through `capsh`, from libcap2-bin) and the
user-namespace limit set to 0 inside. CI runs the sandbox suites in it so that the
unprivileged isolation tier is tested where most users run `boi`.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import time

CLONE_NEWUSER = 0x10000000
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
