"""Fine-tuning examples: prompt + reference solution, with lineage, a grouped split and a
leakage guard.

Two flavours, after the paper (section 6.2): `NA` keeps the original problems only, `A` adds
the transformation catalogue's variants of each problem. Every example remembers the task it
came from (`source_task_id`) and the transformations applied (`lineage`), so the validation split
can keep all variants of one task on the same side.

Tokenisation (`tokenize_example`) puts the loss on the solution tokens only: prompt tokens get
label -100. A prompt too long for `max_length` loses tokens from its left; a solution that does
not fit is never cut: the example is skipped and the reason reported.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import perturb
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import dumps, iter_jsonl, require_fields, write_jsonl
from benchmarks.problem import Problem

FLAVOURS = ("NA", "A")
LEAKAGE_POLICIES = ("refuse", "drop", "warn")
IGNORE_INDEX = -100
# Solutions shorter than this (normalised) are too generic to count as leakage on their own
# ("return a + b" appears in both MBPP and HumanEval without one leaking the other).
MIN_SOLUTION_CHARS_FOR_LEAKAGE = 60


@dataclass(frozen=True)
class TrainingExample:
    """One prompt/solution pair with where it came from and which side of the split it is on."""

    example_id: str
    source_task_id: str
    benchmark: str
    prompt: str
    completion: str
    split: str = "train"
    flavour: str = "NA"
    lineage: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "example_id": self.example_id,
            "source_task_id": self.source_task_id,
            "benchmark": self.benchmark,
            "split": self.split,
            "flavour": self.flavour,
            "prompt": self.prompt,
            "completion": self.completion,
            "lineage": [dict(step) for step in self.lineage],
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TrainingExample:
        return cls(
            example_id=obj["example_id"],
            source_task_id=obj.get("source_task_id") or obj["example_id"],
            benchmark=obj.get("benchmark", ""),
            prompt=obj["prompt"],
            completion=obj["completion"],
            split=obj.get("split", "train"),
            flavour=obj.get("flavour", "NA"),
            lineage=tuple(obj.get("lineage") or ()),
        )


@dataclass(frozen=True)
class Skipped:
    """A problem or example left out of the training data, and why."""

    example_id: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"example_id": self.example_id, "reason": self.reason}


@dataclass(frozen=True)
class Overlap:
    """A training example that matches an evaluation problem (`kind`: task_id, prompt, solution)."""

    example_id: str
    eval_task_id: str
    kind: str

    def to_json(self) -> dict[str, str]:
        return {"example_id": self.example_id, "eval_task_id": self.eval_task_id, "kind": self.kind}


@dataclass
class BuildResult:
    examples: list[TrainingExample]
    skipped: list[Skipped] = field(default_factory=list)
    overlaps: list[Overlap] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "train": sum(e.split == "train" for e in self.examples),
            "validation": sum(e.split == "validation" for e in self.examples),
            "train_tasks": len({e.source_task_id for e in self.examples if e.split == "train"}),
            "validation_tasks": len(
                {e.source_task_id for e in self.examples if e.split == "validation"}
            ),
            "augmented": sum(bool(e.lineage) for e in self.examples),
            "skipped": len(self.skipped),
            "overlaps": len(self.overlaps),
        }


def _example_id(problem: Problem) -> str:
    if not problem.lineage or problem.task_id != problem.source_task_id:
        return problem.task_id
    return problem.task_id + "::" + "+".join(step.transform for step in problem.lineage)


def _normalise(text: str) -> str:
    """Whitespace- and case-insensitive form of a prompt or solution, comments removed."""
    text = re.sub(r"#[^\n]*", "", text)
    return " ".join(text.lower().split())


def find_overlaps(
    examples: Iterable[TrainingExample], eval_problems: Iterable[Problem]
) -> list[Overlap]:
    """Training examples that share a task id, a prompt or a solution with evaluation problems.

    Prompts and solutions are compared after normalising whitespace, case and comments; short
    solutions are not compared (see `MIN_SOLUTION_CHARS_FOR_LEAKAGE`).
    """
    by_id: dict[str, str] = {}
    by_prompt: dict[str, str] = {}
    by_solution: dict[str, str] = {}
    for problem in eval_problems:
        by_id[problem.task_id] = problem.task_id
        by_id[problem.source_task_id] = problem.task_id
        by_prompt.setdefault(_normalise(problem.prompt), problem.task_id)
        solution = _normalise(problem.canonical_solution or "")
        if len(solution) >= MIN_SOLUTION_CHARS_FOR_LEAKAGE:
            by_solution.setdefault(solution, problem.task_id)
    overlaps = []
    for example in examples:
        for task_id in (example.example_id, example.source_task_id):
            if task_id in by_id:
                overlaps.append(Overlap(example.example_id, by_id[task_id], "task_id"))
                break
        else:
            prompt_match = by_prompt.get(_normalise(example.prompt))
            solution_match = by_solution.get(_normalise(example.completion))
            if prompt_match:
                overlaps.append(Overlap(example.example_id, prompt_match, "prompt"))
            elif solution_match:
                overlaps.append(Overlap(example.example_id, solution_match, "solution"))
    return overlaps


def _split_rank(seed: int, source_task_id: str) -> str:
    return hashlib.sha256(f"{seed}\0{source_task_id}".encode()).hexdigest()


def assign_splits(
    examples: Sequence[TrainingExample], validation_fraction: float, seed: int
) -> list[TrainingExample]:
    """Put `validation_fraction` of the source tasks (all their variants) in validation.

    Tasks are ordered by a hash of (seed, source task id), so the same tasks land in validation
    for both flavours and whatever order the problems came in.
    """
    if not 0 <= validation_fraction < 1:
        raise UserError(
            f"validation_fraction is {validation_fraction}; use a value in [0, 1), e.g. 0.1."
        )
    sources = sorted({e.source_task_id for e in examples}, key=lambda s: _split_rank(seed, s))
    n_validation = round(validation_fraction * len(sources))
    if validation_fraction > 0 and len(sources) >= 2:
        n_validation = max(1, min(n_validation, len(sources) - 1))
    validation = set(sources[:n_validation])
    return [
        TrainingExample(
            **{**e.__dict__, "split": "validation" if e.source_task_id in validation else "train"}
        )
        for e in examples
    ]


def _examples_from_problems(
    problems: Iterable[Problem], flavour: str, skipped: list[Skipped]
) -> list[TrainingExample]:
    examples: list[TrainingExample] = []
    seen_ids: set[str] = set()
    seen_texts: dict[tuple[str, str], str] = {}
    for problem in problems:
        example_id = _example_id(problem)
        solution = problem.canonical_solution or ""
        if not solution.strip():
            skipped.append(Skipped(example_id, "no reference solution (canonical_solution)"))
            continue
        key = (problem.prompt, solution)
        if key in seen_texts:
            skipped.append(
                Skipped(example_id, f"identical prompt and solution to {seen_texts[key]}")
            )
            continue
        unique_id, n = example_id, 1
        while unique_id in seen_ids:
            n += 1
            unique_id = f"{example_id}#{n}"
        seen_ids.add(unique_id)
        seen_texts[key] = unique_id
        examples.append(
            TrainingExample(
                example_id=unique_id,
                source_task_id=problem.source_task_id,
                benchmark=problem.benchmark,
                prompt=problem.prompt,
                completion=solution,
                flavour=flavour,
                lineage=tuple(step.to_json() for step in problem.lineage),
            )
        )
    return examples


def default_transforms() -> tuple[str, ...]:
    """The catalogue minus `original` (the originals are in every flavour already)."""
    return tuple(name for name in perturb.CATALOGUE if name != "original")


def _variants(
    problems: Sequence[Problem],
    transforms: Sequence[str] | None,
    config: Any,
    per_task: int,
    seed: int,
) -> list[Problem]:
    # Training data wants only prompts a transformation changed: an unchanged stand-in would be
    # the original again (the runner's keep_unchanged serves paired tables, not training).
    config = config or perturb.PerturbConfig(keep_unchanged=False)
    variants = perturb.apply_catalogue(
        list(problems), transforms=tuple(transforms or default_transforms()), config=config
    )
    if per_task <= 0:
        return variants
    by_task: dict[str, list[Problem]] = {}
    for variant in variants:
        by_task.setdefault(variant.source_task_id, []).append(variant)
    kept: list[Problem] = []
    for task, group in by_task.items():
        rng = random.Random(f"{seed}\0{task}\0variants")
        chosen = set(rng.sample(range(len(group)), min(per_task, len(group))))
        kept += [v for i, v in enumerate(group) if i in chosen]
    return kept


def build_training_examples(
    problems: Sequence[Problem],
    flavour: str = "NA",
    *,
    transforms: Sequence[str] | None = None,
    transform_config: Any = None,
    validation_fraction: float = 0.1,
    seed: int = 0,
    eval_problems: Sequence[Problem] = (),
    leakage: str = "refuse",
    variants_per_task: int = 0,
) -> BuildResult:
    """Training examples for one flavour, split into train/validation, checked for leakage.

    `NA`: the problems as they are. `A`: the problems plus `perturb.apply_catalogue(problems,
    transforms, transform_config)` (default: the whole catalogue but `original`; variants carry
    their lineage; a variant identical to an example already in is reported and left out);
    `variants_per_task` > 0 keeps at most that many variants per task, drawn with `seed`.
    `eval_problems` is the benchmark the model will be evaluated on: examples sharing a task id,
    a prompt or a solution with it are refused (`leakage="refuse"`), dropped (`"drop"`) or kept
    (`"warn"`); every overlap is returned in `BuildResult.overlaps` either way.
    """
    if flavour not in FLAVOURS:
        raise UserError(f"Unknown flavour {flavour!r}; use NA (originals) or A (augmented).")
    if leakage not in LEAKAGE_POLICIES:
        raise UserError(
            f"Unknown leakage policy {leakage!r}; use one of {', '.join(LEAKAGE_POLICIES)}."
        )
    if not problems:
        raise UserError("No problems to build training data from; check the input dataset.")
    candidates = list(problems)
    if flavour == "A":
        candidates += _variants(problems, transforms, transform_config, variants_per_task, seed)
    elif transforms:
        raise UserError("transforms only apply to flavour A; drop them or use --flavour A.")
    skipped: list[Skipped] = []
    examples = _examples_from_problems(candidates, flavour, skipped)
    overlaps = find_overlaps(examples, eval_problems)
    if overlaps and leakage == "refuse":
        shown = ", ".join(f"{o.example_id} ~ {o.eval_task_id} ({o.kind})" for o in overlaps[:5])
        raise UserError(
            f"{len(overlaps)} training examples overlap the evaluation dataset ({shown}); "
            "remove them from the input or pass leakage='drop' (--leakage drop)."
        )
    if leakage == "drop":
        dropped = {o.example_id for o in overlaps}
        skipped += [
            Skipped(o.example_id, f"overlaps evaluation task {o.eval_task_id} ({o.kind})")
            for o in overlaps
        ]
        examples = [e for e in examples if e.example_id not in dropped]
    if not examples:
        raise UserError(
            "Every problem was skipped, so the training set is empty; see the skip reasons."
        )
    return BuildResult(assign_splits(examples, validation_fraction, seed), skipped, overlaps)


def write_training_examples(
    path: str | os.PathLike[str], examples: Iterable[TrainingExample]
) -> int:
    """Write examples as JSONL (atomically); returns the number written."""
    return write_jsonl(path, (e.to_json() for e in examples))


def read_training_examples(path: str | os.PathLike[str]) -> list[TrainingExample]:
    """Examples written by `write_training_examples` (`boi finetune build-data`)."""
    examples = []
    for lineno, obj in iter_jsonl(path):
        require_fields(path, lineno, obj, ("example_id", "prompt", "completion"))
        examples.append(TrainingExample.from_json(obj))
    if not examples:
        raise UserError(f"{Path(path)} holds no training examples; run boi finetune build-data.")
    return examples


def save_datasets_folder(
    examples: Sequence[TrainingExample], folder: str | os.PathLike[str]
) -> None:
    """The examples as a `datasets.DatasetDict` (train/validation) saved with `save_to_disk`."""
    import datasets  # lazy: heavy (pyarrow), and only needed for --datasets-dir

    splits = {}
    for split in ("train", "validation"):
        rows = [e.to_json() for e in examples if e.split == split]
        if rows:
            # Lineage params differ per transformation; Arrow needs one schema, so each step
            # is a string.
            for row in rows:
                row["lineage"] = [dumps(step) for step in row["lineage"]]
            splits[split] = datasets.Dataset.from_list(rows)
    datasets.DatasetDict(splits).save_to_disk(str(folder))


# --- tokenisation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenizedExample:
    example_id: str
    input_ids: list[int]
    labels: list[int]
    prompt_tokens_dropped: int = 0


def resolve_pad_token_id(tokenizer: Any) -> tuple[int, str]:
    """The id to pad with and a note on where it came from.

    Padding positions are masked out of attention and loss, so a tokenizer without a pad token
    (most causal LMs) pads with its end-of-sequence token; without either there is nothing safe.
    """
    if tokenizer.pad_token_id is not None:
        return int(tokenizer.pad_token_id), "pad token"
    if tokenizer.eos_token_id is not None:
        return int(tokenizer.eos_token_id), "eos token (the tokenizer has no pad token)"
    raise UserError(
        "The tokenizer has neither a pad token nor an eos token; set tokenizer.pad_token in "
        "the model folder's tokenizer_config.json."
    )


def tokenize_example(
    tokenizer: Any, example: TrainingExample, max_length: int
) -> TokenizedExample | Skipped:
    """Prompt + solution + eos as ids; labels are -100 on the prompt.

    A prompt that does not fit loses tokens from its left (the signature and the examples near
    the solution survive); a solution that does not fit is skipped with the reason.
    """
    bos = [tokenizer.bos_token_id] if _adds_bos(tokenizer) else []
    prompt = tokenizer(example.prompt, add_special_tokens=False)["input_ids"]
    solution = tokenizer(example.completion, add_special_tokens=False)["input_ids"]
    if tokenizer.eos_token_id is not None:
        solution = solution + [tokenizer.eos_token_id]
    room = max_length - len(bos) - len(solution)
    if room < 1:
        return Skipped(
            example.example_id,
            f"solution is {len(solution)} tokens; with the prompt it cannot fit max_length={max_length}",
        )
    dropped = max(0, len(prompt) - room)
    prompt = prompt[dropped:]
    input_ids = bos + prompt + solution
    labels = [IGNORE_INDEX] * (len(bos) + len(prompt)) + solution
    return TokenizedExample(example.example_id, input_ids, labels, dropped)


def _adds_bos(tokenizer: Any) -> bool:
    if tokenizer.bos_token_id is None:
        return False
    probe = tokenizer("x", add_special_tokens=True)["input_ids"]
    return bool(probe) and probe[0] == tokenizer.bos_token_id


def collate(batch: Sequence[TokenizedExample], pad_token_id: int) -> dict[str, Any]:
    """Right-padded tensors: input_ids, attention_mask, labels (-100 on padding), index."""
    import torch  # lazy: heavy

    width = max(len(item.input_ids) for item in batch)
    input_ids = torch.full((len(batch), width), pad_token_id, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE_INDEX, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for row, item in enumerate(batch):
        n = len(item.input_ids)
        input_ids[row, :n] = torch.tensor(item.input_ids)
        labels[row, :n] = torch.tensor(item.labels)
        attention[row, :n] = 1
    return {"input_ids": input_ids, "attention_mask": attention, "labels": labels}


def solution_loss(logits: Any, labels: Any) -> tuple[Any, Any]:
    """(sum of token losses, number of tokens) over the solution tokens of a batch.

    The paper's "custom causal LM loss": next-token cross-entropy only where labels are not -100.
    Returning the sum and the count lets validation average over tokens, not over batches.
    """
    import torch.nn.functional as F  # lazy: heavy

    shift_logits = logits[:, :-1, :].float()
    shift_labels = labels[:, 1:]
    total = F.cross_entropy(
        shift_logits.reshape(-1, shift_logits.size(-1)),
        shift_labels.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction="sum",
    )
    return total, (shift_labels != IGNORE_INDEX).sum()
