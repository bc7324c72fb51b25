"""Completions made elsewhere: the JSONL format every command reads them in, and the
`completions` backend that serves them to a run as if a model had written them.

One JSON object per line (blank lines are skipped, other keys are ignored):

    {"task_id": "HumanEval/0", "completion": "    return ...", "model": "gpt-x"}
    {"prompt": "def f(x):\n", "completion": "...", "sample_index": 3}

- `task_id`: the task (prompt) the completion answers, as the run names it (a `boi run`
  variant's id, a SocialBias-Bench task `socialbias_bench/<n>`, Liu et al.'s
  `<template>/<dimension>/<modifier>`).
- `prompt`: instead of `task_id`, the exact prompt text; it is matched after stripping
  surrounding whitespace against the run's prompts.
- `completion` (required): the generated text, a string: the continuation of the prompt, or a
  chat reply when the run's decoding says `chat` (the reply reader takes the code out).
- `model` (optional): the label the completion is reported under (default: `default_model`).
- `sample_index` (optional): an integer >= 0 naming the sample among the samples of its
  (model, task); default: the line's position among that (model, task)'s lines, from 0.

Every problem is a `UserError` naming the file and the line and saying what to do: a missing
or unreadable file, an empty one, a line that is not a JSON object, a missing or non-string
completion, a line with neither task_id nor prompt, a prompt that matches no task, an unknown
task id or one of another suite, a repeated (model, task_id, sample_index), a sample_index that
is not an integer >= 0. Which suite a foreign id belongs to is the caller's knowledge
(`suite_of`, `how_to_run`: `bias.completions` knows the bias suites).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from benchmarks.common.errors import UserError, suggest
from benchmarks.common.jsonl import iter_jsonl
from benchmarks.common.provenance import file_sha256
from benchmarks.generation._backend import BackendBase, Request
from benchmarks.generation._decoding import DecodingConfig, prompt_sha256

SuiteOf = Callable[[str], "str | None"]
"""Which suite a task id looks like it belongs to, from its shape alone (None: no suite's)."""


def _no_suite(task_id: str) -> str | None:
    return None


def _run_of(owner: str) -> str:
    return f"the command that runs {owner}"


@dataclass(frozen=True)
class CompletionRecord:
    """One completion of the file: which task, which model, which sample, and its line."""

    task_id: str
    completion: str
    model: str
    sample_index: int
    line: int
    prompt: str | None = None
    """The line's prompt text when it names its task so and the reader matched none
    (`accept_any_id`: the completions backend matches it itself)."""


def _examples(known_ids: Mapping[str, str], suite: str) -> str:
    own = [task_id for task_id, name in known_ids.items() if name == suite][:2]
    if not own:
        return f"this run has no task of {suite}"
    return "its ids look like " + " or ".join(repr(task_id) for task_id in own)


def _check_task_id(
    where: str,
    task_id: str,
    known_ids: Mapping[str, str],
    suite: str,
    suite_of: SuiteOf,
    how_to_run: Callable[[str], str],
) -> None:
    owner = known_ids.get(task_id)
    verb = "is"
    if owner is None:
        owner, verb = suite_of(task_id), "looks like"
        if owner is None or owner == suite:
            raise UserError(
                f"{where}: task_id {task_id!r} is not a task of this {suite} run"
                f"{suggest(task_id, known_ids)}; {_examples(known_ids, suite)}: fix the id, or "
                "choose the suite (its data and options) whose tasks the file answers."
            )
    if owner != suite:
        raise UserError(
            f"{where}: task_id {task_id!r} {verb} a task of {owner}, but this run tests {suite}; "
            f"pass a completions file of {suite}, or score this one with {how_to_run(owner)}."
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
    suite_of: SuiteOf,
    how_to_run: Callable[[str], str],
) -> str:
    if "task_id" in obj:
        task_id = obj["task_id"]
        if not isinstance(task_id, str) or not task_id:
            raise UserError(
                f"{where}: task_id is {task_id!r}, not a task id string; write it as text "
                f"({_examples(known_ids, suite)})."
            )
        _check_task_id(where, task_id, known_ids, suite, suite_of, how_to_run)
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
    _check_task_id(where, matches[0], known_ids, suite, suite_of, how_to_run)
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
    suite_of: SuiteOf = _no_suite,
    how_to_run: Callable[[str], str] = _run_of,
    accept_any_id: bool = False,
) -> list[CompletionRecord]:
    """The completions of a JSONL file (format in the module docstring), checked against the
    suite being run, sorted by (model, task_id, sample_index).

    `known_ids` maps every task id the run knows to its suite's name; `suite` is the suite the
    run tests (a task of another suite is refused as such); `prompts` maps prompt text to task
    id, for lines that give the prompt instead of the task id (None: only task ids);
    `suite_of` and `how_to_run` name the suite of a foreign id and the command that runs it.
    `accept_any_id`: the caller matches ids and prompts later (the completions backend, which
    sees the run's prompts only when it runs): ids are not checked here, and a line that gives
    its prompt keeps it in `CompletionRecord.prompt`.
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
        prompt: str | None = None
        if accept_any_id and "task_id" not in obj and isinstance(obj.get("prompt"), str):
            prompt = obj["prompt"]
            task_id = prompt.strip()
        elif accept_any_id and isinstance(obj.get("task_id"), str) and obj["task_id"]:
            task_id = obj["task_id"]
        else:
            task_id = _task_of(where, obj, known_ids, suite, by_prompt, suite_of, how_to_run)
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
        records.append(CompletionRecord(task_id, completion, model, sample_index, lineno, prompt))
    return sorted(records, key=lambda r: (r.model, r.task_id, r.sample_index))


def _check_numbering(path: Path, records: Sequence[CompletionRecord]) -> None:
    """Each task's samples are numbered 0..n-1: the completions backend serves sample i as the
    i-th, so a missing index would be an empty completion (a failure the model never wrote),
    e.g. in a file numbering from 1. (The bias suites score completions one by one, so their
    indices are names and may leave gaps.)"""
    lines: dict[str, dict[int, int]] = {}
    for record in records:
        lines.setdefault(record.task_id, {})[record.sample_index] = record.line
    for task_id, given in lines.items():
        missing = min(set(range(max(given) + 1)) - set(given), default=None)
        if missing is not None:
            shown = task_id if len(task_id) <= 60 else task_id[:57] + "..."
            raise UserError(
                f"{path} line {min(given.values())}: the samples of {shown!r} have no "
                f"sample_index {missing} (they are {_ranges(sorted(given))}); number each "
                "task's samples 0, 1, 2, ... or leave sample_index out."
            )


def _ranges(values: Sequence[int]) -> str:
    """`[1, 2, 3, 7]` as '1-3, 7'."""
    parts: list[str] = []
    start = prev = values[0]
    for value in [*values[1:], None]:
        if value is not None and value == prev + 1:
            prev = value
            continue
        parts.append(f"{start}-{prev}" if prev > start else str(start))
        if value is not None:
            start = prev = value
    return ", ".join(parts)


# ----------------------------------------------------------------------------- the backend


@dataclass(frozen=True)
class GivenOptions:
    of_model: str | None = field(
        default=None,
        metadata={
            "help": "take only the lines whose `model` is this (a file holding several models; "
            "default: every line, which must then be of one model)"
        },
    )
    numbered: bool = field(
        default=True,
        metadata={
            "help": "each task's sample_index numbers its samples 0, 1, 2, ... and sample i is "
            "served as sample i (a gap is refused); false: sample_index only names a sample "
            "(gaps allowed) and each task's samples are served in index order, as the bias "
            "studies score completions one by one"
        },
    )


class GivenCompletionsBackend(BackendBase):
    """`kind: completions`, `model: FILE.jsonl`: the file's completions as a model's samples.

    Every run that samples through `sample_prompts` takes it the way it takes `reference`, so
    completions made by another harness are judged by any study (`boi run --completions FILE`).
    Sample i of a prompt is the file's sample i of that prompt (lines by `prompt`, or by
    `task_id` through the records `prepare` is given), whatever the seed: give one seed. A
    setting asking for more samples than the file holds is refused. The identity is a digest
    of the file, so an edited file is never answered from the cache of the old one.
    """

    Options = GivenOptions
    model_required = "the completions JSONL file"
    default_model = ""
    max_samples_per_call = 1 << 16
    same_under_every_seed = True
    sample_verb = "read from the given completions"

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self.path = Path(spec.model)
        records = self._read(spec)
        self._records = records
        self._texts: dict[str, dict[int, str]] = {}
        self._unmatched: list[CompletionRecord] = []
        for record in records:
            if record.prompt is not None:
                self._add(_prompt_key(record.prompt), record)
            else:
                self._unmatched.append(record)
        digest = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]
        self.identity = f"completions|{digest}|{spec.options.of_model or ''}"
        if not spec.options.numbered:
            self.identity += "|named"  # sample i is another line than when numbered

    @classmethod
    def check(cls, spec: Any) -> None:
        cls._read(spec)

    @classmethod
    def label_name(cls, spec: Any) -> str | None:
        """One model of a file of several: its name in the file (`options.of_model`)."""
        return cast(str | None, spec.options.of_model)

    @classmethod
    def specs_of_file(cls, path: str) -> list[dict[str, Any]]:
        """`--completions FILE` as models: the file itself when it holds one model's lines (as
        it always was), else one entry per model in it (`options.of_model`), each labelled by
        its name in the file."""
        models = sorted(
            {r.model for r in read_completions(path, {}, suite="this run", accept_any_id=True)}
        )
        if len(models) == 1:
            return [{"kind": "completions", "model": path}]
        return [{"kind": "completions", "model": path, "of_model": model} for model in models]

    @classmethod
    def content_identity(cls, spec: Any) -> dict[str, Any]:
        """The file's sha256: a run belongs to the completions it judged, so an edited file is
        another run (its claim is refused by name), not a resume that meets the old samples."""
        path = Path(spec.model)
        return {"file_sha256": file_sha256(path)} if path.is_file() else {}

    @staticmethod
    def _read(spec: Any) -> list[CompletionRecord]:
        """The file's records of the spec's model, checked line by line."""
        path = Path(spec.model)
        of_model = spec.options.of_model
        records = [
            r
            for r in read_completions(path, {}, suite="this run", accept_any_id=True)
            if of_model is None or r.model == of_model
        ]
        if not records:
            raise UserError(
                f"the completions file {path} has no line of model {of_model!r}; check "
                "the model's name in the file (its `model` field)."
            )
        models = sorted({r.model for r in records})
        if len(models) > 1:
            raise UserError(
                f"the completions file {path} holds the completions of {len(models)} "
                f"models ({', '.join(models[:3])}); give each its own entry with "
                "options.of_model, or split the file."
            )
        if spec.options.numbered:
            _check_numbering(path, records)
        return records

    @classmethod
    def check_task_ids(
        cls, spec: Any, could_be: Callable[[str], bool], known: Iterable[str]
    ) -> None:
        """Refuse a line naming by `task_id` a task no variant of the run can have, before the
        run claims its directory (`prepare`, which matches the variants themselves, comes after
        the perturbation). `could_be`: whether an id names one of the run's problems under one
        of its transformations; `known`: the run's problem ids, for the suggestion."""
        path = Path(spec.model)
        for record in cls._read(spec):
            if record.prompt is None and not could_be(record.task_id):
                raise UserError(_not_a_task(path, record, known))

    def _add(self, prompt_hash: str, record: CompletionRecord) -> None:
        self._texts.setdefault(prompt_hash, {})[record.sample_index] = record.completion

    def _served(self, prompt_hash: str) -> list[str] | None:
        """A prompt's completions in the order they are served: numbered, sample i at place i
        (`_check_numbering` refused gaps); named, in index order."""
        given = self._texts.get(prompt_hash)
        if given is None:
            return None
        if not self.spec.options.numbered:
            return [given[index] for index in sorted(given)]
        return [given.get(index, "") for index in range(max(given) + 1)]

    def prepare(self, problems: Iterable[Any]) -> list[str]:
        """Lines that name their task by `task_id` are matched to the records' prompts."""
        prompt_of = {p.task_id: p.prompt for p in problems}
        unknown = [r for r in self._unmatched if r.task_id not in prompt_of]
        if unknown:
            raise UserError(_not_a_task(self.path, unknown[0], prompt_of))
        for record in self._unmatched:
            self._add(_prompt_key(prompt_of[record.task_id]), record)
        self._unmatched = []
        return []

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        if self._unmatched:
            raise UserError(
                f"{self.path} names tasks by task_id, which this command cannot match to its "
                "prompts; give each line the exact prompt text as `prompt` instead."
            )
        for position, request in enumerate(requests):
            texts = self._served(_prompt_key(request.prompt))
            if texts is None:
                raise UserError(
                    f"the completions file {self.path} has no completion for the prompt "
                    f"{_shown(request.prompt)}; add its completions (by prompt or task_id), "
                    "or leave that task out of the run."
                )
            if request.indices[-1] >= len(texts):
                raise UserError(
                    f"the completions file {self.path} holds {len(texts)} completions of the "
                    f"prompt {_shown(request.prompt)}, and the run asks for sample "
                    f"{request.indices[-1]}; lower the setting's decoding.n to {len(texts)} "
                    "(and give one seed)."
                )
            yield position, [texts[index] for index in request.indices]


def _not_a_task(path: Path, record: CompletionRecord, known: Iterable[str]) -> str:
    return (
        f"{path} line {record.line}: task_id {record.task_id!r} is not a task of this run"
        f"{suggest(record.task_id, known)}; fix the id, or give the exact prompt text as "
        "`prompt` instead."
    )


def _prompt_key(prompt: str) -> str:
    """How a prompt is matched: without surrounding whitespace (the format's promise), so a
    file's prompt with another trailing newline is the run's prompt."""
    return prompt_sha256(prompt.strip())


def _shown(prompt: str) -> str:
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return repr(first[:60] + ("..." if len(first) > 60 else ""))
