"""Get the datasets boi reads but does not ship (`boi data list` names every dataset boi reads,
and where each comes from). `boi data fetch` downloads each from its upstream repository at a
pinned commit into data/<name>/, checks its sha256 before moving it
into place (a file that differs is refused, nothing half-written stays) and skips files already
there. `boi data list` shows each dataset, its upstream, version and whether it is present.
Offline, copy the files by hand (docs/how-to/get-the-data.md): every command takes the path."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.common.config import positive_int
from benchmarks.common.outputs import declare_output
from benchmarks.execution import ExecutionConfig
from benchmarks.execution.reference_check import machine_reference_failures
from benchmarks.loaders import dataset_help, load_benchmark
from benchmarks.upstream import (
    ALL_DATASETS,
    BASE_URL_ENV,
    DEFAULT_BASE_URL,
    DEFAULT_DIR,
    NAMES,
    UPSTREAM_DATA,
    Fetched,
    fetch,
    status,
)

EXAMPLES = (
    "boi data list",
    "boi data fetch",
    "boi data fetch mbpp socialbias_bench --dir data",
    "boi data check humaneval-x-js",
)
"""Shown at the end of `--help` (boi/cli.py)."""
ALL = "all"


def _add_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir",
        default=DEFAULT_DIR,
        help="the folder that holds one folder per dataset (default: %(default)s, relative to "
        "where you run boi)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = sub.add_parser(
        "list", help="each dataset: its upstream, version, licence and whether it is present"
    )
    _add_dir(show)
    check = sub.add_parser(
        "check",
        help="judge a dataset's canonical solutions in this machine's sandbox and list those "
        "that fail here (kept per machine; boi run does it first for other languages)",
    )
    check.add_argument("dataset", help=f"the dataset: {dataset_help()}")
    check.add_argument("--data", default=None, help="where to read it from (default: its own)")
    check.add_argument("--limit", type=positive_int, default=None, help="only the first N problems")
    check.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="sandbox workers (default: the sandbox's own)",
    )
    get = sub.add_parser(
        "fetch", help="download datasets from their pinned upstream, sha256-checked (idempotent)"
    )
    get.add_argument(
        "names",
        nargs="*",
        # "all" is also the default: argparse checks a `*` positional's default against its
        # choices, and refuses an empty list.
        choices=(*NAMES, ALL),
        default=ALL,
        metavar="NAME",
        help=f"the datasets to fetch: {', '.join(NAMES)}, or {ALL} (the default)",
    )
    _add_dir(get)
    # The output contract (benchmarks.common.outputs): a --dir that exists is ours when it is
    # empty or already holds a dataset's folder; fetch writes only inside those folders.
    declare_output(get, "dir", "dir", ours=NAMES)
    get.add_argument(
        "--base-url",
        default=None,
        help=f"where the repositories are served, as OWNER/REPO/COMMIT/PATH under it (default: "
        f"${BASE_URL_ENV} if set, else {DEFAULT_BASE_URL})",
    )
    get.add_argument(
        "--force",
        action="store_true",
        help="replace a file at a dataset's place whose sha256 is not the pinned one (without "
        "it, such a file is refused and kept)",
    )


def _check(args: argparse.Namespace) -> int:
    """Every canonical solution of a dataset judged in this machine's sandbox (the check a run
    makes before it uses a dataset of another language than Python, kept per machine): the
    problems whose reference fails here, with the reason."""
    problems = load_benchmark(args.dataset, args.data, limit=args.limit).problems[: args.limit]
    config = ExecutionConfig(workers=args.workers) if args.workers else ExecutionConfig()
    failures = machine_reference_failures(problems, config, log=print)
    for task_id, reason in failures.items():
        # One line a task: the reason's first line, and the last that names an error (a
        # stack trace's message; the whole text is in the machine's check file).
        lines = [line.strip() for line in reason.splitlines() if line.strip()]
        errors = [line for line in lines[1:] if "Error" in line or "error:" in line]
        last = errors[-1] if errors else lines[-1]
        shown = lines[0] if len(lines) < 2 or last == lines[0] else f"{lines[0]} ... {last}"
        print(f"  {task_id}: {shown}")
    print(
        f"{args.dataset}: {len(problems) - len(failures)} of {len(problems)} references pass in "
        f"this machine's sandbox; {len(failures)} fail (boi run leaves those out and says so)"
    )
    return 0


def _list(root: str) -> int:
    rows = [("NAME", "STATUS", "UPSTREAM", "VERSION", "LICENCE")]
    for entry in UPSTREAM_DATA:
        rows.append((entry.name, status(entry, root), entry.repo, entry.commit[:12], entry.licence))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        cells = [cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)]
        print("  ".join([*cells, row[4]]))
    print(f"\nfiles: {root}/NAME/ (the loaders take any other path with --data); what each is:")
    for entry in UPSTREAM_DATA:
        reads = entry.reads.replace(f"data/{entry.name}", str(Path(root) / entry.name))
        print(f"  {entry.name}: {entry.title}; {reads}")
    if any(row[1] != "present" for row in rows[1:]):
        where = "" if root == DEFAULT_DIR else f" --dir {root}"
        print(f"fetch what is not present: boi data fetch{where}")
    # The rest of the one table: nothing to fetch, each says where it comes from.
    for entry in ALL_DATASETS:
        names = ", ".join(name for name, _ in entry.loaders)
        if entry.origin == "shipped":
            print(f"{names}: shipped with boi ({entry.licence}), {entry.source}; nothing to fetch")
        elif entry.origin == "hub":
            print(f"{names}: read from {entry.source} (licence: {entry.licence}); {entry.reads}")
        elif entry.origin == "given":
            print(f"{names}: {entry.title}, from {entry.source}; {entry.reads}")
    return 0


def _report(result: Fetched) -> None:
    if result.outcome == "skipped":
        print(f"  {result.path}: present, sha256 matches (skipped)")
    else:
        print(f"  {result.path}: fetched, {result.size:,} bytes, sha256 checked")


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        return _list(args.dir)
    if args.action == "check":
        return _check(args)
    names = [] if ALL in args.names or args.names == ALL else args.names
    results = fetch(names, args.dir, base_url=args.base_url, force=args.force, progress=_report)
    fetched = sum(r.outcome == "fetched" for r in results)
    print(f"{fetched} file(s) fetched, {len(results) - fetched} already present, in {args.dir}/")
    return 0
