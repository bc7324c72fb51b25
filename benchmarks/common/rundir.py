"""The run layer: a run directory and its manifest, from claim to completion to reading.

Every command that writes a directory of results (`boi run`, `boi bias run`, `boi bias test`,
`boi finetune train`, the ablations of `boi bias experiment`) lives its run's life through
`RunDir`, so the rules are the same everywhere:

- `RunDir.claim` starts or resumes a run: a new or empty directory starts it, a directory whose
  manifest holds the same config hash resumes it, anything else is refused with a sentence that
  says which config keys changed. The manifest records config, hash, seeds, inputs (with their
  sha256), package versions, git commit, the command and its format version, and is marked
  incomplete until `complete` writes the stage timings and what the run did.
- `RunDir.open` reads a run back (reports, analyses, the Python API) without writing anything.
- The manifest is `benchmarks.common.provenance.provenance_record`, the one shape of every
  output's provenance (a single-file output writes it beside itself as `OUT.manifest.json`).
- Manifests carry `format_version`. Those written before the field existed are format 1 and read
  as they are (the fields this layer reads were already there); a manifest from a newer `boi`
  is refused with one sentence instead of being read on trust.

Every manifest write is atomic (temp file + rename), so a killed run never leaves half a manifest.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.common.outputs import output_dir
from benchmarks.common.provenance import (
    MANIFEST_FORMAT,
    boi_version,
    config_hash,
    provenance_record,
)

MANIFEST = "manifest.json"
# MANIFEST_FORMAT and boi_version (imported here for the readers of this module) live with the
# record's shape in benchmarks.common.provenance. Bump MANIFEST_FORMAT when a field this layer
# reads changes meaning, and teach `open` the old one.


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
    # Every reader of a marker (a claim, `boi report`, a merge) refuses a newer boi's, not only
    # `RunDir.open`'s readers.
    _check_format(path, recorded)
    return recorded


def refuse_shard(path: str | os.PathLike[str], manifest: Mapping[str, Any]) -> None:
    """One sentence when `manifest` is a shard's (`--shard I/N` of any study): its whole-run
    files are the whole run's but its results a part, so a report, a ranking or an analysis of
    it would pass for the whole run's numbers."""
    shard = manifest.get("shard")
    if shard:
        raise UserError(
            f"{path} is shard {shard} of a run, not a whole run; join every shard with "
            f"`boi merge OUT SHARD_DIR ...` and pass OUT instead."
        )


def _check_format(path: Path, recorded: Mapping[str, Any]) -> int:
    """The manifest's format version; one sentence when this boi cannot read it."""
    version = recorded.get("format_version", 1)
    if not isinstance(version, int) or version < 1:
        raise UserError(
            f"{path} has format_version {version!r}, which no boi writes; it is damaged."
        )
    if version > MANIFEST_FORMAT:
        written_by = recorded.get("boi_version", "a newer boi")
        raise UserError(
            f"{path} was written by boi {written_by} (manifest format {version}); this is boi "
            f"{boi_version()} (format {MANIFEST_FORMAT}): upgrade boi to read or resume it."
        )
    return version


def recorded_spelling(
    out: str | os.PathLike[str], given: str, *, key: str = "out_dir", marker: str = MANIFEST
) -> str:
    """How the run in `out` spelled its own directory (its config's `key`), or `given` when
    `out` holds no run. `./runs/x`, `runs/x/` and the absolute path name one directory, and the
    directory holding the manifest is the run, wherever it was moved; a claim hashes the config
    with this spelling so that resuming never depends on how the path was typed."""
    try:
        recorded = read_marker(Path(out), marker)
    except UserError:
        return given  # a damaged marker: the claim itself says so
    config = (recorded or {}).get("config")
    spelled = config.get(key) if isinstance(config, dict) else None
    return spelled if isinstance(spelled, str) and spelled else given


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
    create: bool = True,
) -> dict[str, Any] | None:
    """Claim `out` for the run whose config hashes to `digest`.

    Returns the previous marker record when `out` holds this same run (resume), None when it is
    new or empty (the caller writes the marker). Refuses a directory that holds another run, or
    files that are not a run's; `unchanged` explains a different hash with no config key changed
    (an input that is hashed into `digest`, such as a data file). `create=False` asks the same
    questions and creates nothing (a dry run says now what the run would be refused for).
    """
    # The output contract: a folder (not a file, not under one, writable), new, empty or
    # holding `marker`; anything else is refused before a byte is written.
    output_dir(out, option=option, ours=(marker,))
    recorded = read_marker(out, marker)
    if recorded is not None:
        _check_format(out / marker, recorded)
        if recorded.get(hash_key) != digest:
            changed = changed_keys(recorded.get("config") or {}, config)
            # No key changed, yet the hash did: the content of a file the identity hashes (a
            # completions file, `BackendBase.content_identity`) was edited.
            detail = (
                f" (changed: {', '.join(changed)})"
                if changed
                else unchanged
                or " (no config key changed, but the content of a file it hashes did: a "
                "completions file?)"
            )
            raise UserError(
                f"{out} holds a different {what}{detail}, hash {recorded.get(hash_key)} vs "
                f"{digest} now; use another {option}, or the same config to resume it."
            )
        return recorded
    if create:
        out.mkdir(parents=True, exist_ok=True)
    return None


@dataclass
class RunDir:
    """One run's directory and its manifest (`claim` to write a run, `open` to read one)."""

    path: Path
    manifest: dict[str, Any]
    # The manifest as it was before this claim (None: a new run); open() sets it to the manifest.
    previous: dict[str, Any] | None = None
    writable: bool = False
    marker: str = MANIFEST
    # Seconds per stage: filled by benchmarks.common.progress.stage while the run is written,
    # read from the manifest for an opened run.
    timings: dict[str, float] = field(default_factory=dict)

    @classmethod
    def claim(
        cls,
        path: str | os.PathLike[str],
        config: Mapping[str, Any],
        *,
        digest: str | None = None,
        inputs: Mapping[str, str | Path] | None = None,
        record: Mapping[str, Any] | None = None,
        what: str = "run",
        option: str = "--out",
        unchanged: str = "",
        marker: str = MANIFEST,
        hash_key: str = "config_hash",
    ) -> RunDir:
        """Start or resume the run of `config` in `path` and write its (incomplete) manifest.

        `digest` defaults to the config's hash; pass one when an input's content belongs to the
        run's identity. `inputs` are files whose path and sha256 are recorded; `record` adds
        run-specific fields (seeds, suite files, ...). `marker` and `hash_key` keep the names
        a command's directories already use (finetune: run_config.json, identity).
        """
        out = Path(path)
        digest = digest or config_hash(dict(config))
        previous = claim_run_dir(
            out,
            digest,
            config,
            marker=marker,
            hash_key=hash_key,
            what=what,
            option=option,
            unchanged=unchanged,
        )
        return cls.start(out, config, digest, previous, inputs=inputs, record=record, marker=marker, hash_key=hash_key)  # fmt: skip

    @classmethod
    def start(
        cls,
        path: str | os.PathLike[str],
        config: Mapping[str, Any],
        digest: str,
        previous: dict[str, Any] | None,
        *,
        inputs: Mapping[str, str | Path] | None = None,
        record: Mapping[str, Any] | None = None,
        marker: str = MANIFEST,
        hash_key: str = "config_hash",
    ) -> RunDir:
        """Write the manifest of a run whose directory `claim_run_dir` already claimed.

        `claim` does both; a launch of several processes claims on every process (so each
        knows whether it resumes) and starts on one, after the others have claimed.
        """
        # The shape every output's provenance shares (benchmarks.common.provenance).
        manifest = provenance_record(
            dict(config),
            inputs,
            digest=digest,
            record={hash_key: digest, **dict(record or {}), "completed": False},
        )
        run = cls(Path(path), manifest, previous, writable=True, marker=marker)
        run.write()
        return run

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        what: str = "run",
        hint: str = "",
        shard_ok: bool = False,
        any_study: bool = False,
    ) -> RunDir:
        """A run directory to read (never written); one sentence when it is not one.

        `what` names the command whose directory is expected ("boi run"; a study's command is
        checked against the manifest's `study`, unless `any_study`: then it only names what the
        sentences ask for); `hint` says what to pass instead. A shard's directory is refused (it
        is a part of a run) unless `shard_ok` (`boi merge`).
        """
        out = Path(path)
        if not out.is_dir():
            state = "it is a file" if out.exists() else "it does not exist"
            raise UserError(
                f"{out} is not a {what} directory ({state}); {hint or 'check the path'}."
            )
        recorded = read_marker(out)
        if recorded is None:
            raise UserError(
                f"{out} is not a {what} directory (no {MANIFEST}); {hint or 'check the path'}."
            )
        study = recorded.get("study")
        if not any_study and what.startswith("boi ") and isinstance(study, str) and study != what:
            raise UserError(
                f"{out} is a `{study}` directory, not a `{what}` one; {hint or 'check the path'}."
            )
        if not shard_ok:
            refuse_shard(out, recorded)
        if not isinstance(recorded.get("config"), dict):
            raise UserError(
                f"{out / MANIFEST} records no config, so it was written by an incompatible boi "
                f"version or another tool; {hint or 'rerun into a new directory'}."
            )
        return cls(out, recorded, recorded, timings=dict(recorded.get("timings_s") or {}))

    # Typed accessors: every reader goes through these, not through manifest keys.
    @property
    def format_version(self) -> int:
        return int(self.manifest.get("format_version", 1))

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.manifest["config"])

    @property
    def config_hash(self) -> str:
        return str(self.manifest.get("config_hash", ""))

    @property
    def seeds(self) -> list[int]:
        return list(self.manifest.get("seeds") or self.config.get("seeds") or [])

    @property
    def inputs(self) -> dict[str, dict[str, str]]:
        return dict(self.manifest.get("inputs") or {})

    @property
    def versions(self) -> dict[str, str | None]:
        return dict(self.manifest.get("versions") or {})

    @property
    def completed(self) -> bool:
        return bool(self.manifest.get("completed"))

    @property
    def resumed(self) -> bool:
        """True when `claim` found this same run already started here."""
        return self.writable and self.previous is not None

    def write(self) -> None:
        if not self.writable:
            raise RuntimeError(f"{self.path} was opened for reading; claim it to write.")
        write_text_atomic(self.path / self.marker, json.dumps(self.manifest, indent=2, default=str))

    def update(self, **fields: Any) -> None:
        """Record more about the run (written at once)."""
        self.manifest.update(fields)
        self.write()

    def complete(self, **fields: Any) -> None:
        """Mark the run complete, with its stage timings and what it did (written last)."""
        self.manifest.update({**fields, "completed": True, "timings_s": dict(self.timings)})
        self.write()


def path_slug(text: str) -> str:
    """`text` as one safe path component (a model or setting label in results paths)."""
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)
