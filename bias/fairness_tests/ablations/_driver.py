"""The driver: run (or resume) every sub-run of an ablation with `run_fairness`, read what each
left, and write the ablation's tables (`OUT/experiment.md`, `OUT/experiment.json`, atomically)
beside its own manifest (`OUT/experiment-manifest.json`)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.config import to_dict
from benchmarks.common.errors import UserError
from benchmarks.common.provenance import config_hash, portable_config, portable_path
from benchmarks.common.rundir import RunDir, read_marker, recorded_spelling
from benchmarks.study import Estimate, SampleCounts, estimate_study
from benchmarks.study.reader import open_study
from bias.fairness_tests.ablations._plan import ExperimentConfig, SubRun, plan_runs
from bias.fairness_tests.ablations._registry import ABLATIONS
from bias.fairness_tests.ablations.self_detection import self_detection_study
from bias.fairness_tests.run import (
    FairnessRunConfig,
    FairnessStudy,
    check_fairness_inputs,
    run_fairness,
    tested_tasks,
    verdict_rows,
)

MARKER = "experiment-manifest.json"


@dataclass
class RunData:
    """What one finished sub-run left: its report summary, verdicts, tasks and record."""

    sub: SubRun
    out: Path
    config: FairnessRunConfig
    summary: dict[str, Any]
    rows: list[dict[str, Any]]
    tasks: dict[str, dict[str, Any]]
    manifest: dict[str, Any]
    seconds: float = 0.0

    def groups(self) -> list[dict[str, Any]]:
        return list(self.summary.get("groups", []))


def load_run(sub: SubRun, config: FairnessRunConfig, seconds: float = 0.0) -> RunData:
    """A finished sub-run's outputs, read from its directory."""
    out = Path(config.out_dir)
    report = out / "report" / "fairness.json"
    if not report.is_file():
        raise UserError(f"{out} has no report/fairness.json; run the experiment again.")
    run = open_study(out, "boi bias test", hint="run the experiment again")
    rows = verdict_rows(run)
    tasks = tested_tasks(run)
    manifest = run.manifest
    return RunData(
        sub,
        out,
        config,
        json.loads(report.read_text("utf-8")),
        rows,
        tasks,
        manifest,
        seconds,
    )


@dataclass
class ExperimentOutcome:
    out_dir: Path
    markdown: str
    md_path: Path
    json_path: Path
    summary_line: str


def run_ablation(config: ExperimentConfig, log: Callable[[str], None] = print) -> ExperimentOutcome:
    """Run (or resume) every sub-run, then write the experiment's tables."""
    out = Path(config.out_dir)
    plan = plan_runs(config)
    # Every sub-run's inputs (suite, mitigations, completions file) are read and checked, and
    # the models once, before the experiment's directory is claimed: a mistake there then
    # costs one sentence, and the corrected command runs instead of meeting a manifest that
    # was written for the mistaken config.
    for number, sub in enumerate(plan):
        sub_config = config.base_config(**sub.changes, out_dir=str(out / sub.label))
        check_fairness_inputs(sub_config, check_models=number == 0)
    # Hashed with out_dir as the experiment first spelled it: `./runs/x` and `runs/x/` resume it
    # (a new one spelled portably: relative, or its name).
    config_json = {
        **to_dict(config),
        "out_dir": recorded_spelling(out, portable_path(config.out_dir), marker=MARKER),
    }
    # Recorded and hashed with portable paths (no machine's absolute path), like every run's.
    recorded = portable_config(config_json)
    digest = config_hash(recorded)
    held = read_marker(out, MARKER) if out.is_dir() else None
    if held is not None and held.get("config_hash") == config_hash(config_json):
        digest = config_hash(config_json)  # written with the paths as typed: still this one
    # The experiment's own manifest, beside its sub-runs' (each a boi bias test directory).
    experiment = RunDir.claim(
        out,
        recorded,
        digest=digest,
        record={"kind": config.kind},
        what="experiment",
        marker=MARKER,
    )
    runs = []
    for number, sub in enumerate(plan, 1):
        sub_config = config.base_config(**sub.changes, out_dir=str(out / sub.label))
        log(f"[boi bias experiment] run {number}/{len(plan)}: {sub.label}")
        start = time.perf_counter()
        run_fairness(sub_config, log)
        runs.append(load_run(sub, sub_config, round(time.perf_counter() - start, 2)))
    result = ABLATIONS[config.kind].build(config, runs, log)
    title = config.title or f"boi bias experiment: {config.kind}"
    markdown = f"# {title}\n\n" + "\n\n".join(result["markdown"]) + "\n"
    if result.get("notes"):
        markdown += "\n" + "\n".join(f"- {note}" for note in result["notes"]) + "\n"
    document = {
        "kind": config.kind,
        "config": recorded,
        "config_hash": digest,
        "runs": [
            {
                "label": r.sub.label,
                "axis": r.sub.value,
                "seed": r.sub.seed,
                # Inside the experiment's directory, which is the experiment wherever it is.
                "out_dir": os.path.relpath(r.out, out),
                "seconds": r.seconds,
            }
            for r in runs
        ],
        "tables": result["tables"],
        "notes": result.get("notes", []),
    }
    md_path, json_path = out / "experiment.md", out / "experiment.json"
    write_text_atomic(json_path, json.dumps(document, indent=2, default=str))
    write_text_atomic(md_path, markdown)
    experiment.complete(tables={"markdown": md_path.name, "json": json_path.name})
    summary = f"boi bias experiment {config.kind}: {len(runs)} run{'' if len(runs) == 1 else 's'}; tables: {md_path}"
    return ExperimentOutcome(out, markdown, md_path, json_path, summary)


def estimate_ablation(
    config: ExperimentConfig,
    log: Callable[[str], None] = print,
    *,
    tokens_per_second: float | None = None,
    gpus: int = 1,
) -> Estimate:
    """`boi bias experiment --dry-run`: the sum of every sub-run's estimate (each a `boi bias
    test` run's `estimate_study`), writing nothing; self-detection adds its study's
    (one generation per compared reply and question form)."""
    plan = plan_runs(config)
    configs = [
        config.base_config(**sub.changes, out_dir=str(Path(config.out_dir) / sub.label))
        for sub in plan
    ]
    parts = [
        estimate_study(
            FairnessStudy(sub_config), log, tokens_per_second=tokens_per_second, gpus=gpus
        )
        for sub_config in configs
    ]
    notes = [f"{sub.label}: {part.units}" for sub, part in zip(plan, parts, strict=True)]
    if config.kind == "huang_self_detection":
        (test,) = configs
        detection = estimate_study(
            self_detection_study(config, test), log, tokens_per_second=tokens_per_second, gpus=gpus
        )
        notes.append(f"self-detection: {detection.units} ({detection.cells})")
        parts.append(detection)
    for part in parts:
        notes += [note for note in part.notes if note not in notes]
    estimate = Estimate.of(
        sum((part.counts for part in parts), SampleCounts()),
        units=f"sub-runs: {len(plan)} of boi bias test",
        executions=sum(part.executions for part in parts),
        cells=f"{len(plan)} sub-runs",
        notes=notes,
    )
    estimate.tokens_per_second = tokens_per_second
    estimate.gpus = gpus
    return estimate
