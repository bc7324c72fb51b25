"""`boi bias experiment`: the fairness papers' ablations and side studies, each as one config,
run as sub-runs of `boi bias test` and reported in a table shaped like the paper's.

An ablation is a base test config (`FairnessRunConfig` as a mapping), a kind and its axis. Each
point of the axis is a sub-run, a normal resumable `boi bias test` run directory `OUT/<label>/`;
the ablation reads their `report/fairness.json` (`groups[]`: per model, strategy and round the
`completions`, `executable`, `cbs` and `at_k`) and their verdicts (`verdicts/<model>/<strategy>/
round<R>.jsonl`), and writes `OUT/experiment.md` and `OUT/experiment.json` (atomically). A rerun
resumes every sub-run and rebuilds the tables. S = Solar (Ling et al., seed 004), H = Huang et
al. (seed 001); numbers are line numbers in those files.

- `_registry`: `@ablation(kind, axis=..., what=..., example=...)` registers a table builder as
  one kind (`ABLATIONS`); the shared axes (`TEMPERATURE`, `PROMPT_STRATEGY`).
- `_plan`: `ExperimentConfig` (checked against the kind's axis) and `plan_runs`.
- `_driver`: `run_ablation` runs the sub-runs and writes the tables; `estimate_ablation` sums
  the sub-runs' estimates (`--dry-run`).
- `_stats`: what the tables count from verdicts and reports, and their cells.
- `solar`: `solar_temperature` (Tables 8 and 6), `solar_prompt` (Table 7), with the t-test.
- `huang`: `huang_prompt` (Tables 12 and 13), `huang_temperature` (Table 15),
  `huang_value_pools` (Table 14, the `VALUE_POOLS` axis).
- `self_detection`: `huang_self_detection` (Table 9), which asks the tested model about its code
  through a study run inside the ablation (`SelfDetectionStudy`, in `OUT/self-detection`).

Adding an ablation is one decorated builder, in its paper's module (imported by `_plan`) or in
your own module imported before the config is read:

    @ablation("my_temperature", axis=TEMPERATURE, what="the temperatures", example="[1.0, 0.2]")
    def my_tables(config, runs, log=print) -> dict:
        return {"markdown": ["## ..."], "tables": {...}}
"""

from bias import BUNDLED_CONFIGS
from bias.fairness_tests.ablations._driver import (
    MARKER,
    ExperimentOutcome,
    RunData,
    estimate_ablation,
    load_run,
    run_ablation,
)
from bias.fairness_tests.ablations._plan import (
    T_TESTS,
    TEST_UNITS,
    ExperimentConfig,
    SubRun,
    deep_merge,
    load_experiment_config,
    plan_runs,
    resolve_experiment_path,
)
from bias.fairness_tests.ablations._registry import (
    ABLATIONS,
    PROMPT_STRATEGY,
    PROMPT_VARIANTS,
    TEMPERATURE,
    Ablation,
    Axis,
    ablation,
)
from bias.fairness_tests.ablations._stats import EXECUTABLE, OVERALL
from bias.fairness_tests.ablations.huang import (
    ENRICHED_POOLS,
    VALUE_POOLS,
    huang_prompt_tables,
    huang_temperature_tables,
    prompt_similarity,
    value_pool_tables,
)
from bias.fairness_tests.ablations.self_detection import (
    ATTRIBUTES_QUESTION,
    QUESTION_FORMS,
    QUESTIONS,
    YES_NO_QUESTION,
    DetectionConfig,
    SelfDetectionConfig,
    SelfDetectionStudy,
    detection_question,
    detection_summary,
    parse_attribute_answers,
    parse_yes_no,
    self_detection_study,
    self_detection_tables,
)
from bias.fairness_tests.ablations.solar import (
    observations,
    solar_prompt_tables,
    solar_tables,
    solar_temperature_tables,
)

__all__ = [
    # the registry
    "ABLATIONS",
    "Ablation",
    "Axis",
    "ablation",
    "TEMPERATURE",
    "PROMPT_STRATEGY",
    "VALUE_POOLS",
    "QUESTION_FORMS",
    # config, plan and driver
    "BUNDLED_CONFIGS",
    "MARKER",
    "T_TESTS",
    "TEST_UNITS",
    "ExperimentConfig",
    "DetectionConfig",
    "SubRun",
    "RunData",
    "ExperimentOutcome",
    "deep_merge",
    "load_experiment_config",
    "resolve_experiment_path",
    "plan_runs",
    "load_run",
    "estimate_ablation",
    "run_ablation",
    # statistics
    "OVERALL",
    "EXECUTABLE",
    # Solar
    "observations",
    "solar_tables",
    "solar_temperature_tables",
    "solar_prompt_tables",
    # Huang
    "PROMPT_VARIANTS",
    "ENRICHED_POOLS",
    "huang_prompt_tables",
    "huang_temperature_tables",
    "value_pool_tables",
    "prompt_similarity",
    # self-detection
    "QUESTIONS",
    "ATTRIBUTES_QUESTION",
    "YES_NO_QUESTION",
    "detection_question",
    "detection_summary",
    "parse_attribute_answers",
    "parse_yes_no",
    "self_detection_tables",
    "SelfDetectionConfig",
    "SelfDetectionStudy",
    "self_detection_study",
]
