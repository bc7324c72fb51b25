"""ReCode's function-name family (perturb.recode.function_name): renamings that stay consistent
across prompt, examples, tests and solution, their parameters and reasons, agreement with
ReCode's released camelCase file, and every variant of HumanEval and MBPP still passing."""

from __future__ import annotations

import gzip
import json
import os
import re
import time
from pathlib import Path

import pytest

from benchmarks.problem import Problem
from perturb.blocks import split_blocks
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.recode import words
from perturb.transforms import NotApplicable, get_transform, transforms_of_family
from tests.helpers import failing_references, run_programs

# ReCode's released dataset-release/perturbed_finalized/humaneval/full/func_name/
# humaneval_FuncRenameCamelCase_s0.jsonl, gzipped (tests/data/recode/SOURCE.md).
CAMEL_FILE = Path(__file__).parent / "data" / "recode" / "humaneval_FuncRenameCamelCase_s0.jsonl.gz"
STOCHASTIC = (
    "func_butter_finger",
    "func_swap_char",
    "func_change_char",
    "func_inflectional_variation",
    "func_synonym",
)

needs_wordnet = pytest.mark.skipif(
    not words.wordnet_available() and os.environ.get("BOI_REQUIRE_WORDNET") != "1",
    reason="WordNet is not installed (apt install wordnet-base); BOI_REQUIRE_WORDNET=1 fails instead",
)


def problem(name: str = "sort_even_numbers", helper: str = "sort_even_numbers_helper") -> Problem:
    """A small problem whose name also prefixes a helper's (which must not be renamed)."""
    prompt = (
        f"def {helper}(x):\n    return x\n\n\n"
        f'def {name}(values: list) -> list:\n    """Sort the even numbers of values with {name}().\n'
        f'    >>> {name}([4, 3, 2])\n    [2, 4]\n    """\n'
    )
    return split_blocks(
        Problem(
            "T/1",
            "test",
            prompt,
            name,
            test=f"def check(candidate):\n    assert candidate([4, 3, 2]) == [2, 4]\n    assert {name} is candidate\n",
            canonical_solution=f"    return {helper}(sorted(v for v in values if v % 2 == 0))\n",
        )
    )


def passes(variant: Problem) -> bool:
    result = run_programs(
        [{"id": "x", "program": variant.program(variant.canonical_solution or "")}]
    )
    return result["x"]["ok"]


def only_the_name_changed(original: Problem, variant: Problem) -> bool:
    """Putting the old name back (as a whole word) gives the original prompt byte for byte."""
    assert original.entry_point and variant.entry_point
    back = re.sub(rf"\b{re.escape(variant.entry_point)}\b", original.entry_point, variant.prompt)
    return back == original.prompt


def test_the_family_is_registered_with_recode_names():
    assert transforms_of_family("function_name") == [
        "func_camel_case",
        "func_butter_finger",
        "func_swap_char",
        "func_change_char",
        "func_inflectional_variation",
        "func_synonym",
    ]
    assert not get_transform("func_camel_case").stochastic
    assert all(get_transform(name).stochastic for name in STOCHASTIC)


def test_camel_case_renames_everywhere_but_the_helper():
    original = problem()
    (variant,) = get_transform("func_camel_case")(original)
    assert variant.entry_point == "sortEvenNumbers"
    assert "def sortEvenNumbers(values" in variant.prompt
    assert "with sortEvenNumbers()" in variant.prompt  # a call in the description reads as code
    assert ">>> sortEvenNumbers([4, 3, 2])" in variant.prompt
    assert (
        "def sort_even_numbers_helper(x)" in variant.prompt
    )  # ReCode's substring rename breaks this
    assert "sortEvenNumbers is candidate" in variant.test
    assert variant.lineage[-1].changes["old_name"] == "sort_even_numbers"
    assert only_the_name_changed(original, variant) and passes(variant)


def test_camel_case_goes_back_to_snake_case_and_leaves_one_word_alone():
    (variant,) = get_transform("func_camel_case")(problem("sortEvenNumbers", "helper"))
    assert variant.entry_point == "sort_even_numbers" and passes(variant)
    outcome = get_transform("func_camel_case")(problem("median", "helper"))
    assert outcome == NotApplicable(
        "the name median is one word; changing its style leaves it as is"
    )


def test_a_new_name_the_problem_already_uses_is_refused():
    outcome = get_transform("func_camel_case")(problem("sort_even", "sortEven"))
    assert isinstance(outcome, NotApplicable) and "already used" in outcome.reason


@pytest.mark.parametrize("name", ["func_butter_finger", "func_swap_char", "func_change_char"])
def test_character_renamings_are_seeded_identifiers(name):
    original = problem()
    transform = get_transform(name, prob=0.3)
    first = [transform(original, seed=s) for s in range(6)]
    again = [transform(original, seed=s) for s in range(6)]
    assert [_prompt(o) for o in first] == [_prompt(o) for o in again]  # same seed, same output
    names = {o[0].entry_point for o in first if not isinstance(o, NotApplicable)}
    assert len(names) > 1  # seeds differ
    for outcome in first:
        if not isinstance(outcome, NotApplicable):
            (variant,) = outcome
            assert variant.entry_point.isidentifier()
            assert len(variant.entry_point) == len("sort_even_numbers")
            assert only_the_name_changed(original, variant) and passes(variant)


def _prompt(outcome):
    return outcome.reason if isinstance(outcome, NotApplicable) else outcome[0].prompt


def test_character_probabilities_are_parameters():
    original = problem()
    (variant,) = get_transform("func_change_char", prob=1.0)(original)
    assert variant.entry_point == "SORT_EVEN_NUMBERS"
    assert get_transform("func_butter_finger", prob=0.0)(original) == NotApplicable(
        "no letter of the name changed at this seed"
    )
    (swapped,) = get_transform("func_swap_char", prob=1.0)(original)
    assert swapped.entry_point == "ostr_vene_unbmres"  # pairs left to right, none twice
    assert get_transform("func_change_char").params == {"prob": 0.35}  # ReCode's default


@needs_wordnet
def test_synonym_renaming_keeps_the_shape_and_inflection():
    original = problem()
    seen = set()
    for seed in range(8):
        outcome = get_transform("func_synonym", prob=1.0)(original, seed=seed)
        assert not isinstance(outcome, NotApplicable), outcome
        (variant,) = outcome
        assert re.fullmatch(r"[a-z]+(_[a-z]+)+", variant.entry_point)
        assert only_the_name_changed(original, variant)
        changed = dict(variant.lineage[-1].changes["changed_words"])
        assert "numbers" not in changed or changed["numbers"].endswith("s")  # plural kept
        seen.add(variant.entry_point)
    assert len(seen) > 1 and passes(variant)
    camel = get_transform("func_synonym", prob=1.0)(problem("sortEvenNumbers", "helper"))
    assert not isinstance(camel, NotApplicable)
    assert re.fullmatch(r"[a-z]+([A-Z][a-z]+)+", camel[0].entry_point)
    assert get_transform("func_synonym")(problem("xyzzy_qwv", "helper")) == NotApplicable(
        "no word of the name has a WordNet synonym"
    )


@needs_wordnet
def test_inflectional_variation_renaming():
    original = problem()
    names = set()
    for seed in range(6):
        outcome = get_transform("func_inflectional_variation")(original, seed=seed)
        if isinstance(outcome, NotApplicable):
            assert outcome.reason == "no word of the name changed at this seed"
            continue
        (variant,) = outcome
        names.add(variant.entry_point)
        assert only_the_name_changed(original, variant)
    assert len(names) > 1
    assert names <= {
        f"{a}_{b}_{c}"
        for a in ("sort", "sorted", "sorting", "sorts")
        for b in ("even", "evener", "evenest", "evened", "evening", "evens")
        for c in ("number", "numbers")
    }
    outcome = get_transform("func_inflectional_variation")(problem("xyzzy_qwv", "helper"))
    assert outcome == NotApplicable(
        "no word of the name is a noun, verb or adjective with another inflection"
    )


def test_camel_case_matches_recodes_released_humaneval_file(humaneval):
    """ReCode's camelCase is deterministic: every HumanEval prompt must match its release
    (a one-word name it leaves unchanged is our NotApplicable: the original prompt)."""
    released = {
        record["task_id"]: record
        for record in map(json.loads, gzip.decompress(CAMEL_FILE.read_bytes()).splitlines())
    }
    transform = get_transform("func_camel_case")
    differ = []
    for original in humaneval.problems:
        outcome = transform(split_blocks(original))
        ours = original.prompt if isinstance(outcome, NotApplicable) else outcome[0].prompt
        if ours != released[original.task_id]["prompt"]:
            differ.append(original.task_id)
    assert differ == [], f"{len(humaneval.problems) - len(differ)}/{len(humaneval.problems)} agree"


def test_every_variant_of_humaneval_and_mbpp_passes(humaneval, mbpp_sweep, tmp_path):
    """Seed 0 of every renaming of every problem, judged in the sandbox; the prompt
    changes only in the name."""
    started = time.monotonic()
    names = tuple(transforms_of_family("function_name"))
    if not words.wordnet_available() and os.environ.get("BOI_REQUIRE_WORDNET") != "1":
        names = tuple(n for n in names if n not in ("func_synonym", "func_inflectional_variation"))
    config = PerturbConfig(transforms=names, random_seeds=1, keep_unchanged=False)
    for loaded in (humaneval, mbpp_sweep):
        result = run_catalogue(loaded.problems, config)
        originals = {p.task_id: p for p in loaded.problems}
        made = {v.transform for v in result.variants}
        assert made == set(names)
        for variant in result.variants:
            assert only_the_name_changed(originals[variant.source_task_id], variant), (
                variant.task_id
            )
        out = tmp_path / f"{loaded.problems[0].benchmark}.jsonl"
        assert failing_references(result.variants, out) == {}
    print(f"function_name variants of HumanEval and MBPP: {time.monotonic() - started:.0f}s")
