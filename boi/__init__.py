"""boi: Blocks of Influence, from Python (the `boi` command is `boi.cli`).

    import boi

    boi.__version__                                   the installed boi's version
    boi.load_dataset(name, data=None)                 -> list[Problem]
    boi.transform(problem, name, **params)            -> list[Problem]: its variants
    boi.execute(problems, samples, **settings)        -> ExecutionSummary: results + summary
    boi.run(config, **overrides)                      -> Run: `boi run` from Python
    boi.open_run(path)                                -> Run: .config, .table(), .results()
    boi.Run, boi.Problem, boi.NotApplicableError      the types they return and raise

They live in `boi.api` (`Run` and `open_run`, the one reader of a run directory, come from
`boi.run_reader`; see boi.api's docstring, the README's "Python API" and
docs/reference/python-api.md). `import boi` alone imports none of them: a name is loaded on
first use, as the CLI loads its commands, so `import boi` (which every `boi` command runs
first) imports no library of ours or anyone's (numpy, torch) before it is needed.
"""

from __future__ import annotations

import importlib

# typing.TYPE_CHECKING without importing typing (2-3 ms, most of `import boi`); type checkers
# treat any TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from boi.api import (
        NotApplicableError,
        Problem,
        Run,
        execute,
        load_dataset,
        open_run,
        run,
        transform,
    )

    __version__: str

__all__ = [
    "NotApplicableError",
    "Problem",
    "Run",
    "__version__",
    "execute",
    "load_dataset",
    "open_run",
    "run",
    "transform",
]

# Every name but the version lives in boi.api, imported on first use.
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    """Load an exported name on first use (PEP 562); `__version__` from the installed metadata."""
    if name == "__version__":
        value: Any = importlib.import_module("benchmarks.common.rundir").boi_version()
    elif name in _API:
        value = getattr(importlib.import_module("boi.api"), name)
    else:
        raise AttributeError(f"module 'boi' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
