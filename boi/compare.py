"""Before / NA / A comparison of fine-tuned models in the layout of the paper's Table 4.

`compare_models` evaluates the model before fine-tuning and the two fine-tuned ones (NA, A)
under the transformation catalogue through `boi run` (`boi.runner.run_robustness`, its YAML
config for datasets, settings and seeds), so any backend the runner knows can stand in each
role: an HF id, a local folder, `embedded`, or a backend mapping such as an OpenAI-compatible
server.
Its numbers are the run's own Table 3 (`benchmarks.report`: per problem the mean over its
variants, then the mean over problems), laid out per dataset and setting by `format_table4`.
It lives in `boi/` because it orchestrates the stages (the runner); `finetune/` only builds data
and trains (`boi finetune compare`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.config import parse_yaml_mapping
from benchmarks.common.errors import UserError
from benchmarks.common.models import resolve_model
from benchmarks.generation import BackendSpec, model_flag_specs
from boi.run_reader import open_run
from boi.runner import load_run_config, resolve_config_path, run_robustness

MODELS = ("before", "NA", "A")
MODEL_HELP = (
    "an HF id, a local folder, 'embedded', or a backend mapping in YAML/JSON, e.g. "
    "'{kind: openai, model: NAME, base_url: http://host:8000/v1}'"
)


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
    table: Mapping[str, Any], roles: Mapping[str, str], dataset: str, setting: str
) -> dict[str, dict[str, dict[int, float]]]:
    """pass@k per role (before / NA / A) and transformation row label, read from a Table 3
    JSON (`summarize_results` / the run's `report/table.json`) for one dataset and setting.

    `roles` maps the runner's model label to before / NA / A; cells without data are left out.
    """
    scores: dict[str, dict[str, dict[int, float]]] = {m: {} for m in MODELS}
    for index, column in enumerate(table["columns"]):
        role = roles.get(column["model"])
        if role is None or column["dataset"] != dataset or column["setting"] != setting:
            continue
        for row in table["rows"]:
            cell = row["cells"][index]
            if cell is not None and cell.get("pass_at_k") is not None:
                scores[role].setdefault(row["label"], {})[column["k"]] = cell["pass_at_k"]
    return scores


def role_spec(role: str, value: str, links: Path) -> dict[str, Any]:
    """The backend config entry for one role. A local folder is linked as `links/ROLE`, so its
    label (`hf-NA`) says which role it plays even when every checkpoint folder has the same name."""
    text = value.strip()
    if text.startswith("{"):
        mapping = parse_yaml_mapping(text, f"--{role.lower()}")
        try:  # checked here, so the message names the flag
            BackendSpec.from_mapping(mapping, where=f"--{role.lower()}")
        except UserError as err:
            raise UserError(f"--{role.lower()}: {err}") from None
        return mapping
    (spec,) = model_flag_specs([text])
    folder = Path(resolve_model(text)) if spec.get("kind") == "hf" else None
    if folder is None or not folder.is_dir():
        return spec  # an HF id (or a backend kind without a model): loaded by the runner
    if not (folder / "config.json").is_file():
        raise UserError(
            f"--{role.lower()} {value}: the folder has no config.json; pass a model folder."
        )
    target, link = folder.resolve(), links / role
    if link.is_symlink() and link.resolve() != target:
        raise UserError(
            f"{links.parent} compares other models ({role} was {link.resolve()}); choose another --out."
        )
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target, target_is_directory=True)
    return {**spec, "model": str(link)}


def compare_models(before: str, na: str, a: str, config: str | None, out: str) -> str:
    """Evaluate the three models under the catalogue with `boi run`; Table 4 per dataset and
    setting, written to `out/table4.md` and `out/table4.json`. The run itself goes to `out/run`
    (resumable like any run, its full report in `out/run/report`)."""
    out_dir = Path(out)
    specs = [
        role_spec(role, value, out_dir / "models")
        for role, value in zip(MODELS, (before, na, a), strict=True)
    ]
    run_config = load_run_config(
        resolve_config_path(config or "demo"), {"models": specs, "out_dir": str(out_dir / "run")}
    )
    outcome = run_robustness(run_config)
    roles = {spec.label: role for spec, role in zip(run_config.models, MODELS, strict=True)}
    table = open_run(out_dir / "run").report_table()
    labels = [row["label"] for row in table["rows"]]
    sections, scores_json = [], []
    for dataset in dict.fromkeys(c["dataset"] for c in table["columns"]):
        for setting in run_config.settings:
            scores = table4_scores(table, roles, dataset, setting.label)
            sections.append(
                f"### {dataset} / {setting.label}\n\n" + format_table4(scores, labels, setting.ks)
            )
            scores_json.append({"dataset": dataset, "setting": setting.label, "scores": scores})
    text = "\n\n".join(sections)
    write_text_atomic(out_dir / "table4.md", text + "\n")
    record = {"roles": {role: label for label, role in roles.items()}, "tables": scores_json}
    write_text_atomic(out_dir / "table4.json", json.dumps(record, indent=1) + "\n")
    return f"{text}\n\n{outcome.summary_line}\ntable: {out_dir / 'table4.md'}"
