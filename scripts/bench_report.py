"""Time `build_report` at HumanEval scale with synthetic verdicts (no model needed).

    python scripts/bench_report.py [--out DIR] [--n-low 10] [--n-high 100]

The whole catalogue of HumanEval (keywords from a tiny in-process embedder, as in the tests),
two settings (n_low samples at T=0.2, n_high at T=0.8), verdicts drawn from a seeded generator.
Prints rows, the time for the numbers alone and for the full report, and the HTML size.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.loaders import load_benchmark
from benchmarks.report import build_report, summarize_results
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.keywords import KeywordConfig
from perturb.transforms import transform_labels
from tests.keyword_helpers import tiny_embedder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="report folder (default: a temporary one)")
    parser.add_argument("--n-low", type=int, default=10)
    parser.add_argument("--n-high", type=int, default=100)
    args = parser.parse_args()

    problems = load_benchmark("humaneval").problems
    # keep_unchanged=False: the figure in docs/explanation/performance.md (1,640 problems and variants) counts real variants.
    config = PerturbConfig(
        keywords=KeywordConfig(code_threshold=0.3, context_threshold=0.9), keep_unchanged=False
    )
    variants = {p.task_id: p for p in run_catalogue(problems, config, tiny_embedder()).variants}
    rng = random.Random(0)
    rows = []
    for setting, n in (("T=0.2", args.n_low), ("T=0.8", args.n_high)):
        for task_id, p in variants.items():
            rate = rng.random() * (1.0 if p.transform == "original" else 0.7)
            for i in range(n):
                ok = rng.random() < rate
                rows.append(
                    {
                        "dataset": "humaneval",
                        "model": "synthetic",
                        "setting": setting,
                        "task_id": task_id,
                        "source_task_id": p.source_task_id,
                        "transform": p.transform,
                        "sample_index": i,
                        "completion": p.canonical_solution if ok else "    return None\n",
                        "passed": ok,
                        "result": "passed" if ok else "failed: AssertionError",
                    }
                )
    ks = {"T=0.2": [1], "T=0.8": [1, args.n_high]}
    start = time.perf_counter()
    summarize_results(rows, variants, ks, labels=transform_labels())
    numbers = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        start = time.perf_counter()
        paths = build_report(rows, variants, ks, out, labels=transform_labels())
        full = time.perf_counter() - start
        size = paths.html.stat().st_size
    print(
        f"{len(variants)} problems and variants, {len(rows)} rows: numbers {numbers:.1f} s, "
        f"full report {full:.1f} s, report.html {size / 1e6:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
