"""Apply the transformation catalogue to a dataset: split, find keywords once, transform."""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import write_jsonl
from benchmarks.common.progress import progress_bar
from benchmarks.common.provenance import write_output_manifest
from benchmarks.problem import LineageStep, Problem
from perturb.blocks import split_dataset
from perturb.keyword_file import KEYWORD_FILE_HELP, pinned_keywords
from perturb.keywords import Embedder, KeywordAnalysis, KeywordConfig, analyze_keywords
from perturb.transforms import (
    CATALOGUE,
    PROBES,
    TRANSFORMS,
    NotApplicable,
    Transform,
    bind_transforms,
)


@dataclass(frozen=True)
class PerturbConfig:
    """What `boi perturb` (and the runner) applies."""

    transforms: tuple[str, ...] = field(
        default=CATALOGUE,
        metadata={
            "help": "catalogue entries to apply, in order (see `boi perturb --list`)",
            "names": True,
        },
    )
    anonymous_name: str = field(
        default="func",
        metadata={
            "help": "the name Anonymize gives the function (the paper also tried action, "
            "do_stuff, XYZ); fills `name` for every transformation that takes one unless "
            "params sets it"
        },
    )
    seed: int = field(
        default=0,
        metadata={"help": "run seed; a transformation's randomness is Random((seed, task, name))"},
    )
    keywords: KeywordConfig = field(default_factory=KeywordConfig)
    keep_unchanged: bool = field(
        default=True,
        metadata={
            "help": "where a transformation does not apply, emit the problem unchanged as its "
            "variant (lineage says why), so every transformation covers every problem, as in "
            "the paper's tables; its prompt is the original's, so the runner generates it "
            "once. False: no variant"
        },
    )
    params: dict[str, dict[str, Any]] = field(
        default_factory=dict,
        metadata={
            "help": "transformation name -> parameter overrides, e.g. {anonymize: {name: XYZ}} "
            "(`boi perturb --list` shows each one's parameters)"
        },
    )
    random_seeds: int = field(
        default=1,
        metadata={
            "help": "variants of each stochastic transformation (typos, synonyms, dead code, "
            "...): one per seed seed, seed+1, ... (ReCode releases 10, s0..s9); the report "
            "takes the worst case over them. Deterministic transformations get one"
        },
    )
    keyword_file: str | None = field(default=None, metadata={"help": KEYWORD_FILE_HELP})

    def __post_init__(self) -> None:
        if self.random_seeds < 1:
            raise UserError(
                f"random_seeds {self.random_seeds} is below 1; use 1, or 10 as ReCode does."
            )
        self.bound()  # unknown names, parameters and repeats are UserErrors with a suggestion

    def bound(self) -> list[Transform]:
        """The configured transformations, bound to their parameters."""
        return bind_transforms(self.transforms, self.params, self.anonymous_name)


def parse_param_overrides(items: Iterable[str]) -> dict[str, dict[str, Any]]:
    """`TRANSFORM.PARAM=VALUE` strings (values read as YAML scalars) as `PerturbConfig.params`.

    Only the syntax is checked here; `PerturbConfig` checks the names and the values' types.
    """
    params: dict[str, dict[str, Any]] = {}
    for item in items:
        key, equals, text = item.partition("=")
        name, dot, param = key.strip().partition(".")
        if not equals or not dot or not name or not param:
            raise UserError(
                f"--param {item!r} is not TRANSFORM.PARAM=VALUE; write e.g. anonymize.name=XYZ."
            )
        try:
            value = yaml.safe_load(text) if text.strip() else text
        except yaml.YAMLError:
            value = text  # not YAML (an unbalanced quote, say): the text as it is
        params.setdefault(name, {})[param] = value
    return params


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

    def provenance(self) -> dict[str, Any]:
        """What an output of these variants records about them beside the shared provenance:
        the per-transformation summary and the problems that could not be split."""
        return {"summary": self.summary(), "split_failures": dict(self.split_failures)}


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
        if config.keyword_file is not None:  # pinned picks: no keyword model, no rules applied
            keywords = pinned_keywords(config.keyword_file, usable)
        else:
            keywords = {a.task_id: a for a in analyze_keywords(usable, config.keywords, embedder)}
    variants, not_applied = [], []
    update = progress_bar(len(usable), "transform", unit="problem")
    for done, problem in enumerate(usable, start=1):
        for transform in transforms:
            seeded = transform.stochastic and config.random_seeds > 1
            for tag in range(config.random_seeds if seeded else 1):
                seed, seed_tag = config.seed + tag, (tag if seeded else None)
                outcome = transform(problem, keywords.get(problem.task_id), seed, seed_tag)
                if isinstance(outcome, NotApplicable):
                    if tag == 0:  # the reason is the problem's, not the seed's: said once
                        not_applied.append((problem.task_id, transform.name, outcome.reason))
                    if (
                        config.keep_unchanged
                        and outcome.keep_unchanged
                        and transform.name not in PROBES
                    ):
                        variants.append(
                            unchanged_variant(problem, transform, outcome.reason, seed, seed_tag)
                        )
                else:
                    variants.extend(outcome)
        update(done, len(usable))
    return CatalogueResult(variants, not_applied, keywords, split.failures)


def write_catalogue(
    result: CatalogueResult,
    out: str | os.PathLike[str],
    config: PerturbConfig,
    *,
    inputs: Mapping[str, str | os.PathLike[str] | None] | None = None,
) -> Path:
    """Write `result`'s variants to `out` (JSONL, the `boi perturb` format) and their provenance
    beside it as `OUT.manifest.json` (`benchmarks.common.provenance.write_output_manifest`: the
    config, the `inputs` files' hashes, versions, git, ..., and `result.provenance()`); returns
    the manifest's path. `--format recode` writes through `perturb.recode.interop.write_recode`.
    """
    write_jsonl(out, (variant.to_json() for variant in result.variants))
    return write_output_manifest(
        out, dataclasses.asdict(config), inputs=inputs, record=result.provenance()
    )


def unchanged_variant(
    problem: Problem, transform: Transform, reason: str, seed: int, seed_tag: int | None = None
) -> Problem:
    """`problem` as the variant of a transformation that did not apply to it."""
    step = LineageStep(
        transform.name, transform.version, transform.params, seed, {"unchanged": reason}
    )
    suffix = f"@s{seed_tag}" if seed_tag is not None else ""
    return problem.replace(
        task_id=f"{problem.task_id}::{transform.name}{suffix}", lineage=problem.lineage + (step,)
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
    return {name: factory.description for name, factory in TRANSFORMS.items()}
