"""What every backend shares: the request type, the interface, option checks and identities.

A backend turns (prompt, decoding, sample indices) into raw completions. It has a stable
`identity` that says everything about the model that changes outputs (kind, model, a content
hash or revision of its files, dtype, ...), so the generation cache never mixes models.

This module knows no backend: the registry of kinds and the spec that names one are in
`_spec.py`, and each backend (`_hf.py`, `_vllm.py`, `_openai.py`) imports from here, never
the other way round. Heavy libraries are imported only by the backend that needs them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.cache import cache_dir
from benchmarks.common.errors import UserError, suggest
from benchmarks.common.models import resolve_model
from benchmarks.common.provenance import file_sha256
from benchmarks.generation._decoding import DecodingConfig, prompt_sha256

DTYPES = ("auto", "fp32", "bf16", "fp16")
DTYPE_HELP = "auto (bf16 on GPUs that support it, else fp32), fp32, bf16 or fp16"


@dataclass(frozen=True)
class Request:
    """Samples `indices` (ascending) of one prompt; `prompt_hash` is sha256(prompt)."""

    prompt: str
    prompt_hash: str
    indices: tuple[int, ...]


def consecutive_runs(request: Request) -> list[Request]:
    """A request split into runs of consecutive indices (one engine request each)."""
    runs: list[list[int]] = []
    for index in request.indices:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return [Request(request.prompt, request.prompt_hash, tuple(run)) for run in runs]


@runtime_checkable
class Backend(Protocol):
    """What `generate_samples` needs from a model."""

    identity: str
    """Stable across processes for the same model files and settings; part of the cache key."""
    max_samples_per_call: int
    """Samples of one prompt asked for per request (requests are aligned chunks of this size)."""

    def complete(
        self, prompt: str, decoding: DecodingConfig, indices: Sequence[int]
    ) -> list[str]: ...

    def prepare(self, problems: Iterable[Any]) -> list[str]: ...

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]: ...


def sample_verb(backend: Any) -> str:
    """What a backend does to a sample, for logs and summaries (`BackendBase.sample_verb`;
    a backend that is not a `BackendBase`, a test's fake, generates)."""
    return str(getattr(backend, "sample_verb", "generated"))


@dataclass(frozen=True)
class NoOptions:
    """The options of a backend that has none."""


class BackendBase:
    """Shared plumbing: `complete` is `complete_many` with one request.

    A backend registered in `BACKENDS` is built as `Backend(spec)` and declares:

    - `Options`: a frozen dataclass of its own settings (defaults, `metadata={"help": ...}`,
      checks in `__post_init__`); `spec.options` is an instance of it, and its fields are the
      keys a config may give beside `kind` and `model`.
    - `model_required`: when not empty, a spec without `model` is refused with this hint
      (e.g. "the name the server serves").
    """

    Options: ClassVar[type] = NoOptions
    model_required: ClassVar[str] = ""
    default_model: ClassVar[str] = "embedded"
    """What `model: None` means in labels (the embedded model; '' for a backend with no model)."""

    identity: str = ""
    max_samples_per_call: int = 8

    def __init__(self, spec: Any) -> None:
        """`spec` is the `BackendSpec` naming this backend (its `options` are `Options`)."""
        self.spec = spec

    sample_verb: ClassVar[str] = "generated"
    """What the run's logs and summary say this backend does to a sample: a model generates it,
    a file of completions gives it ("read from the given completions")."""

    same_under_every_seed: ClassVar[bool] = False
    """True when the backend's sample i is the same text whatever the seed (completions read
    from a file): several seeds would count each one as several independent samples, so
    `check_models` and `sample_prompts` refuse more than one."""

    @classmethod
    def check(cls, spec: Any) -> None:
        """Before any work (`check_models`): what this backend can tell about `spec` without
        loading a model, one sentence when it is wrong (a completions file that does not
        parse). Reaching servers and local models is `check_backends`'s."""

    @classmethod
    def label_name(cls, spec: Any) -> str | None:
        """The name `BackendSpec.label` gives the model after the kind, when the model id's last
        path part does not tell it (None: that part)."""
        return None

    @classmethod
    def content_identity(cls, spec: Any) -> dict[str, Any]:
        """What decides this backend's outputs beyond `spec`'s fields (a completions file's
        sha256), added to the run identity (`BackendSpec.identity_mapping`): an edited file is
        another run, not a resume that meets the old file's samples."""
        return {}

    def prepare(self, problems: Iterable[Any]) -> list[str]:
        """Called with the problem records before generating; returns notes for the log. A
        model needs none (the `reference` backend takes their solutions)."""
        return []

    def complete(self, prompt: str, decoding: DecodingConfig, indices: Sequence[int]) -> list[str]:
        request = Request(prompt, prompt_sha256(prompt), tuple(indices))
        results = dict(self.complete_many([request], decoding))
        return results[0]

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        """Yield (position in `requests`, completions for its indices), in any order, as soon
        as each request is done (the caller saves each one at once)."""
        raise NotImplementedError


def check_seeds(backend: Any, label: str, seeds: Sequence[int]) -> None:
    """One sentence when `backend` (a class or an instance) gives the same samples under every
    seed and `seeds` has several: they would be pooled as independent samples (pass@k wrong)."""
    if getattr(backend, "same_under_every_seed", False) and len(set(seeds)) > 1:
        raise UserError(
            f"model {label} gives the same samples under every seed, so {len(set(seeds))} "
            "seeds would count each sample several times; give one seed (--seeds 0)."
        )


# --------------------------------------------------------------------------- option checks


def check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    """A UserError unless `value` is one of `choices` (for options' `__post_init__`)."""
    if value not in choices:
        raise UserError(
            f"backend {name} {value!r} is unknown{suggest(str(value), choices)}; use one of "
            f"{', '.join(choices)}."
        )


def check_positive(name: str, value: Any, *, optional: bool = False) -> None:
    """A UserError unless `value` is a positive integer (or None when `optional`)."""
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UserError(f"backend {name} must be a positive integer (got {value!r}).")


# --------------------------------------------------------------------------- identities

_SMALL_SUFFIXES = (".json", ".jinja", ".txt", ".model", ".py", ".tiktoken")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


def folder_fingerprint(folder: str | os.PathLike[str]) -> str:
    """A content hash of a model folder's config, tokenizer and weight files.

    Weights are hashed once per (path, size, mtime) and remembered in the boi cache, so a
    second load of a multi-GB model costs a stat per file.
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or not path.is_file():
            continue
        if path.suffix in _WEIGHT_SUFFIXES:
            file_hash = _remembered_sha256(path)
        elif path.suffix in _SMALL_SUFFIXES:
            file_hash = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            continue
        digest.update(f"{path.name}\0{file_hash}\n".encode())
    return digest.hexdigest()[:16]


def _remembered_sha256(path: Path) -> str:
    stat = path.stat()
    key = hashlib.sha256(
        f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
    ).hexdigest()[:32]
    memo = cache_dir("fingerprints") / f"{key}.json"
    try:
        sha256: str = json.loads(memo.read_text(encoding="utf-8"))["sha256"]
        return sha256
    except (OSError, ValueError, KeyError):
        pass
    sha = file_sha256(path)
    write_text_atomic(memo, json.dumps({"path": str(path), "sha256": sha}) + "\n")
    return sha


def model_reference(model: str | None, revision: str | None) -> tuple[str, str]:
    """(what to load, its identity part) for an HF id, a local folder or the embedded model."""
    where = resolve_model(model)
    if Path(where).is_dir():
        return where, f"{Path(where).name}#sha256:{folder_fingerprint(where)}"
    return where, f"{where}@{revision or 'main'}"
