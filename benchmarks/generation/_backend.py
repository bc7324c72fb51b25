"""The backend interface, its typed spec, and `load_backend`.

A backend turns (prompt, decoding, sample indices) into raw completions. It has a stable
`identity` that says everything about the model that changes outputs (kind, model, a content
hash or revision of its files, dtype, ...), so the generation cache never mixes models.
Heavy libraries are imported only by the backend that needs them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from benchmarks.errors import UserError, suggest
from benchmarks.generation._decoding import DecodingConfig

KINDS = ("hf", "vllm", "openai")
DTYPES = ("auto", "fp32", "bf16", "fp16")


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

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]: ...


class BackendBase:
    """Shared plumbing: `complete` is `complete_many` with one request."""

    identity: str = ""
    max_samples_per_call: int = 8

    def complete(self, prompt: str, decoding: DecodingConfig, indices: Sequence[int]) -> list[str]:
        from benchmarks.generation._decoding import prompt_sha256

        request = Request(prompt, prompt_sha256(prompt), tuple(indices))
        results = dict(self.complete_many([request], decoding))
        return results[0]

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        """Yield (position in `requests`, completions for its indices), in any order, as soon
        as each request is done (the caller saves each one at once)."""
        raise NotImplementedError


@dataclass(frozen=True)
class BackendSpec:
    """Which model generates, and how to reach it."""

    kind: str = field(
        default="hf",
        metadata={
            "help": "hf (local transformers), vllm (offline vLLM engine, GPU) or openai "
            "(an OpenAI-compatible HTTP server: vLLM, SGLang, TGI, hosted APIs)"
        },
    )
    model: str | None = field(
        default=None,
        metadata={
            "help": "HF id, local folder, or None/'embedded' for the embedded SmolLM2-135M "
            "(hf, vllm); the served model name (openai)"
        },
    )
    revision: str | None = field(
        default=None, metadata={"help": "HF hub revision (branch, tag or commit) to load"}
    )
    dtype: str = field(
        default="auto",
        metadata={"help": "auto (bf16 on GPUs that support it, else fp32), fp32, bf16 or fp16"},
    )
    device: str = field(
        default="auto", metadata={"help": "hf: auto (cuda when available), cpu, cuda, cuda:1, ..."}
    )
    batch_size: int = field(
        default=8,
        metadata={
            "help": "hf: sequences per generate call (samples of one prompt are one "
            "request of at most this many); vllm: requests per engine call"
        },
    )
    base_url: str | None = field(
        default=None, metadata={"help": "openai: server base URL, e.g. http://127.0.0.1:8000/v1"}
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata={"help": "openai: environment variable holding the API key (never logged)"},
    )
    max_concurrency: int = field(default=8, metadata={"help": "openai: requests in flight at once"})
    timeout_s: float = field(
        default=300.0, metadata={"help": "openai: seconds to wait for one response"}
    )
    retries: int = field(
        default=5,
        metadata={"help": "openai: retries after 429, 5xx, timeouts or dropped connections"},
    )
    backoff_s: float = field(
        default=1.0,
        metadata={"help": "openai: first retry delay; doubles each retry (capped at 60 s)"},
    )
    samples_per_request: int | None = field(
        default=None,
        metadata={
            "help": "openai/vllm: most samples (n) of one prompt per request (default: openai "
            "16, vllm 128)"
        },
    )
    round_requests: int = field(
        default=256,
        metadata={
            "help": "vllm: requests handed to the engine at once; each round is saved to the "
            "cache before the next starts"
        },
    )
    server_stop: bool = field(
        default=True,
        metadata={
            "help": "openai: send stop sequences to the server (some hosted APIs accept "
            "at most 4); completions are cut at them locally either way"
        },
    )
    tensor_parallel_size: int = field(
        default=1, metadata={"help": "vllm: GPUs one model is split across"}
    )
    gpu_memory_utilization: float = field(
        default=0.9, metadata={"help": "vllm: fraction of GPU memory the engine may take"}
    )
    max_model_len: int | None = field(
        default=None, metadata={"help": "vllm: context length (default: the model's)"}
    )

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UserError(
                f"backend kind {self.kind!r} is unknown{suggest(self.kind, KINDS)}; use one of "
                f"{', '.join(KINDS)}."
            )
        if self.dtype not in DTYPES:
            raise UserError(
                f"backend dtype {self.dtype!r} is unknown{suggest(self.dtype, DTYPES)}; use one of "
                f"{', '.join(DTYPES)}."
            )
        for name in (
            "batch_size",
            "max_concurrency",
            "round_requests",
            "tensor_parallel_size",
        ):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise UserError(
                    f"backend {name} must be a positive integer (got {getattr(self, name)!r})."
                )
        if self.samples_per_request is not None and (
            not isinstance(self.samples_per_request, int) or self.samples_per_request < 1
        ):
            raise UserError(
                f"backend samples_per_request must be a positive integer (got {self.samples_per_request!r})."
            )
        if self.retries < 0:
            raise UserError(f"backend retries must be 0 or more (got {self.retries!r}).")
        if self.timeout_s <= 0 or self.backoff_s < 0:
            raise UserError("backend timeout_s must be positive and backoff_s non-negative.")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise UserError(
                f"backend gpu_memory_utilization must be in (0, 1] (got {self.gpu_memory_utilization!r})."
            )
        if self.kind == "openai":
            if not self.base_url or not self.base_url.startswith(("http://", "https://")):
                raise UserError(
                    f"an openai backend needs base_url starting with http:// or https:// (got "
                    f"{self.base_url!r}), e.g. http://127.0.0.1:8000/v1."
                )
            if not self.model:
                raise UserError("an openai backend needs model: the name the server serves.")

    def describe(self) -> dict[str, Any]:
        """The spec as JSON for run records (the key's variable name, never its value)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def load_backend(spec: BackendSpec) -> Backend:
    """The backend `spec` names, loaded (models are read here; servers are first contacted on
    the first request)."""
    if spec.kind == "hf":
        from benchmarks.generation._hf import HFBackend

        return HFBackend(spec)
    if spec.kind == "vllm":
        from benchmarks.generation._vllm import VLLMBackend

        return VLLMBackend(spec)
    from benchmarks.generation._openai import OpenAIBackend

    return OpenAIBackend(spec)


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
    from benchmarks.cache import cache_dir
    from benchmarks.jsonl import write_text_atomic
    from benchmarks.models import sha256_file

    stat = path.stat()
    key = hashlib.sha256(
        f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
    ).hexdigest()[:32]
    memo = cache_dir("fingerprints") / f"{key}.json"
    try:
        return json.loads(memo.read_text(encoding="utf-8"))["sha256"]
    except (OSError, ValueError, KeyError):
        pass
    sha = sha256_file(path)
    write_text_atomic(memo, json.dumps({"path": str(path), "sha256": sha}) + "\n")
    return sha


def model_reference(model: str | None, revision: str | None) -> tuple[str, str]:
    """(what to load, its identity part) for an HF id, a local folder or the embedded model."""
    from benchmarks.models import resolve_model

    where = resolve_model(model)
    if Path(where).is_dir():
        return where, f"{Path(where).name}#sha256:{folder_fingerprint(where)}"
    return where, f"{where}@{revision or 'main'}"
