"""`boi perturb humaneval` with the paper's transformations: the previous code path against today's,
side by side in one run.

- before: the code path as it was: the embedder's plain `model.encode` and torch's own thread
  count (one per core);
- after: today's: `perturb.keywords.sentence_transformer_embedder` (the same batches, with a
  progress bar) and boi's thread count (`benchmarks.common.models.configure_threads`).

Each side runs in its own child process (imports, model load and all, as a user waits for
them), alternating which goes first in each round, so load that other users put on the machine
falls on both. Every child writes the variants; the parent checks that both sides' variants
are byte-identical (sha256) and prints the seconds (median over rounds) and the ratio.

    .venv/bin/python scripts/bench_perturb.py [--rounds 2] [--dataset humaneval]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIDES = ("before", "after")


def _child(side: str, dataset: str, out: str) -> None:
    started = time.perf_counter()
    import torch

    own = torch.get_num_threads()  # torch's default, before a boi load sets boi's
    from benchmarks.common.jsonl import dumps
    from benchmarks.common.models import load_sentence_transformer
    from benchmarks.loaders import load_benchmark
    from perturb.catalogue import PerturbConfig, run_catalogue
    from perturb.keywords import CachedEmbedder, sentence_transformer_embedder

    config = PerturbConfig()
    problems = load_benchmark(dataset).problems
    if side == "before":
        model = load_sentence_transformer(config.keywords.embedder)
        torch.set_num_threads(own)  # undo boi's choice: torch's own default

        def encode(texts: list[str], batch_size: int):
            return model.encode(
                texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
            )

        embedder = CachedEmbedder(encode, config.keywords.batch_size)
    else:
        embedder = sentence_transformer_embedder(
            config.keywords.embedder, config.keywords.batch_size
        )
    loaded = time.perf_counter()
    result = run_catalogue(problems, config, embedder)
    finished = time.perf_counter()
    lines = "".join(dumps(v.to_json()) + "\n" for v in result.variants)
    record = {
        "total": finished - started,
        "catalogue": finished - loaded,
        "threads": torch.get_num_threads(),
        "variants": len(result.variants),
        "sha256": hashlib.sha256(lines.encode()).hexdigest(),
    }
    Path(out).write_text(json.dumps(record), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dataset", default="humaneval")
    parser.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.dataset, args.out)
        return 0
    print(
        f"{args.dataset}, the paper's transformations; {len(os.sched_getaffinity(0))} usable "
        f"CPUs, load average {os.getloadavg()[0]:.1f}; {args.rounds} rounds",
        flush=True,
    )
    records: dict[str, list[dict]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            order = SIDES if round_ % 2 == 0 else SIDES[::-1]
            for side in order:
                out = Path(tmp) / f"{side}-{round_}.json"
                command = [sys.executable, __file__, "--child", side, "--dataset", args.dataset]
                subprocess.run([*command, "--out", str(out)], check=True, stderr=subprocess.DEVNULL)
                record = json.loads(out.read_text(encoding="utf-8"))
                records[side].append(record)
                print(
                    f"  round {round_ + 1} {side:<6}: {record['total']:.1f} s in all, "
                    f"{record['catalogue']:.1f} s perturbing, {record['threads']} threads, "
                    f"{record['variants']} variants, sha256 {record['sha256'][:16]}",
                    flush=True,
                )
    digests = {r["sha256"] for side in SIDES for r in records[side]}
    print(f"{'side':<8} {'in all s':>9} {'perturbing s':>13}")
    medians = {}
    for side in SIDES:
        total = statistics.median(r["total"] for r in records[side])
        catalogue = statistics.median(r["catalogue"] for r in records[side])
        medians[side] = (total, catalogue)
        print(f"{side:<8} {total:>9.1f} {catalogue:>13.1f}")
    (before_total, before_cat), (after_total, after_cat) = medians["before"], medians["after"]
    print(
        f"ratio before/after: {before_total / after_total:.2f}x in all, "
        f"{before_cat / after_cat:.2f}x perturbing; variants identical: {len(digests) == 1}"
    )
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
