"""`boi analyze leaks`: hidden tests the prompt's examples show, on hand-made problems checked by
hand (a shown case, the same case spaced differently, a float within the test's tolerance, an
example that contradicts the tests, what cannot be read), the memoriser's pass share computed
in the sandbox, HumanEval+'s packed tests, a contest problem, and the section beside a
reference-backend run's numbers."""

from __future__ import annotations

import json

import pytest

from benchmarks.execution import ExecutionConfig
from benchmarks.loaders import humanevalplus as hep
from benchmarks.loaders import load_benchmark
from benchmarks.problem import OutputJudge, Problem, StdioTest
from boi.analysis.leak_cases import (
    NotLiteral,
    Signature,
    parse_literal,
    read_examples,
    read_hidden,
)
from boi.analysis.leaks import ProblemLeaks, audit_problems, dataset_summary, read_problem
from boi.cli import main
from perturb.blocks import split_blocks

EXECUTION = ExecutionConfig(workers=2, calibrate=False)


def function_problem(
    task: str, prompt: str, test: str, solution: str, entry_point: str = "f"
) -> Problem:
    return split_blocks(
        Problem(
            task_id=f"Toy/{task}",
            benchmark="toy",
            prompt=prompt,
            entry_point=entry_point,
            test=test,
            canonical_solution=solution,
        )
    )


# Hidden: 4 cases. Shown: (1, 2) -> 3 as a doctest, (2,3) -> 5 spaced differently and stated
# with `==>`, (10, 10) -> 21, which the tests (and the solution) say is 20.
ADD = function_problem(
    "add",
    'def f(a: int, b: int) -> int:\n    """Add two numbers.\n'
    "    >>> f(1, 2)\n    3\n"
    "    f( 2,3 )  ==>  5\n"
    "    f(10, 10) ==> 21\n"
    '    """\n',
    "def check(candidate):\n"
    "    assert candidate(1,2) == 3\n"
    "    assert 5 == candidate(2, 3)\n"
    "    assert candidate(10, 10) == 20\n"
    "    assert candidate(0, 0) == 0\n",
    "    return a + b\n",
)
# Hidden: |f(3.0) - 1/3| < 1e-6 and an exact case. Shown: 0.3333333 (within the tolerance),
# and f(6.0) -> 0.17 (the solution gives 0.1666...: a display the tolerance does not accept).
THIRD = function_problem(
    "third",
    'def f(x: float) -> float:\n    """One over x.\n'
    "    For example:\n"
    "    f(3.0) should return 0.3333333.\n"
    "    f(6.0) returns 0.17\n"
    '    """\n',
    "def check(candidate):\n"
    "    assert abs(candidate(3.0) - 1 / 3) < 1e-6\n"
    "    assert abs(candidate(6.0) - 1 / 6) < 1e-6\n"
    "    assert candidate(0.5) == 2.0\n",
    "    return 1 / x\n",
)


def test_literals_are_values_and_names_are_not():
    assert parse_literal("[1, (2, 3), {'a': -4.5}]") == [1, (2, 3), {"a": -4.5}]
    assert parse_literal("2.0 / 3.0") == pytest.approx(2 / 3)
    assert parse_literal("'ab' * 3") == "ababab"
    assert parse_literal("float('inf')") == float("inf")
    assert parse_literal("true", loose=True) is True
    assert parse_literal("Counter({'a': 2})", loose=True) == {"a": 2}
    for text in ("x", "f(1)", "'a' * 10**9", "true", "[1, 2"):
        with pytest.raises(NotLiteral):
            parse_literal(text)


def test_a_shown_case_matches_by_value_whatever_its_spacing():
    examples = read_examples(ADD)
    assert [(c.args, c.expected) for c in examples.cases] == [
        ((1, 2), 3),
        ((2, 3), 5),
        ((10, 10), 21),
    ]
    hidden = read_hidden(ADD)
    assert [(c.args, c.expected) for c in hidden.cases] == [
        ((1, 2), 3), ((2, 3), 5), ((10, 10), 20), ((0, 0), 0),
    ]  # fmt: skip
    audit = read_problem(ADD)
    # `f(1, 2)` is `candidate(1,2)`, and `f( 2,3 )  ==>  5` is `5 == candidate(2, 3)`.
    assert audit.shown == [0, 1]
    # The third example contradicts the tests: a data bug, once the canonical solution ran.
    assert [c["test"] for c in audit.contradictions] == ["candidate(10, 10) == 20"]


def test_a_float_within_the_tests_tolerance_is_shown_and_one_outside_is_not():
    audit = read_problem(THIRD)
    assert [(c.args, c.expected) for c in audit.examples] == [((3.0,), 0.3333333), ((6.0,), 0.17)]
    assert [c.judge.describe() for c in audit.hidden[:2]] == ["|value - expected| < 1e-06"] * 2
    assert audit.shown == [0]  # 0.3333333 is within 1e-6 of 1/3; 0.17 is not within 1e-6 of 1/6
    assert len(audit.contradictions) == 1


def test_the_memoriser_runs_in_the_sandbox_and_the_data_bugs_are_listed():
    audits, _ = audit_problems([ADD, THIRD], EXECUTION)
    add, third = audits
    assert (add.task_id, add.memoriser_status, add.memoriser_passed) == ("Toy/add", "completed", 2)
    assert add.leak_share == 0.5  # 2 of the 4 hidden cases
    assert third.memoriser_passed == 1 and third.leak_share == pytest.approx(1 / 3)
    # The canonical solution ran on the shown inputs: f(10, 10) is 20, not 21.
    assert add.canonical_status == "completed" and add.canonical_checked == 3
    assert [(d["example"], d["canonical"]) for d in add.disagreements] == [
        ("f(10, 10) ==> 21", "20")
    ]
    assert add.data_bug
    # f(6.0) -> 0.17 disagrees with 0.1666... beyond the tests' tolerance (1e-6).
    assert [d["canonical"] for d in third.disagreements] == [repr(1 / 6)]
    summary = dataset_summary(audits)
    assert [summary[k] for k in ("hidden", "shown_and_hidden", "memoriser_passed")] == [7, 3, 3]
    assert summary["data_bugs"] == 2


def test_a_slow_canonical_solution_is_checked_whatever_the_timeout():
    """The audit's programs run under the config's max_timeout, not its per-sample timeout: a
    canonical solution slower than that timeout (MBPP/123's takes seconds, as long as the
    calibrated 3 s on a quiet machine) is still checked, so the audit does not depend on the
    machine's load. Here the solution sleeps 0.2 s a call, 0.6 s for its three examples, against
    a 0.1 s timeout."""
    slow = ADD.replace(
        task_id="Toy/slow-add", canonical_solution="    import time\n    time.sleep(0.2)\n"
        "    return a + b\n",
    )  # fmt: skip
    tight = ExecutionConfig(workers=1, calibrate=False, timeout=0.1, max_timeout=60.0)
    (audit,), _ = audit_problems([slow], tight)
    assert audit.canonical_status == "completed" and audit.canonical_checked == 3
    assert [d["example"] for d in audit.disagreements] == ["f(10, 10) ==> 21"]
    assert audit.memoriser_status == "completed" and audit.memoriser_passed == 2


def test_the_memoriser_only_passes_what_it_was_shown():
    # Examples and tests meet, but the memoriser is judged by the tests: a truthy test passes
    # the shown True, and an input shown with two outputs gives the first.
    problem = function_problem(
        "flags",
        'def f(s):\n    """Is s long?\n    >>> f("abc")\n    True\n    >>> f("")\n    False\n'
        '    >>> f("")\n    True\n    """\n',
        'def check(candidate):\n    assert candidate("abc")\n    assert not candidate("")\n'
        '    assert candidate("x") is False\n',
        "    return len(s) > 2\n",
    )
    (audit,), _ = audit_problems([problem], EXECUTION)
    assert audit.shown == [0, 1]
    assert audit.memoriser_passed == 2 and len(audit.hidden) == 3
    assert len(audit.contradictions) == 1  # f("") -> True against `not candidate("")`


def test_what_cannot_be_read_is_counted_never_guessed():
    problem = function_problem(
        "loops",
        'def f(xs, k=2):\n    """Keep the k largest.\n    Example 1:\n'
        "        Input: xs = [3, 1, 2], k = 1\n        Output: [3]\n"
        "    For xs = [5, 4] the output should be [5, 4]\n"
        "    f(ys) == [1]\n"
        "    g([1]) == [1]\n"
        '    """\n',
        "def check(candidate):\n"
        "    import random\n"
        "    for _ in range(10):\n"
        "        xs = [random.random() for _ in range(5)]\n"
        "        assert candidate(xs) == sorted(xs)[-2:]\n"
        "    assert candidate([3, 1, 2], k=1) == [3]\n"
        "    assert candidate([5, 4], 2) == [5, 4]\n"
        "    result = candidate([1])\n",
        "    return sorted(xs)[-k:][::-1]\n",
    )
    examples = read_examples(problem)
    # Named arguments are placed through the signature, and the default k=2 filled in.
    assert [(c.args, c.expected) for c in examples.cases] == [
        (([3, 1, 2], 1), [3]),
        (([5, 4], 2), [5, 4]),
    ]
    assert sorted(u.reason for u in examples.unparsed) == [
        "calls g(), not the entry point f()",
        "the name ys",
    ]
    hidden = read_hidden(problem)
    assert [c.args for c in hidden.cases] == [([3, 1, 2], 1), ([5, 4], 2)]
    assert [u.reason for u in hidden.unparsed] == ["the name xs", "a call outside an assert"]
    assert read_problem(problem).shown == [0, 1]


def test_an_assert_through_a_conversion_is_a_case_and_a_self_comparison_is_not():
    # HumanEval/33 and 37 compare through tuple(); MBPP/912 through int(). HumanEval/33's
    # first asserts compare the candidate with the entry point itself: no expected value.
    problem = function_problem(
        "convert",
        'def f(xs):\n    """Reverse.\n    >>> f([1, 2])\n    [2, 1]\n    >>> f([3])\n    3.0\n'
        '    """\n',
        "def check(candidate):\n"
        "    assert tuple(candidate([1, 2])) == tuple([2, 1])\n"
        "    assert int(candidate([3])) == 3\n"
        "    assert tuple(sorted(candidate([5, 4]))) == (4, 5)\n"
        "    assert tuple(candidate([7, 8])) == tuple(f([7, 8]))\n",
        "    return xs[::-1]\n",
    )
    hidden = read_hidden(problem)
    assert [(c.args, c.expected, c.judge.describe()) for c in hidden.cases] == [
        (([1, 2],), (2, 1), "eq after tuple()"),
        (([3],), 3, "eq after int()"),
        (([5, 4],), (4, 5), "eq after sorted(), tuple()"),
    ]
    assert [u.reason for u in hidden.unparsed] == [
        "compares the candidate's result with another call of the function under test: no "
        "expected value"
    ]
    # The shown list [2, 1] passes tuple(...) == (2, 1); 3.0 passes int(...) == 3.
    assert hidden.cases[0].judge.accepts([2, 1], (2, 1))
    assert not hidden.cases[0].judge.accepts([1, 2], (2, 1))
    assert not hidden.cases[1].judge.accepts("x", 3)  # int("x") raises: the test fails
    assert read_problem(problem).shown == [0, 1]


def function_case(problem: Problem) -> list[tuple[tuple, object]]:
    return [(c.args, c.expected) for c in read_examples(problem).cases]


def test_examples_in_the_other_forms_prompts_use():
    # HumanEval/80: unquoted words where every test passes a string.
    happy = function_problem(
        "happy",
        'def f(s):\n    """Happy?\n    For example:\n    f(a) => False\n    f(abcd) => True\n'
        '    """\n',
        'def check(candidate):\n    assert candidate("a") == False\n'
        '    assert candidate("abcd") == True\n',
        "    return len(s) > 2\n",
    )
    assert function_case(happy) == [(("a",), False), (("abcd",), True)]
    assert read_problem(happy).shown == [0, 1]
    # ... but not where the tests pass something else: `ys` stays a name.
    listy = function_problem(
        "listy",
        'def f(xs):\n    """Sum.\n    For example:\n    f(ys) => 3\n    """\n',
        "def check(candidate):\n    assert candidate([1, 2]) == 3\n",
        "    return sum(xs)\n",
    )
    assert [u.reason for u in read_examples(listy).unparsed] == ["the name ys"]
    # HumanEval/81 and 149: the function to write under another name, when no example calls
    # it by its own and the prompt does not define the other name.
    renamed = function_problem(
        "renamed",
        'def f(xs):\n    """Sort.\n    Example:\n    assert g([2, 1]) => [1, 2]\n    """\n',
        "def check(candidate):\n    assert candidate([2, 1]) == [1, 2]\n",
        "    return sorted(xs)\n",
    )
    assert function_case(renamed) == [(([2, 1],), [1, 2])]
    assert read_problem(renamed).notes == [
        "the examples call g(), read as the entry point f() (no example calls it by its name)"
    ]
    helper = function_problem(
        "helper",
        'def g(xs):\n    return xs\n\n\ndef f(xs):\n    """Sort.\n    Example:\n'
        '    g([2, 1]) => [2, 1]\n    """\n',
        "def check(candidate):\n    assert candidate([2, 1]) == [1, 2]\n",
        "    return sorted(xs)\n",
    )
    assert function_case(helper) == []
    # HumanEval/115: `Input:` with every parameter named, one under another name, in order.
    fill = function_problem(
        "fill",
        'def f(grid, capacity):\n    """Fill.\n    Example 1:\n        Input: \n'
        "            grid : [[0,1], [1,1]]\n            bucket_capacity : 2\n"
        '        Output: 2\n    """\n',
        "def check(candidate):\n    assert candidate([[0, 1], [1, 1]], 2) == 2\n",
        "    return 2\n",
    )
    assert function_case(fill) == [(([[0, 1], [1, 1]], 2), 2)]
    # HumanEval/105 and 160: assignments of the arguments, then the result in the paragraph.
    algebra = function_problem(
        "algebra",
        'def f(operator, operand):\n    """Evaluate.\n\n    Example:\n'
        "    operator['+', '*']\n    array = [2, 3, 4]\n    result = 2 + 3 * 4\n"
        "    => result = 14\n\n"
        "      arr = [5]\n      return [5]\n\n"
        "    If the list is empty, return an empty list:\n"
        "    operator = []\n    operand = [1]\n    return = 1\n"
        "    operator = ['-']\n\n    Note: the answer is an int.\n"
        '    """\n',
        "def check(candidate):\n    assert candidate(['+', '*'], [2, 3, 4]) == 14\n"
        "    assert candidate([], [1]) == 1\n",
        "    return 14\n",
    )
    assert function_case(algebra) == [((["+", "*"], [2, 3, 4]), 14), (([], [1]), 1)]
    # HumanEval/158: a quote typed twice; MBPP/653: a printed defaultdict.
    quoted = function_problem(
        "quoted",
        'def f(words):\n    """Longest.\n    f(["aa", "b"]) == ""aa"\n    """\n',
        'def check(candidate):\n    assert candidate(["aa", "b"]) == "aa"\n',
        "    return max(words, key=len)\n",
    )
    assert function_case(quoted) == [((["aa", "b"],), "aa")]
    grouped = function_problem(
        "grouped",
        'def f(pairs):\n    """Group.\n    >>> f([("a", 1)])\n'
        "    defaultdict(<class 'list'>, {'a': [1]})\n    \"\"\"\n",
        "def check(candidate):\n    assert candidate([('a', 1)]) == {'a': [1]}\n",
        "    return {'a': [1]}\n",
    )
    assert function_case(grouped) == [(([("a", 1)],), {"a": [1]})]


def test_humaneval_counts_every_test_its_prompts_show():
    """The figures docs/results.md states, checked by hand: 343 of HumanEval's 1,124 parsed
    hidden tests are shown in 129 problems; the nine problems an independent count found
    missing (issue 44) show these tests."""
    problems = load_benchmark("humaneval").problems
    audits = {p.task_id: read_problem(p) for p in problems}
    assert sum(len(a.hidden) for a in audits.values()) == 1124
    assert sum(len(a.shown) for a in audits.values()) == 343
    assert sum(bool(a.shown) for a in audits.values()) == 129
    shown = {
        int(task.split("/")[1]): [a.hidden[i].source for i in a.shown] for task, a in audits.items()
    }
    assert shown[33] == ["tuple(candidate([5, 6, 3, 4, 8, 9, 2])) == tuple([2, 6, 3, 4, 8, 9, 5])"]
    assert shown[37] == ["tuple(candidate([1, 2, 3])) == tuple([1, 2, 3])"]
    assert len(shown[80]) == 6 and len(shown[105]) == 3 and len(shown[115]) == 3
    assert shown[81] == ["candidate([4.0, 3, 1.7, 2, 3.5]) == ['A+', 'B', 'C-', 'C', 'A-']"]
    assert shown[149] == ["candidate(['aa', 'a', 'aaa']) == ['aa']"]
    assert "candidate(['aaaaaaa', 'bb', 'cc']) == 'aaaaaaa'" in shown[158]
    assert shown[160] == ["candidate(['+', '*', '-'], [2, 3, 4, 5]) == 9"]
    # What stays unparsed, each with its reason: loops over random inputs, a variable, and
    # HumanEval/33's comparisons of the candidate with itself.
    unparsed = {t: [u.reason for u in a.hidden_unparsed] for t, a in audits.items()}
    assert sum(len(r) for r in unparsed.values()) == 9
    assert len([r for r in unparsed["HumanEval/33"] if "another call" in r]) == 3
    assert unparsed["HumanEval/50"] == ["a call of copy.deepcopy()"]  # was "Call"


def test_humanevalplus_tests_are_read_from_their_packed_data():
    prompt = (
        'def f(xs):\n    """Sum.\n    >>> f([1, 2])\n    3\n    >>> f((4, 5))\n    9.0\n    """\n'
    )
    record = {
        "task_id": "Toy/plus",
        "prompt": prompt,
        "entry_point": "f",
        "canonical_solution": "    return sum(xs)\n",
        "base_input": [[[1, 2]], [[4, 5]]],
        "plus_input": [[[7]], [[1.5, 1.5]]],
        "atol": 0,
    }
    job = hep._job(record)
    test = hep.build_test(record, [hep.encode_expected(v, job) for v in (3, 9, 7, 3.0)])
    problem = function_problem("plus", prompt, test, "    return sum(xs)\n")
    hidden = read_hidden(problem)
    assert [c.args for c in hidden.cases] == [([1, 2],), ([4, 5],), ([7],), ([1.5, 1.5],)]
    assert {c.judge.describe() for c in hidden.cases} == {"evalplus (atol 0)"}
    (audit,), _ = audit_problems([problem], EXECUTION)
    # The tuple (4, 5) in the prompt is evalplus's JSON list [4, 5]; 9.0 == 9 passes `==`.
    assert audit.shown == [0, 1] and audit.memoriser_passed == 2 and audit.leak_share == 0.5


def test_a_contest_problem_compares_token_sequences_with_its_judge():
    statement = (
        '"""\nPrint half of n.\n\nInput\n\nOne integer n.\n\nOutput\n\nOne number.\n\n'
        "Examples\n\nInput\n\n3\n\n\nOutput\n\n1.5000001\n\n\nInput\n\n8  \n\n\nOutput\n\n4\n\n"
        "Input\n\n5\n\n\nOutput\n\n2.6\n"
        '"""\n'
    )
    problem = split_blocks(
        Problem(
            task_id="Toy/half",
            benchmark="toy",
            prompt=statement,
            entry_point=None,
            stdio_tests=(
                StdioTest("3\n", "1.5\n", "public"),
                StdioTest("8\n", "4\n", "public"),
                StdioTest("100\n", "50\n", "private"),
                StdioTest("5\n", "2.5\n", "generated"),
            ),
            canonical_solution="n = int(input())\nprint(n // 2 if n % 2 == 0 else n / 2)\n",
            metadata={"output_judge": OutputJudge(float_tolerance=1e-6).to_json()},
        )
    )
    (audit,), _ = audit_problems([problem], EXECUTION)
    assert len(audit.examples) == 3 and len(audit.hidden) == 4
    # 1.5000001 is within 1e-6 (relative) of 1.5; "8  " and "8" are the same tokens.
    assert audit.shown == [0, 1]
    assert audit.splits() == {"public": [2, 2], "private": [0, 1], "generated": [0, 1]}
    assert audit.memoriser_passed == 2 and audit.leak_share == 0.5
    # 2.6 is not 2.5: it contradicts the generated test and the solution (a data bug).
    assert len(audit.contradictions) == 1
    assert [d["stated"] for d in audit.disagreements] == ["'2.6\\n'"]
    assert audit.data_bug


def test_signature_places_named_arguments_and_fills_defaults():
    problem = function_problem("sig", 'def f(a, b=3, *, c=1):\n    """Doc.\n    """\n', "", "")
    signature = Signature.of(problem)
    assert signature.params == ("a", "b") and signature.defaults == {"b": 3}
    assert signature.complete([1]) == (1, 3)
    assert signature.complete([], {"b": 4, "a": 2}) == (2, 4)
    with pytest.raises(NotLiteral):
        signature.complete([1], {"a": 2})


def test_problem_row_is_data(tmp_path):
    audit = read_problem(ADD)
    row = ProblemLeaks.to_json(audit)
    assert json.loads(json.dumps(row))["shown_and_hidden"] == 2
    assert row["leak_share"] is None  # the memoriser has not run


def test_the_section_stands_beside_a_reference_run(tmp_path, monkeypatch, capsys):
    import perturb.keywords as keywords
    from tests.keyword_helpers import tiny_embedder

    monkeypatch.setattr(keywords, "sentence_transformer_embedder", lambda *a, **k: tiny_embedder())
    config = {
        "out_dir": str(tmp_path / "run"),
        "models": [{"kind": "reference"}],
        "settings": [{"label": "reference", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
        "seeds": [0],
        "name_only_probe": False,
        "bootstrap": 50,
        "transforms": ["original", "drop_examples"],
        "execution": {"calibrate": False, "workers": 2},
        "datasets": [
            {"name": "humaneval", "task_ids": ["HumanEval/2", "HumanEval/47", "HumanEval/53"]}
        ],
    }
    path = tmp_path / "reference.yaml"
    path.write_text(json.dumps(config))
    assert main(["run", "--config", str(path)]) == 0
    capsys.readouterr()
    run_dir = tmp_path / "run"
    assert main(["analyze", "leaks", str(run_dir)]) == 0
    printed = capsys.readouterr().out
    assert "humaneval: 3 problems" in printed
    html = (run_dir / "report" / "report.html").read_text()
    assert "Leak audit: hidden tests in the prompt" in html
    assert "Drop Ex effect against the leak share" in html
    assert "data:image/png;base64," in html
    # HumanEval/47's docstring says median([-10, 4, 6, 1000, 10, 20]) is 15.0; it is 8.0.
    assert "median([-10, 4, 6, 1000, 10, 20]) -&gt; 15.0" in html
    summary = json.loads((run_dir / "analysis" / "leaks" / "summary.json").read_text())
    (member,) = summary["drop_examples"]
    assert member["member"] == "reference" and member["problems"] == 3
    # The reference backend passes every variant: no effect, so r is undefined, not zero.
    assert member["r"] is None
    assert {p["drop_examples_effect"] for p in member["points"]} == {0.0}
    rows = [json.loads(line) for line in (run_dir / "analysis" / "leaks" / "leaks.jsonl").open()]
    assert [r["task_id"] for r in rows] == ["HumanEval/2", "HumanEval/47", "HumanEval/53"]
    assert all(r["memoriser_status"] == "completed" for r in rows)


def completions_run(tmp_path, monkeypatch, capsys):
    """A `boi run --completions` directory over HumanEval/0-2 (originals and Drop Ex), judged
    on the canonical solutions: its model's folder is `completions-canonical.jsonl`."""
    import perturb.keywords as keywords
    from tests.keyword_helpers import tiny_embedder

    monkeypatch.setattr(keywords, "sentence_transformer_embedder", lambda *a, **k: tiny_embedder())
    tasks = [p for p in load_benchmark("humaneval").problems if p.task_id in TASKS]
    completions = tmp_path / "canonical.jsonl"
    completions.write_text(
        "".join(
            json.dumps({"task_id": p.task_id + suffix, "completion": p.canonical_solution}) + "\n"
            for p in tasks
            for suffix in ("", "::drop_examples")
        )
    )
    config = {
        "models": [{"kind": "reference"}],
        "settings": [{"label": "greedy", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
        "seeds": [0],
        "name_only_probe": False,
        "bootstrap": 20,
        "transforms": ["original", "drop_examples"],
        "execution": {"calibrate": False, "workers": 2},
        "datasets": [{"name": "humaneval", "task_ids": list(TASKS)}],
    }
    path = tmp_path / "completions.yaml"
    path.write_text(json.dumps(config))
    run_dir = tmp_path / "run"
    argv = ["run", "--config", str(path), "--completions", str(completions), "--out", str(run_dir)]
    assert main(argv) == 0
    assert (run_dir / "results" / "completions-canonical.jsonl").is_dir()
    capsys.readouterr()
    return run_dir


TASKS = ("HumanEval/0", "HumanEval/2", "HumanEval/53")


def test_a_completions_run_and_one_without_its_tests_are_audited(tmp_path, monkeypatch, capsys):
    import shutil

    run_dir = completions_run(tmp_path, monkeypatch, capsys)
    # A model folder named like a JSONL file is no results file (it was read as one).
    assert main(["analyze", "leaks", str(run_dir)]) == 0
    printed = capsys.readouterr().out
    full = [json.loads(line) for line in (run_dir / "analysis/leaks/leaks.jsonl").open()]
    assert [r["hidden"] for r in full] == [7, 3, 5]
    assert "humaneval: 3 problems" in printed
    # The committed results run keeps its problems without tests: they are reloaded from the
    # dataset by task id (same prompt), and the audit says so, instead of 0 hidden tests.
    slim = tmp_path / "slim"
    shutil.copytree(run_dir, slim)
    shutil.rmtree(slim / "analysis")
    rows = [json.loads(line) for line in (slim / "problems.jsonl").open()]
    (slim / "problems.jsonl").write_text(
        "".join(json.dumps({**r, "test": ""}) + "\n" for r in rows)
    )
    assert main(["analyze", "leaks", str(slim)]) == 0
    assert "keeps no hidden tests for 3 problems: reloaded" in capsys.readouterr().out
    again = [json.loads(line) for line in (slim / "analysis/leaks/leaks.jsonl").open()]
    assert [r["hidden"] for r in again] == [7, 3, 5]
    assert [r["shown_and_hidden"] for r in again] == [r["shown_and_hidden"] for r in full]
    assert all("reloaded from the dataset humaneval" in r["notes"][-1] for r in again)
    summary = json.loads((slim / "analysis/leaks/summary.json").read_text())
    assert summary["drop_examples"][0]["problems"] == 3
    # A prompt that is no longer the dataset's: its tests are not the run's, so it is refused.
    rows[0]["prompt"] = rows[0]["prompt"].replace("Check if", "Check whether")
    (slim / "problems.jsonl").write_text(
        "".join(json.dumps({**r, "test": ""}) + "\n" for r in rows)
    )
    assert main(["analyze", "leaks", str(slim)]) == 2
    error = capsys.readouterr().err
    assert "HumanEval/0 has another prompt there" in error and "Traceback" not in error


def test_the_default_output_folder_is_never_a_users(tmp_path, monkeypatch, capsys):
    path = tmp_path / "toy.jsonl"
    path.write_text(json.dumps(ADD.to_json()) + "\n")
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "leaks-toy"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert main(["analyze", "leaks", "--dataset", str(path)]) == 2
    error = capsys.readouterr().err
    assert "leaks-toy, where --dataset" in error and "pass --out" in error
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    # A new folder, then the same one again (it is the audit's own now).
    (mine / "notes.txt").unlink()
    assert main(["analyze", "leaks", "--dataset", str(path)]) == 0
    assert main(["analyze", "leaks", "--dataset", str(path)]) == 0
    assert (mine / "leaks.jsonl").is_file()


def test_one_of_run_dir_or_dataset(tmp_path, capsys):
    assert main(["analyze", "leaks"]) == 2
    assert "either RUN_DIR or --dataset" in capsys.readouterr().err


def test_a_dataset_without_a_run(tmp_path, capsys):
    path = tmp_path / "toy.jsonl"
    path.write_text(json.dumps(ADD.to_json()) + "\n")
    out = tmp_path / "out"
    assert main(["analyze", "leaks", "--dataset", str(path), "--out", str(out)]) == 0
    assert "1 data bugs" in capsys.readouterr().out
    row = json.loads((out / "leaks.jsonl").read_text())
    assert (row["shown_and_hidden"], row["memoriser_passed"], row["leak_share"]) == (2, 2, 0.5)
    assert (out / "leaks.csv").read_text().splitlines()[0].startswith("dataset,task_id,examples,")
    assert "Leak audit" in (out / "leaks.html").read_text()


def test_pearson_interval_holds_r_and_is_undefined_for_a_constant_side():
    import math

    from benchmarks.stats import pearson, pearson_interval

    xs = [0.0, 0.1, 0.2, 0.5, 0.6, 0.9, 1.0, 0.3]
    ys = [1.0, 3.0, 2.0, 6.0, 5.0, 9.0, 8.0, 2.5]
    r, _ = pearson(xs, ys)
    low, high = pearson_interval(xs, ys, 200, 0.95, 0)
    assert r is not None and low <= r <= high <= 1.0
    assert pearson_interval(xs, ys, 200, 0.95, 0) == (low, high)  # seeded
    assert all(math.isnan(v) for v in pearson_interval(xs, [0.0] * len(xs), 200, 0.95, 0))
