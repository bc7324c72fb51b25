"""How long full enumeration takes: every SocialBias-Bench task x 5 completions, every
combination of attribute values (Solar's coverage), through `boi bias test --completions`.

The completions are written here, five per task, of the shapes models give (a fair decision on
the related attributes; one that also tests a sensitive attribute; one that raises for some
values; one with a helper method; one that returns a non-boolean), so the run exercises every
path of the verdict. The whole pipeline is timed (reading the replies, planning, the sandbox's
outcome tables, the verdicts, the report), with the calls made and calls per second; with
`--compare-sampled` the sampled covering plan runs beside it on the same completions.

    .venv/bin/python scripts/bench_fairness_tables.py --data ../shared/data/socialbias_bench
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from bias.fairness_tests.run import load_fairness_config, run_fairness
from bias.fairness_tests.tasks import FairnessTask, load_fairness_tasks


def _value(task: FairnessTask, name: str) -> object:
    values = task.attribute(name).values
    return values[len(values) // 2]


def completions_for(task: FairnessTask) -> list[str]:
    """Five method bodies (continuations of the prompt) for one task."""
    related = [r for r in task.related if r not in task.sensitive] or list(task.related)
    first = related[0] if related else task.attributes[-1].name
    threshold = _value(task, first)
    fair = f"        return self.{first} >= {threshold!r}\n"
    sensitive = task.sensitive[0]
    biased = (
        f"        if self.{sensitive} == {_value(task, sensitive)!r}:\n"
        "            return True\n"
        f"        return self.{first} >= {threshold!r}\n"
    )
    raises = (
        "        table = {'single': 1, 'married': 2}\n"
        "        return table[self.marital_status] > 1 and "
        f"self.{first} >= {threshold!r}\n"
    )
    helper = (
        "        return self._eligible()\n\n"
        "    def _eligible(self) -> bool:\n"
        f"        return self.{first} >= {threshold!r} and self.age > 30\n"
    )
    non_boolean = f"        return 'yes' if self.{first} >= {threshold!r} else 'no'\n"
    return [fair, biased, raises, helper, non_boolean]


def run(data: str, coverage: str, out: Path, completions: Path, workers: int) -> dict[str, object]:
    config = load_fairness_config(
        None,
        {
            "out_dir": str(out),
            "suite": "socialbias_bench",
            "data": data,
            "completions": str(completions),
            "completions_chat": False,
            "cases": {"coverage": coverage},
            "execution": {"workers": workers, "reference_timing": False},
            "bootstrap": 200,
        },
    )
    started = time.perf_counter()
    outcome = run_fairness(config, log=lambda _: None)
    seconds = time.perf_counter() - started
    summary = json.loads(outcome.report.json.read_text(encoding="utf-8"))
    group = summary["groups"][0]
    calls = int(group["calls"])
    return {
        "coverage": coverage,
        "seconds": round(seconds, 1),
        "completions": group["completions"],
        "executable": group["executable"],
        "counts": group["counts"],
        "calls": calls,
        "calls_per_second": round(calls / seconds),
        "cbs": group["cbs"]["overall"]["value"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="SocialBias-Bench tasks.json or its folder")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--workers", type=int, default=0, help="sandbox workers (0: one per core)")
    parser.add_argument("--compare-sampled", action="store_true", help="also the sampled plan")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tasks, issues = load_fairness_tasks("socialbias_bench", args.data)
    tasks = tasks[: args.limit] if args.limit else tasks
    with tempfile.TemporaryDirectory(prefix="boi-bench-fairness-") as scratch:
        root = Path(scratch)
        completions = root / "completions.jsonl"
        with completions.open("w", encoding="utf-8") as handle:
            for task in tasks:
                for index, body in enumerate(completions_for(task)):
                    record = {"task_id": task.task_id, "completion": body, "sample_index": index}
                    handle.write(json.dumps(record) + "\n")
        print(f"{len(tasks)} tasks x 5 completions ({len(issues)} tasks not loadable)")
        sides = ["exhaustive", "sampled"] if args.compare_sampled else ["exhaustive"]
        for coverage in sides:
            figures = run(args.data, coverage, root / coverage, completions, args.workers)
            print(json.dumps(figures))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
