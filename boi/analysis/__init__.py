"""Analyses of an existing `boi run` directory: why a model failed, and which hints it used
(`boi analyze ACTION RUN_DIR ...`). Each takes the run as a `boi.run_reader.Run` (`open_run`)
and reads what the run wrote (problems, results, generation cache) through it, so nothing is
generated twice, and writes under `RUN_DIR/analysis/NAME/` (`analysis_dir`): its data
(JSON/CSV), and one report section (`write_section`) that the run's report.html shows
(`report_sections`; all three in `benchmarks.report.sections`), rebuilt at the end of the
analysis (`boi.reporting.rebuild_run_report`).

An analysis is one module with `add_arguments(parser)`, `run(args) -> int` and a module
docstring (the command's description), plus one line in `ANALYSES`. Modules import heavy libraries (torch,
transformers, datasketch) inside functions, so `boi --help` stays fast.
"""

from __future__ import annotations

from types import ModuleType

from benchmarks.common.registry import Registry

# name -> (module, one-line help), as `boi.cli.COMMANDS`: imported when the parser is built.
ANALYSES: Registry[ModuleType] = Registry(
    "analysis",
    {
        "attention": (
            "boi.analysis.attention",
            "attention mass per Block of Influence for each generated token (HF models)",
        ),
        "hints": (
            "boi.analysis.hints",
            "per-problem hint audit across models: which block each problem depends on",
        ),
        "minimal": (
            "boi.analysis.minimal",
            "smallest critic-approved perturbation that flips a solved problem",
        ),
        "copies": (
            "boi.analysis.copies",
            "near-duplicate search of completions in a training corpus (MinHash LSH)",
        ),
        "leaks": (
            "boi.analysis.leaks",
            "hidden tests the prompt's examples show, per problem (a dataset or a run); memoriser "
            "pass share; Drop Ex effect against it",
        ),
    },
    base=ModuleType,
)
