"""ReCode's code-syntax family (perturb.recode.syntax): each transformation on small problems,
its NotApplicable reasons, reproducibility, and every HumanEval and MBPP variant passing with
its canonical solution in the sandbox."""

from __future__ import annotations

import ast

import pytest

from benchmarks.problem import Problem
from perturb.transforms import TRANSFORMS, NotApplicable, get_transform, transforms_of_family
from tests.helpers import failing_references
from tests.test_recode_partial import make

PROMPT = (
    'def f(xs, n):\n    """Count the items of xs below n.\n    >>> f([1, 5], 3)\n    1\n    """\n'
)
# 8 lines: the partial code is the first 4 (up to and including the inner if's body).
SOLUTION = (
    "    count = 0\n"
    "    for i in range(len(xs)):\n"
    "        if xs[i] < n:\n"
    "            count += 1\n"
    "    total = count\n"
    "    for x in xs:\n"
    "        total += 0\n"
    "    return total\n"
)
NAMES = {
    "code_dead_code": "DeadCodeInserter",
    "code_dead_code_last": "DeadCodeInserterLast",
    "code_for_while": "ForWhileTransformer",
    "code_operand_swap": "OperandSwap",
    "code_rename_cb": "VarRenamerCB",
    "code_rename_naive": "VarRenamerNaive",
    "code_rename_rn": "VarRenamerRN",
}
STOCHASTIC = {"code_dead_code", "code_dead_code_last", "code_rename_rn"}


def only(outcome) -> Problem:
    assert not isinstance(outcome, NotApplicable), outcome
    (variant,) = outcome
    return variant


def run(problem: Problem, xs: list[int], n: int) -> object:
    namespace: dict[str, object] = {}
    exec(problem.prompt + (problem.canonical_solution or ""), namespace)
    return namespace["f"](xs, n)  # type: ignore[operator]


@pytest.fixture
def problem() -> Problem:
    return make(PROMPT, SOLUTION)


def test_the_family_is_registered_against_the_partial_code_baseline():
    assert set(NAMES) <= set(transforms_of_family("syntax"))
    for name, recode in NAMES.items():
        factory = TRANSFORMS[name]
        assert (factory.recode_name, factory.baseline) == (recode, "partial_code")
        assert factory.stochastic == (name in STOCHASTIC)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_keeps_signature_docstring_and_the_program_working(problem, name):
    for seed in range(3):
        variant = only(get_transform(name)(problem, seed=seed))
        assert variant.prompt.startswith(PROMPT)  # signature, docstring and name untouched
        assert variant.prompt != problem.prompt
        assert "".join(b.text for b in variant.blocks) == variant.prompt
        assert variant.block("description") == problem.block("description")
        ast.parse(variant.prompt + variant.canonical_solution)
        for xs, n in (([1, 5, 2], 3), ([], 1), ([4, 4], 5)):
            assert run(variant, xs, n) == sum(1 for x in xs if x < n)


def test_operand_swap_mirrors_the_first_comparison():
    variant = only(get_transform("code_operand_swap")(make(PROMPT, SOLUTION)))
    assert "        if n > xs[i]:\n" in variant.prompt
    assert variant.lineage[-1].changes["before"] == "xs[i] < n"


def test_for_while_converts_the_first_range_loop_of_the_partial_code():
    variant = only(get_transform("code_for_while")(make(PROMPT, SOLUTION)))
    assert variant.prompt.endswith(
        "    count = 0\n    i = 0\n    while i < len(xs):\n        if xs[i] < n:\n"
        "            count += 1\n        i += 1\n"
    )
    assert variant.canonical_solution == SOLUTION.split("count += 1\n", 1)[1]
    assert variant.lineage[-1].changes["continues_past_the_cut"] is False


def test_a_loop_continuing_past_the_cut_takes_its_increment_into_the_solution():
    solution = (
        "    count = 0\n    for i in range(len(xs)):\n        if xs[i] < n:\n"
        "            count += 1\n        count += 0\n    return count\n"
    )
    # The raw variant, to see its changes (its prompt ends on `if ...:`; the registry accepts
    # it because its solution completes it).
    outcome = get_transform("code_for_while").variants(make(PROMPT, solution))
    assert not isinstance(outcome, NotApplicable)
    ((variant, changes),) = outcome
    assert variant.prompt.endswith("    i = 0\n    while i < len(xs):\n        if xs[i] < n:\n")
    assert variant.canonical_solution == (
        "            count += 1\n        count += 0\n        i += 1\n    return count\n"
    )
    assert changes["continues_past_the_cut"] is True
    assert run(variant, [1, 5, 2], 3) == 2


def test_for_while_converts_an_element_loop():
    solution = "    total = 0\n    for x in xs:\n        total += x < n\n    total += 0\n    total *= 1\n    return total\n"
    variant = only(get_transform("code_for_while")(make(PROMPT, solution)))
    assert "    _x_i = 0\n    while _x_i < len(xs):\n        x = xs[_x_i]\n" in variant.prompt


@pytest.mark.parametrize(
    ("solution", "reason"),
    [
        ("    total = 0\n    total += 1\n    total -= 1\n    return len(xs)\n", "no for loop"),
        (
            "    total = 0\n    for i in range(9):\n        if i:\n            continue\n"
            "        total += 1\n    return len([x for x in xs if x < n])\n",
            "continues the loop",
        ),
        (
            "    total = 0\n    for i in range(9):\n        total += 1\n    return i * 0 + len([x for x in xs if x < n])\n",
            "used after the loop",
        ),
        (
            "    seen = set(xs)\n    for x in seen:\n        pass\n    return len([y for y in xs if y < n])\n",
            "may not be indexable",
        ),
    ],
)
def test_for_while_says_why_it_does_not_apply(solution, reason):
    outcome = get_transform("code_for_while")(make(PROMPT, solution))
    assert isinstance(outcome, NotApplicable)
    assert reason in outcome.reason


def test_renaming_renames_the_most_frequent_local_everywhere_the_function_uses_it(problem):
    variant = only(get_transform("code_rename_naive")(problem))
    step = variant.lineage[-1].changes
    assert (step["old_name"], step["new_name"]) == ("count", "VAR_0")
    assert "count" not in variant.prompt + variant.canonical_solution
    assert "    total = VAR_0\n" in variant.canonical_solution  # the rest of the solution too
    assert variant.prompt.startswith("def f(xs, n):")  # parameters are never renamed


def test_naive_name_is_a_parameter_and_collisions_get_recodes_suffix(problem):
    variant = only(get_transform("code_rename_naive", new_name="total")(problem))
    assert variant.lineage[-1].changes["new_name"] == "total2"
    bad = get_transform("code_rename_naive", new_name="not valid")(problem)
    assert isinstance(bad, NotApplicable)


def test_rename_cb_uses_a_conventional_name_for_the_role(problem):
    variant = only(get_transform("code_rename_cb")(problem))
    # count = 0 is a number: count, total, n, num, ... less the old name and the used ones.
    assert variant.lineage[-1].changes["new_name"] == "num"


def test_rename_rn_draws_a_name_of_the_same_length_per_seed(problem):
    transform = get_transform("code_rename_rn")
    names = [only(transform(problem, seed=s)).lineage[-1].changes["new_name"] for s in range(4)]
    assert only(transform(problem, seed=0)).lineage[-1].changes["new_name"] == names[0]
    assert len(set(names)) > 1
    assert all(len(name) == len("count") and name[0].isalpha() for name in names)


def test_renaming_needs_a_local_variable():
    solution = "    return len(\n        [x for x in xs if x < n]\n    )\n"
    outcome = get_transform("code_rename_naive")(make(PROMPT, solution))
    assert isinstance(outcome, NotApplicable)
    assert outcome.reason == "no local variable in the partial code"


def test_dead_code_is_reproducible_varies_with_the_seed_and_never_runs(problem):
    transform = get_transform("code_dead_code")
    prompts = [only(transform(problem, seed=s)).prompt for s in range(6)]
    assert only(transform(problem, seed=0)).prompt == prompts[0]
    assert len(set(prompts)) > 1
    shapes = {
        only(transform(problem, seed=s)).lineage[-1].changes["shape"].split()[0] for s in range(12)
    }
    assert shapes <= {"for", "while", "if"} and len(shapes) > 1


def test_dead_code_last_goes_before_the_last_statement_of_the_partial_code(problem):
    variant = only(get_transform("code_dead_code_last")(problem, seed=1))
    # The partial code's last statement is `count += 1` (line 9 of the program).
    assert variant.lineage[-1].changes["line"] == 9
    assert variant.prompt.endswith("            count += 1\n")


def test_one_line_solutions_are_left_whole_as_recode_leaves_them():
    for name in NAMES:
        outcome = get_transform(name)(make(PROMPT, "    return len([x for x in xs if x < n])\n"))
        assert isinstance(outcome, NotApplicable)
        assert "one line" in outcome.reason


def test_every_variant_of_humaneval_and_mbpp_passes_with_its_canonical_solution(
    humaneval, mbpp_sweep, tmp_path
):
    """The syntax family (seed 0 of the stochastic ones) on both datasets: every variant's
    canonical solution completes its prompt into a program that passes the tests."""
    from perturb.catalogue import PerturbConfig, run_catalogue

    config = PerturbConfig(transforms=tuple(NAMES), random_seeds=1, keep_unchanged=False)
    for loaded in (humaneval, mbpp_sweep):
        variants = run_catalogue(loaded.problems, config).variants
        assert {v.transform for v in variants} == set(NAMES)
        assert failing_references(variants, tmp_path / f"{len(variants)}.jsonl") == {}
