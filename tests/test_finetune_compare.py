"""Table 4 layout; compare stops clearly while the experiment runner is missing."""

from __future__ import annotations

import pytest

from benchmarks.common.errors import UserError
from boi.compare import format_table4, table4_scores


def test_table4_layout_before_then_na_slash_a_per_k():
    scores = {
        "before": {"original": {1: 0.037, 100: 0.121}, "drop_one": {1: 0.031, 100: 0.103}},
        "NA": {"original": {1: 0.036, 100: 0.121}, "drop_one": {1: 0.031}},
        "A": {"original": {1: 0.036, 100: 0.121}, "drop_one": {1: 0.036, 100: 0.109}},
    }
    table = format_table4(scores, ["original", "drop_one"], [1, 100])
    lines = table.splitlines()
    assert (
        lines[0] == "| Method | pass@1 Before | pass@1 NA / A | pass@100 Before | pass@100 NA / A |"
    )
    assert lines[2] == "| original | 3.7 | 3.6 / 3.6 | 12.1 | 12.1 / 12.1 |"
    assert lines[3] == "| drop_one | 3.1 | 3.1 / 3.6 | 10.3 | - / 10.9 |"
    with pytest.raises(UserError, match="lack the model"):
        format_table4({"before": {}}, ["original"], [1])


def test_scores_from_runner_rows_pool_samples_per_task():
    rows = [
        {
            "model": "hf-before",
            "setting": "T=0.2",
            "transform": "original",
            "task_id": "t1",
            "passed": True,
        },
        {
            "model": "hf-before",
            "setting": "T=0.2",
            "transform": "original",
            "task_id": "t1",
            "passed": False,
        },
        {
            "model": "hf-before",
            "setting": "T=0.2",
            "transform": "original",
            "task_id": "t2",
            "passed": False,
        },
        {
            "model": "hf-before",
            "setting": "T=0.2",
            "transform": "original",
            "task_id": "t2",
            "passed": False,
        },
        {
            "model": "hf-NA",
            "setting": "T=0.2",
            "transform": "anonymize",
            "task_id": "t1",
            "passed": True,
        },
        {
            "model": "hf-A",
            "setting": "T=0.8",
            "transform": "anonymize",
            "task_id": "t1",
            "passed": True,
        },
        {
            "model": "hf-other",
            "setting": "T=0.2",
            "transform": "original",
            "task_id": "t1",
            "passed": True,
        },
    ]
    labels = {"hf-before": "before", "hf-NA": "NA", "hf-A": "A"}
    scores = table4_scores(rows, labels, [1, 2], "T=0.2")
    assert scores["before"]["original"] == {1: 0.25, 2: 0.5}
    assert scores["NA"]["anonymize"] == {1: 1.0}  # one sample: pass@2 undefined
    assert scores["A"] == {}


def test_compare_refuses_a_model_that_is_not_a_local_folder(tmp_path, capsys):
    from boi.cli import main

    code = main(["finetune", "compare", "--na", "gpt2", "--a", "gpt2", "--out", str(tmp_path)])
    assert code == 2
    assert "is not a local model folder" in capsys.readouterr().err
