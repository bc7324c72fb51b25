"""ReCode's file layout, both ways: our variants written for ReCode's scripts, and ReCode's
released data read as problems with lineage (the layout itself: `benchmarks.loaders.recode`).

`write_recode` writes what `boi perturb --format recode` makes:

    DIR/nominal/HumanEval.jsonl              the originals (MBPP: mbpp_wtest.jsonl)
    DIR/nominal/humaneval_partial.jsonl      the partial_code variants (ReCode's nominal partial)
    DIR/perturbed_finalized/humaneval/full/GROUP/humaneval_NAME_sK.jsonl

the layout of ReCode's own release, so its scripts run on it once config.json's `data_path`
points at DIR/nominal and `output_adv_path` at DIR/perturbed_finalized. NAME is the
transformation's ReCode name (`recode_name`), GROUP ReCode's folder for its family
(`RECODE_GROUPS`). Our transformations without a ReCode name (anonymize, drop_examples, ...)
are written too, under their own name in the folder of their family (`blocks`): ReCode's
scripts evaluate any name listed under a group in config.json, so they can score our catalogue
beside theirs, and our names do not clash with ReCode's. Transformations that may make several
variants of one problem (drop_one, anon_drop_one) are left out, with a note: a ReCode file
holds one record per task, and its metrics read the files' seeds, not variants of one seed.

`read_recode` reads ReCode's `dataset-release` folder (or one `write_recode` wrote) back: the
originals as they are, the nominal partial as `partial_code` variants, and each perturbed file
as variants of the registered transformation with that ReCode name.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import write_jsonl
from benchmarks.common.provenance import write_output_manifest
from benchmarks.loaders.recode import (
    FIELDS,
    RELEASE_HELP,
    check_dataset_name,
    find_release,
    mark_split,
    nominal_file,
    partial_file,
    perturbed_file,
    read_records,
)
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.problem import LineageStep, Problem
from perturb.recode import RECODE_GROUPS, recode_names
from perturb.transforms import TRANSFORMS

ORIGINAL = "original"
PARTIAL = "partial_code"
RELEASE_VERSION = "recode-release"
"""The lineage version of a variant read from ReCode's files: made by ReCode, not by us."""
FAMILY_GROUPS = {family: group for group, family in RECODE_GROUPS.items()}
SEED_TAG = re.compile(r"@s(\d+)$")
MANIFEST = "boi_recode_{dataset}.json"
"""What `write_recode` wrote into a folder (`files`), so a rewrite removes its own stale files,
with the provenance of the variants (the shape every output's provenance shares)."""


class RecodeNote(NamedTuple):
    """What was left out, and why: `subject` (a transformation or ReCode name), `reason`."""

    subject: str
    reason: str

    def __str__(self) -> str:
        return f"{self.subject}: {self.reason}"


@dataclass(frozen=True)
class RecodeWritten:
    """What `write_recode` wrote: file (relative to the folder) -> records, and the notes."""

    folder: Path
    files: dict[str, int]
    notes: list[RecodeNote]


@dataclass(frozen=True)
class RecodeRelease:
    """ReCode's data for one dataset as problems with lineage, and what was left out."""

    problems: list[Problem]
    notes: list[RecodeNote]


def write_recode(
    variants: Sequence[Problem],
    out_dir: str | os.PathLike[str],
    dataset_name: str,
    *,
    config: Mapping[str, Any] | None = None,
    inputs: Mapping[str, str | os.PathLike[str] | None] | None = None,
    record: Mapping[str, Any] | None = None,
) -> RecodeWritten:
    """Write `variants` (`run_catalogue`'s, originals included) in ReCode's layout under
    `out_dir` (see the module docstring); every file atomically.

    The folder's manifest for the dataset (`boi_recode_DATASET.json`) is its provenance, in the
    shape every output's provenance shares (`benchmarks.common.provenance.provenance_record`):
    `config` (what made the variants, e.g. the PerturbConfig's fields), the `inputs` files'
    hashes, versions, git, ..., `record` (the catalogue's summary), and `files`: what was written.

    A stochastic transformation's seeds go to s0, s1, ... (its variants' `@sK` tags; untagged:
    s0), a deterministic one's to s0. Records carry the original task id. The partial-code
    families' `partial` field is built from the `partial_code` variant of the same task, so it
    is null (with a note) when the variants hold none. Files this function wrote earlier into
    the folder for this dataset and did not write now are removed; nothing else is touched: a
    file it would write that is already there and not in its manifest (a ReCode release, the
    user's own) is refused before anything is written.
    """
    check_dataset_name(dataset_name)
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder} is a file; ReCode's layout is a folder, so pass a folder path.")
    originals = {p.source_task_id: p for p in variants if p.transform == ORIGINAL}
    partials = {p.source_task_id: p for p in variants if p.transform == PARTIAL}
    marked = {task: _partial_field(p, originals.get(task)) for task, p in partials.items()}
    groups: dict[tuple[str, int], list[Problem]] = {}
    for variant in variants:
        if variant.transform not in (ORIGINAL, PARTIAL):
            groups.setdefault((variant.transform, _seed_index(variant)), []).append(variant)

    pending: dict[str, list[dict[str, Any]]] = {}
    notes: list[RecodeNote] = []

    def write(relative: str, records: Iterable[dict[str, Any]]) -> None:
        pending[relative] = list(records)  # written below, once nothing would be overwritten

    if originals:
        write(str(nominal_file(dataset_name)), (_record(p) for p in originals.values()))
    if partials:
        write(
            str(partial_file(dataset_name)),
            ({**_record(p), "partial": marked[task]} for task, p in partials.items()),
        )
    several = {
        name
        for name, members in _by_name(groups).items()
        if (name in TRANSFORMS and TRANSFORMS[name].multi_variant) or _repeats_a_task(members)
    }
    for name in sorted(several):
        notes.append(
            RecodeNote(
                name,
                "makes several variants of one problem, and a ReCode file holds one record per "
                "task; left out",
            )
        )
    missing_partial: set[str] = set()
    for (name, seed), members in groups.items():
        factory = TRANSFORMS.get(name)
        if name in several or (seed != 0 and factory is not None and not factory.stochastic):
            continue
        family = factory.family if factory else None
        recode = (factory.recode_name if factory else None) or name
        on_partial = factory is not None and factory.baseline == PARTIAL
        records = []
        for variant in members:
            record = _record(variant)
            if family == "docstring":
                source = originals.get(variant.source_task_id)
                record["seed"] = seed
                record["perturbed"] = _perturbed(variant, source)
            if on_partial:
                if variant.source_task_id not in marked:
                    missing_partial.add(name)
                record["partial"] = marked.get(variant.source_task_id)
            records.append(record)
        group = FAMILY_GROUPS.get(family or "", family or "other")
        write(str(perturbed_file(dataset_name, group, recode, seed)), records)
    for name in sorted(missing_partial):
        notes.append(
            RecodeNote(
                name,
                f"some tasks have no {PARTIAL} variant, so their 'partial' field is null and "
                f"ReCode's nominal partial file lacks them; add {PARTIAL} to the transformations",
            )
        )
    if not pending:
        raise UserError(
            f"no variant of {dataset_name} could be written in ReCode's layout (see the notes: "
            f"{'; '.join(map(str, notes)) or 'no variants given'})."
        )
    earlier = set(_earlier_files(folder, dataset_name))
    for relative in pending:
        if (folder / relative).exists() and relative not in earlier:
            raise UserError(
                f"{folder / relative} exists and boi did not write it (it is not in "
                f"{folder / MANIFEST.format(dataset=dataset_name)}); pass a new or empty folder "
                "(nothing was written)."
            )
    files = {
        relative: write_jsonl(folder / relative, records) for relative, records in pending.items()
    }
    _remove_stale(folder, dataset_name, files)
    write_output_manifest(
        folder,
        dict(config) if config is not None else None,
        inputs=inputs,
        record={**dict(record or {}), "dataset": dataset_name, "files": sorted(files)},
        path=folder / MANIFEST.format(dataset=dataset_name),
    )
    return RecodeWritten(folder, files, notes)


def recode_dataset_name(dataset: str) -> str:
    """The name ReCode's files get for `dataset` as `boi perturb` takes it: a registered name as
    it is (lower case), a JSONL path by its file name up to the first dot."""
    return check_dataset_name(Path(dataset).name.split(".")[0].lower())


def _record(problem: Problem) -> dict[str, Any]:
    """ReCode's fields, in its order (our `to_json` starts with the same five), under the
    original task id."""
    record = {key: value for key, value in problem.to_json().items() if key in FIELDS}
    return {**record, "task_id": problem.source_task_id}


def _seed_index(variant: Problem) -> int:
    """Which of a run's seeds made `variant` (its `@sK` tag; ReCode's sK), 0 when untagged."""
    match = SEED_TAG.search(variant.task_id)
    return int(match[1]) if match else 0


def _unchanged(variant: Problem) -> bool:
    """The catalogue kept the problem as it was (the transformation did not apply)."""
    return bool(variant.lineage) and "unchanged" in variant.lineage[-1].changes


def _perturbed(variant: Problem, original: Problem | None) -> bool:
    """ReCode's `perturbed` flag: the prompt differs from the original's."""
    if _unchanged(variant):
        return False
    return original is None or variant.prompt != original.prompt


def _partial_field(partial: Problem, original: Problem | None) -> str | None:
    """ReCode's `partial` for the task of this `partial_code` variant: its code with the split
    marker, or None where it was not split (the prompt is the original's)."""
    if _unchanged(partial) or (original is not None and partial.prompt == original.prompt):
        return None
    return mark_split(partial.prompt, partial.canonical_solution or "")


def _by_name(groups: dict[tuple[str, int], list[Problem]]) -> dict[str, list[list[Problem]]]:
    by_name: dict[str, list[list[Problem]]] = {}
    for (name, _), members in groups.items():
        by_name.setdefault(name, []).append(members)
    return by_name


def _repeats_a_task(member_lists: list[list[Problem]]) -> bool:
    return any(len({p.source_task_id for p in members}) < len(members) for members in member_lists)


def _earlier_files(folder: Path, dataset: str) -> list[str]:
    """The files an earlier `write_recode` of `dataset` recorded in the folder's manifest."""
    manifest = folder / MANIFEST.format(dataset=dataset)
    if not manifest.is_file():
        return []
    try:
        return [str(f) for f in json.loads(manifest.read_text(encoding="utf-8"))["files"]]
    except (ValueError, KeyError, TypeError):
        return []  # a damaged manifest: nothing is known to be ours, so nothing goes


def _remove_stale(folder: Path, dataset: str, written: dict[str, int]) -> None:
    """Remove what an earlier `write_recode` of this dataset wrote here and this one did not (a
    seed or transformation no longer asked for); the caller then records what is there now."""
    for relative in _earlier_files(folder, dataset):
        path = Path(relative)  # a hand-edited manifest must not reach outside the folder
        if relative not in written and not path.is_absolute() and ".." not in path.parts:
            (folder / relative).unlink(missing_ok=True)


def read_recode(
    root: str | os.PathLike[str],
    dataset: str = "humaneval",
    *,
    log: Callable[[str], None] | None = None,
) -> list[Problem]:
    """ReCode's data for `dataset` under `root` (its `dataset-release` folder, or a folder
    `write_recode` wrote) as problems with lineage (see `read_recode_release`). What is left
    out (a ReCode perturbation no registered transformation names) goes to `log`, one
    sentence each; without `log`, as a warning."""
    release = read_recode_release(root, dataset)
    for note in release.notes:
        if log is None:
            warnings.warn(str(note), stacklevel=2)
        else:
            log(str(note))
    return release.problems


def read_recode_release(root: str | os.PathLike[str], dataset: str = "humaneval") -> RecodeRelease:
    """The originals (transform `original`, task ids as they are), the nominal partial as
    `partial_code` variants, and every perturbed file as variants of our transformation with
    its ReCode name (or, for files `write_recode` wrote under our own name, that name): task id
    `ID::NAME@sK` when the transformation has several seed files, else `ID::NAME`; its one
    lineage step `LineageStep(NAME, "recode-release", {}, K, {"file": the file})`.

    ReCode names no registered transformation has are left out with a note; malformed files
    (a bad line, a task id of no original) are a UserError naming the file and line."""
    files = find_release(root, dataset)
    benchmark = f"recode_{dataset}"
    originals = [_problem(record, benchmark) for _, record in read_records(files.nominal)]
    known = {p.task_id for p in originals}
    problems = list(originals)

    def variants(path: Path, name: str, seed: int | None, tagged: bool) -> list[Problem]:
        step = LineageStep(name, RELEASE_VERSION, {}, seed, {"file": files.relative(path)})
        suffix = f"::{name}" + (f"@s{seed}" if tagged else "")
        return [
            _problem(record, benchmark).replace(
                task_id=record["task_id"] + suffix,
                source_task_id=record["task_id"],
                lineage=(step,),
            )
            for _, record in read_records(path, known, files.nominal)
        ]

    if files.partial is not None:
        problems += variants(files.partial, PARTIAL, None, tagged=False)
    names = recode_names()
    ours: dict[str, list[tuple[int, Path]]] = {}
    unknown: dict[str, list[Path]] = {}
    for (recode, seed), path in files.perturbed.items():
        # Files written under our own name (transformations without a ReCode name).
        own = recode if recode in TRANSFORMS and recode not in (ORIGINAL, PARTIAL) else None
        name = names.get(recode) or own
        if name is None:
            unknown.setdefault(recode, []).append(path)
        else:
            ours.setdefault(name, []).append((seed, path))
    for name, seeds in ours.items():
        for seed, path in sorted(seeds, key=lambda pair: pair[0]):
            problems += variants(path, name, seed, tagged=len(seeds) > 1)
    notes = [
        RecodeNote(
            recode,
            f"no registered transformation has this ReCode name, so its {len(paths)} file"
            f"{'s' if len(paths) > 1 else ''} ({files.relative(paths[0])}"
            f"{', ...' if len(paths) > 1 else ''}) {'were' if len(paths) > 1 else 'was'} left "
            f"out; register one with @transform(..., recode={recode!r}) to read them",
        )
        for recode, paths in sorted(unknown.items())
    ]
    return RecodeRelease(problems, notes)


def _problem(record: dict[str, Any], benchmark: str) -> Problem:
    return Problem(
        task_id=record["task_id"],
        benchmark=benchmark,
        prompt=record["prompt"],
        entry_point=record["entry_point"],
        test=record["test"],
        canonical_solution=record.get("canonical_solution"),
    )


def load_recode(data: str | None, dataset: str) -> LoadResult:
    """The dataset `recode_DATASET`: ReCode's released variants of DATASET with lineage; what
    was left out as issues."""
    if data is None:
        raise UserError(
            f"dataset recode_{dataset} reads ReCode's released files: pass --data (or data: in "
            f"a run config) with the folder; {RELEASE_HELP}."
        )
    release = read_recode_release(data, dataset)
    return LoadResult(
        release.problems, [LoadIssue(n.subject, n.reason, dropped=True) for n in release.notes]
    )


def load_recode_humaneval(data: str | None = None) -> LoadResult:
    """ReCode's released HumanEval variants (`--dataset recode_humaneval --data DIR`)."""
    return load_recode(data, "humaneval")


def load_recode_mbpp(data: str | None = None) -> LoadResult:
    """ReCode's released MBPP variants (`--dataset recode_mbpp --data DIR`)."""
    return load_recode(data, "mbpp")
