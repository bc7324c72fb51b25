"""The critic's block of a run's config (`critic:` in `boi run`'s YAML): whether the critic
scores every variant and gates the implausible ones before generation, with which scorer
(`SCORERS`), below which similarity and by which measure."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.config import from_mapping
from benchmarks.common.errors import UserError
from critic.scoring import SCORERS, HFScorerConfig
from critic.similarity import canonical_measure

__all__ = ["CriticSpec"]


@dataclass(frozen=True)
class CriticSpec:
    enabled: bool = field(
        default=False,
        metadata={
            "help": "score every variant with the LM critic and drop implausible ones before generation"
        },
    )
    kind: str = field(
        default="hf",
        metadata={
            "help": f"the critic scorer: {SCORERS.choices_help()} (hf: a local causal LM; "
            "endpoint: an OpenAI-compatible server that echoes prompt log-probabilities)"
        },
    )
    scorer: Any = field(
        default_factory=HFScorerConfig,
        metadata={
            "help": "the scorer's config: hf {model (HF id, path; None/embedded = SmolLM2-135M), "
            "batch_size, ...}; endpoint {url, model, batch_size, ...}"
        },
    )
    min_similarity: float = field(
        default=0.0,
        metadata={
            "help": "variants below this critic similarity (percent) are not generated (0: keep all, score only)"
        },
    )
    measure: str = field(
        default="similarity",
        metadata={"help": "similarity (total log-probability) or similarity_per_token"},
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "measure", canonical_measure(self.measure))
        config_class = SCORERS.load(self.kind).Config
        if isinstance(self.scorer, Mapping):
            object.__setattr__(
                self, "scorer", from_mapping(config_class, self.scorer, "critic.scorer")
            )
        elif not isinstance(self.scorer, config_class):
            keys = ", ".join(f.name for f in dataclasses.fields(config_class))
            raise UserError(
                f"critic.kind is {self.kind!r}: give critic.scorer as a mapping of its keys "
                f"({keys})."
            )
