"""Shards of one study (`boi run`, `boi bias run`, `boi bias test`): which units a shard owns,
and how a shard is named or read from a scheduler's array index.

A shard is `I/N` with I counted from 0 (as Slurm's array index from its minimum and Kubernetes'
completion index are). A study names its units in its run order (`boi run`: source problems, so
every variant of a problem, which its paired statistics need together, lands in one shard; the
bias studies: their prompts or tasks), and they are dealt round-robin, so the shards are
balanced. The assignment depends only on the config, never on the machine or on timing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks.common.errors import UserError
from benchmarks.problem import Problem

# `--shard auto` (Slurm: index and count from the array) or `auto/N` (an indexed Kubernetes Job,
# whose pods know their index but not the completion count).
AUTO = "auto"


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    def select_units(self, units: Sequence[str]) -> frozenset[str]:
        """The units (in the study's run order, repeats ignored) this shard owns."""
        position: dict[str, int] = {}
        for unit in units:
            position.setdefault(unit, len(position))
        return frozenset(u for u, i in position.items() if i % self.count == self.index)

    def select(self, variants: Sequence[Problem]) -> list[Problem]:
        """The variants of the problems this shard owns, in the run's order."""
        owned = self.select_units([v.source_task_id for v in variants])
        return [v for v in variants if v.source_task_id in owned]


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> Shard:
    """`I/N`, `auto` or `auto/N` (see the module docstring) as a Shard; one sentence when wrong."""
    environ = os.environ if environ is None else environ
    text = text.strip()
    if text == AUTO or text.startswith(AUTO + "/"):
        return _from_scheduler(text, environ)
    match = re.fullmatch(r"(\d+)/(\d+)", text)
    if not match:
        raise UserError(
            f"--shard {text!r} is not I/N; write --shard 0/4 for the first of four shards "
            "(I counts from 0), or --shard auto under a Slurm array or auto/N under a "
            "Kubernetes indexed Job."
        )
    return _checked(int(match.group(1)), int(match.group(2)), f"--shard {text}")


def _checked(index: int, count: int, where: str) -> Shard:
    if count < 1 or not 0 <= index < count:
        raise UserError(
            f"{where}: the shard index must be 0..{max(count - 1, 0)} and the count at least 1."
        )
    return Shard(index, count)


def _from_scheduler(text: str, environ: Mapping[str, str]) -> Shard:
    count_text = text.partition("/")[2]
    if "SLURM_ARRAY_TASK_ID" in environ:
        task = _integer(environ, "SLURM_ARRAY_TASK_ID")
        first = (
            _integer(environ, "SLURM_ARRAY_TASK_MIN") if "SLURM_ARRAY_TASK_MIN" in environ else 0
        )
        if count_text:
            count = _count(count_text, text)
        elif "SLURM_ARRAY_TASK_COUNT" in environ:
            count = _integer(environ, "SLURM_ARRAY_TASK_COUNT")
        else:
            raise UserError(
                "--shard auto found SLURM_ARRAY_TASK_ID but no SLURM_ARRAY_TASK_COUNT; give the "
                "count as --shard auto/N."
            )
        return _checked(task - first, count, "the Slurm array (SLURM_ARRAY_TASK_ID - MIN)")
    if "JOB_COMPLETION_INDEX" in environ:
        if not count_text:
            raise UserError(
                "--shard auto under a Kubernetes indexed Job needs the count: write --shard "
                "auto/N with N the Job's completions."
            )
        index = _integer(environ, "JOB_COMPLETION_INDEX")
        return _checked(index, _count(count_text, text), "JOB_COMPLETION_INDEX")
    raise UserError(
        f"--shard {text} reads the shard from a scheduler, but neither SLURM_ARRAY_TASK_ID nor "
        "JOB_COMPLETION_INDEX is set; give it as --shard I/N."
    )


def _integer(environ: Mapping[str, str], name: str) -> int:
    value = environ[name]
    if not value.strip().isdigit():
        raise UserError(f"{name} is {value!r}, not a number; check the job's environment.")
    return int(value)


def _count(text: str, shard: str) -> int:
    if not text.isdigit():
        raise UserError(f"--shard {shard}: the count after / must be a number, as in auto/4.")
    return int(text)
