"""Log-probability of prompts under a causal LM: the critic's raw measurement.

A scorer turns prompts into `PromptScore`s: the log-probability of every scored token with the
character span it covers, so totals, per-token means and per-block sums all come from the same
numbers. Two backends:

- `HFScorer`: a local transformers model (the embedded SmolLM2 by default), CPU or GPU,
  float32 or bfloat16. Prompts are batched (padding + attention mask), identical prompts are
  scored once, and prompts that share a long token prefix (an original and its variants) run
  that prefix once and reuse its key/value cache. Only the log-probability of each target token
  is kept: the vocabulary projection runs on a bounded number of positions at a time, so memory
  stays flat on long prompts and large vocabularies.
- `EndpointScorer`: an OpenAI-compatible `/v1/completions` endpoint that echoes prompt
  log-probabilities (`echo` + `logprobs`, as vLLM and llama-cpp-python servers do), for models
  too large to run here, through the one HTTP client (`benchmarks.common.http`: 429/5xx,
  timeouts and dropped connections are retried with backoff). It sends a list of prompts per
  request where the server takes one (vLLM) and one prompt per request where it does not
  (llama-cpp-python), learning which from the first request, with a bounded number of requests
  in flight. The echo is checked, not trusted: the echoed tokens must spell the prompt, every
  log-probability must be one, and they must belong to the tokens they are echoed with (not to
  the next position), else a UserError names the endpoint and what is wrong. The API key is
  read from an environment variable and never logged.

`SCORERS` names them ("hf", "endpoint"); each scorer class declares its `Config` dataclass, and
`load_scorer(name, config)` builds one from a config or a mapping.

Every token is scored given what precedes it; the first token is scored given the model's
start token (BOS, else EOS) when the tokenizer has one. Prompts longer than the model's context
are truncated from the left with a warning: the score then covers only the kept tail, which
`PromptScore.truncated_tokens` records (the plausibility gate rejects such comparisons).
"""

from __future__ import annotations

import itertools
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchmarks.common.config import from_mapping
from benchmarks.common.errors import UserError
from benchmarks.common.http import RETRY_STATUS, HTTPStatusError, OpenAIClient
from benchmarks.common.models import load_causal_lm
from benchmarks.common.registry import Registry


class EmptyPromptError(UserError):
    """A prompt with no text: nothing to score. `index` is its position in the call."""

    def __init__(self, index: int) -> None:
        super().__init__(f"prompt {index} is empty; remove it or give it some text before scoring.")
        self.index = index


@dataclass(frozen=True)
class PromptScore:
    """Log-probabilities of one prompt's tokens; `offsets[i]` is token i's (start, end) in it."""

    logprobs: tuple[float, ...]
    offsets: tuple[tuple[int, int], ...]
    truncated_tokens: int = 0

    @property
    def total(self) -> float:
        return float(sum(self.logprobs))

    @property
    def n_tokens(self) -> int:
        return len(self.logprobs)

    @property
    def per_token(self) -> float:
        return self.total / self.n_tokens if self.logprobs else 0.0


class Scorer(Protocol):
    """Anything that scores prompts; `describe()` is what a run records about it."""

    def score(self, prompts: Sequence[str]) -> list[PromptScore]: ...

    def describe(self) -> dict[str, Any]: ...


def _check_prompts(prompts: Sequence[str]) -> None:
    for index, prompt in enumerate(prompts):
        if not isinstance(prompt, str) or not prompt.strip():
            raise EmptyPromptError(index)


# --------------------------------------------------------------------------- local HF models


@dataclass
class HFScorerConfig:
    """How a local transformers model scores prompts."""

    model: str | None = field(
        default=None,
        metadata={"help": "HF id, local folder, or None/'embedded' for the embedded SmolLM2"},
    )
    device: str = field(default="cpu", metadata={"help": "torch device: cpu, cuda, cuda:1, ..."})
    dtype: str = field(default="float32", metadata={"help": "float32 or bfloat16"})
    batch_tokens: int = field(
        default=4096, metadata={"help": "most padded tokens per forward pass (bounds memory)"}
    )
    max_batch: int = field(default=32, metadata={"help": "most prompts per forward pass"})
    head_chunk: int = field(
        default=256,
        metadata={"help": "positions per vocabulary projection (bounds the logits' memory)"},
    )
    share_prefixes: bool = field(
        default=True,
        metadata={"help": "run a token prefix shared by several prompts once (same scores)"},
    )
    min_shared_prefix: int = field(
        default=32, metadata={"help": "shortest shared prefix (tokens) worth reusing"}
    )
    max_length: int | None = field(
        default=None,
        metadata={
            "help": "context length; longer prompts are cut from the left (default: model's)"
        },
    )

    def __post_init__(self) -> None:
        if self.dtype not in ("float32", "bfloat16"):
            raise UserError(f"dtype {self.dtype!r} is not supported; use float32 or bfloat16.")
        for name in ("batch_tokens", "max_batch", "head_chunk", "min_shared_prefix"):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be at least 1 (got {getattr(self, name)}).")
        if self.max_length is not None and self.max_length < 2:
            raise UserError(f"max_length must be at least 2 tokens (got {self.max_length}).")


@dataclass
class _Encoded:
    ids: list[int]  # what the model reads (start token first when there is one)
    offsets: list[tuple[int, int]]  # span of ids[i]; the start token has (0, 0)
    first_scored: int  # index in ids of the first scored token
    truncated: int


class HFScorer:
    """Scores prompts with a local transformers causal LM (see the module docstring)."""

    Config = HFScorerConfig

    def __init__(
        self, config: HFScorerConfig | None = None, *, model: Any = None, tokenizer: Any = None
    ) -> None:
        self.config = config or HFScorerConfig()
        if model is None or tokenizer is None:
            model, tokenizer = load_causal_lm(
                self.config.model, dtype=self.config.dtype, device=self.config.device
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        if not getattr(tokenizer, "is_fast", False):
            raise UserError(
                "the critic needs a fast (Rust) tokenizer for character offsets; the model's "
                "tokenizer is a slow one: use a model folder with tokenizer.json."
            )
        start = (
            tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        )
        self.start_token_id: int | None = start
        limit = self.config.max_length or getattr(model.config, "max_position_embeddings", None)
        self.max_length = int(limit or 2048)
        self.pad_id = 0 if tokenizer.pad_token_id is None else int(tokenizer.pad_token_id)

    # ----- public
    def describe(self) -> dict[str, Any]:
        return {
            "backend": "hf",
            "model": str(getattr(self.model.config, "_name_or_path", self.config.model)),
            "model_arg": self.config.model,
            "dtype": self.config.dtype,
            "device": self.config.device,
            "start_token_id": self.start_token_id,
            "max_length": self.max_length,
        }

    def score(self, prompts: Sequence[str]) -> list[PromptScore]:
        """Scores for `prompts`, in order, batched (see `HFScorerConfig`)."""
        _check_prompts(prompts)
        unique = list(dict.fromkeys(prompts))
        encoded = [self.encode(p) for p in unique]
        token_lps: list[list[float] | None] = [None] * len(encoded)
        singles = list(range(len(encoded)))
        if self.config.share_prefixes:
            groups, singles = self._prefix_groups(encoded)
            for prefix_len, members in groups:
                for index, lps in zip(
                    members, self._score_group(encoded, members, prefix_len), strict=True
                ):
                    token_lps[index] = lps
        for batch in self._batches(encoded, singles):
            for index, lps in zip(
                batch, self._score_batch([encoded[i].ids for i in batch]), strict=True
            ):
                token_lps[index] = lps
        by_prompt = {}
        for prompt, enc, scored in zip(unique, encoded, token_lps, strict=True):
            assert scored is not None
            by_prompt[prompt] = PromptScore(
                logprobs=tuple(scored[enc.first_scored - 1 :]),
                offsets=tuple(enc.offsets[enc.first_scored :]),
                truncated_tokens=enc.truncated,
            )
        return [by_prompt[p] for p in prompts]

    def score_one_at_a_time(self, prompts: Sequence[str]) -> list[PromptScore]:
        """The naive reference: one full forward pass per prompt, full log-softmax, no reuse.

        Kept for the benchmark and the tests that check the batched path against it.
        """
        import torch

        _check_prompts(prompts)
        scores = []
        with torch.inference_mode():
            for prompt in prompts:
                enc = self.encode(prompt)
                ids = torch.tensor([enc.ids], device=self.model.device)
                logits = self.model(input_ids=ids).logits[0, :-1].float()
                lps = torch.log_softmax(logits, dim=-1).gather(-1, ids[0, 1:, None])[:, 0]
                scores.append(
                    PromptScore(
                        logprobs=tuple(lps[enc.first_scored - 1 :].tolist()),
                        offsets=tuple(enc.offsets[enc.first_scored :]),
                        truncated_tokens=enc.truncated,
                    )
                )
        return scores

    def encode(self, prompt: str) -> _Encoded:
        """Token ids and character spans of `prompt`, with the start token and truncation."""
        enc = self.tokenizer(prompt, add_special_tokens=False, return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        offsets = [tuple(o) for o in enc["offset_mapping"]]
        if self.start_token_id is not None:
            ids = [self.start_token_id] + ids
            offsets = [(0, 0)] + offsets
        truncated = max(0, len(ids) - self.max_length)
        if truncated:
            warnings.warn(
                f"a prompt of {len(ids)} tokens exceeds the model's context of {self.max_length}; "
                f"its first {truncated} tokens are dropped and not scored.",
                stacklevel=3,
            )
            ids, offsets = ids[truncated:], offsets[truncated:]
        if len(ids) < 2:
            raise UserError(
                "a one-token prompt cannot be scored by a model without a start (BOS/EOS) token; "
                "give it more text or use another model."
            )
        return _Encoded(ids, offsets, 1, truncated)

    # ----- batching
    def _batches(self, encoded: list[_Encoded], indices: list[int]) -> list[list[int]]:
        """Index batches of similar length (little padding) under the token budget."""
        order = sorted(indices, key=lambda i: len(encoded[i].ids))
        batches: list[list[int]] = []
        current: list[int] = []
        for index in order:
            width = len(encoded[index].ids)
            if current and (
                len(current) >= self.config.max_batch
                or width * (len(current) + 1) > self.config.batch_tokens
            ):
                batches.append(current)
                current = []
            current.append(index)
        if current:
            batches.append(current)
        return batches

    def _prefix_groups(
        self, encoded: list[_Encoded]
    ) -> tuple[list[tuple[int, list[int]]], list[int]]:
        """Groups of prompts sharing a token prefix of at least `min_shared_prefix` tokens.

        Sorting the id sequences puts prompts with a common prefix side by side; a group grows
        while the common prefix stays long enough and the group fits the batch limits.
        """
        order = sorted(range(len(encoded)), key=lambda i: encoded[i].ids)
        groups: list[tuple[int, list[int]]] = []
        singles: list[int] = []
        current: list[int] = []
        shared = 0

        def flush() -> None:
            if len(current) > 1:
                groups.append((shared, list(current)))
            else:
                singles.extend(current)

        for index in order:
            ids = encoded[index].ids
            if current:
                common = min(shared, _common_prefix(encoded[current[-1]].ids, ids))
                # the last shared position must still be followed by a token in every member
                common = min(common, len(ids) - 1)
                widest_suffix = max(len(ids), *(len(encoded[i].ids) for i in current)) - common
                if (
                    common >= self.config.min_shared_prefix
                    and len(current) < self.config.max_batch
                    and (len(current) + 1) * widest_suffix <= self.config.batch_tokens
                ):
                    current.append(index)
                    shared = common
                    continue
                flush()
            current = [index]
            shared = len(ids) - 1
        if current:
            flush()
        return groups, singles

    # ----- forward passes
    def _target_logprobs(self, hidden: Any, targets: Any) -> Any:
        """log p(target) for hidden states [N, H] and target ids [N], a chunk of rows at a time."""
        import torch

        head = self.model.get_output_embeddings()
        out = torch.empty(targets.shape[0], dtype=torch.float32, device=hidden.device)
        for start in range(0, targets.shape[0], self.config.head_chunk):
            stop = start + self.config.head_chunk
            logits = self._postprocess_logits(head(hidden[start:stop]).float())
            out[start:stop] = logits.gather(-1, targets[start:stop, None])[:, 0] - torch.logsumexp(
                logits, dim=-1
            )
        return out

    def _postprocess_logits(self, logits: Any) -> Any:
        import torch

        cap = getattr(self.model.config, "final_logit_softcapping", None)
        if cap:
            logits = torch.tanh(logits / cap) * cap
        scale = getattr(self.model.config, "logit_scale", None)
        if isinstance(scale, int | float) and scale != 1:
            logits = logits * scale
        return logits

    def _decoder(self) -> Any:
        return getattr(self.model, self.model.base_model_prefix)

    def _score_batch(
        self, sequences: list[list[int]], padding_side: str = "right"
    ) -> list[list[float]]:
        """Token log-probs (for positions 1..n-1) of each id sequence, in one padded pass."""
        import torch

        device = self.model.device
        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            cols = slice(0, len(seq)) if padding_side == "right" else slice(width - len(seq), width)
            ids[row, cols] = torch.tensor(seq)
            mask[row, cols] = 1
        # Positions count real tokens only, so a left-padded row sees the same positions as a
        # right-padded one.
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        ids, mask, positions = ids.to(device), mask.to(device), positions.to(device)
        with torch.inference_mode():
            hidden = self._decoder()(
                input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False
            ).last_hidden_state
            # Predict position t+1 from position t wherever both are real tokens.
            predicts = (mask[:, :-1] * mask[:, 1:]).bool()
            lps = self._target_logprobs(hidden[:, :-1][predicts], ids[:, 1:][predicts])
        out, start = [], 0
        for seq in sequences:
            out.append(lps[start : start + len(seq) - 1].tolist())
            start += len(seq) - 1
        return out

    def _score_group(
        self, encoded: list[_Encoded], members: list[int], prefix_len: int
    ) -> list[list[float]]:
        """Score prompts that share their first `prefix_len` tokens: the prefix runs once and its
        key/value cache is copied to every member, which then runs only its own suffix."""
        import torch

        device = self.model.device
        prefix = torch.tensor([encoded[members[0]].ids[:prefix_len]], device=device)
        suffixes = [encoded[i].ids[prefix_len:] for i in members]
        width = max(len(s) for s in suffixes)
        ids = torch.full((len(members), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(members), prefix_len + width), dtype=torch.long)
        mask[:, :prefix_len] = 1
        for row, suffix in enumerate(suffixes):
            ids[row, : len(suffix)] = torch.tensor(suffix)
            mask[row, prefix_len : prefix_len + len(suffix)] = 1
        positions = torch.arange(prefix_len, prefix_len + width).expand(len(members), -1)
        ids, mask, positions = ids.to(device), mask.to(device), positions.to(device)
        decoder = self._decoder()
        with torch.inference_mode():
            first = decoder(input_ids=prefix, use_cache=True)
            prefix_hidden = first.last_hidden_state[0]
            cache = first.past_key_values
            cache.batch_repeat_interleave(len(members))
            hidden = decoder(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
            ).last_hidden_state
            prefix_lps = self._target_logprobs(prefix_hidden[:-1], prefix[0, 1:]).tolist()
            # The last prefix position predicts each member's first own token.
            last = prefix_hidden[-1:].expand(len(members), -1)
            boundary = self._target_logprobs(last, ids[:, 0]).tolist()
            real = mask[:, prefix_len:].bool()
            predicts = real[:, :-1] & real[:, 1:]
            suffix_lps = self._target_logprobs(hidden[:, :-1][predicts], ids[:, 1:][predicts])
        out, start = [], 0
        for row, suffix in enumerate(suffixes):
            n = len(suffix) - 1
            out.append(prefix_lps + [boundary[row]] + suffix_lps[start : start + n].tolist())
            start += n
        return out


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


# --------------------------------------------------------------------------- HTTP endpoint

BATCHING = ("auto", "list", "single")

# The most a log-probability may exceed 0: a token the model is sure of comes out of a float32
# log-softmax as +1e-7 or so; anything larger is not a log-probability.
LOGPROB_TOLERANCE = 1e-4

# A leading echoed token that covers no prompt text and is spelt like a special token ("<s>",
# "<|begin_of_text|>", "<bos>"): the start token vLLM echoes (with no log-probability).
_START_TOKEN = re.compile(r"<[^<>\s]{1,40}>")

# The shift check decides once this many echoed tokens have a top-1 prediction that is either
# the token itself or the next token; a call that ends with fewer decides on at least
# SHIFT_EVIDENCE_END of them (fewer prove nothing either way).
SHIFT_EVIDENCE = 16
SHIFT_EVIDENCE_END = 4

# What the first request (which learns whether the server takes a list) retries: not 500, which
# is how llama-cpp-python's server refuses a list of prompts.
_PROBE_RETRY = RETRY_STATUS - {500}


@dataclass
class EndpointScorerConfig:
    """An OpenAI-compatible completions endpoint that returns prompt log-probabilities."""

    url: str = field(metadata={"help": "base URL, e.g. http://127.0.0.1:8000/v1"})
    model: str = field(metadata={"help": "model name the server expects"})
    api_key_env: str = field(
        default="OPENAI_API_KEY", metadata={"help": "environment variable holding the API key"}
    )
    batch_size: int = field(
        default=16, metadata={"help": "prompts per request, where the server takes a list"}
    )
    batching: str = field(
        default="auto",
        metadata={
            "help": "auto (a list of prompts per request, falling back to one prompt per request "
            "when the server refuses lists, as llama.cpp's does), list, or single"
        },
    )
    concurrency: int = field(default=4, metadata={"help": "requests in flight at once"})
    max_tokens: int = field(
        default=1, metadata={"help": "tokens to generate (0 where the server allows it)"}
    )
    timeout_s: float = field(default=120.0, metadata={"help": "seconds to wait for a response"})
    retries: int = field(
        default=5, metadata={"help": "retries after 429, 5xx, timeouts or dropped connections"}
    )
    backoff_s: float = field(
        default=1.0, metadata={"help": "first retry delay; doubles each retry (capped at 60 s)"}
    )

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise UserError(f"endpoint URL {self.url!r} must start with http:// or https://.")
        if self.batching not in BATCHING:
            raise UserError(f"batching {self.batching!r} is unknown; use {', '.join(BATCHING)}.")
        if self.batch_size < 1 or self.concurrency < 1:
            raise UserError(
                f"batch_size and concurrency must be at least 1 (got {self.batch_size} and "
                f"{self.concurrency})."
            )
        if self.max_tokens < 0:
            raise UserError(f"max_tokens must be 0 or more (got {self.max_tokens}).")
        if self.retries < 0:
            raise UserError(f"retries must be 0 or more (got {self.retries}).")
        if self.timeout_s <= 0 or self.backoff_s < 0:
            raise UserError("timeout_s must be positive and backoff_s non-negative.")


@dataclass
class _ShiftCheck:
    """Whether a server's echoed log-probabilities belong to the tokens they are echoed with.

    A server that pairs each prompt token with the distribution of the *next* position
    (llama-cpp-python does, for a model whose GGUF adds no BOS token) returns numbers that look
    like log-probabilities and reconstruct the prompt, yet are not the prompt's. The echoed top-1
    token tells them apart: where it is the echoed token itself (`same`) the row predicted this
    position; where it is the next echoed token (`following`) the row predicted the next one.
    Any language model guesses right often enough for the two counts to differ widely.
    """

    same: int = 0
    following: int = 0
    settled: bool = False

    def check(self, url: str, *, final: bool) -> None:
        evidence = self.same + self.following
        if self.settled or evidence < (SHIFT_EVIDENCE_END if final else SHIFT_EVIDENCE):
            return
        if self.following > self.same:
            raise UserError(
                f"endpoint {url} echoes log-probabilities shifted by one token (in "
                f"{self.following} of {evidence} checked positions its top prediction is the "
                "prompt's next token, not the echoed one), so they are not the prompt's "
                "log-probabilities; llama-cpp-python does this for a model that adds no BOS "
                "token (start it with --kv_overrides tokenizer.ggml.add_bos_token=bool:true)."
            )
        self.settled = True


class EndpointScorer:
    """Scores prompts through `POST {url}/completions` with `echo` and `logprobs`.

    Batching: vLLM takes a list of prompts per request, llama-cpp-python's server one prompt (a
    list of several is an HTTP 500). With `batching: auto` the first request sends a list and
    learns which kind of server it is: if the list is refused (HTTP 500 or 4xx, not retried) or
    answered with the wrong number of choices, its first prompt goes alone as a plain string, and
    if that is answered the scorer sends one prompt per request from then on (`batching_used`,
    which `describe()` records; if the lone prompt fails too, that error is the answer). Either
    way up to `concurrency` requests are in flight at once.

    Validation: the echo is read, not trusted (`_read_echo`, `_ShiftCheck`); an answer that is
    not the prompt's log-probabilities is a UserError naming the endpoint and what is wrong.
    """

    Config = EndpointScorerConfig

    def __init__(self, config: EndpointScorerConfig) -> None:
        self.config = config
        # "list" or "single" once known: as configured, or learnt from the first request.
        self.batching_used: str | None = None if config.batching == "auto" else config.batching
        self._shift = _ShiftCheck()

    def describe(self) -> dict[str, Any]:
        # Never the key itself, only where it comes from. `batching_used` is None until a
        # request showed which kind of server this is (auto mode).
        return {
            "backend": "endpoint",
            "url": self.config.url,
            "model": self.config.model,
            "api_key_env": self.config.api_key_env,
            "max_tokens": self.config.max_tokens,
            "batching": self.config.batching,
            "batching_used": self.batching_used,
        }

    def client(self) -> OpenAIClient:
        """A client for the endpoint (close it, or use it as a context manager)."""
        return OpenAIClient(
            self.config.url,
            api_key_env=self.config.api_key_env,
            timeout_s=self.config.timeout_s,
            retries=self.config.retries,
            backoff_s=self.config.backoff_s,
            max_connections=self.config.concurrency,
        )

    def score(self, prompts: Sequence[str]) -> list[PromptScore]:
        _check_prompts(prompts)
        unique = list(dict.fromkeys(prompts))
        by_prompt: dict[str, PromptScore] = {}
        with self.client() as client:
            url = client.url("/completions")
            if self.batching_used is None and unique:
                by_prompt.update(self._probe(client, unique[: self.config.batch_size]))
            todo = [p for p in unique if p not in by_prompt]
            size = 1 if self.batching_used == "single" else self.config.batch_size
            groups = [todo[i : i + size] for i in range(0, len(todo), size)]
            with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
                futures = [
                    pool.submit(client.post_json, "/completions", self._body(group))
                    for group in groups
                ]
                try:
                    # Answers are read in request order, so the shift check sees the same
                    # evidence in the same order however the requests finished.
                    for group, future in zip(groups, futures, strict=True):
                        scores = self._parse(url, group, future.result())
                        by_prompt.update(zip(group, scores, strict=True))
                finally:
                    for future in futures:
                        future.cancel()
        self._shift.check(url, final=True)
        return [by_prompt[p] for p in prompts]

    def _body(self, prompts: list[str], as_list: bool | None = None) -> dict[str, Any]:
        if as_list is None:
            as_list = self.batching_used != "single"
        return {
            "model": self.config.model,
            # A plain string where lists are refused: that is what such servers take.
            "prompt": prompts if as_list else prompts[0],
            "max_tokens": self.config.max_tokens,
            "echo": True,
            "logprobs": 1,
            "temperature": 0.0,
        }

    def _probe(self, client: OpenAIClient, prompts: list[str]) -> dict[str, PromptScore]:
        """Score the first request's prompts and learn whether the server takes a list."""
        url = client.url("/completions")
        try:
            payload = client.post_json(
                "/completions", self._body(prompts, as_list=True), retry_status=_PROBE_RETRY
            )
        except HTTPStatusError as err:
            if err.status in _PROBE_RETRY:
                raise  # still failing after the retries: the server is unwell, not list-shy
        else:
            if _choices(payload, len(prompts)) is not None:
                if len(prompts) > 1:
                    self.batching_used = "list"
                return dict(zip(prompts, self._parse(url, prompts, payload), strict=True))
        payload = client.post_json("/completions", self._body(prompts[:1], as_list=False))
        # Known once the server answered, even if its echo is then refused.
        self.batching_used = "single"
        (score,) = self._parse(url, prompts[:1], payload)
        return {prompts[0]: score}

    def _parse(self, url: str, prompts: list[str], payload: Any) -> list[PromptScore]:
        choices = _choices(payload, len(prompts))
        if choices is None:
            got = payload.get("choices") if isinstance(payload, dict) else None
            raise UserError(
                f"endpoint {url} returned {len(got) if isinstance(got, list) else 'no'} "
                f"choices for {len(prompts)} prompts; it must answer each prompt with one choice "
                "(try batching: single)."
            )
        scores = []
        for prompt, choice in zip(prompts, choices, strict=True):
            score, same, following = _read_echo(url, prompt, choice.get("logprobs"))
            self._shift.same += same
            self._shift.following += following
            self._shift.check(url, final=False)
            scores.append(score)
        return scores


def _choices(payload: Any, n: int) -> list[dict[str, Any]] | None:
    """The answer's choices in prompt order, or None unless there is one (a dict) per prompt."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or len(choices) != n:
        return None
    if not all(isinstance(c, dict) for c in choices):
        return None
    return sorted(choices, key=lambda c: c.get("index", 0))


def _read_echo(url: str, prompt: str, logprobs: Any) -> tuple[PromptScore, int, int]:
    """The prompt's score from one choice's echoed `logprobs`, checked against the prompt; and
    the shift check's evidence (positions whose top-1 is this token, is the next token).

    What is allowed, because servers differ in how they echo, and nothing else:
    - a first token spelt like a special token ("<s>") that the prompt does not start with: the
      start token (vLLM echoes it; llama-cpp-python drops it); it is not scored;
    - one extra leading space on the first prompt token when the prompt has none: the dummy
      prefix a SentencePiece tokenizer adds;
    - tokens that are empty or hold U+FFFD: byte pieces of a multi-byte character that the
      server could not decode one token at a time; they may stand only for non-ASCII characters,
      and are given the span of the characters they stand for;
    - no log-probability (None) for the first echoed token, which has nothing to condition on.
    Every other echoed token must be the prompt's next characters, in order, and the echo must
    cover the whole prompt (what follows is the generated text, not scored); every
    log-probability must be a finite number at most 0 (LOGPROB_TOLERANCE for rounding). The
    server's `text_offset` is not used: vLLM counts an echoed start token's text in it.
    """
    texts = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if (
        not isinstance(texts, list)
        or not isinstance(values, list)
        or not values
        or len(texts) != len(values)
        or not all(isinstance(t, str) for t in texts)
    ):
        raise UserError(
            f"endpoint {url} returned no prompt log-probabilities; the server must support "
            "echo=true with logprobs (vLLM does; the OpenAI chat API does not)."
        )
    tops = logprobs.get("top_logprobs")
    if not isinstance(tops, list) or len(tops) != len(texts):
        tops = None  # optional: without it only the shift check is skipped
    spans = _align_echo(url, prompt, texts)
    lps: list[float] = []
    offsets: list[tuple[int, int]] = []
    for index, span in spans:
        value = values[index]
        if value is None and index == 0:
            continue
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise UserError(
                f"endpoint {url} echoed {value!r} as the log-probability of prompt token "
                f"{index} ({texts[index]!r}); every token after the first needs a number."
            )
        if not math.isfinite(value) or value > LOGPROB_TOLERANCE:
            raise UserError(
                f"endpoint {url} echoed {value!r} as the log-probability of prompt token "
                f"{index} ({texts[index]!r}), which no log-probability can be (they are finite "
                "and at most 0)."
            )
        lps.append(float(value))
        offsets.append(span)
    if not lps:
        raise UserError(
            f"endpoint {url} returned no log-probabilities for the prompt's tokens; check "
            "that it echoes the prompt."
        )
    same = following = 0
    if tops is not None:
        for (index, _), nxt in itertools.pairwise(spans):
            top = tops[index]
            here, after = texts[index], texts[nxt[0]]
            if not isinstance(top, dict) or not top or here == after:
                continue  # nothing to tell the two positions apart with
            numbers = {k: v for k, v in top.items() if isinstance(v, int | float)}
            best = max(numbers, key=numbers.__getitem__) if numbers else None
            same += best == here
            following += best == after
    return PromptScore(tuple(lps), tuple(offsets)), same, following


def _align_echo(url: str, prompt: str, texts: list[str]) -> list[tuple[int, tuple[int, int]]]:
    """(index into `texts`, character span) of every echoed prompt token, start token left out;
    see `_read_echo` for what is allowed. The echo ends where the prompt does."""
    cursor, index = 0, 0
    if texts and not prompt.startswith(texts[0]) and _START_TOKEN.fullmatch(texts[0]):
        index = 1
    first = index
    spans: list[tuple[int, tuple[int, int]]] = []
    pending: list[int] = []  # byte pieces waiting for the next whole token

    def flush(end: int) -> None:
        spans.extend((i, (cursor, end)) for i in pending)
        pending.clear()

    while index < len(texts) and cursor < len(prompt):
        text = texts[index]
        if text and prompt.startswith(text, cursor):
            flush(cursor)
            spans.append((index, (cursor, cursor + len(text))))
            cursor += len(text)
        elif (
            index == first
            and text.startswith(" ")
            and not prompt.startswith(" ")
            and len(text) > 1
            and prompt.startswith(text[1:])
        ):
            spans.append((index, (0, len(text) - 1)))
            cursor = len(text) - 1
        elif not text or "\ufffd" in text:
            pending.append(index)
        else:
            skip = _bytes_skipped(prompt, cursor, text) if pending else None
            if skip is not None:
                flush(cursor + skip)
                cursor += skip
                spans.append((index, (cursor, cursor + len(text))))
                cursor += len(text)
            elif pending and _all_multibyte(prompt[cursor:]):
                break  # the byte pieces end the prompt; this token is generated text
            else:
                raise UserError(
                    f"endpoint {url} echoed token {index} as {text!r} where the prompt has "
                    f"{prompt[cursor : cursor + len(text) + 8]!r} (character {cursor}), so its "
                    "log-probabilities are not of this prompt; check that it echoes the prompt."
                )
        index += 1
    if pending and cursor < len(prompt) and _all_multibyte(prompt[cursor:]):
        flush(len(prompt))
        cursor = len(prompt)
    if cursor < len(prompt) or pending:
        raise UserError(
            f"endpoint {url} echoed only the first {cursor} of the prompt's {len(prompt)} "
            "characters, so its log-probabilities are not of this prompt; check that it echoes "
            "the prompt (echo=true)."
        )
    return spans


def _all_multibyte(text: str) -> bool:
    return bool(text) and all(ord(c) > 0x7F for c in text)


def _bytes_skipped(prompt: str, cursor: int, text: str) -> int | None:
    """How many non-ASCII characters from `cursor` on byte pieces stand for, such that `text`
    follows them; None when no run of them does."""
    skip = 0
    while cursor + skip < len(prompt) and ord(prompt[cursor + skip]) > 0x7F:
        skip += 1
        if prompt.startswith(text, cursor + skip):
            return skip
    return None


# --------------------------------------------------------------------------- registry

SCORERS: Registry[type[Scorer]] = Registry(
    "critic scorer",
    {"hf": "critic.scoring:HFScorer", "endpoint": "critic.scoring:EndpointScorer"},
)


def load_scorer(name: str, config: Any = None, where: str = "scorer") -> Scorer:
    """The scorer `name` (a `SCORERS` entry) built from its `Config` instance, or from a mapping
    of its config keys (None: the config's defaults)."""
    cls = SCORERS.load(name)
    if config is None or isinstance(config, Mapping):
        config = from_mapping(cls.Config, config or {}, where)
    elif not isinstance(config, cls.Config):
        raise UserError(
            f"critic scorer {name!r} takes {cls.Config.__name__}, not {type(config).__name__}."
        )
    scorer: Scorer = cls(config)
    return scorer
