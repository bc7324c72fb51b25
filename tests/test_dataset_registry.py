"""A dataset registered here joins `load_benchmark`, the `boi` commands and `boi run` with no
other edit; the loaders package has no import cycle."""

import json
import subprocess
import sys

import pytest

from benchmarks.common.errors import UserError
from benchmarks.loaders import DATASETS, LoadResult, dataset_help, load_benchmark
from benchmarks.problem import Problem
from boi.cli import main

# ReCode's datasets join DATASETS when perturb is imported, as every boi command imports it.
import perturb  # noqa: F401  isort: skip

PROMPT = (
    'def add_one(x: int) -> int:\n    """Return x plus one.\n    >>> add_one(1)\n    2\n    """\n'
)


def load_toy(data: str | None = None) -> LoadResult:
    """Two tiny problems (`data`: how many to load, for the test of --data)."""
    problems = [
        Problem(
            f"Toy/{i}",
            "toy",
            PROMPT,
            "add_one",
            test=f"def check(candidate):\n    assert candidate({i}) == {i + 1}\n",
            canonical_solution="    return x + 1\n",
        )
        for i in range(2)
    ]
    return LoadResult(problems[: int(data)] if data else problems)


@pytest.fixture
def toy():
    DATASETS.register("toy", f"{__name__}:load_toy")
    yield "toy"
    DATASETS.unregister("toy")


def test_dataset_help_names_the_builtin_datasets():
    # Which datasets are registered, in which order: tests/test_dataset_table.py (RUN_NAMES).
    assert dataset_help() == (
        "humaneval, humanevalplus, mbpp, code_contests, bigcodebench, livecodebench, "
        "humaneval_x_cpp, humaneval_x_java, humaneval_x_js, humaneval_x_go, "
        "recode_humaneval, recode_mbpp, or a HumanEval-format JSONL path"
    )


def test_load_benchmark_picks_it_up(toy):
    assert [p.task_id for p in load_benchmark("toy").problems] == ["Toy/0", "Toy/1"]
    assert len(load_benchmark("Toy", "1").problems) == 1  # names are case-insensitive
    assert "recode_mbpp, toy, or" in dataset_help()
    with pytest.raises(UserError, match="did you mean 'toy'"):
        load_benchmark("tyo")


def test_boi_blocks_picks_it_up(toy, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["blocks", "--help"])
    assert "toy" in capsys.readouterr().out
    out = tmp_path / "toy.jsonl"
    assert main(["blocks", "toy", "--data", "1", "--out", str(out)]) == 0
    assert "1 problems" in capsys.readouterr().out
    assert [json.loads(line)["task_id"] for line in out.read_text().splitlines()] == ["Toy/0"]


def test_boi_run_picks_it_up(toy, tmp_path):
    from boi.runner import run_robustness
    from tests.generation_helpers import tiny_run_config

    config = tiny_run_config(
        tmp_path,
        datasets=[{"name": "toy"}],
        transforms=["original", "anonymize", "drop_examples"],
    )
    outcome = run_robustness(config, log=lambda m: None)
    rows = [
        json.loads(line) for line in (outcome.out_dir / "problems.jsonl").read_text().splitlines()
    ]
    assert {(r["dataset"], r["source_task_id"]) for r in rows} == {
        ("toy", "Toy/0"),
        ("toy", "Toy/1"),
    }
    assert len(rows) == 6


def test_the_loaders_package_imports_without_a_cycle():
    """Each loader module imports first, on its own, in a fresh interpreter."""
    for module in ("humaneval", "mbpp", "code_contests", "recode", "result"):
        code = f"import benchmarks.loaders.{module}, benchmarks.loaders as l; l.load_benchmark"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_recode_datasets_are_registered_by_perturb_with_a_sentence_before():
    """ReCode's loaders live in perturb (their lineage names its transformations), so
    benchmarks.loaders does not register them itself (the direction: tests/test_architecture.py);
    `import perturb` does, and loading one before says so in one sentence."""
    code = (
        "from benchmarks.common.errors import UserError\n"
        "from benchmarks.loaders import DATASETS, dataset_help, load_benchmark\n"
        "assert 'recode_mbpp' not in DATASETS and 'recode_mbpp, or' in dataset_help()\n"
        "try:\n"
        "    load_benchmark('recode-mbpp')\n"
        "except UserError as err:\n"
        "    print(err)\n"
        "import perturb\n"
        "print(DATASETS.target('recode_mbpp') if hasattr(DATASETS, 'target') "
        "else DATASETS['recode_mbpp'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "dataset 'recode_mbpp' is loaded by perturb.recode.interop:load_recode_mbpp, which "
        "`import perturb` registers: import perturb before loading it (every boi command does).",
        "perturb.recode.interop:load_recode_mbpp",
    ]
