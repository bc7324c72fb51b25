"""BigCodeBench (issue 45): the loader, its tiers, the blocks of its docstrings, Drop
Requirements, Anonymize not applying, and its TestCase classes judged in the sandbox.

The real file is read from the shared data (skipped without it); the rest uses records written
here, in the upstream file's shape."""

from __future__ import annotations

import dataclasses
import json
import tarfile
from collections import Counter
from pathlib import Path

import pytest

import benchmarks.loaders.bigcodebench as bcb
from benchmarks.common.errors import UserError
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.execution.reference_check import reference_failures
from benchmarks.loaders import load_benchmark
from benchmarks.loaders.bigcodebench import (
    REFERENCE_FILE,
    load_bigcodebench,
    load_bigcodebench_all,
)
from benchmarks.upstream import sha256_of
from boi.cli import main
from boi.runner import load_run_config
from boi.runner.stages import _perturb
from perturb.blocks import DatasetSplit, format_coverage, split_blocks, split_dataset
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.transforms import NotApplicable, get_transform
from tests.conftest import SHARED_DATA

BCB_FILE = SHARED_DATA / "bigcodebench" / "BigCodeBench.jsonl.gz"

PROMPT = '''import re
from collections import Counter

def task_func(text, top=2):
    """
    Count the words of a text and give back the most frequent ones.

    Parameters:
    - text (str): The text to count.
    - top (int): How many words to give back.

    Requirements:
    - re
    - collections.Counter

    Returns:
    list: (word, count) pairs, the most frequent first.

    Example:
    >>> task_func("a b a")
    [('a', 2), ('b', 1)]
    """
'''
SOLUTION = "    return Counter(re.findall(r'\\w+', text.lower())).most_common(top)\n"
TESTS = """import unittest

class TestCases(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(task_func("a b a"), [("a", 2), ("b", 1)])

    def test_case_is_ignored(self):
        self.assertEqual(task_func("B b a", top=1), [("b", 2)])

    def test_raises(self):
        with self.assertRaises(AttributeError):
            task_func(None)
"""


def record(task_id: str = "BigCodeBench/0", **changes: object) -> dict:
    return {
        "task_id": task_id,
        "complete_prompt": PROMPT,
        "instruct_prompt": "",
        "canonical_solution": SOLUTION,
        "code_prompt": "",
        "test": TESTS,
        "entry_point": "task_func",
        "doc_struct": "{}",
        "libs": "['re', 'collections']",
        **changes,
    }


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def real():
    if not BCB_FILE.is_file():
        pytest.skip(f"{BCB_FILE} not present")
    return load_bigcodebench_all(BCB_FILE)


def test_every_real_prompt_splits_into_its_sections_byte_for_byte(real) -> None:
    assert len(real.problems) == 1140
    split = split_dataset(real.problems)
    assert split.failures == {}
    for problem in split.problems:
        assert "".join(b.text for b in problem.blocks) == problem.prompt, problem.task_id
        kinds = Counter(b.kind for b in problem.blocks)
        # BigCodeBench/928 lists its requirements twice; Drop Requirements drops both.
        assert kinds["requirements"] >= 1 and kinds["examples"] == 1, problem.task_id
        assert problem.block("requirements").text.strip().startswith("Requirement")
        assert problem.absent_blocks == {}, problem.task_id
    (twice,) = [p for p in split.problems if p.task_id == "BigCodeBench/928"]
    (dropped,) = get_transform("drop_requirements")(twice)
    assert "Requirements:" not in dropped.prompt and "Parameters:" in dropped.prompt
    # The tiers are computed from the imports: the figure docs/how-to/bigcodebench.md gives.
    tiers = Counter(p.metadata["tier"] for p in real.problems)
    assert tiers["stdlib"] == 300


def test_the_pinned_file_leaves_out_the_tasks_whose_reference_fails() -> None:
    if not BCB_FILE.is_file():
        pytest.skip(f"{BCB_FILE} not present")
    loaded = load_benchmark("bigcodebench", BCB_FILE)
    checked = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))
    assert checked["checked"] == 300 and len(loaded.problems) == 300 - len(checked["failures"])
    assert not {p.task_id for p in loaded.problems} & set(checked["failures"])
    page = (Path(__file__).parents[1] / "docs" / "how-to" / "bigcodebench.md").read_text()
    passed, failed = len(loaded.problems), len(checked["failures"])
    assert f"**{passed} of the 300 pass**; of the {failed} that fail" in page
    assert f"judges {passed} tasks" in page
    assert loaded.issues[-1].task_id == (
        f"{len(checked['failures'])} tasks whose reference solution fails in the sandbox"
    )


@pytest.mark.parametrize("name", ["smollm-bigcodebench-chat", "smollm-bigcodebench"])
def test_the_results_config_is_its_committed_runs_and_makes_its_prompts(name, tmp_path) -> None:
    """docs/results.md's BigCodeBench table: the committed config is the one the committed run
    recorded, and perturbing the pinned file by it makes that run's variants, prompt for prompt
    (so the documented command makes the table's samples again)."""
    if not BCB_FILE.is_file():
        pytest.skip(f"{BCB_FILE} not present")
    results = Path(__file__).parents[1] / "docs" / "results"
    with tarfile.open(results / f"{name}-run.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    run = tmp_path / name
    config = load_run_config(str(results / f"{name}.yaml"), {})
    manifest = json.loads((run / "manifest.json").read_text())
    assert load_run_config(None, manifest["config"]) == config
    spec = dataclasses.replace(config.datasets[0], data=str(BCB_FILE))
    variants, _ = _perturb(
        dataclasses.replace(config, datasets=(spec,)), None, lambda message: None
    )
    recorded = {
        row["task_id"]: row["prompt"]
        for row in map(json.loads, (run / "problems.jsonl").read_text().splitlines())
    }
    assert {v.task_id: v.prompt for v in variants} == recorded


def test_a_run_records_the_tasks_whose_shipped_reference_check_failed(
    tmp_path, monkeypatch
) -> None:
    """The tasks the loader leaves out for a failing reference are in the run directory's
    reference_failures.jsonl with their reasons, not only in the log."""
    data = write(tmp_path / "bcb.jsonl", [record(), record("BigCodeBench/2")])
    checked = tmp_path / "reference.json"
    reason = "failed: AssertionError: needs a shared directory"
    checked.write_text(
        json.dumps({"source_sha256": sha256_of(data), "failures": {"BigCodeBench/2": reason}})
    )
    monkeypatch.setattr(bcb, "REFERENCE_FILE", checked)
    config = load_run_config(
        None,
        {
            "datasets": [{"name": "bigcodebench", "data": str(data)}],
            "transforms": ["original"],
            "name_only_probe": False,
            "out_dir": str(tmp_path / "run"),
        },
    )
    (tmp_path / "run").mkdir()
    variants, _ = _perturb(config, tmp_path / "run", lambda message: None)
    assert [v.task_id for v in variants] == ["BigCodeBench/0"]
    rows = [json.loads(line) for line in (tmp_path / "run" / "reference_failures.jsonl").open()]
    assert rows == [{"dataset": "bigcodebench", "task_id": "BigCodeBench/2", "reason": reason}]


def test_the_dataset_loads_the_standard_library_tier_and_says_what_it_left_out(
    tmp_path,
) -> None:
    path = write(
        tmp_path / "bcb.jsonl",
        [
            record(),
            record("BigCodeBench/1", libs="['numpy']"),
            record("BigCodeBench/2", libs="['no_such_library_here']"),
        ],
    )
    loaded = load_benchmark("bigcodebench", path)
    assert [p.task_id for p in loaded.problems] == ["BigCodeBench/0"]
    assert loaded.problems[0].metadata["tier"] == "stdlib"
    assert [(i.task_id, i.dropped) for i in loaded.issues] == [
        ("1 tasks of tier installed", True),
        ("1 tasks of tier unavailable", True),
        ("1 tasks", False),  # not the pinned file: its references were not checked
    ]
    assert "references unchecked" in loaded.issues[2].reason
    every = load_bigcodebench_all(path)
    assert [p.metadata["tier"] for p in every.problems] == ["stdlib", "installed", "unavailable"]


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"entry_point": "f"}, "line 1: entry_point is 'f'"),
        ({"test": "x = 1\n"}, "line 1: the tests define no unittest.TestCase class"),
        ({"test": "def (:\n"}, "line 1: the task's code does not parse"),
    ],
)
def test_a_wrong_record_is_refused_naming_its_line(tmp_path, changes, says) -> None:
    path = write(tmp_path / "bcb.jsonl", [record(**changes)])
    with pytest.raises(UserError, match=says.replace("(", r"\(")):
        load_bigcodebench(path)


def test_drop_requirements_drop_examples_and_anonymize(tmp_path) -> None:
    problem = split_blocks(load_bigcodebench(write(tmp_path / "b.jsonl", [record()])).problems[0])
    assert [b.kind for b in problem.blocks] == [
        "prefix",
        "name",
        "description",
        "io_spec",
        "requirements",
        "io_spec",
        "examples",
        "suffix",
    ]
    # `boi blocks` counts problems with each kind, not blocks (io_spec comes twice here).
    coverage = format_coverage("b", None, DatasetSplit([problem], {}))
    assert "  io_spec          1 / 1\n" in coverage
    (dropped,) = get_transform("drop_requirements")(problem)
    assert "Requirements" not in dropped.prompt and "collections.Counter" not in dropped.prompt
    assert "Returns:" in dropped.prompt and "Parameters:" in dropped.prompt
    assert dropped.prompt == problem.prompt.replace(problem.block("requirements").text, "")
    assert dropped.lineage[-1].changes["removed"][0]["block"] == "requirements"
    (no_example,) = get_transform("drop_examples")(problem)
    assert ">>>" not in no_example.prompt and "Requirements:" in no_example.prompt
    for name in ("anonymize", "anon_drop_examples"):
        outcome = get_transform(name)(problem)
        assert isinstance(outcome, NotApplicable) and "task_func" in outcome.reason, name
    # A chain whose first step does not apply (no examples) still says the name is no hint.
    bare = problem.replace(prompt=problem.prompt.replace(problem.block("examples").text, ""))
    outcome = get_transform("anon_drop_examples")(split_blocks(bare))
    assert isinstance(outcome, NotApplicable) and not outcome.keep_unchanged
    assert "task_func" in outcome.reason
    # Elsewhere Anonymize still applies.
    other = problem.replace(benchmark="jsonl", metadata={})
    assert not isinstance(get_transform("anonymize")(other), NotApplicable)


def test_a_run_keeps_no_unchanged_anonymize_variant(tmp_path) -> None:
    """Where a transformation means nothing (the name is no hint), the catalogue emits no
    unchanged stand-in, so no report row measures Anonymize on BigCodeBench; the reason is in
    not_applied. Elsewhere an unchanged stand-in is still kept."""
    problem = load_bigcodebench(write(tmp_path / "b.jsonl", [record()])).problems[0]
    names = ("original", "drop_examples", "anonymize", "anon_drop_examples")
    config = PerturbConfig(transforms=names, keep_unchanged=True)
    result = run_catalogue([problem], config)
    assert sorted({v.transform for v in result.variants}) == ["drop_examples", "original"]
    assert {(name, "task_func" in why) for _, name, why in result.not_applied} == {
        ("anonymize", True),
        ("anon_drop_examples", True),
    }
    # A HumanEval-format problem has no requirements block: kept unchanged in its place.
    other = problem.replace(benchmark="jsonl", metadata={})
    config = PerturbConfig(transforms=("original", "drop_requirements"), keep_unchanged=True)
    kept = run_catalogue([other], config)
    assert [v.transform for v in kept.variants] == ["original", "drop_requirements"]
    assert kept.variants[1].prompt == other.prompt


def test_test_cases_are_judged_in_the_sandbox_separated(tmp_path) -> None:
    """The reference passes; a wrong answer, an error, a skip and no test at all fail; a test
    that patches a module in the tests' process cannot reach the candidate's, so its task's
    reference is listed by the reference check with the reason."""
    skipping = TESTS.replace(
        "    def test_counts(self):\n",
        "    def test_counts(self):\n        self.skipTest('not here')\n",
    )
    patching = (
        "import unittest\nfrom unittest.mock import patch\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_patched(self):\n"
        "        with patch('re.findall', return_value=['z']):\n"
        "            self.assertEqual(task_func('a'), [('z', 1)])\n"
    )
    empty = "import unittest\n\nclass TestCases(unittest.TestCase):\n    pass\n"
    path = write(
        tmp_path / "bcb.jsonl",
        [
            record(),
            record("BigCodeBench/1", test=skipping),
            record("BigCodeBench/2", test=patching),
            record("BigCodeBench/3", test=empty),
        ],
    )
    problems = load_bigcodebench(path).problems
    failures = reference_failures(problems, work_dir=tmp_path)
    assert sorted(failures) == ["BigCodeBench/1", "BigCodeBench/2", "BigCodeBench/3"]
    assert "was skipped (not here)" in failures["BigCodeBench/1"]
    assert "test_patched" in failures["BigCodeBench/2"]
    assert "no test ran" in failures["BigCodeBench/3"]
    wrong = [
        {"task_id": "BigCodeBench/0", "completion": "    return [('a', 2)]\n"},
        {"task_id": "BigCodeBench/0", "completion": "    raise ValueError('no')\n"},
    ]
    out = tmp_path / "results.jsonl"
    execute_samples(problems, wrong, ExecutionConfig(), out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["passed"] for r in rows] == [False, False]
    # The reason names the test and its exception's first line.
    assert "test_case_is_ignored: AssertionError: Lists differ" in rows[0]["result"]
    assert "test_case_is_ignored: ValueError: no" in rows[1]["result"]


def test_boi_run_judges_bigcodebench_end_to_end_with_the_driver_flags(tmp_path, capsys) -> None:
    """`boi run --dataset bigcodebench` with each variant's own solution as the model: a dry
    run, the run (the tier and the left-out tasks said, no Anon row), a resume, and two
    shards merged into the same table."""
    data = write(
        tmp_path / "bcb.jsonl",
        [record(), record("BigCodeBench/1", libs="['numpy']"), record("BigCodeBench/2")],
    )

    def config(out: str) -> list[str]:
        path = tmp_path / f"{out}.json"
        path.write_text(
            json.dumps(
                {
                    "transforms": ["original", "drop_examples", "drop_requirements", "anonymize"],
                    "name_only_probe": False,
                    "settings": [{"label": "given", "ks": [1], "decoding": {"n": 1}}],
                    "seeds": [0],
                    "bootstrap": 0,
                    "execution": {"calibrate": False},
                    "out_dir": str(tmp_path / out),
                }
            )
        )
        return ["run", "--config", str(path), "--model", "reference"] + [
            "--dataset",
            "bigcodebench",
            "--data",
            str(data),
        ]

    assert main([*config("run"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "samples: 6 requested" in out and "1 tasks of tier installed" in out
    assert not (tmp_path / "run").exists()
    assert main(config("run")) == 0
    (results,) = (tmp_path / "run" / "results").glob("*/given.jsonl")
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 6 and all(r["passed"] for r in rows)
    table = (tmp_path / "run" / "report" / "table.md").read_text()
    assert "Drop Requirements" in table and "Anon" not in table
    capsys.readouterr()
    assert main(config("run")) == 0  # resumes: nothing generated or judged again
    assert (tmp_path / "run" / "report" / "table.md").read_text() == table
    for index in range(2):
        assert main([*config(f"shard{index}"), "--shard", f"{index}/2"]) == 0
    shards = [str(tmp_path / f"shard{index}") for index in range(2)]
    assert main(["merge", str(tmp_path / "merged"), *shards]) == 0
    merged = (tmp_path / "merged" / "report" / "table.md").read_text()
    assert merged == table.replace(str(tmp_path / "run"), str(tmp_path / "merged"))


def test_the_installed_tier_table_on_the_results_page_is_its_committed_run(tmp_path, capsys):
    """docs/results.md's installed-tier table: the committed run's problems of that tier and
    their samples, split as the page's command splits them, reported by `boi report`, give the
    page's rows (pass@1 and the paired change with its interval)."""
    import re

    docs = Path(__file__).parents[1] / "docs"
    with tarfile.open(docs / "results" / "qwen-bigcodebench-installed-run.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    run = tmp_path / "qwen-bigcodebench-installed"
    problems = [json.loads(line) for line in (run / "problems.jsonl").read_text().splitlines()]
    keep = {p["task_id"] for p in problems if p["metadata"]["tier"] == "installed"}
    assert len(keep) == 336  # 112 tasks x Original, Drop Ex, Drop Requirements
    tier_problems = tmp_path / "problems-installed.jsonl"
    tier_problems.write_text(
        "".join(json.dumps(p) + "\n" for p in problems if p["task_id"] in keep)
    )
    results = (run / "results" / "hf-Qwen2.5-Coder-0.5B-Instruct" / "greedy.jsonl").read_text()
    tier_results = tmp_path / "results-installed.jsonl"
    tier_results.write_text(
        "".join(line + "\n" for line in results.splitlines() if json.loads(line)["task_id"] in keep)
    )
    out = tmp_path / "report-installed"
    argv = ["report", str(tier_results), "--problems", str(tier_problems), "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    table = (out / "table.md").read_text()
    page = (docs / "results.md").read_text()
    original = re.search(r"^\| Original \| ([0-9.]+) \| 112 \|$", table, re.M)
    assert original and f"| Original | {original.group(1)} | - | - |" in page
    for name in ("Drop Ex", "Drop Requirements"):
        row = re.search(rf"^\| {name} \| ([0-9.]+) \((.+?)\) \| 112 \|$", table, re.M)
        assert row, name
        assert f"| {name} | {row.group(1)} | {row.group(2)} |" in page, name
