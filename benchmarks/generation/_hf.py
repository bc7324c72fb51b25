"""Local transformers backend.

Sampling is done by a logits processor that draws each row's token from that row's own
`torch.Generator`, seeded with the sample's seed (`sample_seed(seed, prompt hash, index)`), and
hands greedy search a one-hot choice. A sample's text therefore depends on (model, prompt,
decoding, seed, index) only, not on which other samples or prompts shared its batch, so a run
that was split differently or resumed after a kill reproduces the same samples (up to float
rounding differences between batch shapes).

Batches are formed from requests of like prompt length (a batch is as wide as its longest
prompt), and a row leaves its batch as soon as it ends (a stop sequence or EOS): each `generate`
call runs until some row ends, and the others go on in the next call on the same KV cache cut
down to them. Without that, finished rows kept computing until the longest row of their batch
ended, and batching was slower than one prompt at a time.
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
from benchmarks.generation._decoding import (
    DecodingConfig,
    model_input_text,
    sample_seed,
)
from benchmarks.generation._spec import BackendSpec

# Bump when the sampling procedure changes: it is part of the identity, so old cached samples
# are not mixed with new ones.
SAMPLER_VERSION = "rowseed-v1"

# The batch size when the options give none, by device type (others get cpu's). On a CPU a
# decoding step of 8 rows costs about 2.3 times one of a single row (reading the weights
# dominates; SmolLM2-135M, 175 vs 75 ms), while prefill costs the same per prompt token whatever
# the batch. Since finished rows leave their batch, a bigger batch mostly lets more long rows
# share their steps: on 32 HumanEval prompts (greedy, 128 tokens, stops; 2 cores) batches of 16
# made 1.8-2.0x the samples/s of one prompt at a time, 8 made 1.4-1.6x, and 32 made 1.9-2.3x for
# twice the KV cache of 16 (scripts/bench_hf_generation.py). CUDA keeps the earlier default,
# which fits the GPU memory of models that need one; it was not measured here.
BATCH_SIZE_BY_DEVICE = {"cpu": 16, "cuda": 8}


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
    batch_size: int | None = field(
        default=None,
        metadata={
            "help": "sequences per generate call (samples of one prompt are one request of at "
            "most this many); default by device: "
            + ", ".join(f"{size} on {kind}" for kind, size in BATCH_SIZE_BY_DEVICE.items())
        },
    )

    def __post_init__(self) -> None:
        check_choice("dtype", self.dtype, DTYPES)
        check_positive("batch_size", self.batch_size, optional=True)


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
        device = self.options.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise UserError(
                f"backend device {device!r} asked for, but torch sees no CUDA GPU; use cpu."
            )
        self.device = device
        self.batch_size = self.options.batch_size or BATCH_SIZE_BY_DEVICE.get(
            torch.device(device).type, BATCH_SIZE_BY_DEVICE["cpu"]
        )
        self.max_samples_per_call = self.batch_size
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
        eos = self.eos_token_id
        self._eos_ids = frozenset(
            [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
        )
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
        inputs = [self._model_input(request.prompt, decoding) for request in requests]
        # Requests are batched in order of prompt length: a batch is as wide as its longest
        # prompt, so mixing a short prompt with a long one spends the long one's prefill and
        # attention on padding. Results come back in any order (the caller saves each at once).
        order = sorted(range(len(requests)), key=lambda position: len(inputs[position]))
        # Greedy samples are all the same: one row per request, copied to every index.
        rows_of = [1 if decoding.greedy else len(r.indices) for r in requests]
        batch: list[int] = []
        size = 0
        for position in order:
            if batch and size + rows_of[position] > self.batch_size:
                yield from self._run_batch(requests, inputs, batch, decoding)
                batch, size = [], 0
            batch.append(position)
            size += rows_of[position]
        if batch:
            yield from self._run_batch(requests, inputs, batch, decoding)

    def _model_input(self, prompt: str, decoding: DecodingConfig) -> list[int]:
        text, special_tokens = model_input_text(self.tokenizer, prompt, decoding)
        ids: list[int] = self.tokenizer(text, add_special_tokens=special_tokens)["input_ids"]
        return ids

    def _run_batch(
        self,
        requests: Sequence[Request],
        inputs: list[list[int]],
        positions: list[int],
        decoding: DecodingConfig,
    ) -> Iterator[tuple[int, list[str]]]:
        # lazy: torch is heavy and needed only once a model is loaded
        import torch

        rows: list[tuple[int, int]] = []  # (position in `requests`, sample index)
        for position in positions:
            indices = requests[position].indices
            rows.extend(
                (position, index) for index in (indices[:1] if decoding.greedy else indices)
            )
        generators = None
        if not decoding.greedy:
            generators = []
            for position, index in rows:
                generator = torch.Generator(device=self.device)
                generator.manual_seed(
                    sample_seed(decoding.seed, requests[position].prompt_hash, index)
                )
                generators.append(generator)
        new_tokens = self._generate(
            [inputs[position] for position, _ in rows], generators, decoding
        )
        texts = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        by_request: dict[int, list[str]] = {position: [] for position in positions}
        for (position, _), text in zip(rows, texts, strict=True):
            by_request[position].append(text)
        for position, completions in by_request.items():
            if decoding.greedy:
                completions = completions * len(requests[position].indices)
            yield position, completions

    def _generate(
        self, prompts: list[list[int]], generators: list[Any] | None, decoding: DecodingConfig
    ) -> list[list[int]]:
        """The new tokens of each prompt (one row each), generated as one batch that finished
        rows leave at once.

        A row that has met a stop sequence or EOS would otherwise keep computing until the
        longest row of its batch ends; with stop sequences most rows end long before
        max_new_tokens. So each `generate` call runs only until some row finishes
        (`_UntilARowFinishes`), and the rows still going continue in a new call on the same KV
        cache cut down to them (`reorder_cache`, which every cache type has for beam search).
        `generate` derives position ids from the attention mask, so a continued row sees the
        same positions and mask as in one uninterrupted call.
        """
        # lazy: torch and transformers are heavy and needed only once a model is loaded
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        pad = self.tokenizer.pad_token_id
        width = max(len(ids) for ids in prompts)
        # Left padding keeps every row's last prompt token in the last column.
        input_ids = torch.tensor(
            [[pad] * (width - len(ids)) + ids for ids in prompts], device=self.device
        )
        attention = torch.tensor(
            [[0] * (width - len(ids)) + [1] * len(ids) for ids in prompts], device=self.device
        )
        new_tokens: list[list[int]] = [[] for _ in prompts]
        live = list(range(len(prompts)))  # the prompt of each batch row still generating
        cache = None
        budget = decoding.max_new_tokens
        stop = decoding.generation_stop if not decoding.chat else ()
        config = GenerationConfig(
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
            return_dict_in_generate=True,
        )
        while True:
            processors = LogitsProcessorList()
            if generators is not None:
                processors.append(
                    _RowSampler(
                        [generators[row] for row in live], decoding.temperature, decoding.top_p
                    )
                )
            config.max_new_tokens = budget
            watch = _UntilARowFinishes(self.tokenizer, stop, self._eos_ids, width)
            with torch.inference_mode():
                output = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=attention,
                    past_key_values=cache,
                    generation_config=config,
                    logits_processor=processors,
                    stopping_criteria=StoppingCriteriaList([watch]),
                )
            sequences = output.sequences
            added = sequences.shape[1] - input_ids.shape[1]
            budget -= added
            for batch_row, row in enumerate(live):
                new_tokens[row].extend(sequences[batch_row, input_ids.shape[1] :].tolist())
            keep = [batch_row for batch_row in range(len(live)) if not watch.finished[batch_row]]
            if budget <= 0 or not keep:
                return new_tokens
            index = torch.tensor(keep, device=self.device)
            attention = torch.cat(
                [attention, attention.new_ones((attention.shape[0], added))], dim=1
            )[index]
            input_ids = sequences[index]
            cache = output.past_key_values
            if cache is not None:  # a model without a cache recomputes from the tokens
                cache.reorder_cache(index)
            live = [live[batch_row] for batch_row in keep]


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


class _UntilARowFinishes:
    """Ends a `generate` call at the first step where some row finishes, and records which rows
    did in `finished`: a row finishes with EOS or once its new text contains a stop sequence.
    Only each row's last few tokens are decoded (a stop sequence of c characters lies within the
    last c + 1 tokens); `generate(stop_strings=...)` costs seconds per call with some
    tokenizers."""

    def __init__(
        self, tokenizer: Any, stop: Sequence[str], eos: frozenset[int], prompt_width: int
    ) -> None:
        self.tokenizer = tokenizer
        self.stop = tuple(stop)
        self.eos = eos
        self.prompt_width = prompt_width
        self.window = max((len(s) for s in stop), default=0) + 1
        self.finished: list[bool] = []

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch  # lazy: heavy, needed only once a model is loaded

        done = [token in self.eos for token in input_ids[:, -1].tolist()]
        if self.stop:
            new = input_ids[:, self.prompt_width :]
            tails = self.tokenizer.batch_decode(new[:, -self.window :], skip_special_tokens=True)
            done = [
                d or any(s in tail for s in self.stop) for d, tail in zip(done, tails, strict=True)
            ]
        self.finished = done
        # All rows or none: `generate` returns as soon as one row is done, so the caller can
        # drop it from the batch.
        return torch.full((len(done),), any(done), dtype=torch.bool, device=input_ids.device)
