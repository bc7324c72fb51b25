"""Run directories: one marker file that records the config hash, refuse-or-resume on it.

Every stage that writes a directory of results (`boi run`, `boi finetune train`, ...) claims it
here, so the rule is the same everywhere: a new or empty directory starts a run, a directory
whose marker holds the same config hash resumes it, and anything else is refused with a
sentence that says which keys changed. The marker is written atomically.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError

MANIFEST = "manifest.json"


def read_marker(out: Path, marker: str = MANIFEST) -> dict[str, Any] | None:
    """The marker's record, None when there is none; a damaged marker is a UserError."""
    path = out / marker
    if not path.exists():
        return None
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(
            f"{path} is damaged; move {out} away or choose another output directory."
        ) from None
    if not isinstance(recorded, dict):
        raise UserError(f"{path} is not a run record; move {out} away or choose another one.")
    return recorded


def changed_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Top-level keys present in both configs whose values differ."""
    return sorted(key for key, value in before.items() if key in after and after[key] != value)


def claim_run_dir(
    out: Path,
    digest: str,
    config: Mapping[str, Any],
    *,
    marker: str = MANIFEST,
    hash_key: str = "config_hash",
    what: str = "run",
    option: str = "--out",
    unchanged: str = "",
) -> dict[str, Any] | None:
    """Claim `out` for the run whose config hashes to `digest`.

    Returns the previous marker record when `out` holds this same run (resume), None when it is
    new or empty (the caller writes the marker). Refuses a directory that holds another run, or
    files that are not a run's; `unchanged` explains a different hash with no config key changed
    (an input that is hashed into `digest`, such as a data file).
    """
    recorded = read_marker(out, marker)
    if recorded is not None:
        if recorded.get(hash_key) != digest:
            changed = changed_keys(recorded.get("config") or {}, config)
            detail = f" (changed: {', '.join(changed)})" if changed else unchanged
            raise UserError(
                f"{out} holds a different {what}{detail}, hash {recorded.get(hash_key)} vs "
                f"{digest} now; use another {option}, or the same config to resume it."
            )
        return recorded
    if out.exists() and any(out.iterdir()):
        raise UserError(
            f"{out} is not empty and holds no {marker}; choose a new or empty {option}."
        )
    out.mkdir(parents=True, exist_ok=True)
    return None


def path_slug(text: str) -> str:
    """`text` as one safe path component (a model or setting label in results paths)."""
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)
