"""The isolation level this machine must reach, and the tiers the sandbox suites run in.

CI runs the sandbox suites twice: as root on the host (namespaces and an unprivileged uid:
level "full") and inside `../shared/tools/containerlike.py`, an approximation of a default
Docker container (root without CAP_SYS_ADMIN and without user namespaces), where the
unprivileged tier (Landlock, the seccomp filter, an unprivileged uid) must be reached without
--allow-weak-isolation. `.ci/run` sets BOI_EXPECT_ISOLATION for the second run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.problem import Problem

EXPECTED_LEVEL = os.environ.get("BOI_EXPECT_ISOLATION", "full")

# The smallest problem a sandbox suite judges its samples on, and its right completion.
ADD = Problem(
    task_id="t/add",
    benchmark="test",
    prompt="def add(a, b):\n",
    entry_point="add",
    test="def check(candidate):\n    assert candidate(2, 3) == 5\n",
)
GOOD = "    return a + b\n"
# One with its reference solution.
INC = Problem(
    task_id="t/inc",
    benchmark="test",
    prompt="def inc(x):\n",
    entry_point="inc",
    test="def check(candidate):\n    assert candidate(1) == 2\n",
    canonical_solution="    return x + 1\n",
)

# Execution-config overrides per tier. "unprivileged" forces that tier where namespaces would
# be available (as root on the host), so that both tiers are exercised in one test run.
TIERS: dict[str, dict[str, Any]] = {
    "default": {},
    "unprivileged": {"use_namespaces": False},
}


def python_hidden_from_other_users() -> str | None:
    """The first directory above this interpreter or its standard library that other users
    cannot enter (a pyenv under a 0700 /root), or None. Without a mount namespace to expose it
    (the unprivileged tier), no sandbox uid can import from such a Python: the sandbox keeps
    the harness's uid, and without a writable cgroup it then has no process cap and refuses
    to run (the container-like CI run exposes the interpreter, as an image's Python is
    readable, and covers that tier)."""
    paths = {os.path.realpath(sys.executable), os.path.realpath(os.path.dirname(os.__file__))}
    for path in sorted(paths):
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts)):
            ancestor = "/" + "/".join(parts[:depth])
            if not os.stat(ancestor).st_mode & 0o001:
                return ancestor
    return None


def virtualenv(path: Path) -> tuple[Path, Path]:
    """A bare virtualenv of this Python at `path`: its interpreter and its site directory."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    [packages] = path.glob("lib/python*/site-packages")
    return path / "bin" / "python", packages
