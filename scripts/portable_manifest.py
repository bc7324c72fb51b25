"""Rewrite a `boi run` directory's manifest as boi writes one now: what reproduces the run
(versions, digests, config), not the machine that made it.

    .venv/bin/python scripts/portable_manifest.py RUN_DIR

Runs written before boi recorded portable paths name the run directory, the model folder, the
dataset files and the command's program by their absolute paths. This rewrites, in place and
atomically (temp file + rename): the config's paths as `portable_path` spells them (a relative
path as typed, an absolute one by its last part) and `out_dir` as the run directory's own name;
its `config_hash` and `work_hash` over that config (the old ones kept under `rewritten`); the
inputs' paths and the command the same way; the report's files relative to the run directory;
and, when the run used one model, its identity as generation recorded it (`model_identities`,
a local folder's content digest). Versions, git commit and dirty flag, seeds, timings and
counts stay as they were: they are what happened. Samples, verdicts and reports are not
touched. docs/results.md re-packs its committed run with it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.provenance import portable_command, portable_config, portable_path
from boi.runner import load_run_config
from boi.runner.config import run_hash, work_hash


def _identities(run_dir: Path, models: list[dict[str, Any]]) -> dict[str, str]:
    """label -> backend identity, when the run has one model and its cache one identity."""
    generations = run_dir / "generations.jsonl"
    if len(models) != 1 or not generations.is_file():
        return {}
    with generations.open(encoding="utf-8") as handle:
        seen = {json.loads(line)["backend"] for line in handle if line.strip()}
    if len(seen) != 1:
        return {}
    config = load_run_config(None, {"models": models})
    return {config.models[0].label: seen.pop()}


def portable_manifest(run_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest of the run in `run_dir`, rewritten (see the module's docstring)."""
    old_config = manifest["config"]
    old_out = str(old_config.get("out_dir", run_dir))
    config = {**portable_config(old_config), "out_dir": run_dir.name}
    loaded = load_run_config(None, config)
    rewritten = {
        **manifest,
        "config": config,
        "config_hash": run_hash(loaded),
        "inputs": {
            name: {**entry, "path": portable_path(entry["path"])}
            for name, entry in (manifest.get("inputs") or {}).items()
        },
        "command": portable_command(list(manifest.get("command") or [])),
        "work_hash": work_hash(loaded),
        "rewritten": {
            "by": "scripts/portable_manifest.py",
            "config_hash_before": manifest.get("config_hash"),
            "work_hash_before": manifest.get("work_hash"),
        },
    }
    if isinstance(manifest.get("report"), dict):
        rewritten["report"] = {
            key: None
            if value in (None, "None")
            else os.path.relpath(value, old_out)
            if os.path.isabs(value)
            else value
            for key, value in manifest["report"].items()
        }
    identities = _identities(run_dir, list(old_config.get("models") or []))
    if identities and "model_identities" not in manifest:
        rewritten["model_identities"] = identities
    return rewritten


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args()
    path = args.run_dir / "manifest.json"
    if not path.is_file():
        print(f"{path} does not exist; pass a boi run directory.", file=sys.stderr)
        return 2
    manifest = json.loads(path.read_text(encoding="utf-8"))
    rewritten = portable_manifest(args.run_dir.resolve(), manifest)
    write_text_atomic(path, json.dumps(rewritten, indent=2) + "\n")
    print(
        f"rewrote {path}: config_hash {manifest.get('config_hash')} -> {rewritten['config_hash']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
