"""Table 4 layout; compare stops clearly while the experiment runner is missing."""

from __future__ import annotations

import importlib.util

import pytest

from benchmarks.errors import UserError
from finetune.compare import format_table4


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


@pytest.mark.skipif(importlib.util.find_spec("boi.runner") is not None, reason="runner present")
def test_compare_says_the_runner_is_missing(tmp_path, capsys):
    from boi.cli import main

    code = main(["finetune", "compare", "--na", "x", "--a", "y", "--out", str(tmp_path)])
    assert code == 2
    assert "needs the experiment runner" in capsys.readouterr().err
