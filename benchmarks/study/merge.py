"""`boi merge OUT SHARD_DIR...`: the shards of one study as one run directory and its report.

Each shard (`--shard I/N` of `boi run`, `boi bias run` or `boi bias test`) read every input and
wrote the study's whole-run files (identical in every shard: `boi run`'s problems and critic
scores, the fairness tests' tasks), and generated and judged its own units. The merge checks that
the shards belong together (one study, one work hash: the config without out_dir), that each is
complete, and that their indices cover 0..N-1 exactly once; then it writes OUT as the unsharded
run would have: the whole-run files copied, the generation caches joined, each split file's rows
in the unsharded run's order (each row's `ordinal`: where the driver placed its sample), and the
report built from those files by the study's own report function. Nothing in the shard directories is written; OUT is claimed
like any run directory.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, write_jsonl
from benchmarks.common.outputs import output_dir
from benchmarks.common.progress import stage
from benchmarks.common.provenance import portable_path
from benchmarks.common.rundir import MANIFEST, RunDir, read_marker
from benchmarks.study import GENERATIONS, Study, StudyOutcome, claim_study
from benchmarks.study.shards import parse_shard


@dataclass
class _ShardRun:
    run: RunDir
    index: int
    count: int


def open_shards(paths: Sequence[str | Path]) -> list[_ShardRun]:
    """The shards, checked: one study, one run, each complete, indices 0..N-1 exactly once."""
    if not paths:
        raise UserError("boi merge needs the shard directories: boi merge OUT SHARD_DIR...")
    shards = []
    for path in paths:
        run = RunDir.open(
            path, what="run", hint="pass the --out of each `--shard` run", shard_ok=True
        )
        label = run.manifest.get("shard")
        if not label:
            raise UserError(f"{run.path} is a whole run, not a shard; merge only --shard runs.")
        spec = parse_shard(str(label), environ={})
        if not run.completed:
            raise UserError(
                f"{run.path} (shard {label}) is not complete; rerun its `--shard {label}` "
                "command to finish it, then merge."
            )
        shards.append(_ShardRun(run, spec.index, spec.count))
    first = shards[0]
    for shard in shards[1:]:
        if study_of(shard.run) != study_of(first.run):
            raise UserError(
                f"{shard.run.path} is a shard of {study_of(shard.run)} but {first.run.path} of "
                f"{study_of(first.run)}; merge the shards of one run."
            )
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
    return sorted(shards, key=lambda s: s.index)


def study_of(run: RunDir) -> str:
    """The command whose shard `run` is (shards written before studies were named: boi run's)."""
    return str(run.manifest.get("study") or "boi run")


def _check_whole_run_files(study: Study, shards: Sequence[_ShardRun]) -> None:
    first = shards[0].run
    for shard in shards[1:]:
        for name in study.whole_run_files:
            mine, theirs = shard.run.path / name, first.path / name
            if mine.is_file() != theirs.is_file() or (
                mine.is_file() and mine.read_bytes() != theirs.read_bytes()
            ):
                raise UserError(
                    f"{mine} differs from {theirs}: the shards read their inputs differently "
                    "(another boi version or data file?); rerun them with one."
                )


def _check_inputs(shards: Sequence[_ShardRun]) -> None:
    """The shards read the same input files (by content): the merged run records them once."""
    first = shards[0].run
    digests = {name: entry.get("sha256") for name, entry in first.inputs.items()}
    for shard in shards[1:]:
        theirs = {name: entry.get("sha256") for name, entry in shard.run.inputs.items()}
        if theirs != digests:
            changed = sorted(
                k for k in digests.keys() | theirs.keys() if digests.get(k) != theirs.get(k)
            )
            raise UserError(
                f"{shard.run.path} read other input files than {first.path} ({', '.join(changed)} "
                "differ); rerun the shards with the same files."
            )


def _split_files(study: Study, shards: Sequence[_ShardRun]) -> list[str]:
    """Every split file any shard wrote, relative to its run, in a stable order."""
    found: set[str] = set()
    for shard in shards:
        for pattern in study.split_files:
            found.update(str(p.relative_to(shard.run.path)) for p in shard.run.path.glob(pattern))
    return sorted(found)


def merge_study(
    make_study: Callable[[str, dict[str, Any], dict[str, Any]], Study],
    out: str | Path,
    shard_dirs: Sequence[str | Path],
    log: Callable[[str], None] = print,
) -> StudyOutcome:
    """Merge the shards of one run into `out` and write its report (see the module docstring).
    `make_study` builds the study from the shards' command, recorded config (with `out_dir`
    set to OUT) and manifest (`Study.from_config`)."""
    # Before anything is read or claimed: OUT equal to a shard would rewrite that shard's
    # manifest (a claim that looks like a resume) and copy its files onto themselves.
    output_dir(out, option="OUT", ours=(MANIFEST,), inputs=shard_dirs)
    held = read_marker(Path(out))
    if held is not None and held.get("shard"):
        # `boi merge SHARD_0 SHARD_1` (OUT left out): shard 0 would be reported missing while
        # it was given, and OUT would be claimed over it.
        raise UserError(
            f"OUT {out} is shard {held['shard']} of a run, not the merged run's directory; give "
            "a new folder first: boi merge OUT SHARD_DIR..."
        )
    shards = open_shards(shard_dirs)
    first = shards[0].run
    # The study is rebuilt from the shards' record, not from the files their config names:
    # that config names a file outside the working directory by its last part only (a
    # manifest names no machine's paths), so what the run's identity hashes of a file's content
    # comes from the manifest, and the merged run records the inputs as the shards read them.
    # Nothing is read by a recorded name, where a file of that name may be another one.
    study = make_study(study_of(first), {**first.config, "out_dir": str(out)}, first.manifest)
    if study.claim_spec(str(out)).work_hash != first.manifest.get("work_hash"):
        raise UserError(
            f"{first.path} was written by another boi version (its config hashes differently "
            "now); merge with the boi that ran the shards."
        )
    _check_whole_run_files(study, shards)
    _check_inputs(shards)
    run = claim_study(
        study,
        None,
        record={"merged_from": [portable_path(str(s.run.path)) for s in shards]},
        recorded_inputs=first.inputs,
    )
    out = run.path
    with stage("merge", log, run.timings, "boi merge"):
        for name in study.whole_run_files:
            if (first.path / name).is_file():
                (out / name).parent.mkdir(parents=True, exist_ok=True)  # e.g. inputs/...
                shutil.copyfile(first.path / name, out / name)
        generations: dict[str, dict[str, Any]] = {}
        for shard in shards:
            path = shard.run.path / GENERATIONS
            if path.is_file():
                for _, record in iter_jsonl(path):
                    generations.setdefault(str(record["key"]), record)
        if generations:
            write_jsonl(out / GENERATIONS, generations.values())
        rows = 0
        for relative in _split_files(study, shards):
            joined = [
                _ordered(shard.run.path / relative, number, row)
                for shard in shards
                if (shard.run.path / relative).is_file()
                for number, row in iter_jsonl(shard.run.path / relative)
            ]
            joined.sort(key=lambda row: row["ordinal"])
            write_jsonl(out / relative, joined)
            rows += len(joined)
        log(f"  {len(shards)} shards, {rows} rows")
    totals: dict[str, int] = {}
    for shard in shards:
        for key, value in (shard.run.manifest.get("generation") or {}).items():
            if isinstance(value, int):
                totals[key] = totals.get(key, 0) + value
    with stage("report", log, run.timings, "boi merge"):
        outcome = study.report(run, {}, log)
    generation = totals or outcome.generation
    record = {**study.record(), **outcome.record}
    run.complete(generation=generation, **record)
    summary = outcome.summary_line.replace(
        f"{study.command}:", f"boi merge: {len(shards)} shards,", 1
    )
    return StudyOutcome(out, outcome.table_markdown, summary, generation, record, outcome.report)


def _ordered(path: Path, line: int, row: dict[str, Any]) -> dict[str, Any]:
    """A shard's row, which must say where its sample stands in the run (`ordinal`)."""
    if not isinstance(row.get("ordinal"), list):
        raise UserError(
            f"{path} line {line} has no ordinal: the shard was written by an older boi, whose "
            "rows the merge cannot order; rerun the shards with this one."
        )
    return row
