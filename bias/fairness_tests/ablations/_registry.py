"""The ablations' registry: `@ablation(kind, axis=..., what=..., example=...)` on a table builder
registers one ablation; `ABLATIONS[kind]` is all the config, the plan and the driver know of it.

An `Axis` is what an ablation varies between its sub-runs (temperatures, prompt strategies, value
pools, question forms): how a value is labelled (the sub-run's directory), checked, and turned
into changes of the base `boi bias test` config, and which value the others are compared with.
The temperature and prompt-strategy axes are shared by both papers and live here; an axis of one
paper lives in its module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchmarks.common.errors import UserError
from benchmarks.common.registry import Registry
from benchmarks.common.rundir import path_slug
from bias import DATA_DIR
from bias.fairness_tests.mitigation import load_mitigations

if TYPE_CHECKING:
    from bias.fairness_tests.ablations._driver import RunData
    from bias.fairness_tests.ablations._plan import ExperimentConfig
    from bias.fairness_tests.run import FairnessRunConfig

PROMPT_VARIANTS = DATA_DIR / "prompt_variants.yaml"

Builder = Callable[["ExperimentConfig", Sequence["RunData"], Callable[[str], None]], dict[str, Any]]
"""`(config, runs, log) -> {"markdown": [sections], "tables": {...}, "notes": [...]}`: the
tables of one ablation from its finished sub-runs (`notes` optional)."""


def _slug(value: Any) -> str:
    return path_slug(str(value))


def _accept(values: Sequence[Any], base: FairnessRunConfig) -> None:
    return None


def _first(labels: Sequence[str]) -> str:
    return labels[0]


@dataclass(frozen=True)
class Axis:
    """What an ablation varies between its sub-runs.

    `label(value)`: the sub-run's name and directory. `check(value)`: refuse a value by itself
    (before the base config is read). `check_base(values, base)`: refuse values against the base
    test config. `changes(value, base, is_reference)`: the changes of the base config for one
    value; None: the ablation is one test run, and the axis applies afterwards.
    `default_reference(labels)`: the label the others are compared with when the config names
    none. `varies_sampling`: values change how completions are sampled, so a base config with
    fixed completions (`completions:`) is refused."""

    name: str
    label: Callable[[Any], str] = _slug
    check: Callable[[Any], None] | None = None
    check_base: Callable[[Sequence[Any], FairnessRunConfig], None] = _accept
    changes: Callable[[Any, FairnessRunConfig, bool], dict[str, Any]] | None = None
    default_reference: Callable[[Sequence[str]], str] = _first
    varies_sampling: bool = False


@dataclass(frozen=True)
class Ablation:
    """One registered ablation: its kind (the config's `kind:`), axis and table builder.

    `what` and `example` complete the error for an empty axis ("list {what}, e.g. axis:
    {example}"); `repeated_runs`: each seed of the base config is its own sub-run (and
    `test_unit: run` compares their CBS)."""

    kind: str
    axis: Axis
    what: str
    example: str
    build: Builder
    repeated_runs: bool = False


ABLATIONS: Registry[Ablation] = Registry("experiment kind", base=Ablation)
"""Every registered ablation, by kind, in the order registered."""


def ablation(
    kind: str, *, axis: Axis, what: str, example: str, repeated_runs: bool = False
) -> Callable[[Builder], Builder]:
    """Register the decorated table builder as the ablation `kind` (a kind already registered is
    an error naming both). Returns the builder unchanged."""

    def register(build: Builder) -> Builder:
        origin = f"{build.__module__}:{build.__qualname__}"
        ABLATIONS.register(
            kind, Ablation(kind, axis, what, example, build, repeated_runs), origin=origin
        )
        return build

    return register


# --------------------------------------------------------------------------- labels, reference


def axis_label(kind: str, value: Any) -> str:
    """The label of one axis value (a sub-run's directory name)."""
    return ABLATIONS[kind].axis.label(value)


def reference_label(config: ExperimentConfig) -> str:
    """The axis label the other points are compared with."""
    if config.reference is not None:
        return axis_label(config.kind, config.reference)
    labels = [axis_label(config.kind, value) for value in config.axis]
    return ABLATIONS[config.kind].axis.default_reference(labels)


def axis_value(config: ExperimentConfig, label: str) -> Any:
    """The axis value of a label."""
    return next(v for v in config.axis if axis_label(config.kind, v) == label)


# --------------------------------------------------------------------------- shared axes


def _temperature_label(value: Any) -> str:
    return f"T{float(value)}" if isinstance(value, int | float) else f"T{value}"


def _check_temperature(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise UserError(f"axis value {value!r} is not a temperature; use numbers of 0 or more.")


def _temperature_changes(value: Any, base: FairnessRunConfig, reference: bool) -> dict[str, Any]:
    return {"decoding": {"temperature": float(value)}}


def _temperature_reference(labels: Sequence[str]) -> str:
    return "T1.0" if "T1.0" in labels else labels[0]  # the papers' default (S:213, H:500)


TEMPERATURE = Axis(
    "temperature",
    label=_temperature_label,
    check=_check_temperature,
    changes=_temperature_changes,
    default_reference=_temperature_reference,
    varies_sampling=True,
)
"""Sampling temperatures (`decoding.temperature`); the reference is 1.0 where listed."""


def _check_strategies(values: Sequence[Any], base: FairnessRunConfig) -> None:
    strategies = load_mitigations(base.mitigation_file or str(PROMPT_VARIANTS))
    for value in values:
        strategies.strategy(str(value))  # a clear error for an unknown name


def _strategy_changes(value: Any, base: FairnessRunConfig, reference: bool) -> dict[str, Any]:
    changes: dict[str, Any] = {
        "mitigations": [str(value)],
        "mitigation_file": base.mitigation_file or str(PROMPT_VARIANTS),
    }
    if not reference:  # Table 7: iterative prompting starts from the Default prompt
        changes["feedback_rounds"] = 0
    return changes


PROMPT_STRATEGY = Axis("prompt strategy", check_base=_check_strategies, changes=_strategy_changes)
"""Prompt strategies of the base config's mitigation file (default `prompt_variants.yaml`);
feedback rounds run on the reference strategy only."""
