"""Before / NA / A comparison in the layout of the paper's Table 4.

`format_table4` lays out pass@k per transformation for the model before fine-tuning and the two
fine-tuned ones. `compare_models` is to evaluate the three models through the experiment runner
(`boi run`); until the runner is in this checkout it says so instead of guessing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence

from benchmarks.errors import UserError

MODELS = ("before", "NA", "A")


def format_table4(
    scores: Mapping[str, Mapping[str, Mapping[int, float]]],
    transforms: Sequence[str],
    ks: Sequence[int],
) -> str:
    """A Markdown table: one row per transformation, per k the columns `Before` and `NA / A`.

    `scores[model][transform][k]` is pass@k in [0, 1] for model in before / NA / A; a missing
    value prints as `-`.
    """
    missing = [m for m in MODELS if m not in scores]
    if missing:
        raise UserError(
            f"scores lack the model(s) {', '.join(missing)}; expected {', '.join(MODELS)}."
        )

    def cell(model: str, transform: str, k: int) -> str:
        value = scores[model].get(transform, {}).get(k)
        return "-" if value is None else f"{100 * value:.1f}"

    header = ["Method"]
    for k in ks:
        header += [f"pass@{k} Before", f"pass@{k} NA / A"]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for transform in transforms:
        row = [transform]
        for k in ks:
            row += [
                cell("before", transform, k),
                f"{cell('NA', transform, k)} / {cell('A', transform, k)}",
            ]
        rows.append("| " + " | ".join(row) + " |")
    return "\n".join(rows)


def compare_models(before: str, na: str, a: str, config: str | None, out: str) -> str:
    """Evaluate the three models under the catalogue with the runner; the Table 4 text."""
    if importlib.util.find_spec("boi.runner") is None:
        raise UserError(
            "boi finetune compare needs the experiment runner (boi run), which this checkout does "
            f"not have yet; evaluate {before}, {na} and {a} with it once it lands."
        )
    raise UserError(  # pragma: no cover - replaced when the runner's API exists
        "the experiment runner is present but finetune.compare is not wired to it yet."
    )
