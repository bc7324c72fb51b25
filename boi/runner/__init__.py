"""`boi run`: pass@k under each transformation, end to end.

datasets x transformations x models x decoding settings:
load -> perturb -> (critic gate) -> generate -> execute -> report, each stage the library
function of its own command, talking through files in one run directory:

    manifest.json          config, its hash, seeds, input hashes, versions, git, completed
    problems.jsonl         every variant (and the name-only probe), with lineage
    not_applied.jsonl      (task, transform, reason) for every transformation that did not apply
    reference_failures.jsonl  (dataset, task, reason) for every problem left out because its own
                           reference fails in this machine's sandbox (languages other than Python),
                           or in the check its loader ships (BigCodeBench)
    .perturbation.json     the key of the inputs the two files above were made from
    critic.jsonl           critic scores and gate verdicts (when the critic is on)
    generations.jsonl      the generation cache (model, prompt hash, decoding, seed, index)
    results/<model>/<setting>.jsonl   executed samples (append-only, resumable)
    report/                table.md/.csv/.json, report.html

A rerun of the same config resumes: the perturbation is read back (when its key still
matches the config and the loaded problems), cached samples are not generated again and
executed ones not run again. A run directory holding a different config is refused.

The package, by room:

config   `RunConfig` and its parts (`DatasetSpec`, `SettingSpec`, `CriticSpec` from
         `critic.spec`, `perturb`: a `perturb.PerturbConfig`), the bundled configs and loading
         (`load_run_config`, `with_overrides`; the older flat shape read too), the run's
         identity (`run_identity`, `run_hash`, `work_hash`)
stages   inputs checked and loaded, the perturbation, the critic gate, prompt groups, sampling
study    `RobustnessStudy` (a `benchmarks.study.Study`), `run_robustness`, `estimate_run`
report   `build_run_report` (the one builder of a run's report: the run's own, a merge's,
         `boi report`'s, every analysis's), `read_run_report_inputs`, `run_variants`, `summary_line`
"""

from __future__ import annotations

from boi.runner.config import (
    BUNDLED_CONFIGS,
    CriticSpec,
    DatasetSpec,
    RunConfig,
    SettingSpec,
    load_run_config,
    resolve_config_path,
    run_hash,
    run_identity,
    with_overrides,
    work_hash,
)
from boi.runner.report import (
    build_run_report,
    read_run_report_inputs,
    run_variants,
    summary_line,
)
from boi.runner.stages import check_run_models, load_datasets, prompt_groups
from boi.runner.study import RobustnessStudy, RunOutcome, estimate_run, run_robustness

__all__ = [
    "BUNDLED_CONFIGS",
    "CriticSpec",
    "DatasetSpec",
    "RobustnessStudy",
    "RunConfig",
    "RunOutcome",
    "SettingSpec",
    "build_run_report",
    "check_run_models",
    "estimate_run",
    "load_datasets",
    "load_run_config",
    "prompt_groups",
    "read_run_report_inputs",
    "resolve_config_path",
    "run_hash",
    "run_identity",
    "run_robustness",
    "run_variants",
    "summary_line",
    "with_overrides",
    "work_hash",
]
