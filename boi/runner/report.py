"""`boi run`'s report: the tables and page of a run (or of merged shards), and its summary
line."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.problem import Problem, read_problems
from benchmarks.report import ReportPaths, build_report, read_results
from benchmarks.report.sections import report_sections
from boi.runner.config import RunConfig
from critic.similarity import read_similarities
from perturb.transforms import transform_baselines, transform_labels

__all__ = ["build_run_report", "read_run_report_inputs", "run_variants", "summary_line"]


def run_variants(
    config: RunConfig,
    out: Path,
    *,
    problems_file: Path | None = None,
    critic_file: Path | None = None,
) -> tuple[list[Problem], dict[str, float]]:
    """A run directory's variants past its critic gate (`problems.jsonl`, or `problems_file`),
    in the run's order, and the critic's similarities by the run's own measure
    (`config.critic.measure`; `critic_file` instead of the run's critic.jsonl). A variant
    below the run's `min_similarity` is left out, as the run's gate left it out."""
    every = read_problems(problems_file or out / "problems.jsonl")
    critic = critic_file or out / "critic.jsonl"
    given = critic_file is not None or (config.critic.enabled and critic.is_file())
    similarity = read_similarities(critic, config.critic.measure) if given else {}
    if not config.critic.enabled:
        return every, similarity
    gated = {t for t, s in similarity.items() if s < config.critic.min_similarity}
    return [v for v in every if v.task_id not in gated], similarity


def read_run_report_inputs(
    config: RunConfig,
    out: Path,
    *,
    problems_file: Path | None = None,
    critic_file: Path | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Problem], dict[str, float]]:
    """What a run directory's report is built from, read as the run reads it: its results
    (every results file present) and `run_variants` (by task id)."""
    variants, similarity = run_variants(
        config, out, problems_file=problems_file, critic_file=critic_file
    )
    return read_results(out), {v.task_id: v for v in variants}, similarity


def build_run_report(
    config: RunConfig,
    out: Path,
    results: list[dict[str, Any]],
    problems: Mapping[str, Problem],
    similarity: Mapping[str, float],
    *,
    report_dir: Path | None = None,
    ks: Mapping[str, Sequence[int]] | None = None,
    bootstrap: int | None = None,
    seed: int | None = None,
    completions_per_variant: int = 3,
) -> ReportPaths:
    """The report of a run (or of merged shards): the one builder of a run's report, so the
    run's own, a merge's, `boi report`'s and every analysis's rebuild agree. Unless given
    (`boi report`'s flags), its settings' ks, its bootstrap resamples and bootstrap_seed;
    written to `report_dir` (default: the run's report/)."""
    return build_report(
        results,
        dict(problems),
        {s.label: list(s.ks) for s in config.settings} if ks is None else dict(ks),
        report_dir or out / "report",
        critic=dict(similarity) or None,
        bootstrap=config.bootstrap if bootstrap is None else bootstrap,
        seed=config.bootstrap_seed if seed is None else seed,
        title=f"boi run {out.resolve().name}",
        completions_per_variant=completions_per_variant,
        labels=transform_labels(),
        baselines=transform_baselines(),
        sections=report_sections(out),
    )


def summary_line(
    out: Path,
    table_json: Path,
    results: Sequence[dict[str, Any]],
    generation: dict[str, int],
    verb: str = "generated",
) -> str:
    """One line: what ran, and the first column's Original vs worst transformation. `verb`:
    what the run's backends did to a sample (`sample_verb`: a file's are read)."""
    table = json.loads(table_json.read_text(encoding="utf-8"))
    parts = [
        f"{len(results)} samples executed",
        f"{generation['generated']} {verb} ({generation['cache_hits']} from cache)",
    ]
    if table["columns"]:
        column = table["columns"][0]
        values = {
            row["transform"]: row["cells"][0]
            for row in table["rows"]
            if row["cells"][0].get("pass_at_k") is not None
        }
        original = values.get("original", {}).get("pass_at_k")
        perturbed = {t: c for t, c in values.items() if t not in ("original", "name_only")}
        label = f"pass@{column['k']} {column['dataset']}/{column['model']}/{column['setting']}"
        if original is not None and perturbed:
            # Every transformation at the lowest value is named: picking the first of a tie
            # called one transformation the worst when all of them scored the same.
            lowest = min(c["pass_at_k"] for c in perturbed.values())
            tied = [t for t, c in perturbed.items() if c["pass_at_k"] == lowest]
            if len(tied) == len(perturbed) > 1:
                worst = f"every transformation {100 * lowest:.1f}"
            else:
                worst = f"worst {', '.join(tied)} {100 * lowest:.1f}"
            parts.append(f"{label}: original {100 * original:.1f}, {worst}")
    return f"boi run: {', '.join(parts)}; report: {out / 'report' / 'report.html'}"
