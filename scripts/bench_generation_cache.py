"""Benchmark: what the generation cache saves on a fixed small protocol.

Protocol: the first `--problems` HumanEval problems x the whole transformation catalogue
(`perturb.run_catalogue`, embedded all-MiniLM-L6-v2 for keywords), n samples per variant at
T=0.8. Counted: samples a run without cache or de-duplication would generate (variants x n),
samples actually generated on a fresh cache (distinct prompts x n), and the backend requests.
Then the finished run is run again and timed: everything must come from the cache.

By default the generator is a tiny randomly initialised Llama built in-process (hidden 32,
2 layers), so the script takes seconds; the counts do not depend on the model. `--model
embedded` uses the real SmolLM2-135M (minutes on a CPU).

    .venv/bin/python scripts/bench_generation_cache.py
    .venv/bin/python scripts/bench_generation_cache.py --model embedded --max-new-tokens 64
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


class CountingProxy:
    """Forwards to a backend and counts what it is asked for."""

    def __init__(self, backend):
        self.backend = backend
        self.identity = backend.identity
        self.max_samples_per_call = backend.max_samples_per_call
        self.requests = 0
        self.samples = 0

    def complete(self, prompt, decoding, indices):
        return self.backend.complete(prompt, decoding, indices)

    def complete_many(self, requests, decoding):
        for position, texts in self.backend.complete_many(requests, decoding):
            self.requests += 1
            self.samples += len(texts)
            yield position, texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=10)
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--model", default="tiny", help="'tiny' (in-process) or any hf model")
    parser.add_argument("--out", default="runs/bench_generation_cache")
    args = parser.parse_args()

    from benchmarks.generation import BackendSpec, DecodingConfig, generate_samples, load_backend
    from benchmarks.loaders import load_benchmark
    from perturb.catalogue import run_catalogue

    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    started = time.perf_counter()
    problems = load_benchmark("humaneval").problems[: args.problems]
    catalogue = run_catalogue(problems)
    perturb_s = time.perf_counter() - started
    prompts = {v.task_id: v.prompt for v in catalogue.variants}
    per_transform = Counter(v.transform for v in catalogue.variants)
    originals = {
        v.source_task_id: v.prompt for v in catalogue.variants if v.transform == "original"
    }
    same_as_original = Counter(
        v.transform
        for v in catalogue.variants
        if v.transform != "original" and v.prompt == originals.get(v.source_task_id)
    )

    started = time.perf_counter()
    if args.model == "tiny":
        from tests.generation_helpers import tiny_backend

        backend = tiny_backend(batch_size=8)
        model_note = "tiny random Llama built in-process (hidden 32, 2 layers), NOT a real model"
    else:
        backend = load_backend(BackendSpec(kind="hf", model=args.model, device="cpu"))
        model_note = backend.identity
    load_s = time.perf_counter() - started
    decoding = DecodingConfig(
        temperature=args.temperature, top_p=0.95, n=args.n, max_new_tokens=args.max_new_tokens
    )
    cache = out / "generations.jsonl"

    first_backend = CountingProxy(backend)
    started = time.perf_counter()
    first = generate_samples(first_backend, prompts, decoding, cache, progress=True)
    first_s = time.perf_counter() - started

    rerun_backend = CountingProxy(backend)
    started = time.perf_counter()
    rerun = generate_samples(rerun_backend, prompts, decoding, cache, progress=False)
    rerun_s = time.perf_counter() - started
    assert rerun.completions == first.completions and rerun_backend.samples == 0

    needed = first.requested_samples
    result = {
        "model": model_note,
        "problems": len(problems),
        "variants": len(prompts),
        "variants_per_transform": dict(per_transform),
        "variants_identical_to_their_original": dict(same_as_original),
        "distinct_prompts": first.unique_prompts,
        "n": args.n,
        "max_new_tokens": args.max_new_tokens,
        "samples_needed_without_cache_or_dedup": needed,
        "samples_generated_first_run": first_backend.samples,
        "backend_requests_first_run": first_backend.requests,
        "saving_from_dedup": f"{1 - first_backend.samples / needed:.1%}",
        "empty_completions": len(first.empty),
        "samples_generated_rerun": rerun_backend.samples,
        "perturb_s": round(perturb_s, 1),
        "model_load_s": round(load_s, 1),
        "first_run_s": round(first_s, 2),
        "rerun_s": round(rerun_s, 2),
    }
    (out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nmodel: {model_note}")
    print(
        f"{len(problems)} HumanEval problems x catalogue -> {len(prompts)} variants "
        f"({first.unique_prompts} distinct prompts), n={args.n}"
    )
    print("variants per transform:", dict(per_transform))
    print("variants whose prompt equals their original:", dict(same_as_original) or "none")
    print(f"samples needed without cache/dedup: {needed}")
    print(
        f"samples generated (fresh cache):    {first_backend.samples} in "
        f"{first_backend.requests} requests, {first_s:.1f} s  -> saving {result['saving_from_dedup']}"
    )
    print(f"rerun of the finished run:          {rerun_backend.samples} generated, {rerun_s:.2f} s")
    print(f"summary: {first.summary()}")
    print(f"written: {out / 'result.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
