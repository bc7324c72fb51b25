"""The README's real-model table from a run directory's report (`report/table.json`): pass@k
per transformation and its change against Original with the paired bootstrap interval, one
column group per dataset (HumanEval and HumanEval+ side by side), and whether the interval
separates the change from zero.

    .venv/bin/python scripts/results_table.py RUN_DIR [--model LABEL] [--setting LABEL]

RUN_DIR is any `boi run` directory, e.g. the committed one of docs/results.md once extracted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _change(cell: dict[str, Any]) -> str:
    if cell.get("relative_drop") is None:
        return "-"
    # The report's relative drop is positive when pass@k falls; the table shows the change.
    # (+ 0.0: no "-0.0" where nothing changed)
    change = -100 * cell["relative_drop"] + 0.0
    low, high = -100 * cell["drop_ci_high"] + 0.0, -100 * cell["drop_ci_low"] + 0.0
    separated = " *" if low > 0 or high < 0 else ""
    return f"{change:+.1f}% [{low:+.1f}, {high:+.1f}]{separated}"


def results_table(table: dict[str, Any], model: str | None, setting: str | None) -> str:
    columns = [
        (i, c)
        for i, c in enumerate(table["columns"])
        if (model is None or c["model"] == model) and (setting is None or c["setting"] == setting)
    ]
    if not columns:
        raise SystemExit("no column of the report matches --model / --setting")
    header = ["setting"]
    for _, column in columns:
        header += [f"{column['dataset']} pass@{column['k']} (%)", "change vs Original [95% CI]"]
    header.append("problems")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in table["rows"]:
        cells = [row["label"]]
        problems = set()
        for index, _ in columns:
            cell = row["cells"][index] or {}
            value = cell.get("pass_at_k")
            cells += ["-" if value is None else f"{100 * value:.1f}", _change(cell)]
            problems.add(cell.get("problems"))
        cells.append(" / ".join(str(p) for p in sorted(problems, key=str)))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("`*`: the 95% interval excludes zero.")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--model", help="a model label of the run (default: every column)")
    parser.add_argument("--setting", help="a setting label of the run (default: every column)")
    args = parser.parse_args()
    path = args.run_dir / "report" / "table.json"
    if not path.is_file():
        print(f"{path} does not exist; pass a boi run directory with a report.", file=sys.stderr)
        return 2
    print(results_table(json.loads(path.read_text(encoding="utf-8")), args.model, args.setting))
    return 0


if __name__ == "__main__":
    sys.exit(main())
