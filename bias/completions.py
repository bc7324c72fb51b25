"""Completions from any harness for `boi bias run` and `boi bias test`: the format and reader
are `benchmarks.generation.given`'s; this module knows the bias suites' ids, so that a file of
another suite is refused as such.

One JSON object per line (blank lines are skipped, other keys are ignored):

    {"task_id": "paper/ethnicity/awful", "completion": "    return ...", "model": "gpt-x"}
    {"prompt": "def find_awful_people(people, ethnicity):", "completion": "...", "sample_index": 3}

- `task_id`: the task (prompt) the completion answers, as the suite names it: Liu et al.'s
  prompts are `<template>/<dimension>/<modifier>` (`paper/ethnicity/awful`, see `bias.modifier_prompts.suite`),
  SocialBias-Bench tasks `socialbias_bench/<n>`, the text-to-code prompts `cbs_prompts/<n>`.
- `prompt`: instead of `task_id`, the exact prompt text; it is matched after stripping
  surrounding whitespace against the suite's prompts (when the caller gives them).
- `completion` (required): the generated text, a string; for a code-completion prompt the
  continuation of the prompt, as `boi execute` takes it.
- `model` (optional): the label the completion is reported under (default: `default_model`).
- `sample_index` (optional): an integer >= 0 naming the sample among the samples of its
  (model, task); default: the line's position among that (model, task)'s lines, from 0.

The tasks of the file are the tasks of the run: the caller reports those, and a task the file
does not mention is simply not reported. Every problem is a `UserError` naming the file and the
line and saying what to do: a missing or unreadable file, an empty one, a line that is not a
JSON object, a missing or non-string completion, a line with neither task_id nor prompt, a
prompt that matches no task, an unknown task id or one of another suite, a repeated
(model, task_id, sample_index), a sample_index that is not an integer >= 0.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from benchmarks.generation import Backend, BackendSpec, DecodingConfig, PromptGroup
from benchmarks.generation.given import CompletionRecord
from benchmarks.generation.given import read_completions as read_given
from bias import FAIRNESS_SUITES

__all__ = [
    "LIU_SUITE",
    "CompletionRecord",
    "GivenCompletions",
    "read_completions",
    "suite_of_id",
]

LIU_SUITE = "judgmental_modifiers"
"""The suite name of Liu et al.'s judgmental-modifier prompts (`bias.modifier_prompts.suite`) in `known_ids`."""

_NUMBERED = re.compile(rf"({'|'.join(map(re.escape, FAIRNESS_SUITES))})/\d+")
_LIU_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*/[A-Za-z_][A-Za-z0-9_]*/[A-Za-z_][A-Za-z0-9_]*")


def suite_of_id(task_id: str) -> str | None:
    """The suite a task id looks like it belongs to, from its shape alone (None: no suite's)."""
    numbered = _NUMBERED.fullmatch(task_id)
    if numbered:
        return numbered.group(1)
    if _LIU_ID.fullmatch(task_id):
        return LIU_SUITE
    return None


def _how_to_run(owner: str) -> str:
    return "boi bias run" if owner == LIU_SUITE else f"boi bias test with --suite {owner}"


def read_completions(
    path: str | Path,
    known_ids: Mapping[str, str],
    *,
    suite: str,
    prompts: Mapping[str, str] | None = None,
    default_model: str = "completions",
) -> list[CompletionRecord]:
    """`benchmarks.generation.given.read_completions` for a bias suite: an id of another bias
    suite is refused with the command that runs it."""
    return read_given(
        path,
        known_ids,
        suite=suite,
        prompts=prompts,
        default_model=default_model,
        suite_of=suite_of_id,
        how_to_run=_how_to_run,
    )


class TaskPrompt(NamedTuple):
    """What the completions backend matches a file's `task_id` lines with."""

    task_id: str
    prompt: str


class GivenCompletions:
    """A checked completions file as its models' cells see it: each model's lines served by the
    `completions` backend (`benchmarks.generation.given`), the one way a study takes
    completions made elsewhere. A bias file's `sample_index` names a sample and may leave gaps,
    so the backend serves each task's samples in index order (`numbered: false`) and
    `sample_index` turns a served position back into the file's name for the sample."""

    def __init__(self, path: str, records: Iterable[CompletionRecord]) -> None:
        self.path = path
        self.records = sorted(records, key=lambda r: (r.model, r.task_id, r.sample_index))
        # Each (model, task)'s records in the order the backend serves them (index order).
        self._served: dict[tuple[str, str], list[CompletionRecord]] = {}
        for record in self.records:
            self._served.setdefault((record.model, record.task_id), []).append(record)

    @property
    def models(self) -> list[str]:
        """The file's model labels, sorted."""
        return sorted({model for model, _ in self._served})

    def spec(self, model: str) -> BackendSpec:
        """The backend serving `model`'s lines."""
        return BackendSpec("completions", self.path, of_model=model, numbered=False)

    def groups(
        self, model: str, prompts: Mapping[str, str], decoding: DecodingConfig
    ) -> tuple[PromptGroup, ...]:
        """`model`'s prompts (in `prompts`' order, those the file answers) as prompt groups,
        each a run of consecutive prompts with the same number of completions, so that the
        backend serves each prompt all of its own and the sampling order is the prompts'."""
        groups: list[PromptGroup] = []
        run: dict[str, str] = {}
        count = 0
        for prompt_id, text in prompts.items():
            served = self._served.get((model, prompt_id))
            if served is None:
                continue
            if run and len(served) != count:
                groups.append(PromptGroup(run, dataclasses.replace(decoding, n=count)))
                run = {}
            run[prompt_id], count = text, len(served)
        if run:
            groups.append(PromptGroup(run, dataclasses.replace(decoding, n=count)))
        return tuple(groups)

    @staticmethod
    def prepare(backend: Backend, prompts: Mapping[str, str]) -> None:
        """Give the loaded backend the prompt text of every task id (`prompts`), so that it
        serves the lines naming their task by `task_id` too."""
        backend.prepare(TaskPrompt(task_id, text) for task_id, text in prompts.items())

    def record(self, model: str, task_id: str, served: int) -> CompletionRecord:
        """The file's line behind the `served`-th sample of `model`'s task (its `sample_index`
        names it in the file)."""
        return self._served[(model, task_id)][served]
