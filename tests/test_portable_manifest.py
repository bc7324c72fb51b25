"""A run's manifest records what reproduces the run, never the machine that made it (issue 44,
item 6): no absolute path (the run directory, the dataset, the model folder, the command's
program and arguments, the report's files), and the run still resumes and is still the same run
from its manifest alone."""

from __future__ import annotations

import json
import os
import sys

import pytest

from benchmarks.common.errors import UserError
from benchmarks.common.provenance import (
    config_hash,
    portable_command,
    portable_config,
    portable_path,
)
from benchmarks.loaders import load_benchmark
from boi.runner import load_run_config, run_robustness
from boi.runner.config import run_hash, run_identity, work_hash


def _strings(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def test_portable_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert portable_path("runs/x") == "runs/x"  # as typed
    assert portable_path(str(tmp_path / "runs" / "x")) == os.path.join("runs", "x")
    assert portable_path("/somewhere/else/model-folder/") == "model-folder"
    assert portable_path("~/models/qwen") == "qwen"
    config = {"out_dir": "/abs/run", "models": [{"model": "/abs/m", "kind": "hf"}], "stop": "/x"}
    # Only path keys change; out_dir is the run layer's, and other strings are not paths.
    assert portable_config(config) == {
        "out_dir": "/abs/run",
        "models": [{"model": "m", "kind": "hf"}],
        "stop": "/x",
    }
    assert portable_command(["/home/me/.venv/bin/boi", "run", "--config", "/home/me/c.yaml"]) == [
        "boi",
        "run",
        "--config",
        "c.yaml",
    ]


@pytest.fixture
def run_config(tmp_path):
    problems = load_benchmark("humaneval").problems[:2]
    data = tmp_path / "data" / "two.jsonl"
    data.parent.mkdir()
    data.write_text("".join(json.dumps(p.to_json()) + "\n" for p in problems))
    return load_run_config(
        None,
        {
            "out_dir": str(tmp_path / "elsewhere" / "run"),  # absolute, outside the working dir
            "datasets": [{"name": str(data)}],
            "transforms": ["original"],
            "models": [{"kind": "reference"}],
            "settings": [{"label": "g", "ks": [1], "decoding": {"temperature": 0.0}}],
            "seeds": [0],
            "name_only_probe": False,
            "critic": {"enabled": False},
            "bootstrap": 0,
        },
    )


def test_a_runs_manifest_names_no_absolute_path(run_config, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/home/someone/.venv/bin/boi", "run", "--out", str(tmp_path)])
    outcome = run_robustness(run_config, log=lambda message: None)
    text = (outcome.out_dir / "manifest.json").read_text()
    manifest = json.loads(text)
    absolute = [s for s in _strings(manifest) if os.path.isabs(s)]
    assert absolute == []
    assert str(tmp_path) not in text and os.path.expanduser("~") + "/" not in text
    assert manifest["config"]["out_dir"] == "run"
    assert manifest["config"]["datasets"][0]["data"] is None  # a file named as the dataset
    assert manifest["config"]["datasets"][0]["name"] == "two.jsonl"
    assert manifest["command"] == ["boi", "run", "--out", tmp_path.name]
    assert manifest["report"]["table_md"] == os.path.join("report", "table.md")
    assert manifest["model_identities"] == {"reference": manifest["model_identities"]["reference"]}
    assert manifest["model_identities"]["reference"]
    # The same run from its manifest alone (a merge rebuilds it so) and from the same command.
    rebuilt = load_run_config(None, manifest["config"])
    assert work_hash(rebuilt) == manifest["work_hash"]
    again = run_robustness(run_config, log=lambda message: None)
    assert again.out_dir == outcome.out_dir


def test_a_run_written_with_absolute_paths_still_resumes(run_config, tmp_path):
    outcome = run_robustness(run_config, log=lambda message: None)
    path = outcome.out_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    # As boi wrote it before: the config and its hash with the paths as typed.
    manifest["config"] = run_config.to_json()
    manifest["config_hash"] = config_hash(run_identity(run_config, portable=False))
    path.write_text(json.dumps(manifest))
    assert run_robustness(run_config, log=lambda message: None).out_dir == outcome.out_dir
    other = load_run_config(None, {**run_config.to_json(), "bootstrap": 5})
    with pytest.raises(UserError, match="holds a different run"):
        run_robustness(other, log=lambda message: None)


def test_the_committed_run_names_no_machine_and_rebuilds_its_tables(tmp_path, capsys):
    """docs/results/qwen-humaneval-run.tar.gz, rewritten by scripts/portable_manifest.py: its
    manifest holds no absolute path, and `boi report` rebuilds its tables byte for byte."""
    import tarfile
    from pathlib import Path

    from boi.cli import main

    archive = Path(__file__).resolve().parents[1] / "docs" / "results" / "qwen-humaneval-run.tar.gz"
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    run = tmp_path / "qwen-humaneval"
    manifest = json.loads((run / "manifest.json").read_text())
    assert [s for s in _strings(manifest) if os.path.isabs(s)] == []
    assert manifest["rewritten"]["by"] == "scripts/portable_manifest.py"
    assert manifest["model_identities"]["hf-Qwen2.5-Coder-0.5B-Instruct"].startswith(
        "hf|Qwen2.5-Coder-0.5B-Instruct#sha256:"
    )
    rebuilt = load_run_config(None, manifest["config"])
    assert (run_hash(rebuilt), work_hash(rebuilt)) == (
        manifest["config_hash"],
        manifest["work_hash"],
    )
    committed = {
        name: (run / "report" / name).read_bytes()
        for name in ("table.md", "table.csv", "table.json")
    }
    assert main(["report", str(run)]) == 0
    capsys.readouterr()
    assert {name: (run / "report" / name).read_bytes() for name in committed} == committed
