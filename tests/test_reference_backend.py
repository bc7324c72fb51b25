"""`boi run --config reference`: every variant completed by its own canonical solution must pass,
on every row, for HumanEval, MBPP and CodeContests (the harness sanity check). The CodeContests
sample in ../shared carries no solutions, so its rows cannot pass, and the run says why."""

from __future__ import annotations

import json

from benchmarks.common.config import load_yaml
from boi.cli import main
from boi.runner import BUNDLED_CONFIGS


def test_reference_gives_100_on_every_row(
    mbpp_path, code_contests_path, tmp_path, monkeypatch, capsys
):
    import perturb.keywords as keywords
    from tests.keyword_helpers import tiny_embedder

    monkeypatch.setattr(keywords, "sentence_transformer_embedder", lambda *a, **k: tiny_embedder())
    # The bundled config with a few problems of each dataset.
    config = load_yaml(BUNDLED_CONFIGS / "reference.yaml")
    out = tmp_path / "run"
    config["out_dir"] = str(out)
    config["datasets"] = [
        {"name": "humaneval", "task_ids": ["HumanEval/0", "HumanEval/55", "HumanEval/63"]},
        {"name": "mbpp", "data": str(mbpp_path), "limit": 3},
        {"name": "code_contests", "data": str(code_contests_path), "limit": 3},
    ]
    path = tmp_path / "reference.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    argv = ["run", "--config", str(path)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    table = json.loads((out / "report" / "table.json").read_text())
    assert {c["dataset"] for c in table["columns"]} == {"humaneval", "mbpp", "code_contests"}
    for row in table["rows"]:
        for column, cell in zip(table["columns"], row["cells"], strict=True):
            if cell is not None and column["dataset"] != "code_contests":
                assert cell["pass_at_k"] == 1.0, (row["transform"], column["dataset"])
    assert "reference: 3 problems have no canonical solution" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["models"] == [{"kind": "reference", "model": None}]
