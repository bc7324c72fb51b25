import dataclasses
import json

import pytest

from benchmarks.common.errors import UserError
from benchmarks.problem import (
    Block,
    LineageStep,
    Problem,
    StdioTest,
    read_problems,
    select_tasks,
    write_problems,
)


def make_problem() -> Problem:
    return Problem(
        task_id="T/1",
        benchmark="humaneval",
        prompt='def f(x):\n    """Doubles — x.\n    >>> f(1)\n    2\n    """\n',
        entry_point="f",
        test="def check(candidate):\n    assert candidate(1) == 2\n",
        canonical_solution="    return 2 * x\n",
        stdio_tests=(StdioTest("1\n", "2\n", "public"),),
        blocks=(
            Block("name", "def f(x):\n"),
            Block("description", '    """Doubles — x.\n'),
            Block("examples", "    >>> f(1)\n    2\n"),
            Block("suffix", '    """\n'),
        ),
        absent_blocks={"prefix": "nothing precedes the signature"},
        lineage=(
            LineageStep(
                "drop_one", "1", {"keyword": "x"}, 7, {"removed": [{"span": [3, 4], "text": "x"}]}
            ),
        ),
        metadata={"tags": ["a", "b"], "nested": {"k": 1}},
    )


def test_json_round_trip_is_lossless(tmp_path):
    problem = make_problem()
    path = tmp_path / "p.jsonl"
    write_problems(path, [problem])
    (loaded,) = read_problems(path)
    assert loaded == problem
    assert json.loads(path.read_text(encoding="utf-8"))["prompt"] == problem.prompt


def test_record_is_immutable():
    problem = make_problem()
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.prompt = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        problem.metadata["tags"] = []  # type: ignore[index]
    changed = problem.replace(prompt="other")
    assert problem.prompt != changed.prompt and changed.task_id == problem.task_id


def test_humaneval_format_first_fields():
    keys = list(make_problem().to_json())
    assert keys[:5] == ["task_id", "prompt", "entry_point", "canonical_solution", "test"]


def test_source_task_id_defaults_to_task_id():
    assert make_problem().source_task_id == "T/1"


def test_select_tasks_keeps_the_named_ids_in_their_order_then_the_limit():
    """boi run's datasets[] and boi bias test's config select tasks by one rule, and an id that
    is not there shows the ids the dataset has (not HumanEval's, whatever the dataset)."""
    problems = [dataclasses.replace(make_problem(), task_id=f"MBPP/{i}") for i in range(5)]
    assert select_tasks(problems, (), None, "the dataset mbpp") == problems
    assert select_tasks(problems, (), 2, "the dataset mbpp") == problems[:2]
    picked = select_tasks(problems, ("MBPP/3", "MBPP/1", "MBPP/4"), 2, "the dataset mbpp")
    assert [p.task_id for p in picked] == ["MBPP/3", "MBPP/1"]
    with pytest.raises(
        UserError,
        match=r"^task_ids \['MBPP/9'\] are not in the dataset mbpp \(did you mean 'MBPP/\d'\?\); "
        r"ids look like 'MBPP/0'\.$",
    ):
        select_tasks(problems, ("MBPP/9",), None, "the dataset mbpp")
