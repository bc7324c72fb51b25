"""Apply the transformation catalogue to a dataset: split, find keywords once, transform."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks.errors import UserError
from benchmarks.problem import LineageStep, Problem
from perturb.blocks import split_dataset
from perturb.keywords import Embedder, KeywordAnalysis, KeywordConfig, analyze_keywords
from perturb.transforms import (
    CATALOGUE,
    PROBES,
    TRANSFORMS,
    NotApplicable,
    Transform,
    get_transform,
    transform_parameters,
)


@dataclass(frozen=True)
class PerturbConfig:
    """What `boi perturb` (and the runner) applies."""

    transforms: tuple[str, ...] = CATALOGUE
    """Catalogue entries to apply, in order (see `boi perturb --list`)."""
    anonymous_name: str = "func"
    """The name Anonymize gives the function (the paper also tried action, do_stuff, XYZ)."""
    seed: int = 0
    """Run seed; each transformation draws from Random((seed, task id, name))."""
    keywords: KeywordConfig = field(default_factory=KeywordConfig)
    keep_unchanged: bool = False
    """Where a transformation does not apply, emit the problem unchanged as its variant (lineage
    says why), so every transformation covers every problem, as in the paper's tables; its
    prompt is the original's, so the runner generates it once. Off: no variant."""

    def __post_init__(self) -> None:
        for name in self.transforms:
            get_transform(name)  # raises a UserError with a suggestion for unknown names
        if len(set(self.transforms)) != len(self.transforms):
            raise UserError(
                f"transforms {list(self.transforms)} name one transformation twice; list each once."
            )

    def bound(self) -> list[Transform]:
        """The configured transformations, bound to their parameters."""
        return [
            get_transform(
                n, **({"name": self.anonymous_name} if "name" in transform_parameters(n) else {})
            )
            for n in self.transforms
        ]


@dataclass
class CatalogueResult:
    variants: list[Problem]
    not_applied: list[tuple[str, str, str]]
    """(task id, transform, reason) for every transformation that did not apply."""
    keywords: dict[str, KeywordAnalysis]
    split_failures: dict[str, str]

    def summary(self) -> list[dict[str, object]]:
        """Per transformation: variants produced, problems where it did not apply."""
        produced = Counter(v.transform for v in self.variants)
        skipped = Counter(t for _, t, _ in self.not_applied)
        names = list(dict.fromkeys([*produced, *skipped]))
        return [{"transform": n, "variants": produced[n], "not_applied": skipped[n]} for n in names]


def run_catalogue(
    problems: Sequence[Problem],
    config: PerturbConfig | None = None,
    embedder: Embedder | None = None,
) -> CatalogueResult:
    """Every variant of every problem under the configured transformations.

    Problems that cannot be split are reported (`split_failures`) and skipped; the rest of the
    dataset is still processed.
    """
    config = config or PerturbConfig()
    transforms = config.bound()
    split = split_dataset(list(problems))
    usable = [p for p in split.problems if p.task_id not in split.failures]
    keywords: dict[str, KeywordAnalysis] = {}
    if any(t.needs_keywords for t in transforms) and usable:
        keywords = {a.task_id: a for a in analyze_keywords(usable, config.keywords, embedder)}
    variants, not_applied = [], []
    for problem in usable:
        for transform in transforms:
            outcome = transform(problem, keywords.get(problem.task_id), config.seed)
            if isinstance(outcome, NotApplicable):
                not_applied.append((problem.task_id, transform.name, outcome.reason))
                if config.keep_unchanged and transform.name not in PROBES:
                    variants.append(
                        unchanged_variant(problem, transform, outcome.reason, config.seed)
                    )
            else:
                variants.extend(outcome)
    return CatalogueResult(variants, not_applied, keywords, split.failures)


def unchanged_variant(problem: Problem, transform: Transform, reason: str, seed: int) -> Problem:
    """`problem` as the variant of a transformation that did not apply to it."""
    step = LineageStep(
        transform.name, transform.version, transform.params, seed, {"unchanged": reason}
    )
    return problem.replace(
        task_id=f"{problem.task_id}::{transform.name}", lineage=problem.lineage + (step,)
    )


def apply_catalogue(
    problems: Sequence[Problem],
    transforms: Sequence[str] = CATALOGUE,
    config: PerturbConfig | None = None,
    embedder: Embedder | None = None,
) -> list[Problem]:
    """The variants only (see `run_catalogue` for what did not apply and why)."""
    base = config or PerturbConfig()
    config = dataclasses.replace(base, transforms=tuple(transforms))
    return run_catalogue(problems, config, embedder).variants


def available_transforms() -> dict[str, str]:
    """name -> one-line description, for `--list` and docs."""
    return {name: factory().description for name, factory in TRANSFORMS.items()}
