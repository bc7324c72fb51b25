"""Table 4: its layout, its numbers read from the run's Table 3, and `boi finetune compare`
end to end with a different backend in each role (local folder, reference, HTTP server)."""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer

import pytest

from benchmarks.common.errors import UserError
from boi.compare import format_table4, table4_scores
from tests.http_fakes import JsonHandler


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


def test_scores_read_from_the_table3_json_per_dataset_and_setting():
    column = {"dataset": "humaneval", "setting": "T=0.2", "k": 1}
    table = {
        "columns": [
            {**column, "model": "hf-before"},
            {**column, "model": "hf-NA"},
            {**column, "model": "hf-A"},
            {**column, "model": "hf-A", "k": 2},
            {**column, "model": "hf-A", "setting": "T=0.8"},
            {**column, "model": "hf-A", "dataset": "mbpp"},
            {**column, "model": "hf-other"},
        ],
        "rows": [
            {
                "label": "Original",
                "cells": [{"pass_at_k": 0.25}, {"pass_at_k": 0.5}, {"pass_at_k": 0.75}]
                + [{"pass_at_k": 0.9}] * 4,
            },
            {
                "label": "Anon",
                "cells": [None, {"pass_at_k": None}, {"pass_at_k": 0.5}] + [None] * 4,
            },
        ],
    }
    roles = {"hf-before": "before", "hf-NA": "NA", "hf-A": "A"}
    scores = table4_scores(table, roles, "humaneval", "T=0.2")
    assert scores == {
        "before": {"Original": {1: 0.25}},
        "NA": {"Original": {1: 0.5}},
        "A": {"Original": {1: 0.75, 2: 0.9}, "Anon": {1: 0.5}},
    }


class _FixedCompletionServer(ThreadingHTTPServer):
    """An OpenAI-compatible server whose every completion is `    return None`."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _FixedCompletionHandler)


class _FixedCompletionHandler(JsonHandler):
    def do_POST(self):
        body = self.read_json()
        choices = [{"index": i, "text": "    return None\n"} for i in range(body.get("n", 1))]
        self.send_json(200, {"choices": choices})


def test_compare_takes_any_backend_in_each_role(tmp_path, monkeypatch):
    """before = a local folder, NA = the reference backend, A = an OpenAI-compatible server;
    Table 4 holds the run's own Table 3 numbers for each role."""
    import perturb.keywords as keywords
    from boi.cli import main
    from tests.generation_helpers import tiny_generator
    from tests.keyword_helpers import tiny_embedder

    monkeypatch.setattr(keywords, "sentence_transformer_embedder", lambda *a, **k: tiny_embedder())
    monkeypatch.setenv("BOI_TEST_KEY", "sk-test")
    model, tokenizer = tiny_generator()
    folder = tmp_path / "checkpoint"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    config = {
        "datasets": [{"name": "humaneval", "task_ids": ["HumanEval/23", "HumanEval/53"]}],
        "settings": [
            {
                "label": "greedy",
                "ks": [1],
                "decoding": {"temperature": 0, "n": 1, "max_new_tokens": 8},
            }
        ],
        "transforms": ["original", "anonymize", "drop_examples"],
        "seeds": [0],
        "bootstrap": 20,
        "name_only_probe": False,
    }
    config_path = tmp_path / "compare.yaml"
    config_path.write_text(json.dumps(config))
    httpd = _FixedCompletionServer()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        served = (
            "{kind: openai, model: served, api_key_env: BOI_TEST_KEY, "
            f"base_url: 'http://127.0.0.1:{httpd.server_port}/v1'}}"
        )
        out = tmp_path / "cmp"
        argv = ["finetune", "compare", "--before", str(folder), "--na", "reference"]
        argv += ["--a", served, "--config", str(config_path), "--out", str(out)]
        assert main(argv) == 0
    finally:
        httpd.shutdown()
        httpd.server_close()
    record = json.loads((out / "table4.json").read_text())
    assert record["roles"] == {"before": "hf-before", "NA": "reference", "A": "openai-served"}
    assert (out / "models" / "before").resolve() == folder.resolve()
    (section,) = record["tables"]
    scores = {
        role: {row: v["1"] for row, v in by_row.items()}
        for role, by_row in section["scores"].items()
    }
    assert scores["NA"] == {"Original": 1.0, "Anon": 1.0, "Drop Ex": 1.0}
    assert scores["A"] == {"Original": 0.0, "Anon": 0.0, "Drop Ex": 0.0}
    table3 = json.loads((out / "run" / "report" / "table.json").read_text())
    index = next(i for i, c in enumerate(table3["columns"]) if c["model"] == "hf-before")
    assert scores["before"] == {r["label"]: r["cells"][index]["pass_at_k"] for r in table3["rows"]}
    table4 = (out / "table4.md").read_text()
    assert "### humaneval / greedy" in table4
    assert "| Original | 0.0 | 100.0 / 0.0 |" in table4 or "| Original |" in table4


def test_compare_refuses_a_bad_backend_mapping(tmp_path, capsys):
    from boi.cli import main

    code = main(
        ["finetune", "compare", "--na", "{kind: nope}", "--a", "reference", "--out", str(tmp_path)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--na" in err and "nope" in err and "Traceback" not in err


def test_compare_refuses_a_folder_without_config(tmp_path, capsys):
    from boi.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(
        [
            "finetune",
            "compare",
            "--na",
            str(empty),
            "--a",
            "reference",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    assert "has no config.json" in capsys.readouterr().err
