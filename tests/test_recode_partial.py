"""ReCode's partial-code baseline (perturb.recode.partial): the cut, its blocks and lineage, and
byte-for-byte agreement with ReCode's nominal humaneval_partial.jsonl where its mirror exists."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.problem import Problem
from perturb.blocks import split_blocks
from perturb.recode.partial import cuts_statement, partial_problem, recode_cut
from perturb.transforms import TRANSFORMS, NotApplicable, get_transform

# ReCode's released files, copied into the repository (tests/data/recode/SOURCE.md).
RECODE_DATA = Path(__file__).parent / "data" / "recode"


def released(name: str) -> dict[str, dict[str, Any]]:
    """ReCode's released records of `tests/data/recode/<name>.gz` by task id."""
    text = gzip.decompress((RECODE_DATA / f"{name}.gz").read_bytes()).decode("utf-8")
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    return {r["task_id"]: r for r in records}


def make(prompt: str, solution: str, entry: str = "f") -> Problem:
    return split_blocks(
        Problem(
            "T/1", "t", prompt, entry, test="def check(c):\n    pass\n", canonical_solution=solution
        )
    )


PROMPT = 'def f(xs):\n    """Sum the list.\n    >>> f([1, 2])\n    3\n    """\n'
SOLUTION = "    total = 0\n    for x in xs:\n        total += x\n    return total\n"


def test_the_first_half_of_the_solution_lines_joins_the_prompt():
    partial = partial_problem(make(PROMPT, SOLUTION))
    assert isinstance(partial, Problem)
    assert partial.prompt == PROMPT + "    total = 0\n    for x in xs:\n"
    assert partial.canonical_solution == "        total += x\n    return total\n"
    assert partial.prompt + partial.canonical_solution == PROMPT + SOLUTION


def test_an_odd_count_keeps_the_smaller_half_and_blank_lines_count():
    # 5 lines (one blank): ReCode keeps 5 // 2 = 2.
    solution = "    a = 1\n\n    b = 2\n    c = 3\n    return a + b + c\n"
    cut = recode_cut(PROMPT + solution, "f")
    assert (cut.body_lines, cut.kept_lines) == (5, 2)
    partial = partial_problem(make(PROMPT, solution))
    assert isinstance(partial, Problem)
    assert partial.prompt == PROMPT + "    a = 1\n\n"


def test_a_one_line_solution_is_kept_whole_as_recode_does():
    outcome = partial_problem(make(PROMPT, "    return sum(xs)\n"))
    assert isinstance(outcome, NotApplicable)
    assert "one line" in outcome.reason
    assert isinstance(partial_problem(make(PROMPT, "")), NotApplicable)


def test_blocks_keep_the_docstring_and_the_partial_code_joins_the_suffix():
    original = make(PROMPT, SOLUTION)
    partial = partial_problem(original)
    assert isinstance(partial, Problem) and partial.blocks is not None
    assert "".join(b.text for b in partial.blocks) == partial.prompt
    assert partial.block("description") == original.block("description")
    assert partial.block("examples") == original.block("examples")
    suffix = partial.block("suffix")
    assert suffix is not None and suffix.text == '    """\n    total = 0\n    for x in xs:\n'


def test_registered_variant_records_the_cut_in_its_lineage():
    factory = TRANSFORMS["partial_code"]
    assert (factory.family, factory.baseline, factory.recode_name) == ("syntax", "original", None)
    solution = "    total = 0\n    total += len(xs)\n    total += sum(xs)\n    return total\n"
    (variant,) = get_transform("partial_code")(make(PROMPT, solution))
    assert variant.task_id == "T/1::partial_code"
    step = variant.lineage[-1]
    assert step.transform == "partial_code"
    assert step.changes["cut_lines"] == 2 and step.changes["solution_lines"] == 4
    assert step.changes["partial_code"] == "    total = 0\n    total += len(xs)\n"
    assert step.changes["cuts_statement"] is False


def test_a_cut_inside_a_bracket_is_kept_as_recode_keeps_it_and_flagged():
    solution = "    table = {\n        1: 'a',\n        2: 'b',\n    }\n    return table[xs]\n"
    partial = partial_problem(make(PROMPT, solution))
    assert isinstance(partial, Problem)
    assert partial.prompt.endswith("    table = {\n        1: 'a',\n")
    assert cuts_statement(partial.prompt)
    # A prompt ending on a block opener is not a cut statement: its body is still to come.
    assert not cuts_statement(PROMPT + "    for x in xs:\n")


def test_stdio_problems_do_not_apply():
    problem = Problem("S/1", "t", '"""\nRead.\n"""\n', None, canonical_solution="a\nb\n")
    assert isinstance(partial_problem(problem), NotApplicable)


@pytest.fixture(scope="module")
def recode_humaneval_partial() -> dict[str, dict[str, Any]]:
    return released("humaneval_partial.jsonl")


def test_partial_prompts_match_recodes_nominal_file_byte_for_byte(
    humaneval, recode_humaneval_partial
):
    """ReCode's nominal partial prompts (164 HumanEval records; `partial: null` where the
    solution has one line and the prompt stays whole): all 164 agree."""
    agree, differ = 0, []
    for problem in humaneval.problems:
        record = recode_humaneval_partial[problem.task_id]
        partial = partial_problem(problem)
        if isinstance(partial, NotApplicable):
            same = record["partial"] is None and record["prompt"] == problem.prompt
        else:
            same = (
                record["prompt"] == partial.prompt
                and record["canonical_solution"] == partial.canonical_solution
            )
        agree += same
        if not same:
            differ.append(problem.task_id)
    assert (agree, differ) == (len(humaneval.problems), [])
    assert len(humaneval.problems) == 164


def test_partial_code_applies_wherever_the_solution_has_several_lines(humaneval):
    transform = get_transform("partial_code")
    refused = {}
    for problem in humaneval.problems:
        problem = split_blocks(problem)
        outcome = transform(problem)
        if isinstance(outcome, NotApplicable) and "one line" not in outcome.reason:
            refused[problem.task_id] = outcome.reason
    assert refused == {}
