"""Golden inputs and outputs for the transformation catalogue.

`python -m tests.golden_transforms` rewrites tests/golden/transforms/*.json from the current
code (every registered transformation, including the ones tests register); review the diff
before committing it.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.problem import Problem, StdioTest
from perturb.blocks import split_blocks
from perturb.keywords import KeywordAnalysis, KeywordConfig, analyze_keywords
from perturb.transforms import TRANSFORMS, NotApplicable, get_transform
from tests.keyword_helpers import tiny_embedder

GOLDEN = Path(__file__).parent / "golden" / "transforms"
CONFIG = KeywordConfig(code_threshold=0.3, context_threshold=0.9)

INPUTS = [
    Problem(
        "G/humaneval",
        "golden",
        'from typing import List\n\n\ndef sort_list(values: List[int]) -> List[int]:\n    """Sort the list of integers and return the sorted list.\n    Use sort_list(values) like this.\n    >>> sort_list([3, 1, 2])\n    [1, 2, 3]\n    """\n',
        "sort_list",
        test="def check(candidate):\n    assert candidate([2, 1]) == [1, 2]\n    assert sort_list is candidate\n",
        canonical_solution="    return sorted(values) if len(values) < 2 else sort_list(values[:1]) and sorted(values)\n",
    ),
    Problem(
        "G/no_examples",
        "golden",
        'def median(l: list):\n    """Return median of elements in the list l."""\n',
        "median",
        test="def check(candidate):\n    assert candidate([1, 2, 3]) == 2\n",
        canonical_solution="    return sorted(l)[len(l) // 2]\n",
    ),
    # A solution of several lines, so ReCode's partial-code families (prompt + half the
    # solution: loops, operands and variables to perturb) have something to work on.
    Problem(
        "G/partial",
        "golden",
        'def count_smaller(values: list, limit: int) -> int:\n    """Count the values that are smaller than the limit.\n    >>> count_smaller([1, 5, 2], 3)\n    2\n    """\n',
        "count_smaller",
        test="def check(candidate):\n    assert candidate([1, 5, 2], 3) == 2\n    assert candidate([], 1) == 0\n",
        canonical_solution="    count = 0\n    for value in values:\n        if value < limit:\n            count += 1\n    total = count\n    return total\n",
    ),
    Problem(
        "G/stdio",
        "golden",
        '"""\nGiven an array of integers, print the sum of the array.\n\nInput\n\nThe first line holds the integers.\n\nOutput\n\nPrint the sum.\n\nExamples\n\nInput\n\n1 2\n\nOutput\n\n3\n"""\n',
        None,
        stdio_tests=(StdioTest("1 2\n", "3\n"),),
        canonical_solution="print(sum(map(int, input().split())))\n",
    ),
]


def golden_inputs() -> list[tuple[Problem, KeywordAnalysis]]:
    """The inputs, split into blocks, each with its keyword analysis."""
    problems = [split_blocks(p) for p in INPUTS]
    analyses = {a.task_id: a for a in analyze_keywords(problems, CONFIG, tiny_embedder())}
    return [(p, analyses[p.task_id]) for p in problems]


def golden_output(
    name: str, inputs: list[tuple[Problem, KeywordAnalysis]] | None = None
) -> dict[str, object]:
    """What the transformation `name` (default parameters, seed 0) makes of every input."""
    transform = get_transform(name)
    per_problem: dict[str, object] = {}
    for problem, analysis in inputs or golden_inputs():
        outcome = transform(problem, analysis, seed=0)
        per_problem[problem.task_id] = (
            {"not_applicable": outcome.reason}
            if isinstance(outcome, NotApplicable)
            else [v.to_json() for v in outcome]
        )
    return per_problem


def golden_outputs() -> dict[str, dict[str, object]]:
    """`golden_output` of every registered transformation."""
    inputs = golden_inputs()
    return {name: golden_output(name, inputs) for name in TRANSFORMS}


def expected_output(name: str) -> object:
    """The golden file of `name`, as JSON."""
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


if __name__ == "__main__":
    # Transformations that tests register (with their golden files here) join the catalogue.
    import tests.test_transform_registry  # noqa: F401

    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name, outputs in golden_outputs().items():
        (GOLDEN / f"{name}.json").write_text(
            json.dumps(outputs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"wrote {GOLDEN / name}.json")
