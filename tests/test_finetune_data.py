"""Training examples: loss mask, truncation, grouped split, lineage, leakage, build-data CLI."""

from __future__ import annotations

import json

import pytest

from benchmarks.common.errors import UserError
from benchmarks.problem import LineageStep, Problem
from finetune.data import (
    IGNORE_INDEX,
    Skipped,
    TrainingExample,
    build_training_examples,
    read_training_examples,
    resolve_pad_token_id,
    tokenize_example,
)
from tests.finetune_helpers import make_tiny_model, toy_examples


def _problem(k: int, solution: str | None = "    return x\n") -> Problem:
    return Problem(
        f"T/{k}",
        "toy",
        f'def f{k}(x):\n    """Return x ({k})."""\n',
        f"f{k}",
        canonical_solution=solution,
    )


def _variant(problem: Problem, name: str) -> Problem:
    return problem.replace(
        task_id=f"{problem.task_id}::{name}",
        prompt=problem.prompt.replace("Return x", f"[{name}]"),
        lineage=(LineageStep(name, "1", seed=0),),
    )


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from transformers import AutoTokenizer

    folder = make_tiny_model(
        tmp_path_factory.mktemp("tok"), [e.prompt + e.completion for e in toy_examples()]
    )
    return AutoTokenizer.from_pretrained(folder)


def test_loss_only_on_solution_and_prompt_truncated_from_the_left(tokenizer):
    example = toy_examples(1)[0]
    full = tokenize_example(tokenizer, example, max_length=512)
    solution_ids = tokenizer(example.completion, add_special_tokens=False)["input_ids"] + [
        tokenizer.eos_token_id
    ]
    assert full.labels[-len(solution_ids) :] == solution_ids
    assert set(full.labels[: -len(solution_ids)]) == {IGNORE_INDEX}
    assert tokenizer.decode(full.input_ids[: -len(solution_ids)]) == example.prompt

    short = tokenize_example(tokenizer, example, max_length=len(solution_ids) + 3)
    assert len(short.input_ids) == len(solution_ids) + 3
    assert short.input_ids[:3] == full.input_ids[-len(solution_ids) - 3 : -len(solution_ids)]
    assert short.prompt_tokens_dropped == len(full.input_ids) - len(short.input_ids)

    skipped = tokenize_example(tokenizer, example, max_length=len(solution_ids))
    assert isinstance(skipped, Skipped) and "cannot fit max_length" in skipped.reason


def test_pad_token_falls_back_to_eos_and_says_so(tokenizer):
    pad_id, note = resolve_pad_token_id(tokenizer)
    assert pad_id == tokenizer.eos_token_id and "no pad token" in note

    class Bare:
        pad_token_id = eos_token_id = None

    with pytest.raises(UserError, match="neither a pad token nor an eos token"):
        resolve_pad_token_id(Bare())


def test_split_keeps_variants_with_their_task_and_is_the_same_for_both_flavours(monkeypatch):
    import perturb

    problems = [_problem(k) for k in range(40)] + [_problem(99, solution=None)]
    monkeypatch.setattr(
        perturb, "apply_catalogue",
        lambda ps, transforms, config: [_variant(p, t) for p in ps for t in transforms],
    )  # fmt: skip
    na = build_training_examples(problems, "NA", seed=3)
    a = build_training_examples(problems, "A", transforms=["drop_x", "anon_x"], seed=3)
    assert na.counts()["validation_tasks"] == 4 and na.counts()["train_tasks"] == 36
    assert [s.example_id for s in na.skipped] == ["T/99"]
    validation_tasks = {e.source_task_id for e in na.examples if e.split == "validation"}
    assert validation_tasks == {e.source_task_id for e in a.examples if e.split == "validation"}
    for example in a.examples:
        assert (example.source_task_id in validation_tasks) == (example.split == "validation")
    variant = next(e for e in a.examples if e.example_id == "T/0::drop_x")
    assert variant.source_task_id == "T/0" and variant.lineage[0]["transform"] == "drop_x"
    assert a.counts()["augmented"] == 80
    other_seed = build_training_examples(problems, "NA", seed=4)
    assert {
        e.source_task_id for e in other_seed.examples if e.split == "validation"
    } != validation_tasks


def test_variants_per_task_and_duplicates(monkeypatch):
    import perturb

    problems = [_problem(k) for k in range(10)]
    extra: list[Problem] = []
    monkeypatch.setattr(
        perturb, "apply_catalogue",
        lambda ps, transforms, config: [_variant(p, t) for p in ps for t in transforms] + extra,
    )  # fmt: skip
    result = build_training_examples(problems, "A", transforms=["a", "b", "c"], variants_per_task=1)
    assert result.counts()["augmented"] == 10
    assert len({e.source_task_id for e in result.examples if e.lineage}) == 10
    extra.append(problems[0])  # what `original` in the catalogue gives back
    result = build_training_examples(problems, "A", transforms=["a"])
    assert [s.reason for s in result.skipped] == ["identical prompt and solution to T/0"]


def test_leakage_is_refused_dropped_or_recorded():
    train = [_problem(k) for k in range(5)]
    long_solution = "    total = 0\n    for item in x:\n        total += item * item  # squares\n    return total / len(x)\n"
    evaluation = [
        Problem(
            "E/1", "eval", train[1].prompt.replace("    ", "  "), "g"
        ),  # same prompt, reformatted
        Problem("E/2", "eval", "def other(y):\n", "other", canonical_solution=long_solution),
        Problem("T/3", "eval", "def z():\n", "z"),  # same task id
    ]
    train.append(
        Problem("T/9", "toy", "def h(x):\n", "h", canonical_solution=long_solution.upper())
    )
    with pytest.raises(UserError, match="3 training examples overlap the evaluation dataset"):
        build_training_examples(train, eval_problems=evaluation)
    dropped = build_training_examples(train, eval_problems=evaluation, leakage="drop")
    assert {o.kind for o in dropped.overlaps} == {"prompt", "solution", "task_id"}
    assert {e.example_id for e in dropped.examples} == {"T/0", "T/2", "T/4"}
    kept = build_training_examples(train, eval_problems=evaluation, leakage="warn")
    assert len(kept.examples) == 6 and len(kept.overlaps) == 3


def test_bad_input_is_explained():
    with pytest.raises(UserError, match="Unknown flavour 'B'"):
        build_training_examples([_problem(0)], "B")
    with pytest.raises(UserError, match="No problems"):
        build_training_examples([], "NA")
    with pytest.raises(UserError, match="training set is empty"):
        build_training_examples([_problem(0, solution="  ")], "NA")


def test_mbpp_build_data_cli_has_no_humaneval_overlap(mbpp_path, tmp_path, capsys):
    from boi.cli import main

    out = tmp_path / "na.jsonl"
    code = main(
        ["finetune", "build-data", f"mbpp={mbpp_path}", "--flavour", "NA", "--out", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "no overlap with humaneval" in printed
    examples = read_training_examples(out)
    assert len(examples) == 974
    validation = [e for e in examples if e.split == "validation"]
    assert len({e.source_task_id for e in validation}) == 97
    manifest = json.loads((tmp_path / "na.jsonl.manifest.json").read_text())
    assert manifest["counts"]["train"] + manifest["counts"]["validation"] == 974
    assert isinstance(examples[0], TrainingExample) and examples[0].completion.strip()
