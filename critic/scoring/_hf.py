"""The local scorer: a transformers causal LM (the embedded SmolLM2 by default), CPU or GPU,
with batching, prefix sharing and a bounded vocabulary projection (see `critic.scoring`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.models import load_causal_lm
from critic.scoring._base import PromptScore, check_prompts


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
        check_prompts(prompts)
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

        check_prompts(prompts)
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
