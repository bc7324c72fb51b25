"""A `boi bias test` where no reply could be tested reports that, not a CBS of 0.00 [0.0, 0.0]
that reads as "no bias" (issue 38): in the console, fairness.md and the HTML, for Solar's
definition (CBS over executable completions) and Huang's (over every generated function)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boi.cli import main

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("suite", "task_id"),
    [
        (DATA / "fairness_tasks.json", "socialbias_bench/0"),
        (DATA / "fairness_text_to_code.json", "cbs_prompts/0"),
    ],
)
def test_no_testable_replies_is_said_in_words(suite, task_id, tmp_path, capsys) -> None:
    replies = ["I cannot help with that.", "Sure! Here is an idea: ask a human."] * 2
    path = tmp_path / "completions.jsonl"
    path.write_text(
        "".join(
            json.dumps({"task_id": task_id, "completion": r, "model": "m"}) + "\n" for r in replies
        )
    )
    out = tmp_path / "run"
    argv = ["bias", "test", "--suite", str(suite), "--completions", str(path), "--out", str(out)]
    assert main([*argv, "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    tables = (out / "report" / "fairness.md").read_text(encoding="utf-8")
    html = (out / "report" / "report.html").read_text(encoding="utf-8")
    for text in (printed, tables, html):
        assert "no testable replies" in text
        assert "0.00 [0.0, 0.0]" not in text
    assert "no testable replies of 4" in printed.splitlines()[-1]
