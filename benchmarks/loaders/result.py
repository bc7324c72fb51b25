"""What every dataset loader returns: the problems, and the ones it had to report."""

from __future__ import annotations

from dataclasses import dataclass, field

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
