"""Pin the keyword picks a run used: write the keyword file (`keyword_file` in a `boi run`
config, `boi perturb --keyword-file`) that makes that run's keyword-dropping variants again,
whatever later keyword rules do.

    .venv/bin/python scripts/pin_keywords.py RUN_DIR OUT.jsonl

RUN_DIR is a `boi run` directory whose transformations include drop_all (and anon_drop_all,
to tell which picks only the function's name recovers); the picks come from its variants'
lineage, which records every removed keyword with its spans. docs/results.md pins its table so:
`scripts/pin_keywords.py /tmp/qwen-humaneval docs/results/qwen-humaneval-keywords.jsonl`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.common.jsonl import write_jsonl
from perturb.keyword_file import picks_from_variants


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    problems = args.run_dir / "problems.jsonl"
    if not problems.is_file():
        print(f"{problems} does not exist; pass a boi run directory.", file=sys.stderr)
        return 2
    with problems.open(encoding="utf-8") as handle:
        variants = [json.loads(line) for line in handle if line.strip()]
    try:
        lines = picks_from_variants(variants)
    except ValueError as err:
        print(f"{args.run_dir}: {err}", file=sys.stderr)
        return 2
    write_jsonl(args.out, lines)
    picks = sum(len(line["decisions"]) for line in lines)
    print(f"wrote {args.out}: {len(lines)} problems, {picks} droppable picks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
