"""The isolation level this machine must reach, and the tiers the sandbox suites run in.

CI runs the sandbox suites twice: as root on the host (namespaces and an unprivileged uid:
level "full") and inside `../shared/tools/containerlike.py`, an approximation of a default
Docker container (root without CAP_SYS_ADMIN and without user namespaces), where the
unprivileged tier (Landlock, the seccomp filter, an unprivileged uid) must be reached without
--allow-weak-isolation. `.ci/run` sets BOI_EXPECT_ISOLATION for the second run.
"""

from __future__ import annotations

import os
from typing import Any

EXPECTED_LEVEL = os.environ.get("BOI_EXPECT_ISOLATION", "full")

# Execution-config overrides per tier. "unprivileged" forces that tier where namespaces would
# be available (as root on the host), so that both tiers are exercised in one test run.
TIERS: dict[str, dict[str, Any]] = {
    "default": {},
    "unprivileged": {"use_namespaces": False},
}
