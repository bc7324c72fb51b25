"""The LM critic: score prompts' log-probabilities under a causal LM and compare each variant with
its original. `boi critic FILE --out OUT` adds a `critic` object to every record of a `boi perturb`
file (log-probability total, per token and per block; similarity to the original; the
plausibility gate's verdict and reason); the output is append-only and a rerun resumes it.
`boi critic table2 --out DIR` runs the paper's Table 2 protocol (200 HumanEval + MBPP
challenges, five transformations, with and without the context-aware filter)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from critic.scoring import Scorer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "input", help="a boi perturb JSONL file, or 'table2' for the paper protocol"
    )
    parser.add_argument(
        "--out",
        help="output JSONL (FILE mode, required) or output folder (table2, default runs/critic_table2)",
    )
    model = parser.add_argument_group("critic model")
    model.add_argument(
        "--model",
        default="embedded",
        help="HF id, local folder, or 'embedded' (SmolLM2-135M, prepared by boi models prepare)",
    )
    model.add_argument("--device", default="cpu", help="torch device (cpu, cuda, ...)")
    model.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    model.add_argument(
        "--batch-tokens", type=int, default=4096, help="most padded tokens per forward pass"
    )
    model.add_argument(
        "--endpoint",
        help="score through an OpenAI-compatible completions endpoint (base URL, e.g. "
        "http://127.0.0.1:8000/v1) instead of a local model; --model names the served model",
    )
    model.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="environment variable with the API key"
    )
    gate = parser.add_argument_group("plausibility gate (FILE mode)")
    gate.add_argument(
        "--min-similarity",
        type=float,
        default=90.0,
        help="reject variants below this similarity (%%)",
    )
    gate.add_argument("--gate-measure", default="total", choices=["total", "per_token"])
    parser.add_argument(
        "--originals",
        help="dataset (humaneval, mbpp, or a JSONL path) holding the originals when the file lacks them",
    )
    parser.add_argument("--data", help="where to read --originals (or MBPP for table2) from")
    protocol = parser.add_argument_group("table2")
    protocol.add_argument("--n", type=int, default=200, help="challenges sampled")
    protocol.add_argument("--seed", type=int, default=0, help="sample and transformation seed")


def _scorer(args: argparse.Namespace) -> Scorer:
    from critic.scoring import EndpointScorer, EndpointScorerConfig, HFScorer, HFScorerConfig

    if args.endpoint:
        if args.model == "embedded":
            from benchmarks.errors import UserError

            raise UserError("--endpoint needs --model NAME, the model name the server expects.")
        return EndpointScorer(
            EndpointScorerConfig(url=args.endpoint, model=args.model, api_key_env=args.api_key_env)
        )
    return HFScorer(
        HFScorerConfig(
            model=args.model, device=args.device, dtype=args.dtype, batch_tokens=args.batch_tokens
        )
    )


def run(args: argparse.Namespace) -> int:
    from benchmarks.errors import UserError
    from critic.similarity import PlausibilityGate

    if args.input == "table2":
        from critic.table2 import Table2Config, format_table2, run_table2

        config = Table2Config(n=args.n, seed=args.seed, mbpp_data=args.data)
        out = args.out or "runs/critic_table2"
        result = run_table2(config, _scorer(args), out)
        print(format_table2(result))
        print(f"wrote {out}/table2.json, {out}/table2.csv and {out}/variants.jsonl")
        return 0

    if not args.out:
        raise UserError("--out is required: the JSONL file the scored records are appended to.")
    gate = PlausibilityGate(min_similarity=args.min_similarity, measure=args.gate_measure)
    originals = []
    if args.originals:
        from benchmarks.loaders import load_benchmark

        originals = load_benchmark(args.originals, args.data).problems
    from critic.annotate import annotate_file, read_perturbed

    read_perturbed(args.input)  # bad input fails here, before a model is loaded
    scorer = _scorer(args)
    stats = annotate_file(args.input, args.out, scorer, gate, originals=originals)
    import dataclasses
    import json
    from pathlib import Path

    from benchmarks.jsonl import write_text_atomic
    from benchmarks.provenance import run_record

    config = {
        "scorer": scorer.describe(),
        "gate": dataclasses.asdict(gate),
        "originals": args.originals,
    }
    meta = run_record(config, {"input": args.input})
    meta.update(completed=True, stats=dataclasses.asdict(stats))
    write_text_atomic(Path(f"{args.out}.meta.json"), json.dumps(meta, indent=2) + "\n")
    print(
        f"{stats.scored} records scored ({stats.originals} originals, {stats.accepted} accepted, "
        f"{stats.rejected} rejected), {stats.skipped_existing} already in {args.out}"
    )
    return 0
