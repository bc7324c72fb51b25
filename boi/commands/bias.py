"""Social bias in generated code. `run`: Liu et al.'s judgmental-modifier paradigm (prompts
find_ADJ_people(people, HumanAttribute), scores completions with the code bias classifier and
the demographic lexicon, reports CBS / UFS / SD). `test`: executable fairness tests
(SocialBias-Bench, Huang et al.'s text-to-code tasks) in the sandbox, with mitigation
strategies and feedback rounds (CBS, CBS_U@K / CBS_I@K, BLS, Pass@attribute). `experiment`
runs a paper's ablation (temperature, prompt variants, self-detection, value pools) as sub-runs
of `test`, with a table shaped like the paper's. `report` rebuilds either run's report;
`train-classifier` trains the code bias classifier; `prompts` writes the judgmental-modifier
prompt suite; `human-sheet` and `human-agreement` run Liu et al.'s human evaluation of a `run`
(blind labelling sheet, then majority vote, kappas and human vs automatic CBS)."""

from __future__ import annotations

import argparse

from benchmarks.common.config import add_dataclass_arguments, load_config, overrides_from_args
from benchmarks.common.jsonl import write_jsonl
from benchmarks.common.outputs import declare_output
from benchmarks.common.rundir import MANIFEST
from benchmarks.generation import model_flag_specs
from benchmarks.study.cli import add_driver_arguments, drive, print_estimate
from benchmarks.study.reader import open_study
from bias import resolve_config_path
from bias.fairness_tests.ablations import BUNDLED_CONFIGS as EXPERIMENT_CONFIGS
from bias.fairness_tests.ablations import MARKER as EXPERIMENT_MARKER
from bias.fairness_tests.ablations import (
    estimate_ablation,
    load_experiment_config,
    run_ablation,
)
from bias.fairness_tests.run import (
    FairnessRunConfig,
    FairnessStudy,
    load_fairness_config,
    rebuild_fairness_report,
)
from bias.modifier_prompts.classifier import RECORD as CLASSIFIER_RECORD
from bias.modifier_prompts.classifier import ClassifierConfig, metrics_table, train_classifier
from bias.modifier_prompts.human_eval import evaluate_sheet, export_sheet
from bias.modifier_prompts.run import (
    BiasRunConfig,
    ModifierStudy,
    load_bias_config,
    rebuild_report,
)
from bias.modifier_prompts.suite import SuiteConfig, load_suite

EXAMPLES = (
    "boi bias run --config demo --out runs/bias-demo",
    "boi bias test --config test-demo --data path/to/socialbias_bench/tasks.json",
    "boi bias experiment exp-solar-temperature --data path/to/socialbias_bench/tasks.json --out runs/exp",
    "boi bias report runs/bias-demo",
    "boi bias train-classifier --data path/to/code_bias_classifier",
    "boi bias human-sheet runs/bias-demo --out sheet.csv",
    "boi bias human-agreement runs/bias-demo sheet.csv",
    "boi bias prompts --out prompts.jsonl",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="bias_command", metavar="ACTION", required=True)

    run = sub.add_parser(
        "run",
        help="prompts -> generate -> classify + lexicon -> CBS/UFS/SD tables and HTML (resumable)",
        description="Run (or resume) the judgmental-modifier study on one or more models.",
    )
    run.add_argument(
        "--config",
        help="YAML config, or a bundled one: demo (embedded model, a subset, CPU minutes), "
        "paper (392 prompts x 10 samples, sweeps), preliminary (the appendix's template study)",
    )
    top = run.add_argument_group("run config (BiasRunConfig; a flag overrides the config file)")
    add_dataclass_arguments(top, BiasRunConfig, flags={"out_dir": "--out"})
    declare_output(run, "out_dir", "dir", ours=(MANIFEST,))
    run.add_argument(
        "--model",
        action="append",
        help="model id to study (HF id or path, or 'embedded'); repeatable; overrides models",
    )
    add_driver_arguments(run)

    test = sub.add_parser(
        "test",
        help="executable fairness tests in the sandbox, with mitigation strategies and feedback "
        "rounds (resumable)",
        description="Run (or resume) executable fairness tests on one or more models.",
    )
    test.add_argument(
        "--config",
        help="YAML config, or a bundled one: test-demo (embedded model, a SocialBias-Bench "
        "subset, one feedback round)",
    )
    group = test.add_argument_group("test config (FairnessRunConfig; a flag overrides the file)")
    add_dataclass_arguments(
        group, FairnessRunConfig, flags={"out_dir": "--out", "mitigations": "--mitigation"}
    )
    declare_output(test, "out_dir", "dir", ours=(MANIFEST,))
    test.add_argument(
        "--model",
        action="append",
        help="model id to test (HF id or path, or 'embedded'); repeatable; overrides models",
    )
    add_driver_arguments(test)

    bundled = ", ".join(sorted(p.stem for p in EXPERIMENT_CONFIGS.glob("exp-*.yaml")))
    experiment = sub.add_parser(
        "experiment",
        help="a paper's experiment (temperature, prompt variants, self-detection, value pools) "
        "as sub-runs of boi bias test, with a table shaped like the paper's (resumable)",
        description="Run (or resume) one experiment: each axis point is a boi bias test run in "
        "OUT/<label>/; the tables go to OUT/experiment.md and OUT/experiment.json.",
    )
    experiment.add_argument(
        "config", metavar="CONFIG", help=f"experiment YAML, or a bundled one: {bundled}"
    )
    experiment.add_argument("--data", help="the suite's data file (sets the base config's data)")
    experiment.add_argument("--out", help="the experiment directory (sets out_dir)")
    declare_output(experiment, "out", "dir", ours=(EXPERIMENT_MARKER,))
    # Its sub-runs are boi bias test runs, each sharded (and merged) as such: the estimate's
    # flags only.
    add_driver_arguments(experiment, scale_out=False)

    report = sub.add_parser(
        "report", help="rebuild the tables and HTML of a boi bias run or boi bias test directory"
    )
    report.add_argument(
        "run_dir", metavar="RUN_DIR", help="the --out of a boi bias run or boi bias test"
    )

    train = sub.add_parser(
        "train-classifier",
        help="train the code bias classifier; prints val/test accuracy beside the paper's",
        description="Train, evaluate and save the code bias classifier (default: into the boi "
        "cache, where boi bias run finds it).",
    )
    add_dataclass_arguments(train, ClassifierConfig)
    declare_output(train, "out", "dir", ours=(CLASSIFIER_RECORD,))

    sheet = sub.add_parser(
        "human-sheet",
        help="export a blind labelling sheet (CSV) of a boi bias run for human evaluation",
        description="Sample completions of a boi bias run (paper: 5 of the 10 per prompt) into "
        "a CSV sheet with one empty label column per annotator; the classifier's verdicts go "
        "into SHEET.key.json beside it, not into the sheet.",
    )
    sheet.add_argument("run_dir", metavar="RUN_DIR", help="the --out of a boi bias run")
    sheet.add_argument("--out", required=True, metavar="SHEET.csv", help="the sheet to write")
    declare_output(sheet, "out", "file")
    sheet.add_argument("--per-cell", type=int, default=5, help="completions per prompt and model")
    sheet.add_argument("--annotators", type=int, default=3, help="label columns")
    sheet.add_argument("--seed", type=int, default=0, help="seed of the sample and row order")
    sheet.add_argument("--setting", help="decoding setting to sample (default: the base one)")
    sheet.add_argument("--force", action="store_true", help="replace an existing sheet and key")

    agree = sub.add_parser(
        "human-agreement",
        help="read a filled sheet: majority vote, kappas, human vs classifier CBS (Table 7)",
        description="Score a filled human-sheet: majority vote, Fleiss' and Cohen's kappa, "
        "classifier accuracy against the majority, human vs automatic CBS; writes "
        "RUN_DIR/report/human_eval.md and .json.",
    )
    agree.add_argument(
        "run_dir", metavar="RUN_DIR", help="the boi bias run the sheet was exported from"
    )
    agree.add_argument(
        "sheet", metavar="SHEET.csv", help="the human-sheet with its label columns filled in"
    )
    agree.add_argument("--key", help="the sheet's key (default: SHEET.key.json beside it)")

    prompts = sub.add_parser("prompts", help="write the prompt suite as JSONL (one per prompt)")
    add_dataclass_arguments(prompts, SuiteConfig)
    prompts.add_argument("--out", required=True, help="output JSONL")
    declare_output(prompts, "out", "file")


def run(args: argparse.Namespace) -> int:
    if args.bias_command == "run":
        overrides = overrides_from_args(args, BiasRunConfig)
        if args.model:
            overrides["models"] = model_flag_specs(args.model)
        config = load_bias_config(resolve_config_path(args.config), overrides)
        return drive(ModifierStudy(config), args)
    if args.bias_command == "test":
        overrides = overrides_from_args(args, FairnessRunConfig)
        if args.model:
            overrides["models"] = model_flag_specs(args.model)
        test_config = load_fairness_config(resolve_config_path(args.config), overrides)
        return drive(FairnessStudy(test_config), args)
    if args.bias_command == "experiment":
        experiment = load_experiment_config(args.config, data=args.data, out=args.out)
        if args.dry_run:
            estimate = estimate_ablation(
                experiment, print, tokens_per_second=args.tokens_per_second, gpus=args.gpus
            )
            print_estimate("boi bias experiment", estimate)
            return 0
        done = run_ablation(experiment)
        print()
        print(done.markdown)
        print(done.summary_line)
        return 0
    if args.bias_command == "report":
        if open_study(args.run_dir).study == FairnessStudy.command:
            fairness = rebuild_fairness_report(args.run_dir)
            print(fairness.tables_md.read_text(encoding="utf-8"))
            print(f"boi bias report: {fairness.tables_md}, {fairness.html}")
            return 0
        paths = rebuild_report(args.run_dir)
        print(paths.cbs_md.read_text(encoding="utf-8"))
        print(f"boi bias report: {paths.tables_md}, {paths.html}")
        return 0
    if args.bias_command == "train-classifier":
        classifier_config = load_config(
            ClassifierConfig, None, overrides_from_args(args, ClassifierConfig)
        )
        folder, record = train_classifier(classifier_config)
        print(metrics_table(record))
        print(f"boi bias train-classifier: {record['kind']} classifier written to {folder}")
        return 0
    if args.bias_command == "human-sheet":
        exported = export_sheet(
            args.run_dir,
            args.out,
            per_cell=args.per_cell,
            annotators=args.annotators,
            seed=args.seed,
            setting=args.setting,
            overwrite=args.force,
        )
        print(
            f"boi bias human-sheet: {exported.items} completions for {exported.annotators} "
            f"annotators written to {exported.sheet} (key: {exported.key})"
        )
        return 0
    if args.bias_command == "human-agreement":
        print(evaluate_sheet(args.run_dir, args.sheet, key=args.key).summary_line)
        return 0
    suite = load_suite(load_config(SuiteConfig, None, overrides_from_args(args, SuiteConfig)))
    count = write_jsonl(args.out, (p.to_json() for p in suite.prompts))
    print(f"boi bias prompts: {count} prompts written to {args.out}")
    return 0
