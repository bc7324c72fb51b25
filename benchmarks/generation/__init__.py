"""Generation backends and the generation cache.

    backend = load_backend(BackendSpec(kind="hf", model="embedded"))
    outcome = generate_samples(backend, {"HumanEval/0": prompt, ...}, DecodingConfig(n=2), path)
    outcome.completions["HumanEval/0"]  # n post-processed completions

Backends (`BackendSpec.kind`): `hf` (local transformers), `vllm` (offline vLLM engine, optional
extra, GPU), `openai` (an OpenAI-compatible HTTP server). Importing this package imports none of
torch, transformers, vllm or an HTTP client; `load_backend` imports what the chosen one needs.
"""

from benchmarks.generation._backend import Backend, BackendSpec, Request, load_backend
from benchmarks.generation._cache import GenerationCache, GenerationOutcome, generate_samples
from benchmarks.generation._decoding import (
    DEFAULT_CHAT_INSTRUCTION,
    HUMANEVAL_STOP,
    DecodingConfig,
    sample_seed,
)
from benchmarks.generation._postprocess import extract_function_body, postprocess, truncate_at_stop

__all__ = [
    "DEFAULT_CHAT_INSTRUCTION",
    "HUMANEVAL_STOP",
    "Backend",
    "BackendSpec",
    "DecodingConfig",
    "GenerationCache",
    "GenerationOutcome",
    "Request",
    "extract_function_body",
    "generate_samples",
    "load_backend",
    "postprocess",
    "sample_seed",
    "truncate_at_stop",
]
