"""`boi finetune build-data`: load sources, build examples, write JSONL and a manifest."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.provenance import write_output_manifest
from benchmarks.loaders import load_benchmark
from benchmarks.problem import Problem
from finetune.data import build_training_examples, save_datasets_folder, write_training_examples
from perturb import PerturbConfig


def _load_source(spec: str, limit: int) -> tuple[list[Problem], dict[str, Any], str | None]:
    """The source's problems, what the manifest says of it, and its file (None: none; the
    manifest's `inputs` hold a file's sha256)."""
    name, _, path = spec.partition("=")
    loaded = load_benchmark(name, path or None)
    problems = loaded.problems[:limit] if limit else loaded.problems
    source_path = path or (name if Path(name).exists() else None)
    return problems, {"source": spec, "problems": len(problems)}, source_path


def build_data(
    sources: Sequence[str],
    *,
    flavour: str,
    out: str,
    transforms: Sequence[str] | None = None,
    variants_per_task: int = 0,
    seed: int = 0,
    validation_fraction: float = 0.1,
    eval_benchmark: str | None = "humaneval",
    leakage: str = "refuse",
    limit: int = 0,
    datasets_dir: str | None = None,
) -> str:
    """Write the examples to `out` and their provenance to `out`.manifest.json (the shape every
    output's provenance shares, `benchmarks.common.provenance`); returns a printable summary."""
    if limit < 0 or variants_per_task < 0:
        raise UserError("--limit and --variants-per-task must be 0 or positive.")
    problems: list[Problem] = []
    source_info: list[dict[str, Any]] = []
    inputs: dict[str, str | None] = {}  # files hashed into the manifest, by their spec
    for spec in sources:
        loaded, info, inputs[spec] = _load_source(spec, limit)
        problems += loaded
        source_info.append(info)
    eval_problems: list[Problem] = []
    if eval_benchmark:
        name, _, path = eval_benchmark.partition("=")
        eval_problems = load_benchmark(name, path or None).problems
        inputs[f"eval:{eval_benchmark}"] = path or name
    transform_config = None
    if flavour == "A":
        transform_config = PerturbConfig(seed=seed, keep_unchanged=False)
    result = build_training_examples(
        problems,
        flavour,
        transforms=transforms,
        transform_config=transform_config,
        validation_fraction=validation_fraction,
        seed=seed,
        eval_problems=eval_problems,
        leakage=leakage,
        variants_per_task=variants_per_task,
    )
    write_training_examples(out, result.examples)
    per_transform = Counter(
        e.lineage[-1]["transform"] if e.lineage else "none" for e in result.examples
    )
    config = {
        "sources": list(sources),
        "flavour": flavour,
        "transforms": list(transforms) if transforms else None,
        "variants_per_task": variants_per_task,
        "seed": seed,
        "validation_fraction": validation_fraction,
        "eval_benchmark": eval_benchmark,
        "leakage_policy": leakage,
        "limit": limit,
    }
    # The provenance every output shares (source files hashed under their spec), plus the build's.
    write_output_manifest(
        out,
        config,
        inputs=inputs,
        record={
            "sources": source_info,
            "counts": result.counts(),
            "per_transform": dict(per_transform),
            "skipped": [s.to_json() for s in result.skipped],
            "overlaps": [o.to_json() for o in result.overlaps],
        },
    )
    if datasets_dir:
        save_datasets_folder(result.examples, datasets_dir)
    counts = result.counts()
    lines = [
        f"{flavour}: {counts['train']} train / {counts['validation']} validation examples "
        f"({counts['train_tasks']} / {counts['validation_tasks']} source tasks, "
        f"{counts['augmented']} augmented)",
        "per transformation: " + ", ".join(f"{k} {v}" for k, v in sorted(per_transform.items())),
    ]
    reasons = Counter(s.reason.split(" (")[0].split(" to ")[0] for s in result.skipped)
    if reasons:
        lines.append("skipped: " + "; ".join(f"{n} x {r}" for r, n in reasons.most_common()))
    if result.overlaps:
        lines.append(
            f"WARNING: {len(result.overlaps)} examples overlap {eval_benchmark} "
            f"({'dropped' if leakage == 'drop' else 'kept'}); listed in the manifest"
        )
    elif eval_benchmark:
        lines.append(f"no overlap with {eval_benchmark} (task ids, prompts, solutions)")
    lines.append(f"wrote {out} and {out}.manifest.json")
    return "\n".join(lines)
