"""An ablation's config (a base `boi bias test` config, a kind and its axis) and its plan: the
sub-runs, one per axis point (and, for repeated runs, per seed)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.config import from_mapping, load_config, resolve_config_path, to_dict
from benchmarks.common.errors import UserError, suggest
from bias import BUNDLED_CONFIGS

# The built-in ablations register themselves when imported: before ExperimentConfig's help
# lists the kinds, and in the order the papers' tables are listed (Solar's, then Huang's).
# isort: off
from bias.fairness_tests.ablations import solar  # noqa: F401
from bias.fairness_tests.ablations import huang  # noqa: F401
from bias.fairness_tests.ablations.self_detection import DetectionConfig

# isort: on
from bias.fairness_tests.ablations._registry import ABLATIONS, axis_label, reference_label
from bias.fairness_tests.run import FairnessRunConfig

T_TESTS = ("welch", "student")
TEST_UNITS = ("task", "completion", "run")


@dataclass(frozen=True)
class ExperimentConfig:
    """One paper experiment: a base test config, the kind and its axis."""

    kind: str = field(default="", metadata={"help": f"the experiment: {', '.join(ABLATIONS)}"})
    axis: list[Any] = field(
        default_factory=list,
        metadata={
            "help": "temperatures, prompt strategies, question forms or value pools (by kind)"
        },
    )
    base: dict[str, Any] = field(
        default_factory=dict,
        metadata={"help": "the boi bias test config every sub-run starts from"},
    )
    out_dir: str = field(default="runs/bias-experiment", metadata={"help": "the experiment dir"})
    reference: Any = field(
        default=None,
        metadata={
            "help": "the axis value the others are compared with (default: temperature 1.0 or "
            "the first value; value pools: the last)"
        },
    )
    t_test: str = field(default="welch", metadata={"help": "welch (Solar's artifact) or student"})
    test_unit: str = field(
        default="task",
        metadata={"help": "t-test observations: task (Solar's artifact), completion or run"},
    )
    alpha: float = field(default=0.05, metadata={"help": "significance level of the stars"})
    detection: DetectionConfig = field(default_factory=DetectionConfig)
    similarity_model: str = field(
        default="embedded",
        metadata={"help": "huang_prompt: sentence embedder of Table 12 ('' skips it)"},
    )
    title: str = field(default="", metadata={"help": "heading of experiment.md"})

    def __post_init__(self) -> None:
        ablation = ABLATIONS.load(self.kind)
        axis = ablation.axis
        if not self.axis:
            raise UserError(
                f"the {self.kind} experiment has an empty axis; list {ablation.what}, e.g. "
                f"axis: {ablation.example}."
            )
        if self.t_test not in T_TESTS:
            raise UserError(f"t_test is {self.t_test!r}; use {' or '.join(T_TESTS)}.")
        if self.test_unit not in TEST_UNITS:
            raise UserError(f"test_unit is {self.test_unit!r}; use {', '.join(TEST_UNITS)}.")
        if not 0 < self.alpha < 1:
            raise UserError(f"alpha is {self.alpha!r}; use a level between 0 and 1, e.g. 0.05.")
        labels = [axis.label(value) for value in self.axis]
        repeated = [label for label, count in Counter(labels).items() if count > 1]
        if repeated:
            raise UserError(f"the axis lists {repeated[0]} twice; list each value once.")
        if axis.check is not None:
            for value in self.axis:
                axis.check(value)
        base = self.base_config()
        if axis.varies_sampling and base.completions:
            # A completions file is the same completions at every point: the sub-runs would
            # report identical rows under different settings.
            raise UserError(
                f"a {self.kind} experiment compares {axis.name}s, but base.completions "
                f"({base.completions}) holds fixed completions, the same at every {axis.name}; "
                "remove completions from the base config and give it a model to sample."
            )
        if self.test_unit == "run" and len(base.seeds) < 2 and ablation.repeated_runs:
            raise UserError(
                "test_unit run compares the CBS of repeated runs; give the base config at least "
                "two seeds, or use test_unit task."
            )
        axis.check_base(self.axis, base)
        if self.reference is not None and axis.label(self.reference) not in labels:
            raise UserError(
                f"reference {self.reference!r} is not on the axis; use one of {', '.join(labels)}."
            )

    def base_config(self, **changes: Any) -> FairnessRunConfig:
        """The base test config with `changes` merged in (over the base's full form, so a
        partial `decoding` change keeps the test defaults), checked as `boi bias test` would."""
        mapping = {"out_dir": str(Path(self.out_dir) / "base"), **self.base}
        base = from_mapping(FairnessRunConfig, mapping, "base")
        if not changes:
            return base
        return from_mapping(FairnessRunConfig, deep_merge(to_dict(base), changes), "base")


def deep_merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `changes` on top; nested mappings are merged key by key."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def resolve_experiment_path(name_or_path: str) -> str:
    """A bundled experiment config name (`exp-solar-temperature`) or a path, as a path."""
    resolved = resolve_config_path(name_or_path, BUNDLED_CONFIGS)
    if not resolved or not Path(resolved).is_file():
        bundled = sorted(p.stem for p in BUNDLED_CONFIGS.glob("exp-*.yaml"))
        raise UserError(
            f"experiment config {name_or_path!r} is neither a file nor a bundled config"
            f"{suggest(name_or_path, bundled)}; bundled: {', '.join(bundled)}."
        )
    return resolved


def load_experiment_config(
    name_or_path: str, *, data: str | None = None, out: str | None = None
) -> ExperimentConfig:
    """The experiment config of a bundled name or a YAML path; `data` sets the base config's
    data, `out` the experiment directory."""
    path = resolve_experiment_path(name_or_path)
    config = load_config(ExperimentConfig, path, {"out_dir": out})
    if data is not None:
        config = dataclasses.replace(config, base={**config.base, "data": data})
    return config


# --------------------------------------------------------------------------- sub-runs


@dataclass(frozen=True)
class SubRun:
    """One point of the axis (and, for repeated runs, one seed): a `boi bias test` run
    directory."""

    label: str
    value: Any
    seed: int | None
    changes: dict[str, Any]


def plan_runs(config: ExperimentConfig) -> list[SubRun]:
    """The sub-runs of an experiment, in order."""
    ablation = ABLATIONS[config.kind]
    if ablation.axis.changes is None:  # one test run; the axis applies afterwards
        return [SubRun("test", "test", None, {})]
    base = config.base_config()
    seeds: Sequence[int | None] = base.seeds if ablation.repeated_runs else (None,)
    reference = reference_label(config)
    runs = []
    for value in config.axis:
        label = axis_label(config.kind, value)
        changes = ablation.axis.changes(value, base, label == reference)
        for seed in seeds:
            run_changes = dict(changes)
            run_label = label
            if seed is not None:
                run_changes["seeds"] = [seed]
                run_label = f"{label}-seed{seed}" if len(seeds) > 1 else label
            runs.append(SubRun(run_label, value, seed, run_changes))
    return runs
