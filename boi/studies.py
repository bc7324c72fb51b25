"""Every study the command line runs, by command.

`STUDIES` names each study (`benchmarks.study.Study`) by its command; `boi merge` reads a
shard's recorded `study` to know whose shards it joins. The flags every study's command shares
are `benchmarks.study.cli`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.registry import Registry
from benchmarks.study import Study, StudyOutcome
from benchmarks.study.merge import merge_study

STUDIES: Registry[Any] = Registry(
    "study",
    {
        "boi run": "boi.runner.study:RobustnessStudy",
        "boi bias run": "bias.modifier_prompts.run:ModifierStudy",
        "boi bias test": "bias.fairness_tests.run:FairnessStudy",
    },
    base=Study,
)
"""command -> `module:Class` of its study (imported when a merge needs it)."""


def study_class(command: str) -> Any:
    """The study class that runs `command`."""
    if command not in STUDIES:
        raise UserError(
            f"the shards were written by {command!r}, which this boi cannot merge; merge them "
            f"with the boi that wrote them (studies here: {', '.join(STUDIES)})."
        )
    return STUDIES[command]


def merge_runs(
    out: str | Path, shard_dirs: Sequence[str | Path], log: Callable[[str], None] = print
) -> StudyOutcome:
    """`boi merge`: the shards of any study's run as one run directory and its report."""
    return merge_study(
        lambda command, config, recorded: study_class(command).from_config(config, recorded),
        out,
        shard_dirs,
        log,
    )
