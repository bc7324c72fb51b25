"""Every dataset in one table (`benchmarks.upstream.ALL_DATASETS`, issue 47): the loaders'
registry, `boi data fetch`'s list and the fairness suites are read from it, and a loader given no
path looks where `boi data fetch` put the file before anything else."""

from __future__ import annotations

import importlib
import shutil

import pytest

import benchmarks.loaders.mbpp as mbpp
from benchmarks.common.errors import UserError
from benchmarks.loaders import DATASETS, load_benchmark
from benchmarks.upstream import ALL_DATASETS, NAMES, UPSTREAM_DATA, loader_targets
from bias import FAIRNESS_SUITES
from bias.fairness_tests.tasks import SUITES, load_fairness_tasks
from boi.cli import main
from tests.conftest import SHARED_DATA

# ReCode's datasets join DATASETS when perturb is imported, as every boi command imports it.
import perturb  # noqa: F401  isort: skip

# The names users type today: the table must keep every one, in this order.
RUN_NAMES = [
    "humaneval",
    "humanevalplus",
    "mbpp",
    "code_contests",
    "bigcodebench",
    "livecodebench",
    "humaneval_x_cpp",
    "humaneval_x_java",
    "humaneval_x_js",
    "humaneval_x_go",
    "recode_humaneval",
    "recode_mbpp",
]
FETCH_NAMES = {
    "mbpp",
    "code_contests",
    "bigcodebench",
    "humaneval-x",
    "socialbias_bench",
    "cbs_prompts",
    "code_bias_classifier",
}


def test_the_other_lists_are_read_from_the_one_table() -> None:
    assert list(DATASETS) == RUN_NAMES
    assert list(DATASETS) == list(loader_targets("problems"))
    assert FAIRNESS_SUITES == ("socialbias_bench", "cbs_prompts") == tuple(SUITES)
    assert set(NAMES) == FETCH_NAMES == {d.name for d in UPSTREAM_DATA}
    names = [name for d in ALL_DATASETS for name, _ in d.loaders]
    assert len(names) == len(set(names))
    assert len(ALL_DATASETS) == len({d.name for d in ALL_DATASETS})


def test_every_loader_of_the_table_resolves() -> None:
    for entry in ALL_DATASETS:
        assert entry.loaders, entry.name
        for name, target in entry.loaders:
            module, _, attribute = target.partition(":")
            assert callable(getattr(importlib.import_module(module), attribute)), name


def test_data_list_shows_every_dataset_of_the_table(tmp_path, capsys) -> None:
    assert main(["data", "list", "--dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    for entry in ALL_DATASETS:
        for name, _ in entry.loaders if entry.origin != "fetched" else [(entry.name, "")]:
            assert name in printed, name


def _fetched_copy(tmp_path, name: str, file: str):
    source = SHARED_DATA / name / file
    if not source.is_file():
        pytest.skip(f"{source} not present")
    target = tmp_path / "data" / name / file
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    return target


def test_mbpp_reads_the_folder_data_fetch_fills(tmp_path, monkeypatch) -> None:
    folder = _fetched_copy(tmp_path, "mbpp", "mbpp.jsonl").parent
    monkeypatch.setattr(mbpp, "_download_mbpp", lambda: pytest.fail("went to the hub"))
    loaded = load_benchmark("mbpp", folder)
    assert len(loaded.problems) == 974
    with pytest.raises(UserError, match=r"give MBPP's mbpp\.jsonl or the folder with it"):
        load_benchmark("mbpp", tmp_path / "elsewhere")


def test_mbpp_offline_without_the_file_says_to_fetch_it(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BOI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError) as caught:
        load_benchmark("mbpp")
    message = str(caught.value)
    assert "run `boi data fetch mbpp`" in message and "\n" not in message


def test_a_fairness_suite_without_data_reads_where_data_fetch_put_it(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=r"run `boi data fetch socialbias_bench`"):
        load_fairness_tasks("socialbias_bench", None)
    _fetched_copy(tmp_path, "socialbias_bench", "tasks.json")
    tasks, _ = load_fairness_tasks("socialbias_bench", None)
    assert len(tasks) == 343 and {t.suite for t in tasks} == {"socialbias_bench"}
