"""Generation backends and the generation cache.

    backend = load_backend(BackendSpec(kind="hf", model="embedded"))
    outcome = generate_samples(backend, {"HumanEval/0": prompt, ...}, DecodingConfig(n=2), path)
    outcome.completions["HumanEval/0"]  # n post-processed completions

Backends (`BackendSpec.kind`, the names in `BACKENDS`): `hf` (local transformers), `vllm`
(offline vLLM engine, optional extra, GPU), `openai` (an OpenAI-compatible HTTP server). Each
declares its own options (`HFOptions`, `VLLMOptions`, `OpenAIOptions`), given flat beside
`kind` and `model`. A new backend is one module plus `BACKENDS.register(kind, "module:Class")`.
Importing this package imports none of torch, transformers, vllm or an HTTP client;
`load_backend` imports what the chosen one needs.

`sample_prompts` is the loop every run shares (prompt groups x seeds through the cache); a
run builds its rows from the `Sample`s it returns. `benchmarks.generation.replies` is the one
reader of model output: every sample's `reading` says how its reply became code (or why it
did not: a reply cut off, a reply without the code).
"""

from benchmarks.generation._backend import (
    DTYPE_HELP,
    DTYPES,
    Backend,
    BackendBase,
    NoOptions,
    Request,
    model_reference,
    sample_verb,
)
from benchmarks.generation._cache import (
    GenerationCache,
    GenerationOutcome,
    decoding_key,
    generate_samples,
    read_generated,
)
from benchmarks.generation._decoding import (
    DEFAULT_CHAT_INSTRUCTION,
    HUMANEVAL_STOP,
    PROGRAM_CHAT_INSTRUCTION,
    PROGRAM_STOP,
    DecodingConfig,
    for_kind,
    for_language,
    model_input_text,
    prompt_sha256,
    sample_seed,
)
from benchmarks.generation._sampling import (
    PromptGroup,
    Sample,
    SamplingTotals,
    sample_prompts,
    unread_replies_warning,
)
from benchmarks.generation._spec import (
    BACKENDS,
    BackendSpec,
    backend_class,
    check_models,
    load_backend,
    model_flag_specs,
)
from benchmarks.generation.replies import (
    EXTRACTED,
    NO_CODE,
    TRUNCATED,
    ReplyReading,
    read_completion_reply,
    truncate_at_stop,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_CHAT_INSTRUCTION",
    "DTYPES",
    "DTYPE_HELP",
    "HUMANEVAL_STOP",
    "PROGRAM_CHAT_INSTRUCTION",
    "PROGRAM_STOP",
    "Backend",
    "BackendBase",
    "BackendSpec",
    "EXTRACTED",
    "NO_CODE",
    "TRUNCATED",
    "DecodingConfig",
    "GenerationCache",
    "GenerationOutcome",
    "NoOptions",
    "PromptGroup",
    "ReplyReading",
    "Request",
    "sample_verb",
    "Sample",
    "SamplingTotals",
    "backend_class",
    "for_kind",
    "for_language",
    "generate_samples",
    "read_generated",
    "check_models",
    "decoding_key",
    "load_backend",
    "model_flag_specs",
    "model_input_text",
    "model_reference",
    "prompt_sha256",
    "read_completion_reply",
    "sample_prompts",
    "sample_seed",
    "truncate_at_stop",
    "unread_replies_warning",
]
