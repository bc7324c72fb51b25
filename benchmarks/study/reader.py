"""Any study's run directory read back: `open_study(path) -> StudyDir`.

Every study's rows carry what the driver knows of their sample: `model` (the cell's),
`sample_index` and `ordinal` (where the driver placed it), with the cell's setting under the
study's name for it (`setting`; a fairness test's `strategy` and `round`, a self-detection
question's `form`) and `seed` (None where none was drawn: a completions file's); then what the judge added. A study's
directory is read the same way for all of them: which study wrote it (the manifest's `study`),
and the rows of its split files. `boi.open_run` reads
`boi run`'s with its own accessors on top (`boi.run_reader.Run` is a `StudyDir`); the social-bias
studies read their directories here (the bias half does not import `boi`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl
from benchmarks.common.rundir import RunDir

__all__ = ["StudyDir", "open_study"]


class StudyDir(RunDir):
    """A study's run directory, read only: the manifest's accessors (`config`, `seeds`,
    `completed`, ...) plus which study wrote it and its rows."""

    @property
    def study(self) -> str:
        """The command whose run this is (directories written before studies were named:
        `boi run`'s)."""
        return str(self.manifest.get("study") or "boi run")

    def row_files(self, pattern: str) -> list[Path]:
        """The files matching `pattern` (relative to the run), in path order."""
        return sorted(self.path.glob(pattern))

    def rows(self, pattern: str) -> list[dict[str, Any]]:
        """Every row of the files matching `pattern`, file by file in path order; one sentence
        when there is none yet (a run stopped before it judged anything)."""
        files = self.row_files(pattern)
        if not files:
            raise UserError(
                f"{self.path} has no {pattern} yet; run its `{self.study}` command again to "
                "finish it, then read it."
            )
        return [row for path in files for _, row in iter_jsonl(path)]


def open_study(
    path: str | os.PathLike[str], study: str | None = None, *, hint: str = ""
) -> StudyDir:
    """A run directory of `study` (any study's when None) to read, finished or not; one sentence
    when it is none (not a run, another command's, a newer boi's, a shard)."""
    what = study or "run"
    return cast(
        StudyDir,
        StudyDir.open(path, what=what, hint=hint or f"pass the --out of a `{what}`"),
    )
