"""Why did it fail? Analyses of an existing `boi run` directory: `boi analyze ACTION RUN_DIR
...`. Each reuses what the run wrote (nothing is generated twice unless the analysis needs new
samples, and those go through the run's generation cache), is resumable, writes its data
under RUN_DIR/analysis/ACTION/ and adds a section to RUN_DIR/report/report.html."""

from __future__ import annotations

import argparse

from benchmarks.common.outputs import declare_output
from boi.analysis import ANALYSES
from boi.analysis.leaks import OUTPUT_MARKERS as LEAKS_MARKERS

# Each analysis's output flags: dest -> the files that mark a folder as that analysis's own
# (the output contract, benchmarks/common/outputs.py). tests/test_careless_outputs.py fails when
# an analysis grows an output flag that is not listed here.
OUTPUTS: dict[str, dict[str, tuple[str, ...]]] = {
    "copies": {"index": ("manifest.json",)},
    "hints": {"out": ("hints.json", "hints.csv")},
    "minimal": {"out": ("summary.json", "minimal.jsonl", "tested.jsonl", "critic_scores.jsonl")},
    "leaks": {"out": LEAKS_MARKERS},  # also the default folder's check (leaks._dataset_out)
}

EXAMPLES = (
    "boi analyze copies runs/demo --corpus path/to/code/",
    "boi analyze attention runs/demo --limit 20",
    "boi analyze hints runs/model-a runs/model-b",
    "boi analyze minimal runs/demo --budget 8",
    "boi analyze leaks runs/demo",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="analysis", metavar="ACTION", required=True)
    for name in ANALYSES:
        module, help_text = ANALYSES[name], ANALYSES.help(name)
        command = sub.add_parser(
            name, help=help_text, description=(module.__doc__ or help_text).strip()
        )
        module.add_arguments(command)
        for dest, ours in OUTPUTS.get(name, {}).items():
            declare_output(command, dest, "dir", ours=ours)
        command.set_defaults(_analysis=module)


def run(args: argparse.Namespace) -> int:
    result: int = args._analysis.run(args)
    return result
