"""Where boi keeps machine-local caches (converted models, generated MBPP examples, ...)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """`$BOI_CACHE_DIR` (default `$XDG_CACHE_HOME/boi`, else `~/.cache/boi`) / parts, created."""
    root = os.environ.get("BOI_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "boi"
    )
    path = Path(root, *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
