"""Benchmark: the batched critic scorer against a naive one-prompt-at-a-time loop.

Both score the same prompts (a seeded sample of HumanEval + MBPP challenges and their variants)
with the same model in the same process. The work is cut into chunks of problems and the two
scorers alternate chunk by chunk, so a busy shared machine slows both alike. Reported: wall and
CPU seconds, the speed ratio, the peak resident memory each added above the loaded model
(sampled every 10 ms), and the largest difference between their scores (they must agree to fp
tolerance).

Variants come from `perturb` (Anonymize, Drop One, Drop All, Anon+Drop One, Anon+Drop All, with
and without the context-aware filter) when `--variants perturb`; `--variants edits` uses simple
text edits (rename the function, drop description words) that need no keyword model.

    .venv/bin/python scripts/bench_critic.py            # 200 challenges, embedded SmolLM2
    .venv/bin/python scripts/bench_critic.py --n 20     # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MBPP_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "mbpp" / "mbpp.jsonl"


def text_edit_variants(problem):
    """Stand-ins for the transformations: rename the function to `func` (Anonymize); drop one /
    all of the first three longer description words (Drop One / Drop All); and both combined."""
    prompt, name = problem.prompt, problem.entry_point
    description = problem.block("description")
    out = [prompt.replace(name, "func")]
    if description is None:
        return out
    start = prompt.index(description.text)
    words = [m for m in re.finditer(r"\b[a-z]{5,}\b", description.text) if m.group() not in name]
    spans = [(start + m.start(), start + m.end() + 1) for m in words[:3]]
    for a, b in spans:
        out.append(prompt[:a] + prompt[b:])
    if spans:
        dropped = prompt
        for a, b in reversed(spans):
            dropped = dropped[:a] + dropped[b:]
        out.append(dropped)
    out += [v.replace(name, "func") for v in out[1:]]
    return out


def perturb_variants(problems, seed):
    from critic.table2 import make_variants

    by_source = {p.task_id: [] for p in problems}
    for caf in (True, False):
        for variants in make_variants(problems, caf, seed).values():
            for variant in variants:
                by_source[variant.source_task_id].append(variant.prompt)
    return [by_source[p.task_id] for p in problems]


class PeakRss:
    """Peak resident set size of this process while the block runs, sampled every 10 ms."""

    def __init__(self):
        self.peak = 0

    @staticmethod
    def rss():
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def __enter__(self):
        self.base = self.rss()
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            self._stop.wait(0.01)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.rss())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="challenges (HumanEval + MBPP)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--mbpp", default=str(MBPP_DEFAULT), help="MBPP JSONL")
    parser.add_argument("--variants", choices=["perturb", "edits"], default="perturb")
    parser.add_argument("--chunk", type=int, default=20, help="problems per alternation chunk")
    parser.add_argument("--out", default="runs/bench_critic.json")
    args = parser.parse_args()

    import torch

    from critic.scoring import HFScorer, HFScorerConfig
    from critic.table2 import Table2Config, sample_challenges

    problems = sample_challenges(Table2Config(n=args.n, seed=args.seed, mbpp_data=args.mbpp))
    if args.variants == "perturb":
        variants = perturb_variants(problems, args.seed)
    else:
        variants = [text_edit_variants(p) for p in problems]
    groups = [[p.prompt] + vs for p, vs in zip(problems, variants, strict=True)]
    rng = random.Random(args.seed)
    rng.shuffle(groups)  # chunks mix HumanEval and MBPP
    total_prompts = sum(len(g) for g in groups)
    distinct = len({p for g in groups for p in g})
    print(
        f"{len(problems)} challenges, {total_prompts} prompts ({distinct} distinct), "
        f"variants from {args.variants}; torch threads {torch.get_num_threads()}",
        flush=True,
    )

    scorer = HFScorer(HFScorerConfig(model=args.model))
    scorer.score([groups[0][0]])  # warm-up: first-call allocations count for neither side
    timing = {"batched": [0.0, 0.0, 0], "naive": [0.0, 0.0, 0]}  # wall, cpu, peak bytes
    results = {"batched": [], "naive": []}
    for start in range(0, len(groups), args.chunk):
        prompts = [p for g in groups[start : start + args.chunk] for p in g]
        for name, fn in (("batched", scorer.score), ("naive", scorer.score_one_at_a_time)):
            with PeakRss() as memory:
                wall, cpu = time.perf_counter(), time.process_time()
                results[name] += fn(prompts)
                timing[name][0] += time.perf_counter() - wall
                timing[name][1] += time.process_time() - cpu
            timing[name][2] = max(timing[name][2], memory.peak - memory.base)
        done = min(start + args.chunk, len(groups))
        print(
            f"  {done}/{len(groups)} challenges: batched {timing['batched'][0]:.0f} s, "
            f"naive {timing['naive'][0]:.0f} s",
            flush=True,
        )

    max_total = max(abs(a.total - b.total) for a, b in zip(*results.values(), strict=True))
    max_rel = max(
        abs(a.total - b.total) / abs(b.total) for a, b in zip(*results.values(), strict=True)
    )
    max_token = max(
        max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True))
        for a, b in zip(*results.values(), strict=True)
    )
    same_tokens = all(a.offsets == b.offsets for a, b in zip(*results.values(), strict=True))
    identical = same_tokens and max_rel <= 1e-5 and max_token <= 1e-3
    report = {
        "challenges": len(problems),
        "prompts": total_prompts,
        "distinct_prompts": distinct,
        "variants": args.variants,
        "model": scorer.describe()["model"],
        "torch_threads": torch.get_num_threads(),
        "batched_wall_s": round(timing["batched"][0], 2),
        "naive_wall_s": round(timing["naive"][0], 2),
        "batched_cpu_s": round(timing["batched"][1], 2),
        "naive_cpu_s": round(timing["naive"][1], 2),
        "ratio_wall": round(timing["naive"][0] / timing["batched"][0], 2),
        "ratio_cpu": round(timing["naive"][1] / timing["batched"][1], 2),
        "batched_peak_extra_mib": round(timing["batched"][2] / 2**20, 1),
        "naive_peak_extra_mib": round(timing["naive"][2] / 2**20, 1),
        "max_abs_diff_total": max_total,
        "max_rel_diff_total": max_rel,
        "max_abs_diff_token": max_token,
        "identical_to_fp_tolerance": identical,
    }
    print(json.dumps(report, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"batched {report['batched_wall_s']} s vs naive {report['naive_wall_s']} s: "
        f"{report['ratio_wall']}x (target >= 3x); scores identical: {identical}"
    )
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
