"""Before / NA / A comparison of fine-tuned models in the layout of the paper's Table 4.

`compare_models` evaluates the model before fine-tuning and the two fine-tuned ones (NA, A)
under the transformation catalogue through the experiment runner (`boi run`, its YAML config
for datasets, settings and seeds), then `format_table4` lays out pass@k per transformation.
It lives in `boi/` because it orchestrates the stages (the runner); `finetune/` only builds data
and trains (`boi finetune compare`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.common.models import resolve_model
from benchmarks.passk import mean_pass_at_k
from boi.runner import (
    load_run_config,
    read_results,
    resolve_config_path,
    run_experiment,
)

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


def table4_scores(
    results: Sequence[Mapping[str, Any]], labels: Mapping[str, str], ks: Sequence[int], setting: str
) -> dict[str, dict[str, dict[int, float]]]:
    """pass@k per model (before / NA / A) and transformation from executed samples.

    `results` are `boi run` rows (model, setting, transform, task_id, passed); `labels` maps the
    runner's model label to before / NA / A.
    """
    outcomes: dict[tuple[str, str], dict[str, list[bool]]] = {}
    for row in results:
        if row["setting"] != setting or row["model"] not in labels:
            continue
        key = (labels[row["model"]], row["transform"])
        outcomes.setdefault(key, {}).setdefault(row["task_id"], []).append(bool(row["passed"]))
    scores: dict[str, dict[str, dict[int, float]]] = {m: {} for m in MODELS}
    for (model, transform), by_task in outcomes.items():
        means = mean_pass_at_k(by_task, ks)
        scores[model][transform] = {k: means[f"pass@{k}"] for k in ks if f"pass@{k}" in means}
    return scores


def compare_models(before: str, na: str, a: str, config: str | None, out: str) -> str:
    """Evaluate the three models under the catalogue with `boi run`; Table 4 per setting.

    The runner labels models by folder name, so the three models are linked under
    `out/models/{before,NA,A}` and the run itself goes to `out/run` (resumable like any run).
    """
    out_dir = Path(out)
    links = out_dir / "models"
    links.mkdir(parents=True, exist_ok=True)
    specs = []
    for name, model in zip(MODELS, (before, na, a), strict=True):
        target = Path(resolve_model(model)).resolve()
        if not (target / "config.json").is_file():
            raise UserError(
                f"{model} ({name}) is not a local model folder with config.json; pass one."
            )
        link = links / name
        if link.is_symlink() and link.resolve() != target:
            raise UserError(
                f"{out_dir} compares other models ({name} was {link.resolve()}); choose another --out."
            )
        if not link.is_symlink():
            link.symlink_to(target, target_is_directory=True)
        specs.append({"kind": "hf", "model": str(link)})
    run_config = load_run_config(
        resolve_config_path(config or "demo"), {"models": specs, "out_dir": str(out_dir / "run")}
    )
    outcome = run_experiment(run_config)
    labels = {spec.label: name for spec, name in zip(run_config.models, MODELS, strict=True)}
    results = read_results(out_dir / "run")
    transforms = [t for t in run_config.transforms if any(r["transform"] == t for r in results)]
    sections = []
    for setting in run_config.settings:
        scores = table4_scores(results, labels, setting.ks, setting.label)
        sections.append(f"### {setting.label}\n\n" + format_table4(scores, transforms, setting.ks))
    text = "\n\n".join(sections)
    write_text_atomic(out_dir / "table4.md", text + "\n")
    return f"{text}\n\n{outcome.summary_line}\ntable: {out_dir / 'table4.md'}"
