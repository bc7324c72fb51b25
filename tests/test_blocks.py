import pytest

from perturb.blocks import SplitError, split_blocks, split_dataset, split_function_prompt

NO_EXAMPLES = {"HumanEval/38", "HumanEval/41", "HumanEval/50", "HumanEval/83"}


def kinds(problem):
    return [b.kind for b in problem.blocks]


def assert_exact(problems):
    for problem in problems:
        assert "".join(b.text for b in problem.blocks) == problem.prompt, problem.task_id


def test_every_humaneval_problem_splits_exactly(humaneval):
    split = split_dataset(humaneval.problems)
    assert split.failures == {}
    assert_exact(split.problems)
    assert all(p.block("name") is not None for p in split.problems)
    with_examples = {p.task_id for p in split.problems if p.block("examples")}
    assert with_examples == {p.task_id for p in split.problems} - NO_EXAMPLES
    for p in split.problems:
        assert p.block("name").text.lstrip().startswith("def " + p.entry_point + "(")
        assert ("examples" in p.absent_blocks) == (p.task_id in NO_EXAMPLES)


def test_humaneval_0_blocks(humaneval):
    p = split_blocks(humaneval.problems[0])
    assert kinds(p) == ["prefix", "name", "description", "examples", "suffix"]
    assert p.block("prefix").text == "from typing import List\n\n\n"
    assert (
        p.block("name").text
        == "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
    )
    assert p.block("description").text.startswith('    """ Check if in given list')
    assert p.block("examples").text.startswith("    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)")
    assert p.block("suffix").text == '    """\n'


def test_every_mbpp_problem_splits_with_generated_examples(mbpp):
    split = split_dataset(mbpp.problems)
    assert split.failures == {}
    assert_exact(split.problems)
    reported = {i.task_id for i in mbpp.issues}
    assert {p.task_id for p in split.problems if not p.block("examples")} == reported
    assert all(
        p.block("examples").text.lstrip().startswith(">>> ")
        for p in split.problems
        if p.task_id not in reported
    )


def test_code_contests_statement_sections(code_contests):
    split = split_dataset(code_contests.problems)
    assert split.failures == {}
    assert_exact(split.problems)
    for p in split.problems:
        assert kinds(p)[:5] == ["prefix", "description", "io_spec", "examples", kinds(p)[4]]
        assert p.block("io_spec").text.startswith("Input")
        assert p.block("examples").text.startswith("Example")
        assert "Output" in p.block("io_spec").text
        if p.block("notes"):
            assert p.block("notes").text.startswith("Note")
        else:
            assert "notes" in p.absent_blocks


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("def f(x):\n", {"name": "def f(x):\n"}),
        (
            'def f(x):\n    """Return x twice."""\n',
            {"name": "def f(x):\n", "description": '    """Return x twice.', "suffix": '"""\n'},
        ),
        (
            'import os\n\ndef helper():\n    """Not this one.\n    >>> helper()\n    """\n\ndef g(a: int) -> int:\n    """Add one. For example, g(1) is 2 in prose.\n    Example:\n    g(1) == 2\n    """\n',
            {
                "prefix": 'import os\n\ndef helper():\n    """Not this one.\n    >>> helper()\n    """\n\n',
                "name": "def g(a: int) -> int:\n",
                "examples": "    Example:\n    g(1) == 2\n",
            },
        ),
        (
            'def naïve(s):\n    """Café — accents.\n    naïve("é") -> 1\n    """\n',
            {"examples": '    naïve("é") -> 1\n', "suffix": '    """\n'},
        ),
    ],
)
def test_hand_made_prompts(prompt, expected):
    split = split_function_prompt(prompt)
    assert "".join(b.text for b in split.blocks) == prompt
    got = {b.kind: b.text for b in split.blocks}
    for kind, text in expected.items():
        assert got[kind] == text
    if "examples" not in expected:
        assert "examples" in split.absent


def test_unparsable_prompt_is_a_split_error():
    with pytest.raises(SplitError, match="not valid Python"):
        split_function_prompt("def f(:\n")
