"""`boi merge OUT SHARD_DIR...`: the shards of one `boi run` as one run directory and its report.

Each shard (`boi run --shard I/N`) perturbed and gated every problem (so its problems.jsonl and
critic.jsonl are the whole run's) and generated and executed its own problems. The merge checks
that the shards belong together (one work hash: the config without out_dir), that each is
complete, and that their indices cover 0..N-1 exactly once; then it writes OUT as the unsharded
run would have: the same problems and critic files, the generation caches joined, each results
file's rows in the unsharded run's sample order, and the report built by the same function.
Nothing in the shard directories is written; OUT is claimed like any run directory.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.config import load_config
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, write_jsonl
from benchmarks.common.outputs import output_dir
from benchmarks.common.progress import stage
from benchmarks.common.rundir import MANIFEST, RunDir, path_slug
from benchmarks.generation import SamplingTotals
from benchmarks.problem import Problem, read_problems
from benchmarks.report import read_results
from boi.runner import (
    RunConfig,
    RunOutcome,
    build_run_report,
    run_hash,
    summary_line,
    work_hash,
)
from boi.shards import parse_shard
from critic.similarity import read_similarities

# Written by every shard for the whole run, so identical in every shard; copied from the first.
WHOLE_RUN_FILES = ("problems.jsonl", "not_applied.jsonl", "critic_input.jsonl", "critic.jsonl")


@dataclass
class _ShardRun:
    run: RunDir
    index: int
    count: int


def _open_shards(paths: Sequence[str | Path]) -> list[_ShardRun]:
    """The shards, checked: one run, each complete, indices 0..N-1 exactly once."""
    if not paths:
        raise UserError("boi merge needs the shard directories: boi merge OUT SHARD_DIR...")
    shards = []
    for path in paths:
        run = RunDir.open(path, what="boi run", hint="pass the --out of each `boi run --shard`")
        label = run.manifest.get("shard")
        if not label:
            raise UserError(f"{run.path} is a whole run, not a shard; merge only --shard runs.")
        spec = parse_shard(str(label), environ={})
        if not run.completed:
            raise UserError(
                f"{run.path} (shard {label}) is not complete; rerun its `boi run --shard "
                f"{label}` to finish it, then merge."
            )
        shards.append(_ShardRun(run, spec.index, spec.count))
    first = shards[0]
    for shard in shards[1:]:
        if shard.run.manifest.get("work_hash") != first.run.manifest.get("work_hash"):
            raise UserError(
                f"{shard.run.path} is a shard of another run than {first.run.path} (work hash "
                f"{shard.run.manifest.get('work_hash')} vs {first.run.manifest.get('work_hash')}); "
                "merge only shards of one config."
            )
        if shard.count != first.count:
            raise UserError(
                f"{shard.run.path} is shard {shard.index}/{shard.count} but {first.run.path} is "
                f"one of {first.count}; merge the shards of one split."
            )
    seen: dict[int, Path] = {}
    for shard in shards:
        if shard.index in seen:
            raise UserError(
                f"{shard.run.path} and {seen[shard.index]} are both shard "
                f"{shard.index}/{shard.count}; give each shard once."
            )
        seen[shard.index] = shard.run.path
    missing = [i for i in range(first.count) if i not in seen]
    if missing:
        raise UserError(
            f"shard{'s' if len(missing) > 1 else ''} {', '.join(f'{i}/{first.count}' for i in missing)} "
            f"{'are' if len(missing) > 1 else 'is'} missing; run and pass every shard."
        )
    for shard in shards[1:]:
        for name in WHOLE_RUN_FILES:
            mine, theirs = shard.run.path / name, first.run.path / name
            if mine.is_file() != theirs.is_file() or (
                mine.is_file() and mine.read_bytes() != theirs.read_bytes()
            ):
                raise UserError(
                    f"{mine} differs from {theirs}: the shards perturbed differently (another "
                    "boi version or data file?); rerun them with one."
                )
    return sorted(shards, key=lambda s: s.index)


def _sample_order(
    config: RunConfig, variants: Sequence[Problem]
) -> Callable[[dict[str, Any]], tuple[int, ...]]:
    """The unsharded run's order of a results file's rows: seed, then functions before
    programs, then the variant's place in the run, then the sample's index (see
    `boi.runner.prompt_groups` and `sample_prompts`)."""
    seed_rank = {seed: i for i, seed in enumerate(config.seeds)}
    place = {v.task_id: (int(v.is_stdio), i) for i, v in enumerate(variants)}

    def key(row: dict[str, Any]) -> tuple[int, ...]:
        kind, position = place[row["task_id"]]
        return (seed_rank[row["seed"]], kind, position, int(row["sample_index"]))

    return key


def merge_runs(
    out: str | Path, shard_dirs: Sequence[str | Path], log: Callable[[str], None] = print
) -> RunOutcome:
    """Merge the shards of one run into `out` and write its report (see the module docstring)."""
    # Before anything is read or claimed: OUT equal to a shard would rewrite that shard's
    # manifest (a claim that looks like a resume) and copy its files onto themselves.
    output_dir(out, option="OUT", ours=(MANIFEST,), inputs=shard_dirs)
    shards = _open_shards(shard_dirs)
    first = shards[0].run
    config = load_config(RunConfig, None, {**first.config, "out_dir": str(out)})
    if work_hash(config) != first.manifest.get("work_hash"):
        raise UserError(
            f"{first.path} was written by another boi version (its config hashes differently "
            "now); merge with the boi that ran the shards."
        )
    run = RunDir.claim(
        out,
        config.to_json(),
        digest=run_hash(config),
        inputs={d.label: d.data for d in config.datasets if d.data},
        record={
            "seeds": list(config.seeds),
            "work_hash": work_hash(config),
            "shard": None,
            "merged_from": [str(s.run.path) for s in shards],
        },
    )
    out = run.path
    with stage("merge", log, run.timings, "boi merge"):
        for name in WHOLE_RUN_FILES:
            if (first.path / name).is_file():
                shutil.copyfile(first.path / name, out / name)
        generations: dict[str, dict[str, Any]] = {}
        for shard in shards:
            path = shard.run.path / "generations.jsonl"
            if path.is_file():
                for _, record in iter_jsonl(path):
                    generations.setdefault(str(record["key"]), record)
        write_jsonl(out / "generations.jsonl", generations.values())
        every = read_problems(out / "problems.jsonl")
        similarity = (
            read_similarities(out / "critic.jsonl", config.critic.measure)
            if config.critic.enabled
            else {}
        )
        rejected = {t for t, s in similarity.items() if s < config.critic.min_similarity}
        variants = [v for v in every if v.task_id not in rejected]
        order = _sample_order(config, variants)
        results: list[dict[str, Any]] = []
        for spec in config.models:
            for setting in config.settings:
                relative = Path("results") / spec.label / f"{path_slug(setting.label)}.jsonl"
                rows = [
                    row
                    for shard in shards
                    if (shard.run.path / relative).is_file()
                    for row in read_results(shard.run.path / relative)
                ]
                rows.sort(key=order)
                # The file as execute_samples writes it: rows without the status read_results
                # fills for old files are not added (every row of this boi has one).
                write_jsonl(out / relative, rows)
                results += rows
        log(f"  {len(shards)} shards, {len(variants)} variants, {len(results)} samples")
    with stage("report", log, run.timings, "boi merge"):
        problems = {v.task_id: v for v in variants}
        paths = build_run_report(config, out, results, problems, similarity)
        table = Path(paths.table_md).read_text(encoding="utf-8")
    totals = SamplingTotals()
    for shard in shards:
        recorded = shard.run.manifest.get("generation") or {}
        totals.add(SamplingTotals(**{k: int(recorded.get(k, 0)) for k in totals.to_json()}))
    generation = totals.to_json()
    run.complete(
        generation=generation,
        report={k: str(v) for k, v in vars(paths).items()},
    )
    summary = summary_line(out, Path(paths.table_json), results, generation).replace(
        "boi run:", f"boi merge: {len(shards)} shards,", 1
    )
    return RunOutcome(out, table, summary, generation)
