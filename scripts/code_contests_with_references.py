"""Add our own Python 3 reference solutions to the CodeContests sample, in the upstream
`solutions` field, so `boi run --config reference` can check the harness on it (the sample
kept the statements and public tests only).

    .venv/bin/python scripts/code_contests_with_references.py \
        ../shared/data/code_contests/code_contests_sample_train_short.jsonl /tmp/cc_with_refs.jsonl
    .venv/bin/boi run --config reference --dataset code_contests --data /tmp/cc_with_refs.jsonl \
        --out runs/reference-code-contests

The solutions (tests/data/code_contests_reference_solutions.json) were written for boi's tests;
see the .md beside them for how they were checked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common.jsonl import iter_jsonl

SOLUTIONS = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "data"
    / "code_contests_reference_solutions.json"
)
PYTHON3 = 3


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    solutions = json.loads(SOLUTIONS.read_text(encoding="utf-8"))["solutions"]
    rows, missing = [], []
    for _, row in iter_jsonl(source):
        if row["name"] in solutions:
            row["solutions"] = {"language": [PYTHON3], "solution": [solutions[row["name"]]]}
        else:
            missing.append(row["name"])
        rows.append(row)
    target.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    print(f"{target}: {len(rows) - len(missing)} of {len(rows)} problems with a reference solution")
    for name in missing:
        print(f"  no reference solution for {name!r} (it will be dropped by the loader)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
