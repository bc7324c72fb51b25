"""Keyword extraction + the full catalogue: batched (ours) vs a naive per-problem baseline.

One command runs both, side by side, on the same problems with the embedded all-MiniLM-L6-v2,
each phase in its own child process (so its peak memory is its own):
- batched: `run_catalogue` over the whole dataset (KeyBERT called once with precomputed
  embeddings, each distinct string embedded once);
- naive: KeyBERT called per problem and the filters embedding the problem's words per problem
  (a fresh embedding cache for every problem), then the same transformations.
Each child loads the model and warms it up outside its timing. The parent checks that both
produce the same variants and keyword decisions, and reports times, the ratio and peak RSS.

    .venv/bin/python scripts/bench_keywords.py [--data-mbpp PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCORES = ("keybert_score", "anchor_similarity", "context_similarity")


def _phase(phase: str, mbpp: str, limit: int | None, out: str) -> None:
    from benchmarks.common.models import load_sentence_transformer
    from benchmarks.loaders import load_benchmark
    from perturb.catalogue import PerturbConfig, run_catalogue
    from perturb.keywords import CachedEmbedder

    problems = load_benchmark("humaneval").problems + load_benchmark("mbpp", mbpp).problems
    problems = problems[:limit] if limit else problems
    model = load_sentence_transformer("embedded")

    def encode(texts: list[str], batch_size: int):
        return model.encode(
            texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
        )

    config = PerturbConfig()
    run_catalogue(problems[:3], config, CachedEmbedder(encode))  # warm-up, not timed
    start = time.perf_counter()
    if phase == "batched":
        result = run_catalogue(problems, config, CachedEmbedder(encode))
        variants, keywords = result.variants, result.keywords
    else:
        variants, keywords = [], {}
        for problem in problems:
            result = run_catalogue(
                [problem], config, CachedEmbedder(encode)
            )  # per-problem KeyBERT + embeddings
            variants += result.variants
            keywords.update(result.keywords)
    seconds = time.perf_counter() - start
    record = {
        "seconds": seconds,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "droppable": {k: [(d.keyword, d.rule) for d in a.droppable] for k, a in keywords.items()},
        "variants": [v.to_json() for v in variants],
    }
    Path(out).write_text(json.dumps(record), encoding="utf-8")


def _without_scores(record: dict) -> tuple[dict, list[float]]:
    values = []
    for step in record["lineage"]:
        for removed in step["changes"].get("removed", []):
            values += [removed.pop(k) or 0.0 for k in SCORES if k in removed]
    return record, values


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-mbpp", default=str(ROOT.parent / "shared/data/mbpp/mbpp.jsonl"))
    parser.add_argument("--limit", type=int, default=None, help="first N problems")
    parser.add_argument("--phase", choices=["batched", "naive"], help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        _phase(args.phase, args.data_mbpp, args.limit, args.result)
        return

    outputs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for phase in ("batched", "naive"):
            path = Path(scratch, f"{phase}.json")
            command = [
                sys.executable,
                __file__,
                "--phase",
                phase,
                "--result",
                str(path),
                "--data-mbpp",
                args.data_mbpp,
            ]
            command += ["--limit", str(args.limit)] if args.limit else []
            subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
            outputs[phase] = json.loads(path.read_text(encoding="utf-8"))
    batched, naive = outputs["batched"], outputs["naive"]
    # Scores may differ in the 4th decimal: a text embedded in a different batch is padded
    # differently. Everything else (keywords, rules, spans, prompts) must match exactly.
    pairs = [
        (_without_scores(a), _without_scores(b))
        for a, b in zip(batched["variants"], naive["variants"], strict=True)
    ]
    same_keywords = batched["droppable"] == naive["droppable"]
    same_variants = all(a[0] == b[0] for a, b in pairs)
    max_diff = max(
        (abs(x - y) for a, b in pairs for x, y in zip(a[1], b[1], strict=True)), default=0.0
    )
    report = {
        "problems": len(batched["droppable"]),
        "variants": len(batched["variants"]),
        "batched_s": round(batched["seconds"], 2),
        "naive_s": round(naive["seconds"], 2),
        "speedup": round(naive["seconds"] / batched["seconds"], 2),
        "identical_droppable_keywords": same_keywords,
        "identical_variants_except_scores": same_variants,
        "max_score_difference": round(max_diff, 6),
        "peak_rss_mb": {
            "batched": round(batched["max_rss_mb"], 1),
            "naive": round(naive["max_rss_mb"], 1),
        },
    }
    print(json.dumps(report, indent=2))
    if not (same_keywords and same_variants):
        sys.exit("outputs differ between the batched and the naive path")


if __name__ == "__main__":
    main()
