import re

import pytest

from benchmarks.common.errors import UserError
from benchmarks.loaders import load_benchmark
from benchmarks.loaders.humaneval_x import load_humaneval_x
from tests.helpers import run_programs

EXAMPLE = re.compile(r"^    >>> (.*)\n    (.*)$", re.MULTILINE)


def test_humaneval_loads_164(humaneval):
    assert len(humaneval.problems) == 164
    assert all(
        p.benchmark == "humaneval" and p.entry_point and "def check" in p.test
        for p in humaneval.problems
    )


def test_mbpp_loads_all_974_and_reports_the_rest(mbpp):
    assert len(mbpp.problems) == 974
    assert len({p.task_id for p in mbpp.problems}) == 974
    without_examples = {p.task_id for p in mbpp.problems if ">>>" not in p.prompt}
    assert without_examples == {i.task_id for i in mbpp.issues}  # reported, never silent
    assert len(without_examples) <= 5


def test_mbpp_prompt_shape(mbpp):
    first = next(p for p in mbpp.problems if p.task_id == "MBPP/1")
    assert first.prompt.startswith(
        'def min_cost(cost, m, n):\n    """Write a function to find the minimum cost path'
    )
    assert first.prompt.count(">>> min_cost(") == 3
    assert first.test.startswith("def check(candidate):\n    assert candidate(")
    assert "min_cost" not in first.test


def test_mbpp_examples_are_the_reference_solutions_real_outputs(mbpp_path, mbpp):
    import json

    upstream = {
        f"MBPP/{r['task_id']}": r for r in map(json.loads, mbpp_path.read_text().splitlines())
    }
    jobs = []
    for problem in mbpp.problems:
        examples = EXAMPLE.findall(problem.prompt)
        if not examples:
            continue
        record = upstream[problem.task_id]
        jobs.append(
            {
                "id": problem.task_id,
                "program": record["code"] + "\n" + (record["test_setup_code"] or ""),
                "evals": [call for call, _ in examples],
                "shown": [out for _, out in examples],
            }
        )
    assert len(jobs) >= 970
    results = run_programs(jobs)
    mismatches = [
        j["id"]
        for j in jobs
        if not results[j["id"]]["ok"] or results[j["id"]]["evals"] != j["shown"]
    ]
    assert mismatches == []


@pytest.mark.parametrize("dataset", ["humaneval", "mbpp"])
def test_reference_solutions_pass_their_own_tests(dataset, humaneval, mbpp_path):
    loaded = humaneval if dataset == "humaneval" else load_benchmark("mbpp", mbpp_path)
    jobs = [{"id": p.task_id, "program": p.program(p.canonical_solution)} for p in loaded.problems]
    results = run_programs(jobs)
    failed = {k: v["error"] for k, v in results.items() if not v["ok"]}
    assert failed == {}


def test_code_contests_sample(code_contests):
    problems = code_contests.problems
    assert len(problems) == 30
    assert sum(len(p.stdio_tests) for p in problems) == 59
    assert all(p.is_stdio and p.entry_point is None for p in problems)
    assert all(t.split == "public" for p in problems for t in p.stdio_tests)
    assert all(p.prompt.startswith('"""\n') or p.prompt.startswith('r"""\n') for p in problems)


def test_code_contests_parquet_and_solutions(tmp_path, code_contests_path):
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in code_contests_path.read_text().splitlines()[:3]]
    rows[0]["solutions"] = {"language": [2, 3], "solution": ["// c++", "print(1)"]}
    rows[1]["solutions"] = {"language": [2], "solution": ["// c++"]}
    rows[2]["solutions"] = {"language": [], "solution": []}
    for row in rows:
        row["private_tests"] = {"input": ["9\n"], "output": ["9\n"]}
    path = tmp_path / "cc.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    loaded = load_benchmark("code_contests", path)
    # Data that names its solutions keeps only problems with a Python 3 one (the paper's rule).
    assert [p.canonical_solution for p in loaded.problems] == ["print(1)"]
    assert [t.split for t in loaded.problems[0].stdio_tests][-1] == "private"
    dropped = [(i.task_id, i.reason) for i in loaded.issues if i.dropped]
    assert dropped == [
        (f"CodeContests/{rows[1]['name']}", "no Python 3 solution"),
        (f"CodeContests/{rows[2]['name']}", "no Python 3 solution"),
    ]


def test_code_contests_without_python3_solutions_says_so(tmp_path, code_contests_path):
    import json

    row = json.loads(code_contests_path.read_text().splitlines()[0])
    row["solutions"] = {"language": [2], "solution": ["// c++"]}
    path = tmp_path / "cc.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(UserError, match="none of its 1 problems has a Python 3 solution"):
        load_benchmark("code_contests", path)


def test_code_contests_judging_read_from_the_statement(code_contests):
    by_name = {p.metadata["name"]: p for p in code_contests.problems}
    table = by_name["361_A. Levko and Table"]
    assert table.output_judge.several_answers == "Print any beautiful table"
    assert table.time_limit_seconds == 1.0
    assert by_name["263_B. Squares"].output_judge.several_answers
    assert by_name["1030_B. Vasya and Cornfield"].output_judge.case_insensitive
    assert not by_name["732_A. Buy a Shovel"].output_judge.case_insensitive
    assert by_name["596_B. Wilbur and Array"].time_limit_seconds == 2.0
    marked = sorted(
        p.metadata["name"] for p in code_contests.problems if p.output_judge.several_answers
    )
    assert marked == ["1526_A. Mean Inequality", "263_B. Squares", "361_A. Levko and Table"]
    reported = sorted(i.task_id for i in code_contests.issues if "several answers" in i.reason)
    assert reported == [f"CodeContests/{name}" for name in marked]


@pytest.mark.parametrize(
    ("statement", "tolerance"),
    [
        ("Your answer is correct if its absolute or relative error does not exceed 10^{-6}.", 1e-6),
        ("The relative error must not exceed 10^-9.", 1e-9),
        ("Print the answer.", 1e-6),
    ],
)
def test_code_contests_float_tolerance(statement, tolerance):
    from benchmarks.loaders.code_contests import output_judge

    assert output_judge(statement).float_tolerance == pytest.approx(tolerance)


def test_humaneval_format_jsonl(tmp_path, humaneval):
    from benchmarks.problem import write_problems

    path = tmp_path / "mine.jsonl"
    write_problems(path, humaneval.problems[:5])
    again = load_benchmark(str(path)).problems
    assert again == humaneval.problems[:5]


def _jsonl(path, records):
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# One record of each format the loaders check field by field (benchmarks.common.jsonl's
# require_strings and require_new_id): the loader, and a record it accepts.
_LOADER_RECORDS = {
    "humaneval-format": (
        lambda path: load_benchmark(str(path)),
        {"task_id": "T/0", "prompt": "def f():\n", "entry_point": "f", "test": "pass\n"},
    ),
    "humaneval_x": (
        lambda path: load_humaneval_x("cpp", path),
        {
            "task_id": "CPP/0",
            "prompt": "int f(int x){\n",
            "declaration": "int f(int x){\n",
            "canonical_solution": "return x;\n}\n",
            "test": "int main(){ f(1); }\n",
        },
    ),
}


@pytest.mark.parametrize("fmt", sorted(_LOADER_RECORDS))
def test_a_non_string_field_and_a_repeated_task_id_are_one_sentence(fmt, tmp_path):
    load, good = _LOADER_RECORDS[fmt]
    with pytest.raises(UserError, match=r"line 2: field 'prompt' must be a string, not int\.$"):
        load(_jsonl(tmp_path / "bad.jsonl", [good, {**good, "prompt": 3}]))
    with pytest.raises(
        UserError, match=rf"line 2: task_id {good['task_id']!r} already appeared on line 1; task"
    ):
        load(_jsonl(tmp_path / "twice.jsonl", [good, good]))
