"""Local transformers backend.

Sampling is done by a logits processor that draws each row's token from that row's own
`torch.Generator`, seeded with the sample's seed (`sample_seed(seed, prompt hash, index)`), and
hands greedy search a one-hot choice. A sample's text therefore depends on (model, prompt,
decoding, seed, index) only, not on which other samples or prompts shared its batch, so a run
that was split differently or resumed after a kill reproduces the same samples (up to float
rounding differences between batch shapes). Stop sequences end a row through a stopping
criterion that decodes only the last few new tokens of each row; `generate(stop_strings=...)`
costs seconds per call with some tokenizers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.models import load_model, load_tokenizer
from benchmarks.generation._backend import (
    DTYPE_HELP,
    DTYPES,
    BackendBase,
    Request,
    check_choice,
    check_positive,
    model_reference,
)
from benchmarks.generation._decoding import DecodingConfig, chat_message, sample_seed
from benchmarks.generation._spec import BackendSpec

# Bump when the sampling procedure changes: it is part of the identity, so old cached samples
# are not mixed with new ones.
SAMPLER_VERSION = "rowseed-v1"


def chat_prompt_text(tokenizer: Any, prompt: str, decoding: DecodingConfig) -> str:
    """The model input for `prompt` in chat mode: the tokenizer's chat template applied to
    one user message (instruction + the prompt in a code block)."""
    if not getattr(tokenizer, "chat_template", None):
        raise UserError(
            "decoding chat=True but the model's tokenizer has no chat template; use chat=False "
            "or a chat/instruct model."
        )
    return tokenizer.apply_chat_template(
        [{"role": "user", "content": chat_message(prompt, decoding)}],
        add_generation_prompt=True,
        tokenize=False,
    )


@dataclass(frozen=True)
class HFOptions:
    """Options of the `hf` backend (a local transformers model)."""

    revision: str | None = field(
        default=None, metadata={"help": "HF hub revision (branch, tag or commit) to load"}
    )
    dtype: str = field(default="auto", metadata={"help": DTYPE_HELP})
    device: str = field(
        default="auto", metadata={"help": "auto (cuda when available), cpu, cuda, cuda:1, ..."}
    )
    batch_size: int = field(
        default=8,
        metadata={
            "help": "sequences per generate call (samples of one prompt are one request of at "
            "most this many)"
        },
    )

    def __post_init__(self) -> None:
        check_choice("dtype", self.dtype, DTYPES)
        check_positive("batch_size", self.batch_size)


def _tensor_fingerprint(model: Any, tokenizer: Any) -> str:
    """Content hash of an in-memory model and tokenizer (for models passed in directly)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(
            tensor.detach().cpu().contiguous().view(-1).view(dtype=_byte_dtype()).numpy().tobytes()
        )
    vocab = sorted(tokenizer.get_vocab().items())
    digest.update(repr(vocab).encode())
    digest.update(str(getattr(tokenizer, "chat_template", None)).encode())
    return digest.hexdigest()[:16]


def _byte_dtype() -> Any:
    import torch  # lazy: heavy, and only needed once a model is loaded

    return torch.uint8


class HFBackend(BackendBase):
    """A transformers causal LM; pass `model` and `tokenizer` to use ones already loaded."""

    Options = HFOptions

    def __init__(self, spec: BackendSpec, *, model: Any = None, tokenizer: Any = None) -> None:
        # torch is imported here, not at module level: naming a backend kind must stay cheap.
        import torch

        self.spec = spec
        self.options: HFOptions = spec.options
        self.max_samples_per_call = self.options.batch_size
        device = self.options.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise UserError(
                f"backend device {device!r} asked for, but torch sees no CUDA GPU; use cpu."
            )
        self.device = device
        if model is None or tokenizer is None:
            model, tokenizer, reference = self._load(spec, device)
        else:
            model = model.to(device)
            reference = (
                f"{spec.model or 'in-memory'}#tensors:{_tensor_fingerprint(model, tokenizer)}"
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        if tokenizer.pad_token_id is None:
            # Padding positions are masked out; any id works, and eos is always there.
            tokenizer.pad_token = tokenizer.eos_token
        self.eos_token_id = model.generation_config.eos_token_id
        if self.eos_token_id is None:
            self.eos_token_id = tokenizer.eos_token_id
        dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
        self.identity = f"hf|{reference}|{dtype}|{torch.device(device).type}|{SAMPLER_VERSION}"

    @staticmethod
    def _load(spec: BackendSpec, device: str) -> tuple[Any, Any, str]:
        options: HFOptions = spec.options
        where, reference = model_reference(spec.model, options.revision)
        tokenizer = load_tokenizer(where, revision=options.revision, shown=spec.model)
        model = load_model(
            where, dtype=options.dtype, device=device, revision=options.revision, shown=spec.model
        )
        commit = getattr(model.config, "_commit_hash", None)
        if commit and "#sha256:" not in reference:
            reference = f"{where}@{commit}"
        return model, tokenizer, reference

    # ----- generation
    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        # Greedy samples are all the same: one row per request, copied to every index.
        rows_of = [1 if decoding.greedy else len(r.indices) for r in requests]
        batch: list[int] = []
        size = 0
        for position, rows in enumerate(rows_of):
            if batch and size + rows > self.options.batch_size:
                yield from self._run_batch([requests[i] for i in batch], batch, decoding)
                batch, size = [], 0
            batch.append(position)
            size += rows
        if batch:
            yield from self._run_batch([requests[i] for i in batch], batch, decoding)

    def _model_input(self, prompt: str, decoding: DecodingConfig) -> list[int]:
        if decoding.chat:
            text = chat_prompt_text(self.tokenizer, prompt, decoding)
            return self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return self.tokenizer(prompt)["input_ids"]

    def _run_batch(
        self, requests: list[Request], positions: list[int], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        # lazy: torch and transformers are heavy and needed only once a model is loaded
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        rows: list[tuple[int, list[int], int]] = []  # (request number, input ids, sample index)
        for number, request in enumerate(requests):
            ids = self._model_input(request.prompt, decoding)
            indices = request.indices[:1] if decoding.greedy else request.indices
            rows.extend((number, ids, index) for index in indices)
        width = max(len(ids) for _, ids, _ in rows)
        pad = self.tokenizer.pad_token_id
        # Left padding keeps every row's last prompt token in the last column.
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for _, ids, _ in rows])
        attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for _, ids, _ in rows])
        config = GenerationConfig(
            max_new_tokens=decoding.max_new_tokens,
            do_sample=False,
            num_beams=1,
            pad_token_id=pad,
            eos_token_id=self.eos_token_id,
            # The model's own generation_config must not add knobs the decoding does not record.
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            temperature=None,
            top_p=None,
            top_k=None,
        )
        processors = LogitsProcessorList()
        if not decoding.greedy:
            generators = []
            for number, _, index in rows:
                generator = torch.Generator(device=self.device)
                generator.manual_seed(
                    sample_seed(decoding.seed, requests[number].prompt_hash, index)
                )
                generators.append(generator)
            processors.append(_RowSampler(generators, decoding.temperature, decoding.top_p))
        criteria = StoppingCriteriaList()
        if decoding.stop and not decoding.chat:
            criteria.append(_StopOnSequences(self.tokenizer, decoding.stop, width))
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                generation_config=config,
                logits_processor=processors,
                stopping_criteria=criteria,
            )
        texts = self.tokenizer.batch_decode(output[:, width:], skip_special_tokens=True)
        by_request: list[list[str]] = [[] for _ in requests]
        for (number, _, _), text in zip(rows, texts, strict=True):
            by_request[number].append(text)
        for number, request in enumerate(requests):
            completions = by_request[number]
            if decoding.greedy:
                completions = completions * len(request.indices)
            yield positions[number], completions


class _RowSampler:
    """Temperature + top-p sampling with one generator per row; returns one-hot scores so that
    greedy search takes exactly the drawn token."""

    def __init__(self, generators: list[Any], temperature: float, top_p: float) -> None:
        self.generators = generators
        self.temperature = temperature
        self.top_p = top_p

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch  # lazy: heavy, needed only once a model is loaded

        probs = torch.softmax(scores.float() / self.temperature, dim=-1)
        if self.top_p < 1.0:
            sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
            # Keep the smallest prefix whose mass reaches top_p (the top token always stays).
            before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
            sorted_probs = sorted_probs.masked_fill(before >= self.top_p, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
        chosen = torch.empty(len(self.generators), dtype=torch.long, device=scores.device)
        for row, generator in enumerate(self.generators):
            chosen[row] = torch.multinomial(probs[row], 1, generator=generator)[0]
        onehot = torch.full_like(scores, float("-inf"))
        onehot.scatter_(-1, chosen.unsqueeze(-1), 0.0)
        return onehot


class _StopOnSequences:
    """Ends a row once its new text contains a stop sequence; decodes only each row's last few
    tokens (a stop sequence of c characters lies within the last c + 1 tokens)."""

    def __init__(self, tokenizer: Any, stop: Sequence[str], prompt_width: int) -> None:
        self.tokenizer = tokenizer
        self.stop = tuple(stop)
        self.prompt_width = prompt_width
        self.window = max(len(s) for s in stop) + 1

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch  # lazy: heavy, needed only once a model is loaded

        new = input_ids[:, self.prompt_width :]
        tails = self.tokenizer.batch_decode(new[:, -self.window :], skip_special_tokens=True)
        done = [any(s in tail for s in self.stop) for tail in tails]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)
