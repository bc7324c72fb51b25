"""Do two torch processes on a small machine slow each other down, and by how much, per thread count?

Each configuration runs one or two child processes at once; every child loads the embedded
SmolLM2-135M, warms it up, then times `--samples` greedy generations of `--tokens` new tokens on a
fixed HumanEval prompt (seconds per sample). Configurations, in paired rounds (each round runs
all of them one after another, so a load that other users put on the machine hits every
configuration alike):

- alone, torch's own thread count (what boi did before `benchmarks.common.models.configure_threads`);
- two at once, torch's own thread count each;
- alone, and two at once, with the thread count boi now chooses (`default_threads()`), and with
  any `--threads` given.

It prints seconds per sample (median over rounds) and the slowdown of "two at once" against
"alone" for each thread count: the figure docs/explanation/performance.md quotes.

    .venv/bin/python scripts/bench_threads.py [--rounds 3] [--samples 2] [--tokens 32] [--threads 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TORCH = "torch"  # leave torch's own default alone


def _child(threads: str, samples: int, tokens: int) -> None:
    """One process: load, warm up, then print {"per_sample": s, "threads": n} on stdout."""
    import torch

    from benchmarks.common.models import configure_threads, load_causal_lm
    from benchmarks.loaders import load_benchmark

    own = torch.get_num_threads()  # torch's default, before boi's load sets its own
    model, tokenizer = load_causal_lm(None)
    configure_threads(own if threads == TORCH else int(threads))
    prompt = load_benchmark("humaneval").problems[0].prompt
    inputs = tokenizer(prompt, return_tensors="pt")

    def generate(n: int) -> None:
        with torch.no_grad():
            model.generate(
                **inputs,
                max_new_tokens=n,
                min_new_tokens=n,
                do_sample=False,
                pad_token_id=tokenizer.eos_token_id,
            )

    generate(2)  # warm-up: first-call allocations
    start = time.perf_counter()
    for _ in range(samples):
        generate(tokens)
    seconds = (time.perf_counter() - start) / samples
    print(json.dumps({"per_sample": seconds, "threads": torch.get_num_threads()}), flush=True)


def _run_together(count: int, threads: str, samples: int, tokens: int) -> list[dict]:
    """Start `count` children at once (they load in parallel, then time in parallel)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("BOI_THREADS", None)  # each child says its own thread count
    command = [
        sys.executable,
        __file__,
        "--child",
        threads,
        "--samples",
        str(samples),
        "--tokens",
        str(tokens),
    ]
    children = [
        subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) for _ in range(count)
    ]
    results = []
    for child in children:
        out, _ = child.communicate()
        if child.returncode != 0:
            raise SystemExit(f"a child ({threads} threads) failed with exit {child.returncode}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=2, help="timed generations per child")
    parser.add_argument("--tokens", type=int, default=32, help="new tokens per generation")
    parser.add_argument("--threads", default="", help="more thread counts, comma-separated")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.samples, args.tokens)
        return 0

    from benchmarks.common.threads import default_threads

    counts = [TORCH, str(default_threads())]
    counts += [c for c in args.threads.split(",") if c and c not in counts]
    cpus = len(os.sched_getaffinity(0))
    print(
        f"{cpus} usable CPUs, load average {os.getloadavg()[0]:.1f}; boi's default "
        f"{default_threads()} thread(s); {args.rounds} rounds of {args.samples} x {args.tokens} "
        "greedy tokens of SmolLM2-135M per process",
        flush=True,
    )
    seconds: dict[tuple[str, int], list[float]] = {}
    shown: dict[str, int] = {}
    for round_ in range(args.rounds):
        for threads in counts:
            for together in (1, 2):
                results = _run_together(together, threads, args.samples, args.tokens)
                shown[threads] = results[0]["threads"]
                worst = max(r["per_sample"] for r in results)
                seconds.setdefault((threads, together), []).append(worst)
                print(
                    f"  round {round_ + 1}: {threads:>5} threads x{together}: "
                    + ", ".join(f"{r['per_sample']:.2f}" for r in results)
                    + " s/sample",
                    flush=True,
                )
    chosen = str(default_threads())
    best_pair = statistics.median(seconds[(chosen, 2)])
    print(
        f"{'threads':<18} {'alone s':>8} {'two at once s':>14} {'slowdown':>9} "
        f"{'two at once vs boi default':>27}"
    )
    for threads in counts:
        alone = statistics.median(seconds[(threads, 1)])
        pair = statistics.median(seconds[(threads, 2)])
        label = f"{shown[threads]} ({'torch default' if threads == TORCH else 'set'})"
        print(
            f"{label:<18} {alone:>8.2f} {pair:>14.2f} {pair / alone:>8.1f}x "
            f"{pair / best_pair:>26.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
