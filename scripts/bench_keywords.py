"""Keyword extraction + the full catalogue: batched (ours) vs a naive per-problem baseline.

Both run in this one process on the same problems with the embedded all-MiniLM-L6-v2:
- batched: `run_catalogue` over the whole dataset (KeyBERT called once with precomputed
  embeddings, each distinct string embedded once);
- naive: KeyBERT called per problem and the filters embedding the problem's words per problem
  (a fresh embedding cache for every problem), then the same transformations.
It checks the two produce the same variants and keyword decisions, and reports times, the
ratio and peak memory (ru_maxrss, and tracemalloc's Python-heap peak per phase).

    .venv/bin/python scripts/bench_keywords.py [--data-mbpp PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.loaders import load_benchmark  # noqa: E402
from perturb.catalogue import PerturbConfig, run_catalogue  # noqa: E402
from perturb.keywords import CachedEmbedder, load_sentence_transformer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--data-mbpp",
        default=str(Path(__file__).resolve().parents[2] / "shared/data/mbpp/mbpp.jsonl"),
    )
    parser.add_argument("--limit", type=int, default=None, help="first N problems of each dataset")
    args = parser.parse_args()

    problems = (
        load_benchmark("humaneval").problems + load_benchmark("mbpp", args.data_mbpp).problems
    )
    problems = problems[: args.limit] if args.limit else problems
    model = load_sentence_transformer("embedded")

    def encode(texts: list[str], batch_size: int):
        return model.encode(
            texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
        )

    config = PerturbConfig()
    tracemalloc.start()
    start = time.perf_counter()
    batched = run_catalogue(problems, config, CachedEmbedder(encode))
    batched_s = time.perf_counter() - start
    batched_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()

    start = time.perf_counter()
    naive_variants, naive_keywords = [], {}
    for problem in problems:
        result = run_catalogue(
            [problem], config, CachedEmbedder(encode)
        )  # per-problem KeyBERT + embeddings
        naive_variants += result.variants
        naive_keywords.update(result.keywords)
    naive_s = time.perf_counter() - start
    naive_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    def droppable(keywords: dict) -> dict:
        return {k: [(d.keyword, d.rule) for d in a.droppable] for k, a in keywords.items()}

    # Scores may differ in the 4th decimal: a text embedded in a different batch is padded
    # differently. Everything else (keywords, rules, spans, prompts) must match exactly.
    scores = ("keybert_score", "anchor_similarity", "context_similarity")

    def without_scores(variant) -> tuple[dict, list[float]]:
        record, values = variant.to_json(), []
        for step in record["lineage"]:
            for removed in step["changes"].get("removed", []):
                values += [removed.pop(k) or 0.0 for k in scores if k in removed]
        return record, values

    pairs = [
        (without_scores(a), without_scores(b))
        for a, b in zip(batched.variants, naive_variants, strict=True)
    ]
    same_keywords = droppable(batched.keywords) == droppable(naive_keywords)
    same_variants = all(a[0] == b[0] for a, b in pairs)
    max_score_diff = max(
        (abs(x - y) for a, b in pairs for x, y in zip(a[1], b[1], strict=True)), default=0.0
    )
    report = {
        "problems": len(problems),
        "variants": len(batched.variants),
        "batched_s": round(batched_s, 2),
        "naive_s": round(naive_s, 2),
        "speedup": round(naive_s / batched_s, 2),
        "identical_droppable_keywords": same_keywords,
        "identical_variants_except_scores": same_variants,
        "max_score_difference": round(max_score_diff, 6),
        "peak_python_heap_mb": {
            "batched": round(batched_peak / 2**20, 1),
            "naive": round(naive_peak / 2**20, 1),
        },
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(report, indent=2))
    if not (same_keywords and same_variants):
        sys.exit("outputs differ between the batched and the naive path")


if __name__ == "__main__":
    main()
