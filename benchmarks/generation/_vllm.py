"""Offline vLLM backend (optional extra `vllm`; needs a GPU).

One engine (`vllm.LLM`) holds the model, split over `tensor_parallel_size` GPUs. Each request
asks for the n samples of one prompt at once (`SamplingParams(n=...)`), so they share the
prompt's KV cache. Seeds: with n > 1 vLLM gives child i of a request the seed `seed + i`, so a
request for consecutive samples [a, b) of a prompt carries seed `base + a`, where base is the
prompt's `sample_seed(seed, prompt hash, 0)`. Sample j then always draws from `base + j`,
however requests were split or resumed, and bases of different prompts and run seeds are
multiples of SEED_STRIDE apart, so no two samples share a seed while n < SEED_STRIDE.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.generation._backend import (
    DTYPE_HELP,
    DTYPES,
    BackendBase,
    Request,
    check_choice,
    check_positive,
    consecutive_runs,
    model_reference,
)
from benchmarks.generation._decoding import DecodingConfig, chat_prompt_text, sample_seed
from benchmarks.generation._spec import BackendSpec

_VLLM_DTYPES = {"auto": "auto", "fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


@dataclass(frozen=True)
class VLLMOptions:
    """Options of the `vllm` backend (an offline vLLM engine on GPUs)."""

    revision: str | None = field(
        default=None, metadata={"help": "HF hub revision (branch, tag or commit) to load"}
    )
    dtype: str = field(default="auto", metadata={"help": DTYPE_HELP})
    samples_per_request: int | None = field(
        default=None,
        metadata={"help": "most samples (n) of one prompt per engine request (default 128)"},
    )
    round_requests: int = field(
        default=256,
        metadata={
            "help": "requests handed to the engine at once; each round is saved to the cache "
            "before the next starts"
        },
    )
    tensor_parallel_size: int = field(
        default=1, metadata={"help": "GPUs one model is split across"}
    )
    gpu_memory_utilization: float = field(
        default=0.9, metadata={"help": "fraction of GPU memory the engine may take"}
    )
    max_model_len: int | None = field(
        default=None, metadata={"help": "context length (default: the model's)"}
    )

    def __post_init__(self) -> None:
        check_choice("dtype", self.dtype, DTYPES)
        check_positive("samples_per_request", self.samples_per_request, optional=True)
        check_positive("round_requests", self.round_requests)
        check_positive("tensor_parallel_size", self.tensor_parallel_size)
        if not 0 < self.gpu_memory_utilization <= 1:
            raise UserError(
                "backend gpu_memory_utilization must be in (0, 1] (got "
                f"{self.gpu_memory_utilization!r})."
            )


def sampling_arguments(request: Request, decoding: DecodingConfig) -> dict[str, Any]:
    """`SamplingParams` keyword arguments for one run of consecutive indices."""
    arguments: dict[str, Any] = {
        "n": 1 if decoding.greedy else len(request.indices),
        "temperature": float(decoding.temperature),
        "max_tokens": decoding.max_new_tokens,
        "seed": sample_seed(decoding.seed, request.prompt_hash, request.indices[0]),
    }
    if not decoding.greedy:
        arguments["top_p"] = float(decoding.top_p)
    if decoding.generation_stop and not decoding.chat:
        arguments["stop"] = list(decoding.generation_stop)
    return arguments


class VLLMBackend(BackendBase):
    """Pass `engine` (anything with vLLM's `generate` and `get_tokenizer`) and
    `sampling_params` (a SamplingParams factory) to use them instead of loading vLLM."""

    Options = VLLMOptions

    def __init__(
        self,
        spec: BackendSpec,
        *,
        engine: Any = None,
        sampling_params: Callable[..., Any] | None = None,
        identity: str | None = None,
    ) -> None:
        self.spec = spec
        self.options: VLLMOptions = spec.options
        self.max_samples_per_call = self.options.samples_per_request or 128
        if engine is None:
            engine, sampling_params, identity = self._load(spec)
        if sampling_params is None:
            raise ValueError("pass sampling_params together with engine")
        self.engine = engine
        self.sampling_params = sampling_params
        self.identity = identity or f"vllm|{spec.model}|{self.options.dtype}"

    @staticmethod
    def _load(spec: BackendSpec) -> tuple[Any, Callable[..., Any], str]:
        options: VLLMOptions = spec.options
        try:
            # lazy: vLLM is an optional, GPU-only and heavy extra
            from vllm import LLM, SamplingParams
        except ImportError:
            raise UserError(
                "the vllm backend needs vLLM on a GPU machine: pip install -e '.[vllm]' in the boi "
                "checkout (or use kind hf, or kind openai against a running vLLM server)."
            ) from None
        where, reference = model_reference(spec.model, options.revision)
        arguments: dict[str, Any] = {
            "model": where,
            "dtype": _VLLM_DTYPES[options.dtype],
            "tensor_parallel_size": options.tensor_parallel_size,
            "gpu_memory_utilization": options.gpu_memory_utilization,
            # Sampling seeds are set per request; this only fixes the engine's own state.
            "seed": 0,
        }
        if options.revision:
            arguments["revision"] = options.revision
        if options.max_model_len:
            arguments["max_model_len"] = options.max_model_len
        engine = LLM(**arguments)
        version = importlib.metadata.version("vllm")
        dtype = str(engine.llm_engine.model_config.dtype).removeprefix("torch.")
        identity = f"vllm|{reference}|{dtype}|vllm-{version}"
        return engine, SamplingParams, identity

    def engine_input(self, prompt: str, decoding: DecodingConfig) -> Any:
        if not decoding.chat:
            return prompt
        tokenizer = self.engine.get_tokenizer()
        text = chat_prompt_text(tokenizer, prompt, decoding)
        # Token ids, so the engine does not add a second start token to the templated text.
        return {"prompt_token_ids": tokenizer(text, add_special_tokens=False)["input_ids"]}

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        round_size = self.options.round_requests
        for start in range(0, len(requests), round_size):
            chunk = list(enumerate(requests))[start : start + round_size]
            runs = [(position, run) for position, r in chunk for run in consecutive_runs(r)]
            inputs = [self.engine_input(run.prompt, decoding) for _, run in runs]
            params = [self.sampling_params(**sampling_arguments(run, decoding)) for _, run in runs]
            outputs = self.engine.generate(inputs, params, use_tqdm=False)
            if len(outputs) != len(runs):
                raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(runs)} requests")
            texts: dict[int, list[str]] = {}
            for (position, run), output in zip(runs, outputs, strict=True):
                samples = [c.text for c in sorted(output.outputs, key=lambda c: c.index)]
                if decoding.greedy:
                    samples = samples * len(run.indices)
                texts.setdefault(position, []).extend(samples)
            for position, _ in chunk:
                yield position, texts[position]
