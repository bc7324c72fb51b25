"""Benchmark: the hf backend against a plain one-prompt-at-a-time `model.generate` loop.

Both complete the same prompts (the first `--problems` HumanEval prompts) with the same model in
the same process: greedy, `--max-new-tokens`, HumanEval's stop sequences (what `boi run` uses for
them). The plain loop is `model.generate(input_ids, max_new_tokens=..., do_sample=False)` on one
prompt at a time, with a stopping criterion that ends it at the first stop sequence (so neither
side generates past a stop). The backend runs once per batch size: its default, and each size
its default can pick on some device (`--batch-sizes` adds more). The prompts are cut into chunks
of `--chunk` and all sides take turns chunk by chunk (the order rotating), `--rounds` times over
all the prompts, so a busy shared machine slows every side alike.

Reported per side: wall and CPU seconds, samples/s, the speed ratio over the plain loop, and
whether its outputs are identical to the plain loop's, raw and after the stop cut. The exit
status is 1 when any output differs, else 0.

    .venv/bin/python scripts/bench_hf_generation.py                  # 32 prompts, 128 tokens
    .venv/bin/python scripts/bench_hf_generation.py --problems 8 --max-new-tokens 32  # quick
    .venv/bin/python scripts/bench_hf_generation.py --threads 1 --batch-sizes 1,2,4,32
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


class StopStrings:
    """The plain loop's stopping criterion: decode everything generated so far, stop once it
    contains a stop sequence (one row; independent of the backend's own criterion)."""

    def __init__(self, tokenizer, stop, prompt_width):
        self.tokenizer = tokenizer
        self.stop = tuple(stop)
        self.prompt_width = prompt_width

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        text = self.tokenizer.decode(input_ids[0, self.prompt_width :], skip_special_tokens=True)
        done = any(s in text for s in self.stop)
        return torch.tensor([done], dtype=torch.bool, device=input_ids.device)


def plain_loop(model, tokenizer, prompts, decoding, device):
    import torch
    from transformers import StoppingCriteriaList

    texts = []
    for prompt in prompts:
        input_ids = torch.tensor([tokenizer(prompt)["input_ids"]], device=device)
        criteria = StoppingCriteriaList([StopStrings(tokenizer, decoding.stop, input_ids.shape[1])])
        with torch.inference_mode():
            output = model.generate(
                input_ids,
                max_new_tokens=decoding.max_new_tokens,
                do_sample=False,
                stopping_criteria=criteria,
                pad_token_id=tokenizer.pad_token_id,
            )
        texts.append(tokenizer.decode(output[0, input_ids.shape[1] :], skip_special_tokens=True))
    return texts


def backend_run(backend, prompts, decoding):
    from benchmarks.generation import Request
    from benchmarks.generation._decoding import prompt_sha256

    requests = [Request(p, prompt_sha256(p), (0,)) for p in prompts]
    done = dict(backend.complete_many(requests, decoding))
    return [done[position][0] for position in range(len(prompts))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=32, help="first N HumanEval prompts")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--batch-sizes", default="", help="more batch sizes to run, comma-separated (e.g. 1,4)"
    )
    parser.add_argument(
        "--chunk",
        type=int,
        default=16,
        help="prompts per alternation chunk (at least the largest batch size, to fill it)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="times over all the prompts")
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--out", default="runs/bench_hf_generation.json")
    args = parser.parse_args()

    import torch

    from benchmarks.generation import BackendSpec, DecodingConfig, load_backend, truncate_at_stop
    from benchmarks.generation._hf import BATCH_SIZE_BY_DEVICE, HFBackend
    from benchmarks.loaders import load_benchmark

    if args.threads:
        torch.set_num_threads(args.threads)
    problems = load_benchmark("humaneval").problems[: args.problems]
    prompts = [p.prompt for p in problems]
    decoding = DecodingConfig(temperature=0, max_new_tokens=args.max_new_tokens)
    default = load_backend(BackendSpec(kind="hf", model=args.model, device=args.device))
    model, tokenizer = default.model, default.tokenizer
    sizes = sorted(
        {*BATCH_SIZE_BY_DEVICE.values(), *(int(s) for s in args.batch_sizes.split(",") if s)}
        - {default.batch_size}
    )
    sides = {"plain loop": None, f"hf default (batch {default.batch_size})": default}
    for size in sizes:
        spec = BackendSpec(kind="hf", model=args.model, device=args.device, batch_size=size)
        sides[f"hf batch {size}"] = HFBackend(spec, model=model, tokenizer=tokenizer)
    print(
        f"{len(prompts)} HumanEval prompts, greedy, max_new_tokens {args.max_new_tokens}, "
        f"stop {list(decoding.stop)}; {default.identity}; device {default.device}, "
        f"torch threads {torch.get_num_threads()}",
        flush=True,
    )

    # Warm-up: first-call allocations count for no side.
    warm_up = DecodingConfig(temperature=0, max_new_tokens=4)
    plain_loop(model, tokenizer, prompts[:1], warm_up, default.device)
    timing = {name: [0.0, 0.0] for name in sides}  # wall, cpu
    outputs: dict[str, list[str]] = {name: [] for name in sides}
    names = list(sides)
    turns = [
        (round_, start)
        for round_ in range(args.rounds)
        for start in range(0, len(prompts), args.chunk)
    ]
    for turn, (round_, start) in enumerate(turns):
        chunk = prompts[start : start + args.chunk]
        shift = turn % len(names)
        for name in names[shift:] + names[:shift]:
            backend = sides[name]
            wall, cpu = time.perf_counter(), time.process_time()
            if backend is None:
                texts = plain_loop(model, tokenizer, chunk, decoding, default.device)
            else:
                texts = backend_run(backend, chunk, decoding)
            timing[name][0] += time.perf_counter() - wall
            timing[name][1] += time.process_time() - cpu
            outputs[name] += texts
        done = round_ * len(prompts) + start + len(chunk)
        print(
            f"  {done}/{len(prompts) * args.rounds} prompts: "
            + ", ".join(f"{name} {timing[name][0]:.0f} s" for name in names),
            flush=True,
        )

    reference = outputs["plain loop"]
    cut_reference = [truncate_at_stop(text, decoding.stop) for text in reference]
    rows = []
    for name in names:
        wall, cpu = timing[name]
        raw_same = outputs[name] == reference
        cut_same = [truncate_at_stop(t, decoding.stop) for t in outputs[name]] == cut_reference
        differing = sorted(
            {
                problems[i % len(problems)].task_id
                for i, text in enumerate(outputs[name])
                if text != reference[i]
            }
        )
        rows.append(
            {
                "side": name,
                "default_pick": name != "plain loop"
                and sides[name].batch_size in BATCH_SIZE_BY_DEVICE.values(),
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "samples_per_s": round(len(reference) / wall, 4),
                "ratio_vs_plain": round(timing["plain loop"][0] / wall, 2),
                "ratio_cpu_vs_plain": round(timing["plain loop"][1] / cpu, 2),
                "raw_identical": raw_same,
                "cut_identical": cut_same,
                "differing": differing,
            }
        )
    new_tokens = [len(tokenizer(text)["input_ids"]) for text in reference[: len(prompts)]]
    report = {
        "prompts": len(prompts),
        "rounds": args.rounds,
        "max_new_tokens": args.max_new_tokens,
        "backend": default.identity,
        "device": default.device,
        "torch_threads": torch.get_num_threads(),
        "new_tokens_per_prompt": new_tokens,
        "sides": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"new tokens per prompt (plain loop): {new_tokens}")
    print(
        f"{'side':<24} {'wall s':>8} {'cpu s':>8} {'samples/s':>10} {'x plain':>8} "
        f"{'x plain cpu':>12} identical"
    )
    for row in rows:
        same = "yes" if row["raw_identical"] else f"NO: {', '.join(row['differing'])}"
        print(
            f"{row['side']:<24} {row['wall_s']:>8.1f} {row['cpu_s']:>8.1f} "
            f"{row['samples_per_s']:>10.3f} {row['ratio_vs_plain']:>8.2f} "
            f"{row['ratio_cpu_vs_plain']:>12.2f} {same}"
        )
    picked = [row for row in rows[1:] if row["default_pick"]]
    met = rows[1]["ratio_vs_plain"] >= 1.5 and all(row["ratio_vs_plain"] >= 1 for row in picked)
    print(
        "target (default >= 1.5x the plain loop, every default batch size >= 1x): "
        + ("met" if met else "NOT met")
    )
    print(f"written: {args.out}")
    return 0 if all(row["raw_identical"] and row["cut_identical"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
