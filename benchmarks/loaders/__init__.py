"""Benchmark loaders: each returns `Problem` records plus the problems it had to report.

`load_benchmark(name_or_path, data=...)` is the one entry point the CLI and the runner use: a
name registered in `DATASETS` (`humaneval`, `humanevalplus`, `mbpp`, `code_contests`, ...), or
a path to a HumanEval-format (or boi) JSONL file. ReCode's released perturbed data
(`recode_humaneval` / `recode_mbpp`) is read with lineage that names perturb's transformations,
so its loaders live in `perturb.recode.interop` and `perturb.recode` registers them here when it
is imported (every boi command imports it): benchmarks imports nothing above it.

Adding a dataset is one module with a loader `load(data: str | None) -> LoadResult` (`data`:
where to read it from, None for the loader's default) plus its entry in the one table of
datasets (`benchmarks.upstream.ALL_DATASETS`: its names, loader, upstream or source), or at run time
`DATASETS.register("name", "package.module:load")`; the CLI's help and error messages list it.
A loader whose work is per problem (HumanEval+ runs each canonical solution on its inputs) may
also take the keywords `task_ids` and `limit`, a run's selection: it then builds only the
problems that selection needs (at least those, in the dataset's order) and sets
`LoadResult.prompts` to every problem's prompt, so a run of two problems does not wait for all.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.common.errors import UserError, suggest
from benchmarks.common.registry import Registry
from benchmarks.loaders.humaneval import load_humaneval_format
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.upstream import loader_targets

__all__ = ["DATASETS", "LoadIssue", "LoadResult", "dataset_help", "load_benchmark"]

# name -> "module:loader", imported when the dataset is first loaded: the problem datasets of
# the one table of datasets (`benchmarks.upstream.ALL_DATASETS`), in its order, whose loaders
# live in benchmarks. A loader in a package above (ReCode's, in perturb) is registered by that
# package, so this registry never names what benchmarks may not import.
DATASETS: Registry[Callable[[str | None], LoadResult]] = Registry(
    "dataset",
    {n: t for n, t in loader_targets("problems").items() if t.startswith("benchmarks.")},
    base=Callable,
)
JSONL_FILE = "a path to a HumanEval-format JSONL file"


def dataset_help(path: str = "a HumanEval-format JSONL path") -> str:
    """Help text for a dataset argument: the table's names (those a package above registers
    too, whether or not it is imported yet), then any registered at run time, then what else it
    takes."""
    names = dict.fromkeys([*loader_targets("problems"), *DATASETS])
    return f"{', '.join(names)}, or {path}"


def load_benchmark(
    dataset: str,
    data: str | os.PathLike[str] | None = None,
    *,
    task_ids: Sequence[str] = (),
    limit: int | None = None,
    candidate_libraries: Sequence[str] = (),
) -> LoadResult:
    """Load a dataset by name (`data` overrides where it is read from) or from a JSONL path.

    `task_ids` and `limit` say which problems the caller will use (the ids, then the first
    `limit`): a loader that takes them builds only those (the others are not in the result);
    the rest load every problem, and the caller selects. `candidate_libraries`: the libraries
    the run's sandbox lets a candidate import (`ExecutionConfig.candidate_libraries`), for a
    loader whose tasks need some (BigCodeBench's installed tier)."""
    key = dataset.lower().replace("-", "_")
    table = loader_targets("problems")
    if key in table and key not in DATASETS:
        package = table[key].split(".")[0]
        raise UserError(
            f"dataset {key!r} is loaded by {table[key]}, which `import {package}` registers: "
            f"import {package} before loading it (every boi command does)."
        )
    if key in DATASETS:
        loader: Callable[..., LoadResult] = DATASETS.load(key)
        where = None if data is None else str(data)
        parameters = inspect.signature(loader).parameters
        options: dict[str, object] = {}
        if (task_ids or limit) and "limit" in parameters:
            options.update(task_ids=tuple(task_ids), limit=limit)
        if candidate_libraries and "candidate_libraries" in parameters:
            options["candidate_libraries"] = tuple(candidate_libraries)
        return loader(where, **options)
    if (
        Path(dataset).suffix in {".jsonl", ".gz", ".json"}
        or os.sep in dataset
        or Path(dataset).exists()
    ):
        return load_humaneval_format(dataset)
    raise UserError(
        f"Unknown dataset {dataset!r}{suggest(key, DATASETS)}; use one of {', '.join(DATASETS)} or {JSONL_FILE}."
    )
