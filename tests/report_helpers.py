"""Tiny problems with real catalogue variants, and hand-chosen result rows, for report tests."""

from __future__ import annotations

from benchmarks.problem import Problem
from perturb.blocks import split_blocks
from perturb.keywords import KeywordAnalysis
from perturb.transforms import CATALOGUE, NotApplicable, get_transform
from tests.keyword_helpers import droppable_keyword

SOURCES = [
    Problem(
        "T/0",
        "tiny",
        'def sort_list(values: list) -> list:\n    """Sort the list of integers.\n    >>> sort_list([3, 1, 2])\n    [1, 2, 3]\n    """\n',
        "sort_list",
        test="def check(candidate):\n    assert candidate([2, 1]) == [1, 2]\n",
        canonical_solution="    return sorted(values)\n",
    ),
    Problem(
        "T/1",
        "tiny",
        'def add_numbers(a: int, b: int) -> int:\n    """Add two integer numbers.\n    >>> add_numbers(1, 2)\n    3\n    """\n',
        "add_numbers",
        test="def check(candidate):\n    assert candidate(1, 2) == 3\n",
        canonical_solution="    return a + b\n",
    ),
    Problem(
        "T/2",
        "tiny",
        'def shout(text: str) -> str:\n    """Upper-case the string."""\n',
        "shout",
        test="def check(candidate):\n    assert candidate('a') == 'A'\n",
        canonical_solution="    return text.upper()\n",
    ),
]

# Droppable keywords by hand (what KeyBERT + filters would decide), so no embedder is needed.
KEYWORDS = {"T/0": ["list", "integers"], "T/1": ["integer"], "T/2": ["string"]}


def _analysis(problem: Problem) -> KeywordAnalysis:
    decisions = []
    for word in KEYWORDS[problem.task_id]:
        start = (
            problem.prompt.index(" " + word)
            if f"the {word}" not in problem.prompt
            else problem.prompt.index(" the " + word)
        )
        end = problem.prompt.index(word, start) + len(word)
        decisions.append(droppable_keyword(problem, word, start, end, rule="type"))
    return KeywordAnalysis(problem.task_id, tuple(decisions))


def catalogue() -> dict[str, Problem]:
    """Task id -> problem: the originals and every variant the catalogue makes of them."""
    out: dict[str, Problem] = {}
    for source in SOURCES:
        problem = split_blocks(source)
        analysis = _analysis(problem)
        for name in CATALOGUE:
            outcome = get_transform(name)(problem, analysis)
            if not isinstance(outcome, NotApplicable):
                out.update({v.task_id: v for v in outcome})
    return out


def rows(
    problems: dict[str, Problem],
    passes: dict[str, list[bool]],
    *,
    model: str = "m",
    setting: str = "T=0.2",
    dataset: str = "tiny",
    completion: str = "    return 0\n",
) -> list[dict]:
    """Result rows for the given task id -> per-sample verdicts."""
    out = []
    for task_id, verdicts in passes.items():
        problem = problems.get(task_id)
        source = problem.source_task_id if problem else task_id.split("::")[0]
        transform = problem.transform if problem else "name_only"
        for index, passed in enumerate(verdicts):
            out.append(
                {
                    "dataset": dataset,
                    "model": model,
                    "setting": setting,
                    "task_id": task_id,
                    "source_task_id": source,
                    "transform": transform,
                    "sample_index": index,
                    "completion": completion,
                    "passed": passed,
                    "result": "passed" if passed else "failed: AssertionError",
                }
            )
    return out
