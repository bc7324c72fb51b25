"""Benchmark loaders: each returns `Problem` records plus the problems it had to report.

`load_benchmark(name_or_path, data=...)` is the one entry point the CLI and the runner use: a
name registered in `DATASETS` (`humaneval`, `humanevalplus`, `mbpp`, `code_contests`, and
ReCode's released perturbed data as `recode_humaneval` / `recode_mbpp`, read with lineage), or
a path to a HumanEval-format (or boi) JSONL file.

Adding a dataset is one module with a loader `load(data: str | None) -> LoadResult` (`data`:
where to read it from, None for the loader's default) plus one line here, or at run time
`DATASETS.register("name", "package.module:load")`; the CLI's help and error messages list it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from benchmarks.common.errors import UserError, suggest
from benchmarks.common.registry import Registry
from benchmarks.loaders.humaneval import load_humaneval_format
from benchmarks.loaders.result import LoadIssue, LoadResult

__all__ = ["DATASETS", "LoadIssue", "LoadResult", "dataset_help", "load_benchmark"]

# name -> "module:loader", imported when the dataset is first loaded.
DATASETS: Registry[Callable[[str | None], LoadResult]] = Registry(
    "dataset",
    {
        "humaneval": "benchmarks.loaders.humaneval:load_humaneval",
        "humanevalplus": "benchmarks.loaders.humanevalplus:load_humanevalplus",
        "mbpp": "benchmarks.loaders.mbpp:load_mbpp",
        "code_contests": "benchmarks.loaders.code_contests:load_code_contests",
        "recode_humaneval": "perturb.recode.interop:load_recode_humaneval",
        "recode_mbpp": "perturb.recode.interop:load_recode_mbpp",
    },
)
JSONL_FILE = "a path to a HumanEval-format JSONL file"


def dataset_help(path: str = "a HumanEval-format JSONL path") -> str:
    """Help text for a dataset argument: the registered names, then what else it takes."""
    return f"{', '.join(DATASETS)}, or {path}"


def load_benchmark(dataset: str, data: str | os.PathLike[str] | None = None) -> LoadResult:
    """Load a dataset by name (`data` overrides where it is read from) or from a JSONL path."""
    key = dataset.lower().replace("-", "_")
    if key in DATASETS:
        loader: Callable[[str | None], LoadResult] = DATASETS.load(key)
        return loader(None if data is None else str(data))
    if (
        Path(dataset).suffix in {".jsonl", ".gz", ".json"}
        or os.sep in dataset
        or Path(dataset).exists()
    ):
        return load_humaneval_format(dataset)
    raise UserError(
        f"Unknown dataset {dataset!r}{suggest(key, DATASETS)}; use one of {', '.join(DATASETS)} or {JSONL_FILE}."
    )
