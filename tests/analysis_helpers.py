"""Hand-made `boi run` directories for the analyses: toy problems split into blocks, their
variants made by the catalogue's own transformations from hand-chosen droppable keywords (so
lineage is exactly what a run writes), and results written by hand."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.problem import Problem
from boi.runner import load_run_config
from perturb.blocks import split_blocks
from perturb.catalogue import unchanged_variant
from perturb.keywords import KeywordAnalysis, KeywordDecision
from perturb.transforms import CATALOGUE, PROBES, NotApplicable, bind_transforms
from tests.keyword_helpers import droppable_keyword

TEST = (
    "def check(candidate):\n"
    "    assert candidate([1, -2, 3]) == 4\n"
    "    assert candidate([-1, -5]) == 0\n"
)
SOLUTION = "    return sum(x for x in numbers if x > 0)\n"


def toy_problem(
    number: int, description: str, *, name: str = "sum_positive", examples: bool = True
) -> Problem:
    """A split function problem: sum of the positive numbers of a list."""
    prompt = f'def {name}(numbers: list) -> int:\n    """ {description}\n'
    if examples:
        prompt += f"    >>> {name}([1, -2, 3])\n    4\n"
    prompt += '    """\n'
    problem = Problem(
        task_id=f"Toy/{number}",
        benchmark="toy",
        prompt=prompt,
        entry_point=name,
        test=TEST,
        canonical_solution=SOLUTION,
    )
    return split_blocks(problem)


def keyword(problem: Problem, word: str) -> KeywordDecision:
    """`word` as a droppable keyword: its one occurrence and the space after it."""
    start = problem.prompt.index(f" {word} ") + 1
    end = start + len(word) + 1
    return droppable_keyword(
        problem, word, start, end, rule="context", context_token="x", context_similarity=0.9
    )


def variants(problem: Problem, words: Sequence[str]) -> list[Problem]:
    """The original and every catalogue variant (+ the name-only probe) of `problem`, as `boi
    run` makes them (a transformation that does not apply gives the unchanged variant)."""
    analysis = KeywordAnalysis(problem.task_id, tuple(keyword(problem, w) for w in words))
    made: list[Problem] = []
    for transform in bind_transforms((*CATALOGUE, *PROBES)):
        outcome = transform(problem, analysis, 0)
        if isinstance(outcome, NotApplicable):
            if transform.name not in PROBES:
                made.append(unchanged_variant(problem, transform, outcome.reason, 0))
        else:
            made += outcome
    return made


def run_config(**overrides: Any) -> dict[str, Any]:
    """A `boi run` config as its manifest records it."""
    data = {
        "out_dir": "unused",
        "settings": [
            {
                "label": "T=0",
                "ks": [1],
                "decoding": {"temperature": 0.0, "n": 2, "max_new_tokens": 64},
            }
        ],
        "seeds": [0],
        "bootstrap": 20,
        **overrides,
    }
    return load_run_config(None, data).to_json()


def write_run(
    root: Path,
    problems: Sequence[Problem],
    passed: Mapping[tuple[str, str], Sequence[bool]],
    config: dict[str, Any],
    setting: str = "T=0",
) -> Path:
    """A finished run directory: manifest, problems.jsonl and results/<model>/<setting>.jsonl
    with `passed[(model, task id)]` per sample."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps({"config": config, "completed": True}))
    by_id = {p.task_id: p for p in problems}
    with (root / "problems.jsonl").open("w") as handle:
        for problem in problems:
            handle.write(json.dumps({**problem.to_json(), "dataset": "toy"}) + "\n")
    models = sorted({m for m, _ in passed})
    for model in models:
        path = root / "results" / model / f"{setting.replace('=', '_')}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as handle:
            for (m, task_id), outcomes in passed.items():
                if m != model:
                    continue
                problem = by_id[task_id]
                for index, ok in enumerate(outcomes):
                    row = {
                        "task_id": task_id, "completion": SOLUTION if ok else "    return 0\n",
                        "dataset": "toy", "model": model, "setting": setting, "seed": 0,
                        "sample_index": index, "source_task_id": problem.source_task_id,
                        "transform": problem.transform, "passed": ok,
                        "result": "passed" if ok else "failed: AssertionError", "duration": 0.01,
                    }  # fmt: skip
                    handle.write(json.dumps(row) + "\n")
    return root
