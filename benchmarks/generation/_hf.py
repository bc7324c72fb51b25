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
from typing import Any

from benchmarks.errors import UserError
from benchmarks.generation._backend import BackendBase, BackendSpec, Request, model_reference
from benchmarks.generation._decoding import DecodingConfig, chat_message, sample_seed

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


def _torch_dtype(torch: Any, dtype: str, device: str) -> Any:
    if dtype == "auto":
        if device.startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]


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
    import torch

    return torch.uint8


class HFBackend(BackendBase):
    """A transformers causal LM; pass `model` and `tokenizer` to use ones already loaded."""

    def __init__(self, spec: BackendSpec, *, model: Any = None, tokenizer: Any = None) -> None:
        import torch

        self.spec = spec
        self.max_samples_per_call = spec.batch_size
        device = spec.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise UserError(
                f"backend device {device!r} asked for, but torch sees no CUDA GPU; use cpu."
            )
        self.device = device
        if model is None or tokenizer is None:
            model, tokenizer, reference = self._load(torch, spec, device)
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
    def _load(torch: Any, spec: BackendSpec, device: str) -> tuple[Any, Any, str]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        where, reference = model_reference(spec.model, spec.revision)
        extra = {"revision": spec.revision} if spec.revision else {}
        try:
            tokenizer = AutoTokenizer.from_pretrained(where, **extra)
            model = AutoModelForCausalLM.from_pretrained(
                where, dtype=_torch_dtype(torch, spec.dtype, device), **extra
            )
        except (OSError, ValueError) as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise UserError(
                f"could not load model {spec.model!r} ({first}); pass an existing folder, "
                "'embedded', or an HF id with HF_HUB_OFFLINE=0 and network access."
            ) from None
        commit = getattr(model.config, "_commit_hash", None)
        if commit and "#sha256:" not in reference:
            reference = f"{where}@{commit}"
        return model.to(device), tokenizer, reference

    # ----- generation
    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        # Greedy samples are all the same: one row per request, copied to every index.
        rows_of = [1 if decoding.greedy else len(r.indices) for r in requests]
        batch: list[int] = []
        size = 0
        for position, rows in enumerate(rows_of):
            if batch and size + rows > self.spec.batch_size:
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
        import torch

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
        import torch

        new = input_ids[:, self.prompt_width :]
        tails = self.tokenizer.batch_decode(new[:, -self.window :], skip_special_tokens=True)
        done = [any(s in tail for s in self.stop) for tail in tails]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)
