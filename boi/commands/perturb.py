"""Apply the transformation catalogue to a dataset and write the perturbed dataset: one
HumanEval-format record per variant (task_id unique per variant, prompt, entry_point, test,
canonical_solution) plus source_task_id, transform and lineage (what was removed, with the
keyword decisions), and its provenance beside it (`OUT.manifest.json`, written by
`perturb.catalogue.write_catalogue`; with --format recode, the folder's `boi_recode_DATASET.json`).
Prints per transformation: variants, problems where it did not apply, and the mean number of
droppable keywords."""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import textwrap
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from benchmarks.common.config import (
    add_dataclass_arguments,
    add_names_argument,
    from_mapping,
    overrides_from_args,
)
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import write_jsonl
from benchmarks.common.outputs import declare_output
from benchmarks.loaders import dataset_help, load_benchmark
from perturb.catalogue import (
    PerturbConfig,
    available_transforms,
    parse_param_overrides,
    run_catalogue,
    write_catalogue,
)
from perturb.export import to_hf_dataset
from perturb.keyword_file import analysis_record
from perturb.keywords import KeywordConfig
from perturb.recode.interop import recode_dataset_name, write_recode
from perturb.transforms import CATALOGUE, transform_parameters

# `--context-filter/--no-context-filter` reads better than the field's own name.
KEYWORD_FLAGS = {"context_aware": "--context-filter"}


EXAMPLES = (
    "boi perturb --list",
    "boi perturb humaneval --out perturbed.jsonl",
    "boi perturb humaneval --transforms original anonymize --param anonymize.name=XYZ --out anon.jsonl",
)
"""Shown at the end of `--help` (boi/cli.py)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", nargs="?", help=dataset_help() + " (not needed with --list)")
    parser.add_argument("--data", help="where to read the named dataset from")
    add_names_argument(
        parser,
        "--transforms",
        help=f"transformations to apply (default: the paper's {len(CATALOGUE)}: "
        f"{', '.join(CATALOGUE)}); --list shows all of them",
    )
    parser.add_argument("--list", action="store_true", help="list the transformations and exit")
    parser.add_argument("--out", help="perturbed dataset JSONL (with --format recode: a folder)")
    parser.add_argument(
        "--format",
        choices=("boi", "recode"),
        default="boi",
        help="boi: one JSONL of variants with lineage (default); recode: ReCode's release layout "
        "(nominal/, perturbed_finalized/DATASET/full/GROUP/DATASET_NAME_sK.jsonl) for its scripts",
    )
    parser.add_argument(
        "--keywords-out", help="also write every keyword decision per problem (JSONL)"
    )
    parser.add_argument(
        "--hf-out", help="also save a Hugging Face datasets.Dataset folder (save_to_disk)"
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="TRANSFORM.PARAM=VALUE",
        help="set a transformation's parameter (VALUE read as YAML, e.g. anonymize.name=XYZ); "
        "repeatable; see --list",
    )
    # --format recode writes a folder, which is ours when it holds write_recode's manifest.
    declare_output(
        parser,
        "out",
        lambda args: "dir" if args.format == "recode" else "file",
        ours=("boi_recode_*.json",),
    )
    declare_output(parser, "keywords_out", "file")
    declare_output(parser, "hf_out", "dir", ours=("state.json", "dataset_dict.json"))
    perturbation = parser.add_argument_group("perturbation (PerturbConfig)")
    add_dataclass_arguments(perturbation, PerturbConfig, exclude=("transforms", "params"))
    keywords = parser.add_argument_group("keywords (KeywordConfig)")
    add_dataclass_arguments(keywords, KeywordConfig, flags=KEYWORD_FLAGS)


def catalogue_listing(
    descriptions: Mapping[str, str],
    params_of: Callable[[str], Mapping[str, Any]],
    width: int | None = None,
) -> str:
    """`--list`: one entry per transformation, the names in one column as wide as the longest
    name, each whole description wrapped under its own column (a fixed 20-character column
    pushed long names' descriptions out of line, and the descriptions were cut at their
    docstring's first line)."""
    column = max(map(len, descriptions), default=0) + 2
    width = width or shutil.get_terminal_size((100, 24)).columns
    # A description column narrower than 40 characters is unreadable: overflow instead.
    wrap_at = max(width, column + 40)
    entries = []
    for name, description in descriptions.items():
        params = ", ".join(f"{k}={v!r}" for k, v in params_of(name).items())
        text = description + (f" [{params}]" if params else "")
        entries.append(
            textwrap.fill(
                text,
                width=wrap_at,
                initial_indent=name.ljust(column),
                subsequent_indent=" " * column,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return "\n".join(entries)


def run(args: argparse.Namespace) -> int:
    if args.list:
        print(catalogue_listing(available_transforms(), transform_parameters))
        return 0
    if not args.dataset:
        raise UserError(
            "boi perturb needs a DATASET (a name such as humaneval, or a JSONL file); "
            "--list alone lists the transformations."
        )
    if not args.out:
        raise UserError(
            "--out FILE is required (where to write the perturbed dataset; a folder with "
            "--format recode)."
        )
    keyword_config = from_mapping(KeywordConfig, overrides_from_args(args, KeywordConfig), "flags")
    config = from_mapping(
        PerturbConfig,
        {
            **overrides_from_args(
                args,
                PerturbConfig,
                only=("anonymous_name", "seed", "keep_unchanged", "random_seeds", "keyword_file"),
            ),
            "transforms": tuple(args.transforms) if args.transforms else PerturbConfig().transforms,
            "keywords": keyword_config,
            "params": parse_param_overrides(args.param),
        },
        "flags",
    )
    loaded = load_benchmark(args.dataset, args.data)
    result = run_catalogue(loaded.problems, config)

    # Each writer records the provenance beside what it writes (OUT.manifest.json; a ReCode
    # folder's boi_recode_DATASET.json): input files are hashed, names are not files.
    inputs = {"dataset": args.dataset, "data": args.data, "keyword_file": config.keyword_file}
    if args.format == "recode":
        written = write_recode(
            result.variants,
            args.out,
            recode_dataset_name(args.dataset),
            config=dataclasses.asdict(config),
            inputs=inputs,
            record=result.provenance(),
        )
    else:
        write_catalogue(result, args.out, config, inputs=inputs)
    if args.keywords_out:
        # With each prompt's sha256, so the file pins these picks (`--keyword-file`) safely.
        prompts = {p.task_id: p for p in loaded.problems}
        write_jsonl(
            args.keywords_out,
            (analysis_record(a, prompts.get(a.task_id)) for a in result.keywords.values()),
        )
    if args.hf_out:
        to_hf_dataset(result.variants).save_to_disk(args.hf_out)

    problems = len(loaded.problems) - len(result.split_failures)
    print(f"{args.dataset}: {len(loaded.problems)} problems, {len(result.variants)} variants")
    if result.keywords:
        counts = [len(a.droppable) for a in result.keywords.values()]
        print(
            f"  droppable keywords per problem: mean {statistics.mean(counts):.2f}, none in {counts.count(0)} problems"
        )
    print(f"  {'transform':<20} {'variants':>8} {'not applied':>12}")
    for row in result.summary():
        print(f"  {row['transform']:<20} {row['variants']:>8} {row['not_applied']:>12}")
    reasons = Counter((name, reason) for _, name, reason in result.not_applied)
    for (name, reason), count in sorted(reasons.items()):
        print(f"  not applied: {name}: {reason} ({count} problems)")
    for task_id, reason in result.split_failures.items():
        print(f"  skipped {task_id}: {reason}")
    if args.format == "recode":
        for note in written.notes:
            print(f"  not in ReCode's layout: {note}")
        print(
            f"  ReCode files: {len(written.files)} (point ReCode's config.json data_path at "
            f"{written.folder / 'nominal'}, output_adv_path at "
            f"{written.folder / 'perturbed_finalized'})"
        )
    print(f"wrote {args.out} ({problems} problems)" + (f", {args.hf_out}" if args.hf_out else ""))
    return 0
