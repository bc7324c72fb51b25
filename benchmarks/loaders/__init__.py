"""Benchmark loaders: each returns `Problem` records plus the problems it had to report.

`load_benchmark(name_or_path, data=...)` is the one entry point the CLI and the runner use:
`humaneval`, `mbpp`, `code_contests`, or a path to a HumanEval-format (or boi) JSONL file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.errors import UserError, suggest
from benchmarks.problem import Problem


@dataclass(frozen=True)
class LoadIssue:
    """A problem the loader could not fully build (still loaded unless `dropped`)."""

    task_id: str
    reason: str
    dropped: bool = False


@dataclass
class LoadResult:
    problems: list[Problem]
    issues: list[LoadIssue] = field(default_factory=list)


def _humaneval(data: str | None) -> LoadResult:
    from benchmarks.loaders.humaneval import load_humaneval

    return load_humaneval(data)


def _mbpp(data: str | None) -> LoadResult:
    from benchmarks.loaders.mbpp import load_mbpp

    return load_mbpp(data)


def _code_contests(data: str | None) -> LoadResult:
    from benchmarks.loaders.code_contests import load_code_contests

    return load_code_contests(data)


DATASETS: dict[str, Callable[[str | None], LoadResult]] = {
    "humaneval": _humaneval,
    "mbpp": _mbpp,
    "code_contests": _code_contests,
}


def load_benchmark(dataset: str, data: str | os.PathLike[str] | None = None) -> LoadResult:
    """Load a benchmark by name (`data` overrides where it is read from) or from a JSONL path."""
    key = dataset.lower().replace("-", "_")
    if key in DATASETS:
        return DATASETS[key](None if data is None else str(data))
    if (
        Path(dataset).suffix in {".jsonl", ".gz", ".json"}
        or os.sep in dataset
        or Path(dataset).exists()
    ):
        from benchmarks.loaders.humaneval import load_humaneval_format

        return load_humaneval_format(dataset)
    raise UserError(
        f"Unknown dataset {dataset!r}{suggest(key, DATASETS)}; use one of {', '.join(DATASETS)} or a path to a HumanEval-format JSONL file."
    )
