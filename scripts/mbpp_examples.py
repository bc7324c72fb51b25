"""Compute the outputs MBPP's prompts show and write them as the file boi ships.

MBPP's examples are what each reference solution returns on its asserts' inputs. They never
change for a given mbpp.jsonl, so they are computed once here (each solution twice, with two
hash seeds, under a limit of CPU time) and shipped as benchmarks/loaders/data/mbpp-examples.json,
with the sha256 of the MBPP file they belong to and of their own content: every machine then
shows the same prompts, however fast or loaded it is. Run it after a change to the prompt
construction (benchmarks.loaders.mbpp.EXAMPLES_CACHE_VERSION):

    .venv/bin/python scripts/mbpp_examples.py data/mbpp/mbpp.jsonl

It refuses to write outputs with a timeout in them (rerun on a quieter machine).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.common.atomic import write_text_atomic
from benchmarks.loaders import mbpp


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mbpp_jsonl", type=Path, help="the upstream mbpp.jsonl")
    parser.add_argument("--out", type=Path, default=mbpp.SHIPPED_EXAMPLES)
    args = parser.parse_args()
    outputs = mbpp.compute_reference_outputs(mbpp.example_jobs(args.mbpp_jsonl))
    timed_out = sorted(t for t, r in outputs.items() if mbpp.timed_out(r))
    if timed_out:
        print(f"{', '.join(timed_out)} timed out; nothing written.", file=sys.stderr)
        return 1
    ordered = dict(sorted(outputs.items(), key=lambda item: int(item[0].split("/")[1])))
    content = mbpp.shipped_examples(args.mbpp_jsonl, ordered)
    write_text_atomic(args.out, json.dumps(content, indent=1) + "\n")
    errors = {t: r["error"] for t, r in ordered.items() if "error" in r}
    print(f"wrote {args.out}: {len(ordered)} problems, {len(errors)} without examples")
    for task_id, error in errors.items():
        print(f"  {task_id}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
