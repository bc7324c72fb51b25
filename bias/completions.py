"""Completions from any harness: a JSONL file in place of a model, for `boi bias run` and
`boi bias test`.

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

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError, suggest
from benchmarks.common.jsonl import iter_jsonl
from bias.fairness_tests.tasks import SUITES as FAIRNESS_SUITES

LIU_SUITE = "judgmental_modifiers"
"""The suite name of Liu et al.'s judgmental-modifier prompts (`bias.modifier_prompts.suite`) in `known_ids`."""

_NUMBERED = re.compile(rf"({'|'.join(map(re.escape, FAIRNESS_SUITES))})/\d+")
_LIU_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*/[A-Za-z_][A-Za-z0-9_]*/[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class CompletionRecord:
    """One completion of the file: which task, which model, which sample, and its line."""

    task_id: str
    completion: str
    model: str
    sample_index: int
    line: int


def suite_of_id(task_id: str) -> str | None:
    """The suite a task id looks like it belongs to, from its shape alone (None: no suite's)."""
    numbered = _NUMBERED.fullmatch(task_id)
    if numbered:
        return numbered.group(1)
    if _LIU_ID.fullmatch(task_id):
        return LIU_SUITE
    return None


def _examples(known_ids: Mapping[str, str], suite: str) -> str:
    own = [task_id for task_id, name in known_ids.items() if name == suite][:2]
    if not own:
        return f"this run has no task of {suite}"
    return "its ids look like " + " or ".join(repr(task_id) for task_id in own)


def _how_to_run(owner: str) -> str:
    return "boi bias run" if owner == LIU_SUITE else f"boi bias test with --suite {owner}"


def _check_task_id(where: str, task_id: str, known_ids: Mapping[str, str], suite: str) -> None:
    owner = known_ids.get(task_id)
    verb = "is"
    if owner is None:
        owner, verb = suite_of_id(task_id), "looks like"
        if owner is None or owner == suite:
            raise UserError(
                f"{where}: task_id {task_id!r} is not a task of this {suite} run"
                f"{suggest(task_id, known_ids)}; {_examples(known_ids, suite)}: fix the id, or "
                "choose the suite (its data and options) whose tasks the file answers."
            )
    if owner != suite:
        raise UserError(
            f"{where}: task_id {task_id!r} {verb} a task of {owner}, but this run tests {suite}; "
            f"pass a completions file of {suite}, or score this one with {_how_to_run(owner)}."
        )


def _prompt_index(prompts: Mapping[str, str] | None) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for text, task_id in (prompts or {}).items():
        ids = index.setdefault(text.strip(), [])
        if task_id not in ids:
            ids.append(task_id)
    return index


def _task_of(
    where: str,
    obj: Mapping[str, Any],
    known_ids: Mapping[str, str],
    suite: str,
    by_prompt: dict[str, list[str]] | None,
) -> str:
    if "task_id" in obj:
        task_id = obj["task_id"]
        if not isinstance(task_id, str) or not task_id:
            raise UserError(
                f"{where}: task_id is {task_id!r}, not a task id string; write it as text "
                f"({_examples(known_ids, suite)})."
            )
        _check_task_id(where, task_id, known_ids, suite)
        return task_id
    if "prompt" not in obj:
        hint = " (rename its 'prompt_id' to 'task_id')" if "prompt_id" in obj else ""
        raise UserError(
            f"{where} has neither 'task_id' nor 'prompt'{hint}; give each line the task id "
            "(or the exact prompt text) its completion answers."
        )
    prompt = obj["prompt"]
    if not isinstance(prompt, str):
        raise UserError(
            f"{where}: prompt is a {type(prompt).__name__}, not a string; give the prompt text "
            "or the task_id."
        )
    if by_prompt is None:
        raise UserError(
            f"{where} names its task by 'prompt', which this {suite} run cannot match; give "
            "the task_id instead."
        )
    matches = by_prompt.get(prompt.strip(), [])
    if not matches:
        raise UserError(
            f"{where}: its prompt matches no prompt of this {suite} run (compared without "
            "surrounding whitespace); give the suite's exact prompt text or the task_id."
        )
    if len(matches) > 1:
        raise UserError(
            f"{where}: its prompt is the prompt of several tasks ({', '.join(matches[:3])}); "
            "give the task_id instead."
        )
    _check_task_id(where, matches[0], known_ids, suite)
    return matches[0]


def _sample_index(where: str, obj: Mapping[str, Any]) -> int | None:
    if "sample_index" not in obj or obj["sample_index"] is None:
        return None
    value = obj["sample_index"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UserError(
            f"{where}: sample_index {value!r} is not an integer >= 0; use 0, 1, 2, ... or leave "
            "it out (the order of the lines then numbers the samples)."
        )
    return value


def _model(where: str, obj: Mapping[str, Any], default_model: str) -> str:
    if "model" not in obj or obj["model"] is None:
        return default_model
    model = obj["model"]
    if not isinstance(model, str) or not model.strip():
        raise UserError(
            f"{where}: model {model!r} is not a non-empty string; give the model's label as "
            "text or leave it out."
        )
    return model.strip()


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.exists():
        raise UserError(f"the completions file {path} does not exist; check the path.")
    if not path.is_file():
        raise UserError(f"{path} is not a file; pass the completions JSONL file.")
    try:
        return list(iter_jsonl(path))
    except OSError as err:
        raise UserError(
            f"the completions file {path} cannot be read ({err.strerror or err}); check its "
            "permissions or pass a readable copy."
        ) from None


def read_completions(
    path: str | Path,
    known_ids: Mapping[str, str],
    *,
    suite: str,
    prompts: Mapping[str, str] | None = None,
    default_model: str = "completions",
) -> list[CompletionRecord]:
    """The completions of a JSONL file (format in the module docstring), checked against the
    suite being run, sorted by (model, task_id, sample_index).

    `known_ids` maps every task id the run knows to its suite's name; `suite` is the suite the
    run tests (a task of another suite is refused as such); `prompts` maps prompt text to task
    id, for lines that give the prompt instead of the task id (None: only task ids).
    """
    path = Path(path)
    lines = _lines(path)
    if not lines:
        raise UserError(
            f"the completions file {path} holds no completions; write one JSON object per line "
            'with "task_id" (or "prompt") and "completion".'
        )
    by_prompt = _prompt_index(prompts) if prompts is not None else None
    records: list[CompletionRecord] = []
    seen: dict[tuple[str, str, int], int] = {}
    counts: dict[tuple[str, str], int] = {}
    for lineno, obj in lines:
        where = f"{path} line {lineno}"
        completion = obj.get("completion")
        if not isinstance(completion, str):
            found = "none" if "completion" not in obj else f"a {type(completion).__name__}"
            raise UserError(
                f"{where} has no 'completion' string (found {found}); give every line the "
                "generated text as a string."
            )
        task_id = _task_of(where, obj, known_ids, suite, by_prompt)
        model = _model(where, obj, default_model)
        index = _sample_index(where, obj)
        order = counts.get((model, task_id), 0)
        counts[(model, task_id)] = order + 1
        sample_index = order if index is None else index
        key = (model, task_id, sample_index)
        if key in seen:
            raise UserError(
                f"{path} lines {seen[key]} and {lineno} both give sample {sample_index} of "
                f"{task_id} for model {model!r}; drop one, or give them different sample_index "
                "values."
            )
        seen[key] = lineno
        records.append(CompletionRecord(task_id, completion, model, sample_index, lineno))
    return sorted(records, key=lambda r: (r.model, r.task_id, r.sample_index))
