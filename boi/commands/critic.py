"""The LM critic: score prompts' log-probabilities under a causal LM and compare each variant with
its original. `boi critic FILE --out OUT` adds a `critic` object to every record of a `boi perturb`
file (log-probability total, per token and per block; similarity to the original; the
plausibility gate's verdict and reason); the output is append-only and a rerun resumes it, and
its provenance lies beside it (`OUT.manifest.json`, written by `critic.annotate.annotate_file`).
`boi critic table2 --out DIR` runs the paper's Table 2 protocol (200 HumanEval + MBPP
challenges, five transformations, with and without the context-aware filter)."""

from __future__ import annotations

import argparse

from benchmarks.common.config import add_dataclass_arguments, overrides_from_args
from benchmarks.common.errors import UserError
from benchmarks.common.outputs import declare_output
from benchmarks.loaders import dataset_help, load_benchmark
from critic.annotate import annotate_file, read_perturbed
from critic.scoring import EndpointScorerConfig, HFScorerConfig, Scorer, load_scorer
from critic.similarity import PlausibilityGate
from critic.table2 import Table2Config, format_table2, run_table2

GATE_FLAGS = {"min_similarity": "--min-similarity", "measure": "--gate-measure"}


EXAMPLES = (
    "boi critic perturbed.jsonl --out critic.jsonl",
    "boi critic table2 --model embedded",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "input", help="a boi perturb JSONL file, or 'table2' for the paper protocol"
    )
    parser.add_argument(
        "--out",
        help="output JSONL (FILE mode, required) or output folder (table2, default runs/critic_table2)",
    )
    declare_output(
        parser,
        "out",
        lambda args: "dir" if args.input == "table2" else "file",
        ours=("table2.json", "variants.jsonl"),
    )
    model = parser.add_argument_group("critic model")
    model.add_argument(
        "--model",
        default="embedded",
        help="HF id, local folder, or 'embedded' (SmolLM2-135M, prepared by boi models prepare); "
        "with --endpoint, the model name the server serves",
    )
    model.add_argument(
        "--endpoint",
        help="score through an OpenAI-compatible completions endpoint (base URL, e.g. "
        "http://127.0.0.1:8000/v1) instead of a local model; --model names the served model",
    )
    local = parser.add_argument_group("local model scorer (hf)")
    add_dataclass_arguments(local, HFScorerConfig, exclude=("model",))
    served = parser.add_argument_group("endpoint scorer (with --endpoint)")
    add_dataclass_arguments(served, EndpointScorerConfig, exclude=("url", "model"))
    gate = parser.add_argument_group("plausibility gate (FILE mode)")
    add_dataclass_arguments(gate, PlausibilityGate, flags=GATE_FLAGS)
    parser.add_argument(
        "--originals",
        help=f"dataset holding the originals when the file lacks them: {dataset_help()}",
    )
    parser.add_argument("--data", help="where to read --originals (or MBPP for table2) from")
    protocol = parser.add_argument_group("table2")
    add_dataclass_arguments(protocol, Table2Config, exclude=("mbpp_data",))


def _scorer(args: argparse.Namespace) -> Scorer:
    if args.endpoint:
        if args.model == "embedded":
            raise UserError("--endpoint needs --model NAME, the model name the server expects.")
        options = overrides_from_args(args, EndpointScorerConfig)
        return load_scorer("endpoint", {**options, "url": args.endpoint, "model": args.model})
    options = overrides_from_args(args, HFScorerConfig)
    return load_scorer("hf", {**options, "model": args.model}, where="flags")


def run(args: argparse.Namespace) -> int:
    if args.input == "table2":
        config = Table2Config(
            **overrides_from_args(args, Table2Config, only=("n", "seed")), mbpp_data=args.data
        )
        out = args.out or "runs/critic_table2"
        result = run_table2(config, _scorer(args), out)
        print(format_table2(result))
        print(f"wrote {out}/table2.json, {out}/table2.csv and {out}/variants.jsonl")
        return 0

    if not args.out:
        raise UserError("--out is required: the JSONL file the scored records are appended to.")
    gate = PlausibilityGate(**overrides_from_args(args, PlausibilityGate))
    originals = []
    if args.originals:
        originals = load_benchmark(args.originals, args.data).problems
    read_perturbed(args.input)  # bad input fails here, before a model is loaded
    scorer = _scorer(args)
    stats = annotate_file(
        args.input,
        args.out,
        scorer,
        gate,
        originals=originals,
        originals_source=args.originals,
    )
    print(
        f"{stats.scored} records scored ({stats.originals} originals, {stats.accepted} accepted, "
        f"{stats.rejected} rejected), {stats.skipped_existing} already in {args.out}"
    )
    return 0
