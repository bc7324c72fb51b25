"""The problem record: the one type that travels through every stage.

A `Problem` is immutable. Stages return new records (`dataclasses.replace`) and append to
`lineage`; nothing edits a record in place. `to_json` writes a HumanEval-compatible object
(`task_id`, `prompt`, `entry_point`, `canonical_solution`, `test` first) plus our own fields,
and `from_json` reads it back losslessly, so every stage can talk to the next through JSONL and
other harnesses can read our files.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from benchmarks.common.errors import UserError, suggest
from benchmarks.common.jsonl import iter_jsonl, require_fields, write_jsonl

# Block kinds, in the order they usually appear in a prompt. Function-style problems (HumanEval,
# MBPP) use prefix/name/description/examples/suffix; CodeContests statements use
# prefix/description/io_spec/examples/notes/suffix (`description` is the statement proper);
# LiveCodeBench statements add `constraints` (the bounds on the input, a hint of its own) and
# keep their platform's section order (LeetCode puts the constraints after the examples).
# BigCodeBench's docstrings add `requirements` (the libraries to use, a hint of its own).
BLOCK_KINDS = (
    "prefix",
    "name",
    "description",
    "io_spec",
    "constraints",
    "requirements",
    "examples",
    "notes",
    "suffix",
)


def freeze(value: Any) -> Any:
    """A deep read-only copy of JSON-like data: dicts become mappingproxies, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The JSON form of `freeze`d data (plain dicts and lists)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Block:
    """One contiguous slice of the prompt; a problem's blocks concatenate to its prompt."""

    kind: str
    text: str

    def __post_init__(self) -> None:
        if self.kind not in BLOCK_KINDS:
            raise ValueError(f"unknown block kind {self.kind!r}; expected one of {BLOCK_KINDS}")


@dataclass(frozen=True)
class StdioTest:
    """A stdin/stdout test case (CodeContests); `split` is public, private or generated."""

    input: str
    output: str
    split: str = "public"


@dataclass(frozen=True)
class OutputJudge:
    """How a stdin/stdout problem's output is compared with the expected one, as contest judges
    do: whitespace-separated tokens; a token the expected output writes with a decimal point or
    exponent matches any number within `float_tolerance` (absolute or relative); letters in any
    case when the statement allows it. `several_answers` quotes the statement when it accepts
    several correct outputs: those need a special judge, so a failure there may be a correct
    program (the report says so)."""

    float_tolerance: float = 1e-6
    case_insensitive: bool = False
    several_answers: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any] | None) -> OutputJudge:
        return cls(**obj) if obj else cls()


@dataclass(frozen=True)
class LineageStep:
    """One transformation applied to a problem: what ran, with which parameters, what changed."""

    transform: str
    version: str
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    changes: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", freeze(self.params))
        object.__setattr__(self, "changes", freeze(self.changes))

    def to_json(self) -> dict[str, Any]:
        return {
            "transform": self.transform,
            "version": self.version,
            "params": thaw(self.params),
            "seed": self.seed,
            "changes": thaw(self.changes),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> LineageStep:
        return cls(
            transform=obj["transform"],
            version=obj["version"],
            params=obj.get("params", {}),
            seed=obj.get("seed"),
            changes=obj.get("changes", {}),
        )


@dataclass(frozen=True)
class Problem:
    """A code challenge and everything needed to perturb, prompt and evaluate it.

    Function-style problems are evaluated HumanEval's way: the program is
    `prompt + completion + test + check(entry_point)`, where `test` defines `check(candidate)`.
    Stdin/stdout problems (CodeContests) have `entry_point=None` and `stdio_tests` instead.
    `blocks` is None until `perturb.split_blocks` has run; `absent_blocks` maps a block kind the
    splitter looked for and did not find to the reason.
    """

    task_id: str
    benchmark: str
    prompt: str
    entry_point: str | None
    test: str = ""
    canonical_solution: str | None = None
    stdio_tests: tuple[StdioTest, ...] = ()
    blocks: tuple[Block, ...] | None = None
    absent_blocks: Mapping[str, str] = field(default_factory=dict)
    source_task_id: str = ""
    lineage: tuple[LineageStep, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.source_task_id:
            object.__setattr__(self, "source_task_id", self.task_id)
        object.__setattr__(self, "stdio_tests", tuple(self.stdio_tests))
        if self.blocks is not None:
            object.__setattr__(self, "blocks", tuple(self.blocks))
        object.__setattr__(self, "lineage", tuple(self.lineage))
        object.__setattr__(self, "absent_blocks", freeze(self.absent_blocks))
        object.__setattr__(self, "metadata", freeze(self.metadata))

    @property
    def is_stdio(self) -> bool:
        """True for stdin/stdout programs (no entry point; judged on `stdio_tests`)."""
        return self.entry_point is None

    @property
    def language(self) -> str:
        """The programming language of the prompt and its tests (`benchmarks.languages`):
        `metadata["language"]`, Python when a loader said nothing."""
        return str(self.metadata.get("language") or "python")

    @property
    def output_judge(self) -> OutputJudge:
        """How this stdin/stdout problem's output is judged (defaults when the loader said nothing)."""
        return OutputJudge.from_json(self.metadata.get("output_judge"))

    @property
    def time_limit_seconds(self) -> float | None:
        """The problem's own time limit per test (contest problems), before machine scaling."""
        limit = self.metadata.get("time_limit_seconds")
        return float(limit) if limit else None

    @property
    def transform(self) -> str:
        """The catalogue transformation that made this variant (`original` for none)."""
        return self.lineage[-1].transform if self.lineage else "original"

    def block(self, kind: str) -> Block | None:
        """The block of `kind`, or None when absent (or blocks not split yet)."""
        for block in self.blocks or ():
            if block.kind == kind:
                return block
        return None

    def replace(self, **changes: Any) -> Problem:
        """A new record with `changes` applied (records are immutable)."""
        return dataclasses.replace(self, **changes)

    @property
    def entry_call(self) -> str:
        """The expression the tests' `check` is given: the entry point, or for a method
        (`Class.method`, LeetCode's `Solution.twoSum`) a function that calls it on a new
        instance of its class each time, as LeetCode runs each test on a fresh object."""
        owner, dot, method = (self.entry_point or "").rpartition(".")
        if not dot:
            return str(self.entry_point)
        return f"lambda *args, **kwargs: {owner}().{method}(*args, **kwargs)"

    def program(self, completion: str) -> str:
        """The program that checks `completion` (function-style problems only)."""
        if self.is_stdio:
            return self.prompt + completion
        return f"{self.prompt}{completion}\n\n{self.test}\n\ncheck({self.entry_call})\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "prompt": self.prompt,
            "entry_point": self.entry_point,
            "canonical_solution": self.canonical_solution,
            "test": self.test,
            "benchmark": self.benchmark,
            "source_task_id": self.source_task_id,
            "transform": self.transform,  # derived from lineage; ignored when read back
            "stdio_tests": [dataclasses.asdict(t) for t in self.stdio_tests],
            "blocks": None if self.blocks is None else [dataclasses.asdict(b) for b in self.blocks],
            "absent_blocks": thaw(self.absent_blocks),
            "lineage": [step.to_json() for step in self.lineage],
            "metadata": thaw(self.metadata),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Problem:
        blocks = obj.get("blocks")
        return cls(
            task_id=obj["task_id"],
            benchmark=obj.get("benchmark", "jsonl"),
            prompt=obj["prompt"],
            entry_point=obj.get("entry_point"),
            test=obj.get("test") or "",
            canonical_solution=obj.get("canonical_solution"),
            stdio_tests=tuple(StdioTest(**t) for t in obj.get("stdio_tests") or ()),
            blocks=None if blocks is None else tuple(Block(**b) for b in blocks),
            absent_blocks=obj.get("absent_blocks") or {},
            source_task_id=obj.get("source_task_id") or "",
            lineage=tuple(LineageStep.from_json(s) for s in obj.get("lineage") or ()),
            metadata=obj.get("metadata") or {},
        )


REQUIRED_FIELDS = ("task_id", "prompt", "entry_point")


def read_problems(path: str | os.PathLike[str]) -> list[Problem]:
    """Problems from a JSONL file written by `write_problems` (or any HumanEval-format file)."""
    problems = []
    for lineno, obj in iter_jsonl(path):
        require_fields(path, lineno, obj, REQUIRED_FIELDS)
        try:
            problems.append(Problem.from_json(obj))
        except (TypeError, KeyError, ValueError) as err:
            raise UserError(
                f"{path} line {lineno}: malformed problem record ({err}); regenerate the file."
            ) from None
    if not problems:
        raise UserError(f"{Path(path)} is empty; expected one problem per line.")
    return problems


def write_problems(path: str | os.PathLike[str], problems: Iterable[Problem]) -> int:
    """Write problems as JSONL, atomically; returns the number written."""
    return write_jsonl(path, (p.to_json() for p in problems))


class _HasTaskId(Protocol):
    @property
    def task_id(self) -> str: ...


_Task = TypeVar("_Task", bound=_HasTaskId)


def select_tasks(
    tasks: Sequence[_Task], task_ids: Sequence[str], limit: int | None, where: str
) -> list[_Task]:
    """What a run's `task_ids` and `limit` keep of `tasks` (a dataset's problems, a fairness
    suite's tasks): the ones named, in the order named (all of them, in order, when none is),
    then the first `limit` (None: all). An id that is not there is a UserError naming `where`
    ("the dataset humaneval") and an id that is."""
    kept = list(tasks)
    if task_ids:
        by_id = {t.task_id: t for t in kept}
        missing = [t for t in task_ids if t not in by_id]
        if missing:
            shown = f"ids look like {kept[0].task_id!r}" if kept else "it holds none"
            raise UserError(
                f"task_ids {missing[:3]} are not in {where}{suggest(missing[0], by_id)}; {shown}."
            )
        kept = [by_id[t] for t in task_ids]
    return kept[:limit] if limit else kept
