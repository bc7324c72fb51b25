"""Similarity between an original challenge and a perturbed one, from their log-probabilities.

The paper (section 5.2, Table 2) reports a "log probability similarity" in percent whose formula
did not survive in the text. Ours is the relative change of the critic's log-probability,
measured against the original:

    similarity = 100 * max(0, 1 - |LP(perturbed) - LP(original)| / |LP(original)|)

where LP is the total log-probability of the prompt (`similarity`) or its mean per token
(`similarity_per_token`). Why this form:

- it is 100 exactly when the critic finds the variant as plausible as the original and falls
  as the log-probability moves away in *either* direction: a variant the critic finds much less
  plausible (ungrammatical, lost context) and one that is much shorter (most tokens removed,
  which raises the total) both leave the local neighbourhood the critic test assumes;
- dividing by the original's own log-probability makes long and short challenges comparable,
  so a mean over HumanEval and MBPP challenges means something;
- it is the scale the paper's numbers live on: renaming a function moves a prompt's
  log-probability by a percent or two (paper: 98.5 %), dropping unrecoverable keywords by tens
  of percent (paper: about 80 %).

The total measures the whole change, including tokens that disappeared; the per-token variant
factors length out and measures how surprising the remaining text became. Both are reported
everywhere; the plausibility gate uses the one the user picks (`similarity`, the total, by default, as
the paper).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl
from benchmarks.problem import Block

# One name per measure everywhere (configs, flags, critic files, reports): the field name in the
# critic's output. The short names of earlier configs are still accepted.
MEASURES = ("similarity", "similarity_per_token")
MEASURE_ALIASES = {"total": "similarity", "per_token": "similarity_per_token"}


def canonical_measure(name: str) -> str:
    """`name` as one of MEASURES (accepting the older total / per_token), or a UserError."""
    measure = MEASURE_ALIASES.get(name, name)
    if measure not in MEASURES:
        raise UserError(f"critic measure {name!r} is unknown; use {' or '.join(MEASURES)}.")
    return measure


def log_prob_similarity(original: float, perturbed: float) -> float:
    """100 * max(0, 1 - |perturbed - original| / |original|) for two log-probabilities (<= 0)."""
    if original == 0.0:
        return 100.0 if perturbed == 0.0 else 0.0
    return 100.0 * max(0.0, 1.0 - abs(perturbed - original) / abs(original))


@dataclass(frozen=True)
class ScoreSummary:
    """What the critic keeps of a scored prompt: enough to compare it with another one."""

    logprob: float
    tokens: int
    blocks: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    truncated_tokens: int = 0

    @property
    def per_token(self) -> float:
        return self.logprob / self.tokens if self.tokens else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "logprob": self.logprob,
            "tokens": self.tokens,
            "logprob_per_token": self.per_token,
            "blocks": {k: dict(v) for k, v in self.blocks.items()},
            "truncated_tokens": self.truncated_tokens,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ScoreSummary:
        return cls(
            logprob=float(obj["logprob"]),
            tokens=int(obj["tokens"]),
            blocks=obj.get("blocks") or {},
            truncated_tokens=int(obj.get("truncated_tokens") or 0),
        )


def block_logprobs(
    blocks: Sequence[Block] | None,
    logprobs: Sequence[float],
    offsets: Sequence[tuple[int, int]],
) -> dict[str, dict[str, float]]:
    """Per-block sums: each token counts for the block its first character lies in.

    A token that straddles a boundary (a space glued to the next word, say) belongs to the
    block where it starts, so every token is counted exactly once and the block sums add up to
    the total.
    """
    if not blocks:
        return {}
    starts, kinds, position = [], [], 0
    for block in blocks:
        starts.append(position)
        kinds.append(block.kind)
        position += len(block.text)
    out: dict[str, dict[str, float]] = {}
    index = 0
    for lp, (start, _end) in sorted(zip(logprobs, offsets, strict=True), key=lambda t: t[1][0]):
        while index + 1 < len(starts) and starts[index + 1] <= start:
            index += 1
        entry = out.setdefault(kinds[index], {"logprob": 0.0, "tokens": 0})
        entry["logprob"] += lp
        entry["tokens"] += 1
    return out


def compare(original: ScoreSummary, perturbed: ScoreSummary) -> dict[str, Any]:
    """Similarities (total and per token) and where the log-probability changed, by block."""
    kinds = list(dict.fromkeys([*original.blocks, *perturbed.blocks]))
    block_delta = {
        kind: perturbed.blocks.get(kind, {}).get("logprob", 0.0)
        - original.blocks.get(kind, {}).get("logprob", 0.0)
        for kind in kinds
    }
    return {
        "similarity": log_prob_similarity(original.logprob, perturbed.logprob),
        "similarity_per_token": log_prob_similarity(original.per_token, perturbed.per_token),
        "logprob_delta": perturbed.logprob - original.logprob,
        "block_delta": block_delta,
    }


@dataclass(frozen=True)
class PlausibilityGate:
    """Rejects variants the critic finds too far from their original."""

    min_similarity: float = field(
        default=90.0, metadata={"help": "lowest similarity (percent) a variant may have"}
    )
    measure: str = field(
        default="similarity",
        metadata={"help": "similarity (total log-probability) or similarity_per_token"},
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "measure", canonical_measure(self.measure))
        if not (0.0 <= self.min_similarity <= 100.0) or math.isnan(self.min_similarity):
            raise UserError(
                f"min similarity {self.min_similarity} is outside 0-100; give a percentage."
            )

    def judge(
        self, original: ScoreSummary, perturbed: ScoreSummary, comparison: Mapping[str, Any]
    ) -> tuple[str, str]:
        """("accept" | "reject", reason)."""
        if original.truncated_tokens or perturbed.truncated_tokens:
            return (
                "reject",
                "a prompt was cut to fit the model's context, so the two scores cover different text",
            )
        key = self.measure
        value = comparison[key]
        if value < self.min_similarity:
            return (
                "reject",
                f"{key.replace('_', ' ')} {value:.1f} % is below the gate's {self.min_similarity:g} %",
            )
        return "accept", f"{key.replace('_', ' ')} {value:.1f} % >= {self.min_similarity:g} %"


def read_similarities(
    path: str | os.PathLike[str], measure: str = "similarity"
) -> dict[str, float]:
    """Variant task id -> critic similarity (percent) from a `boi critic` output file.

    `measure` is `similarity` (total log-probability) or `similarity_per_token` (see MEASURES).
    """
    measure = canonical_measure(measure)
    out: dict[str, float] = {}
    for lineno, obj in iter_jsonl(path):
        fields = obj.get("critic")
        if not isinstance(fields, Mapping) or "task_id" not in obj:
            raise UserError(
                f"{path} line {lineno} has no critic fields; pass the output of boi critic."
            )
        if fields.get("original") is True:
            continue
        if not isinstance(fields.get(measure), int | float):
            raise UserError(f"{path} line {lineno}: the critic record has no numeric {measure!r}.")
        out[obj["task_id"]] = float(fields[measure])
    return out
