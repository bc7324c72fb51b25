"""Check: boi's generation and critic through llama.cpp's OpenAI-compatible server.

Serves the embedded SmolLM2 GGUF with llama-cpp-python's server (an interpreter that has
`pip install "llama-cpp-python[server]"`; the pip build compiles llama.cpp for minutes, which is
why this is a script and not a CI test), then:

1. generation: a few HumanEval prompts through boi's `openai` backend (chat, greedy), as
   `boi run` would send them;
2. the critic on the server as started by the issue's command (`--logits_all true`): the
   endpoint scorer must fall back to one prompt per request (the server answers a list of
   prompts with HTTP 500), and it refuses the echo if the echoed numbers are not the prompt's
   log-probabilities; the SmolLM2 GGUF adds no BOS token, and llama-cpp-python then pairs each
   echoed token with the next position's distribution;
3. the critic on the server restarted with the BOS token the HF model is scored with
   (`--kv_overrides tokenizer.ggml.add_bos_token=bool:true`): the same prompts (HumanEval
   prompts and text-edit variants) scored by the endpoint scorer and by the HF scorer on the
   embedded SmolLM2 (the safetensors conversion of the same Q4_1 GGUF), compared per token
   where the tokenisations align, per prompt (Pearson / Spearman of the mean log-probability),
   and by the critic's similarity decisions (the plausibility gate's default, 90 % on the total
   log-probability, and the per-token measure).

Differences are reported, not hidden: llama.cpp multiplies with the 4-bit weights and 8-bit
activations, the HF model with the dequantised weights in float32.

    .venv/bin/python scripts/llamacpp_endpoint_check.py --server-python /tmp/llamacpp-venv/bin/python
    .venv/bin/python scripts/llamacpp_endpoint_check.py --server-python ... --problems 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.common.errors import UserError
from benchmarks.common.models import embedded_gguf_path

# Simple enough for a 135M model to get right sometimes (the demo's choice), with descriptions
# long enough to drop words from.
TASKS = ["HumanEval/7", "HumanEval/13", "HumanEval/23", "HumanEval/35", "HumanEval/53"]
MODEL_NAME = "smollm2"
BOS_OVERRIDE = "tokenizer.ggml.add_bos_token=bool:true"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """llama-cpp-python's server on the embedded GGUF, on a free port, stopped on exit."""

    def __init__(self, python: str, extra: list[str], threads: int) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.command = [
            python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(embedded_gguf_path()),
            "--model_alias",
            MODEL_NAME,
            "--logits_all",
            "true",
            "--n_ctx",
            "2048",
            "--n_threads",
            str(threads),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *extra,
        ]
        # Kept open for the server's whole life (tail() reads it); removed with the Server.
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            "w+", prefix="llamacpp-server-", suffix=".log"
        )

    def __enter__(self) -> Server:
        print("$ " + " ".join(self.command), flush=True)
        started = time.monotonic()
        self.process = subprocess.Popen(
            self.command, stdout=self.log, stderr=subprocess.STDOUT, text=True
        )
        while True:
            if self.process.poll() is not None:
                raise SystemExit(
                    f"the server exited with {self.process.returncode}:\n{self.tail()}"
                )
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - started > 180:
                self.stop()
                raise SystemExit(f"the server did not answer within 180 s:\n{self.tail()}")
            time.sleep(0.5)
        print(f"  server ready at {self.url} after {time.monotonic() - started:.1f} s", flush=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self, lines: int = 30) -> str:
        self.log.flush()
        self.log.seek(0)
        return "\n".join(self.log.read().splitlines()[-lines:])


# --------------------------------------------------------------------------- prompts


def variants(problem) -> list[str]:
    """Text-edit stand-ins for the transformations (as scripts/bench_critic.py --variants edits):
    the function renamed to `func` (Anonymize), the first long description word dropped (Drop
    One), and both."""
    prompt, name = problem.prompt, problem.entry_point
    out = [prompt.replace(name, "func")]
    description = problem.block("description")
    if description is not None:
        start = prompt.index(description.text)
        words = [m for m in re.finditer(r"\b[a-z]{5,}\b", description.text) if m.group() != name]
        if words:
            a, b = start + words[0].start(), start + words[0].end() + 1
            out.append(prompt[:a] + prompt[b:])
            out.append(out[-1].replace(name, "func"))
    return out


# --------------------------------------------------------------------------- statistics


def pearson(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else float("nan")


def ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2  # ties share their mean rank
        i = j + 1
    return out


def spearman(xs: list[float], ys: list[float]) -> float:
    return pearson(ranks(xs), ranks(ys))


# --------------------------------------------------------------------------- steps


def generate(url: str, problems) -> None:
    from benchmarks.generation import BackendSpec, DecodingConfig, generate_samples, load_backend

    backend = load_backend(
        BackendSpec(kind="openai", model=MODEL_NAME, base_url=url, max_concurrency=1)
    )
    decoding = DecodingConfig(temperature=0.0, max_new_tokens=96, n=1, chat=True)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        outcome = generate_samples(
            backend,
            {p.task_id: p.prompt for p in problems},
            decoding,
            Path(tmp) / "generations.jsonl",
            progress=False,
        )
    print(
        f"  {len(problems)} completions in {time.monotonic() - started:.1f} s "
        f"(openai backend, chat, greedy, max 96 tokens); first lines:"
    )
    for problem in problems:
        (completion,) = outcome.completions[problem.task_id]
        lines = [line for line in completion.splitlines() if line.strip()][:2]
        print(f"    {problem.task_id}: " + " | ".join(line.strip() for line in lines))


def endpoint_scorer(url: str):
    from critic.scoring import EndpointScorer, EndpointScorerConfig

    # llama-cpp-python serves one request at a time and ranks the whole vocabulary for every
    # echoed token, so queued requests wait long: a generous timeout.
    return EndpointScorer(EndpointScorerConfig(url=url, model=MODEL_NAME, timeout_s=600))


def compare(prompts: list[str], groups: list[list[int]], hf_scores, ep_scores) -> dict:
    """Token, prompt and decision agreement between the HF and the endpoint scores."""
    from critic.similarity import PlausibilityGate, ScoreSummary
    from critic.similarity import compare as similarity

    signed: list[float] = []  # HF - endpoint, per aligned token
    hf_means, ep_means, ep_own_means, hf_own_means = [], [], [], []
    aligned_tokens = ep_tokens = hf_tokens = 0
    for hf, ep in zip(hf_scores, ep_scores, strict=True):
        by_span = dict(zip(hf.offsets, hf.logprobs, strict=True))
        pairs = [
            (by_span[span], lp)
            for span, lp in zip(ep.offsets, ep.logprobs, strict=True)
            if span in by_span
        ]
        aligned_tokens += len(pairs)
        ep_tokens += ep.n_tokens
        hf_tokens += hf.n_tokens
        signed += [a - b for a, b in pairs]
        hf_means.append(sum(a for a, _ in pairs) / len(pairs))
        ep_means.append(sum(b for _, b in pairs) / len(pairs))
        hf_own_means.append(hf.per_token)
        ep_own_means.append(ep.per_token)
    diffs = [abs(d) for d in signed]
    diffs_sorted = sorted(diffs)

    gate = PlausibilityGate()
    decisions = []
    for group in groups:
        original, rest = group[0], group[1:]
        for variant in rest:
            row = {"prompt": variant}
            for name, scores in (("hf", hf_scores), ("endpoint", ep_scores)):
                o = ScoreSummary(scores[original].total, scores[original].n_tokens)
                v = ScoreSummary(scores[variant].total, scores[variant].n_tokens)
                comparison = similarity(o, v)
                row[name] = {
                    "similarity": comparison["similarity"],
                    "similarity_per_token": comparison["similarity_per_token"],
                    "verdict": gate.judge(o, v, comparison)[0],
                    "verdict_per_token": PlausibilityGate(measure="similarity_per_token").judge(
                        o, v, comparison
                    )[0],
                }
            decisions.append(row)
    return {
        "tokens": {"hf": hf_tokens, "endpoint": ep_tokens, "aligned": aligned_tokens},
        "abs_diff_per_token": {
            "mean": sum(diffs) / len(diffs),
            "median": diffs_sorted[len(diffs) // 2],
            "p95": diffs_sorted[int(0.95 * (len(diffs) - 1))],
            "max": diffs_sorted[-1],
            "mean_signed_hf_minus_endpoint": sum(signed) / len(signed),
        },
        "per_prompt_mean_aligned": {
            "pearson": pearson(hf_means, ep_means),
            "spearman": spearman(hf_means, ep_means),
            "mean_abs_diff": sum(abs(a - b) for a, b in zip(hf_means, ep_means, strict=True))
            / len(hf_means),
        },
        "per_prompt_mean_as_scored": {
            "pearson": pearson(hf_own_means, ep_own_means),
            "spearman": spearman(hf_own_means, ep_own_means),
        },
        "decisions": decisions,
        "hf_means": hf_means,
        "endpoint_means": ep_means,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--server-python",
        default="/tmp/llamacpp-venv/bin/python",
        help="an interpreter with llama-cpp-python[server] installed",
    )
    parser.add_argument(
        "--problems", type=int, default=5, help=f"HumanEval problems (<= {len(TASKS)})"
    )
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    parser.add_argument("--json", help="also write the comparison here")
    args = parser.parse_args()

    from benchmarks.loaders import load_benchmark
    from critic.annotate import with_blocks

    by_id = {p.task_id: p for p in load_benchmark("humaneval").problems}
    problems = [with_blocks(by_id[t]) for t in TASKS[: args.problems]]
    prompts: list[str] = []
    groups: list[list[int]] = []
    for problem in problems:
        group = [problem.prompt, *variants(problem)]
        groups.append(list(range(len(prompts), len(prompts) + len(group))))
        prompts += group
    print(
        f"llama.cpp endpoint check: {len(problems)} HumanEval problems, {len(prompts)} prompts "
        f"(originals + text-edit variants); GGUF {embedded_gguf_path().name}",
        flush=True,
    )
    result: dict = {"prompts": len(prompts)}

    print("\n[1] server as the issue starts it (no BOS token for this GGUF)", flush=True)
    with Server(args.server_python, [], args.threads) as server:
        print(" generation through boi's openai backend:", flush=True)
        generate(server.url, problems)
        print(" critic through the endpoint scorer:", flush=True)
        scorer = endpoint_scorer(server.url)
        try:
            scorer.score(prompts)
            print(f"  scored, NOT refused: {scorer.describe()}")
            result["plain_server"] = "accepted"
        except UserError as err:
            print(f"  refused, as it must be: {err}")
            result["plain_server"] = f"refused: {err}"
        print(f"  batching learnt from the first request: {scorer.batching_used}")

    print(f"\n[2] server with the BOS token ({BOS_OVERRIDE})", flush=True)
    with Server(args.server_python, ["--kv_overrides", BOS_OVERRIDE], args.threads) as server:
        scorer = endpoint_scorer(server.url)
        started = time.monotonic()
        ep_scores = scorer.score(prompts)
        print(
            f"  endpoint scorer: {len(prompts)} prompts in {time.monotonic() - started:.1f} s; "
            f"{scorer.describe()}"
        )

    from critic.scoring import HFScorer

    started = time.monotonic()
    hf = HFScorer()
    hf_scores = hf.score(prompts)
    print(
        f"  HF scorer (embedded SmolLM2, float32): {time.monotonic() - started:.1f} s; {hf.describe()}"
    )

    stats = compare(prompts, groups, hf_scores, ep_scores)
    result["comparison"] = stats

    tokens, diff = stats["tokens"], stats["abs_diff_per_token"]
    print("\n[3] agreement, endpoint (llama.cpp, Q4_1) vs HF (dequantised, float32)")
    print(
        f"  tokens scored: HF {tokens['hf']}, endpoint {tokens['endpoint']} (its first token of "
        f"each prompt has no log-probability); aligned (same character span) {tokens['aligned']}"
    )
    print(
        "  |log p difference| per aligned token: mean {mean:.4f}, median {median:.4f}, "
        "p95 {p95:.4f}, max {max:.4f}; mean signed (HF - endpoint) {mean_signed_hf_minus_endpoint:+.4f}".format(
            **diff
        )
    )
    per = stats["per_prompt_mean_aligned"]
    own = stats["per_prompt_mean_as_scored"]
    print(
        f"  per-prompt mean log-prob over aligned tokens: Pearson {per['pearson']:.4f}, "
        f"Spearman {per['spearman']:.4f}, mean |difference| {per['mean_abs_diff']:.4f}"
    )
    print(
        f"  per-prompt mean log-prob as each scorer reports it: Pearson {own['pearson']:.4f}, "
        f"Spearman {own['spearman']:.4f}"
    )
    print("  prompt  HF mean  endpoint mean")
    for index, (a, b) in enumerate(zip(stats["hf_means"], stats["endpoint_means"], strict=True)):
        print(f"  {index:>6}  {a:7.4f}  {b:13.4f}")
    decisions = stats["decisions"]
    for measure, verdict in (
        ("similarity", "verdict"),
        ("similarity_per_token", "verdict_per_token"),
    ):
        agree = sum(d["hf"][verdict] == d["endpoint"][verdict] for d in decisions)
        gap = max(abs(d["hf"][measure] - d["endpoint"][measure]) for d in decisions)
        print(
            f"  critic decisions ({measure}, gate 90 %): {agree}/{len(decisions)} agree; "
            f"largest similarity difference {gap:.2f} points"
        )
    print("  variant  HF sim / per-token  endpoint sim / per-token  verdicts HF, endpoint")
    for d in decisions:
        h, e = d["hf"], d["endpoint"]
        print(
            f"  {d['prompt']:>7}  {h['similarity']:6.2f} / {h['similarity_per_token']:6.2f}     "
            f"{e['similarity']:6.2f} / {e['similarity_per_token']:6.2f}             "
            f"{h['verdict']}, {e['verdict']}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
