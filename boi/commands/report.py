"""Rebuild the report (Table 3 as Markdown/CSV/JSON, name-only table, static HTML with plots)
from files: a run directory holding results.jsonl and problems.jsonl (and optionally
critic.jsonl), or a results JSONL with --problems."""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.outputs import declare_output
from boi.reporting import report_from_files

EXAMPLES = (
    "boi report runs/demo",
    "boi report results.jsonl --problems perturbed.jsonl --model-name my-model --out report/",
    "boi report runs/livecodebench --released-split 2024-06-01",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source",
        help="a run directory (results.jsonl + problems.jsonl [+ critic.jsonl]) or a results JSONL",
    )
    parser.add_argument(
        "--problems", help="problems JSONL the samples came from (boi perturb output)"
    )
    parser.add_argument(
        "--critic", help="boi critic output JSONL: adds the similarity vs pass@k-change plot"
    )
    parser.add_argument(
        "--out", help="output folder (default: SOURCE_DIR/report, beside the results)"
    )
    declare_output(parser, "out", "dir", ours=("table.json", "table.md", "report.html"))
    parser.add_argument(
        "--k",
        action="append",
        metavar="[SETTING:]K,K",
        help="pass@k to report, for every setting ('1,10') or one ('T=0.8:1,100'); repeatable "
        "(default: a boi run directory's own ks; else 1, plus 10 and 100 where every original "
        "problem of a setting has that many samples)",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        help="bootstrap resamples (default: a boi run directory's own, from its manifest, so "
        "its report is reproduced; else 1000)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help="bootstrap seed (default: a boi run directory's own, from its manifest; else 0)",
    )
    parser.add_argument(
        "--model-name",
        default="external",
        help="model name for results that have none (another harness's samples; default: external)",
    )
    parser.add_argument(
        "--setting",
        default="default",
        help="decoding-setting name for results that have none (default: 'default')",
    )
    parser.add_argument(
        "--released-split",
        metavar="DATE",
        help="split each dataset's column at DATE (YYYY-MM-DD) by its problems' contest dates "
        "(LiveCodeBench): each effect before and from a model's training cut-off, side by side "
        "(default --out: SOURCE/report-released-DATE)",
    )
    parser.add_argument(
        "--completions",
        type=int,
        default=3,
        help="distinct completions shown per variant and run in the HTML (default: 3)",
    )


def run(args: argparse.Namespace) -> int:
    paths = report_from_files(
        args.source,
        problems_file=args.problems,
        critic_file=args.critic,
        out=args.out,
        ks=args.k,
        bootstrap=args.bootstrap,
        seed=args.seed,
        model_name=args.model_name,
        setting=args.setting,
        completions=args.completions,
        released_split=args.released_split,
        log=lambda message: print(f"boi report: {message}", file=sys.stderr),
    )
    print(paths.table_md.read_text(encoding="utf-8"))
    written = [paths.table_md, paths.table_csv, paths.table_json, paths.html]
    if paths.name_only_csv:
        written.append(paths.name_only_csv)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0
