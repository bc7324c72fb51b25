"""Completion mode's two readings on one model (docs/results.md, "Helpers past the function"):
a run with HumanEval's stops (the default) against a run of the same prompts with decoding
`keep_helpers`.

    python scripts/compare_readings.py candidates DEFAULT_RUN
    python scripts/compare_readings.py compare DEFAULT_RUN HELPERS_RUN

`candidates` lists the default run's Original samples whose verdict `keep_helpers` can change:
those whose completed function looks up a global that neither the prompt, nor Python's
built-ins, nor the function's own module binds (a helper cut off after it: `keep_helpers`
appends only statements binding such names), and those whose completion does not parse.
Every other sample reads to the same function with nothing appended (greedy decoding writes
the same text up to the default's stop; `compare` checks that on every prompt both runs
generated), so the same verdict.

`compare` prints, for every dataset both runs judged, pass@1 of the samples both have under
each reading, the problems whose verdict differs, and pass@1 over all of the default run's
samples with the compared ones' verdicts replaced, which holds only when every sample left out
is no candidate (checked: the script refuses otherwise).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boi
from benchmarks.generation import truncate_at_stop
from benchmarks.generation.replies import (
    _call_time_names,
    _defs_named,
    _prompt_module_names,
    prompt_function_name,
)

Key = tuple[str, str]  # (dataset, task id)


def _decoding(run: Any, setting: str) -> Any:
    return next(s.decoding for s in run.run_config.settings if s.label == setting)


def _rows(run: Any, setting: str, transform: str) -> dict[Key, dict[str, Any]]:
    return {
        (row["dataset"], row["task_id"]): row
        for row in run.results(setting=setting)
        if row.get("transform") == transform
    }


def _why_candidate(prompt: str, completion: str) -> str:
    """Why `keep_helpers` can change this completion's verdict ('' when it cannot)."""
    name = prompt_function_name(prompt)
    try:
        tree = ast.parse(prompt + completion)
    except SyntaxError:
        return "does not parse"
    found = _defs_named(tree.body, name) if name else []
    if not found:
        return ""
    module = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    free = _call_time_names(found[-1][0]) - _prompt_module_names(prompt, name or "")
    free -= set(dir(builtins)) | module
    return f"calls {', '.join(sorted(free))}, which nothing binds" if free else ""


def candidates(run: Any, setting: str, transform: str) -> dict[Key, str]:
    prompts = {p.task_id: p.prompt for p in run.problems()}
    rows = _rows(run, setting, transform)
    found = {key: _why_candidate(prompts[key[1]], row["completion"]) for key, row in rows.items()}
    return {key: why for key, why in sorted(found.items()) if why}


def _raw_texts(path: Path) -> dict[str, str]:
    """Prompt sha256 -> raw text of sample 0 in a run's generation cache."""
    texts: dict[str, str] = {}
    for line in (path / "generations.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("index") == 0:
            texts[record["prompt_sha256"]] = record["raw"]
    return texts


def compare(default_path: Path, helpers_path: Path, setting: str, transform: str) -> Iterator[str]:
    default, helpers = boi.open_run(default_path), boi.open_run(helpers_path)
    if _decoding(default, setting).keep_helpers or not _decoding(helpers, setting).keep_helpers:
        raise SystemExit("pass the default run first and the keep_helpers run second.")
    before, after = _rows(default, setting, transform), _rows(helpers, setting, transform)
    open_keys = candidates(default, setting, transform)
    for dataset in sorted({d for d, _ in after}):
        keys = sorted(k for k in after if k[0] == dataset and k in before)
        old = sum(before[k]["passed"] for k in keys)
        new = sum(after[k]["passed"] for k in keys)
        yield (
            f"{dataset}: {len(keys)} problems in both runs; default {old} pass, "
            f"keep_helpers {new} pass"
        )
        for key in keys:
            if before[key]["passed"] != after[key]["passed"]:
                flip = "fail -> pass" if after[key]["passed"] else "pass -> fail"
                yield (
                    f"  {key[1]}: {flip} (default: {before[key]['result'][:60]}; "
                    f"keep_helpers: {after[key].get('reply_shape', '')})"
                )
        everything = [k for k in before if k[0] == dataset]
        left_out = [k for k in everything if k not in after]
        if unjudged := [k[1] for k in left_out if k in open_keys]:
            yield f"  (no figure over all: candidates missing from the keep_helpers run: {unjudged})"
            continue
        total_old = sum(before[k]["passed"] for k in everything)
        total_new = total_old - old + new
        yield (
            f"  all {len(everything)}: default {total_old} ({100 * total_old / len(everything):.1f}%), "
            f"keep_helpers {total_new} ({100 * total_new / len(everything):.1f}%)"
        )
    stops = _decoding(default, setting).generation_stop
    old_raw, new_raw = _raw_texts(default_path), _raw_texts(helpers_path)
    shared = old_raw.keys() & new_raw.keys()
    agree = sum(new_raw[h].startswith(truncate_at_stop(old_raw[h], stops)) for h in shared)
    yield (
        f"greedy texts: {agree} of the {len(shared)} prompts both runs generated agree up to the "
        "default's stop"
    )


def main(argv: list[str] | None = None) -> Iterator[str]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("command", choices=["candidates", "compare"])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--setting", default="greedy")
    parser.add_argument("--transform", default="original")
    args = parser.parse_args(argv)
    if args.command == "candidates":
        found = candidates(boi.open_run(args.runs[0]), args.setting, args.transform)
        for (dataset, task), why in found.items():
            yield f"{dataset} {task}: {why}"
        ids = sorted({task.split(":", 1)[-1] for _, task in found})
        yield f"task_ids: [{', '.join(ids)}]"
    else:
        if len(args.runs) != 2:
            raise SystemExit("compare takes two runs: the default's, then keep_helpers'.")
        yield from compare(args.runs[0], args.runs[1], args.setting, args.transform)


if __name__ == "__main__":
    for line in main():
        print(line)
