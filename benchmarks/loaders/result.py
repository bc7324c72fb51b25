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
    prompts: list[tuple[str, str]] | None = None
    """Every problem's (task id, prompt) in the dataset, set by a loader that built only the
    problems a selection asked for (`load_benchmark(..., task_ids=, limit=)`); None when
    `problems` is the whole dataset."""

    reference_failures: dict[str, str] = field(default_factory=dict)
    """Problems the loader left out because their own reference solution fails in the sandbox
    (task id -> reason; BigCodeBench's shipped check): a run records them in its
    `reference_failures.jsonl` beside those it checks itself."""

    @property
    def dataset_prompts(self) -> list[tuple[str, str]]:
        """(task id, prompt) of every problem of the dataset, however many were built: what a
        run's prompts digest (`prompts_sha256`) covers, the same under any selection."""
        if self.prompts is not None:
            return self.prompts
        return [(p.task_id, p.prompt) for p in self.problems]
