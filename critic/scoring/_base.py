"""What every critic scorer shares: the `Scorer` protocol, `PromptScore` (what a scorer returns),
the check that no prompt is empty, and the registry of scorers (`SCORERS`, `load_scorer`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from benchmarks.common.config import from_mapping
from benchmarks.common.errors import UserError
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


def check_prompts(prompts: Sequence[str]) -> None:
    for index, prompt in enumerate(prompts):
        if not isinstance(prompt, str) or not prompt.strip():
            raise EmptyPromptError(index)


class ScorerClass(Protocol):
    """What `SCORERS` holds: a scorer class, with its `Config` dataclass, built from one."""

    Config: type

    def __call__(self, config: Any) -> Scorer: ...


SCORERS: Registry[ScorerClass] = Registry(
    "critic scorer",
    {"hf": "critic.scoring._hf:HFScorer", "endpoint": "critic.scoring._endpoint:EndpointScorer"},
    base=Scorer,
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
