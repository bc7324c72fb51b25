"""ReCode's file layout (Wang et al., ACL 2023; github.com/amazon-science/recode): where its
released files lie, what their records hold, and reading them with errors that name the file
and line.

    ROOT/nominal/HumanEval.jsonl             the originals (MBPP: mbpp_wtest.jsonl)
    ROOT/nominal/humaneval_partial.jsonl     the nominal partial code
    ROOT/perturbed_finalized/humaneval/full/GROUP/humaneval_PERTURBATION_sK.jsonl

ROOT is ReCode's `dataset-release` folder (its scripts read `data_path` and `output_adv_path`
from config.json: point them at ROOT/nominal and ROOT/perturbed_finalized). GROUP is ReCode's
recipe group (nlaugmenter, func_name, natgen, format), K the seed (s0 only for deterministic
perturbations). Every file holds one record per source task, its `task_id` the original's,
with HumanEval's fields in this order: task_id, prompt, entry_point, canonical_solution, test.
The docstring perturbations (nlaugmenter) add `seed` and `perturbed` (whether the prompt
changed). The partial-code files (the nominal partial, natgen, format) hold the partial prompt
(the prompt plus the first half of the solution) as `prompt` and the rest of the solution as
`canonical_solution`, and add `partial`: the unperturbed code with a marker comment line where
it is split (`mark_split`), or null where the body has one line and is not split.

Only the layout lives here. Which registered transformation a ReCode perturbation is, the
variants' lineage, writing our variants in this layout and the datasets `recode_humaneval` /
`recode_mbpp` are perturb's (`perturb.recode.interop`): the names are the transformation
registry's, which this layer does not import.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields, require_new_id, require_strings

NOMINAL_DIR = "nominal"
PERTURBED_DIR = "perturbed_finalized"
NOMINAL_FILES = {"humaneval": "HumanEval.jsonl", "mbpp": "mbpp_wtest.jsonl"}
"""ReCode's nominal file per dataset (its config.json DATASET_PATH); others: DATASET.jsonl."""
FIELDS = ("task_id", "prompt", "entry_point", "canonical_solution", "test")
"""Every ReCode record's fields, in its order."""
REQUIRED = ("task_id", "prompt", "entry_point", "test")
SPLIT_MARKER = "# print('@@this is the line to split##')"
"""The comment line ReCode's `partial` field holds where the partial prompt ends."""
DATASET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
RELEASE_HELP = (
    "pass ReCode's dataset-release folder (github.com/amazon-science/recode) or one written by "
    "boi perturb --format recode"
)


def check_dataset_name(dataset: str) -> str:
    """`dataset` when it can name ReCode files (`DATASET_NAME_sK.jsonl`), else a UserError."""
    if not DATASET_NAME.fullmatch(dataset):
        raise UserError(
            f"{dataset!r} cannot name ReCode files; use letters, digits, underscores, dots and dashes "
            "(ReCode's are humaneval and mbpp)."
        )
    return dataset


def nominal_file(dataset: str) -> PurePosixPath:
    """The originals' file, relative to the release folder."""
    return PurePosixPath(NOMINAL_DIR, NOMINAL_FILES.get(dataset, f"{dataset}.jsonl"))


def partial_file(dataset: str) -> PurePosixPath:
    """The nominal partial code's file, relative to the release folder."""
    return PurePosixPath(NOMINAL_DIR, f"{dataset}_partial.jsonl")


def perturbed_file(dataset: str, group: str, name: str, seed: int) -> PurePosixPath:
    """The file of perturbation `name` at `seed`, relative to the release folder."""
    return PurePosixPath(PERTURBED_DIR, dataset, "full", group, f"{dataset}_{name}_s{seed}.jsonl")


def mark_split(head: str, tail: str) -> str:
    """ReCode's `partial` field: `head` (the partial prompt), the split marker, then `tail` (the
    rest of the solution). The marker takes the deeper indentation of the lines right before
    and after it (a blank line counts as unindented), so the code still parses when the marker
    is turned back into a statement."""
    if head and not head.endswith("\n"):
        head += "\n"
    before = head[:-1].rpartition("\n")[2]
    after = tail.partition("\n")[0]
    indent = max(_indent(before), _indent(after), key=len)
    return f"{head}{indent}{SPLIT_MARKER}\n{tail}"


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


@dataclass(frozen=True)
class ReleaseFiles:
    """A release folder's files for one dataset."""

    root: Path
    nominal: Path
    partial: Path | None
    perturbed: dict[tuple[str, int], Path]
    """(ReCode's perturbation name, seed) -> its file, in path order."""

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def find_release(root: str | os.PathLike[str], dataset: str) -> ReleaseFiles:
    """The ReCode files of `dataset` under `root`: the nominal files in ROOT/nominal (or ROOT
    itself), the perturbed files `DATASET_NAME_sK.jsonl` anywhere below it."""
    root = Path(root)
    check_dataset_name(dataset)
    if not root.is_dir():
        raise UserError(f"{root} is not a folder; {RELEASE_HELP}.")
    pattern = re.compile(rf"{re.escape(dataset)}_(.+)_s(\d+)\.jsonl")
    perturbed: dict[tuple[str, int], Path] = {}
    for path in sorted(root.rglob(f"{dataset}_*_s*.jsonl")):
        match = pattern.fullmatch(path.name)
        if not match or not path.is_file():
            continue
        key = (match[1], int(match[2]))
        if key in perturbed:
            raise UserError(
                f"{root} holds {path.name} twice ({perturbed[key]} and {path}); pass the folder "
                "of one release."
            )
        perturbed[key] = path
    nominal = _nominal(root, nominal_file(dataset))
    if nominal is None and perturbed:
        raise UserError(
            f"{root} holds ReCode's perturbed files for {dataset} but not the originals "
            f"{nominal_file(dataset)} (what drops are measured against); {RELEASE_HELP}."
        )
    if nominal is None:
        raise UserError(
            f"{root} holds no ReCode files for {dataset}: neither the originals "
            f"{nominal_file(dataset)} nor perturbed files {dataset}_NAME_sK.jsonl; {RELEASE_HELP}."
        )
    return ReleaseFiles(root, nominal, _nominal(root, partial_file(dataset)), perturbed)


def _nominal(root: Path, relative: PurePosixPath) -> Path | None:
    for candidate in (root / relative, root / relative.name):
        if candidate.is_file():
            return candidate
    return None


def read_records(
    path: Path, known: Collection[str] | None = None, nominal: Path | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) for each record of a ReCode file, checked: the fields every
    record needs, their types, unique task ids and, given `known` (the task ids of the
    `nominal` file), ids that belong to it."""
    records: list[tuple[int, dict[str, Any]]] = []
    seen: dict[str, int] = {}
    for lineno, record in iter_jsonl(path):
        require_fields(
            path,
            lineno,
            record,
            REQUIRED,
            what="ReCode record",
            needs="ReCode's records carry task_id, prompt, entry_point, canonical_solution and test",
        )
        require_strings(path, lineno, record, ("task_id", "prompt", "entry_point", "test"))
        if not isinstance(record.get("canonical_solution", ""), str | None):
            raise UserError(f"{path} line {lineno}: field 'canonical_solution' must be a string.")
        task_id = record["task_id"]
        require_new_id(path, lineno, task_id, seen, needs="a ReCode file holds one record per task")
        if known is not None and task_id not in known:
            raise UserError(
                f"{path} line {lineno}: task_id {task_id!r} matches no problem of {nominal}; "
                "the file belongs to another dataset or release."
            )
        records.append((lineno, record))
    if not records:
        raise UserError(f"{path} is empty; a ReCode file holds one record per task.")
    return records
