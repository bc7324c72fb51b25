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
from tests.helpers import reference_run_config
from tests.test_bias_fairness import scripted  # noqa: F401  (a fixture)


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
        reference_run_config(
            data,
            out_dir=str(tmp_path / "elsewhere" / "run"),  # absolute, outside the working dir
            bootstrap=0,
        ),
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


def test_shards_of_a_run_naming_files_outside_the_working_directory_merge_anywhere(
    tmp_path, monkeypatch, capsys
):
    """A run whose config names files by absolute paths outside the working directory (the
    dataset, a keyword file and a completions file, each hashed into the run's identity by
    its content) records them by name; its shards still merge, from another working directory,
    into the unsharded run: same identity, same inputs, same tables. The merge reads no file
    by a recorded name: a same-named file where it runs changes nothing."""
    from boi.cli import main
    from tests.test_results_config import _line

    inputs = tmp_path / "inputs"
    inputs.mkdir()
    problems = [
        p
        for p in load_benchmark("humaneval").problems
        if p.task_id in ("HumanEval/0", "HumanEval/2")
    ]
    data = inputs / "two.jsonl"
    data.write_text("".join(json.dumps(p.to_json()) + "\n" for p in problems))
    picks = inputs / "picks.jsonl"
    picks.write_text(
        json.dumps(_line(problems[0], "numbers"))
        + "\n"
        + json.dumps(_line(problems[1], "integer"))
        + "\n"
    )
    completions = inputs / "given.jsonl"
    completions.write_text(
        "".join(
            json.dumps({"task_id": f"{p.task_id}{suffix}", "completion": p.canonical_solution})
            + "\n"
            for p in problems
            for suffix in ("", "::drop_one/0")
        )
    )
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "datasets": [{"name": str(data)}],
                "transforms": ["original", "drop_one"],
                "keyword_file": str(picks),
                "models": [
                    {"kind": "reference"},
                    {"kind": "completions", "model": str(completions)},
                ],
                "settings": [{"label": "g", "ks": [1], "decoding": {"temperature": 0.0}}],
                "seeds": [0],
                "name_only_probe": False,
                "critic": {"enabled": False},
                "bootstrap": 0,
                "execution": {"calibrate": False},
            }
        )
    )
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    whole = tmp_path / "whole" / "run"
    assert main(["run", "--config", str(config), "--out", str(whole)]) == 0
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for index, shard in enumerate(shards):
        assert (
            main(["run", "--config", str(config), "--out", str(shard), "--shard", f"{index}/2"])
            == 0
        )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for name in ("picks.jsonl", "given.jsonl", "two.jsonl"):
        (elsewhere / name).write_text("not the file the run read\n")
    merged = tmp_path / "merged" / "run"
    assert main(["merge", str(merged), *map(str, shards)]) == 0
    capsys.readouterr()
    for name in ("table.json", "table.md", "table.csv"):
        assert (merged / "report" / name).read_bytes() == (whole / "report" / name).read_bytes()
    ours, theirs = (json.loads((d / "manifest.json").read_text()) for d in (merged, whole))
    for key in ("config", "config_hash", "work_hash", "inputs", "prompts_sha256"):
        assert ours[key] == theirs[key], key
    assert theirs["inputs"]["keyword_file"]["path"] == "picks.jsonl"
    text = (merged / "manifest.json").read_text()
    assert str(tmp_path) not in text
    assert [s for s in _strings(ours) if os.path.isabs(s)] == []


def _no_machine_path(run_dir, tmp_path):
    """The manifest of `run_dir` names no path of this machine's test folder."""
    text = (run_dir / "manifest.json").read_text()
    assert str(tmp_path) not in text
    assert [s for s in _strings(json.loads(text)) if os.path.isabs(s)] == []
    return json.loads(text)


def _as_typed(run_dir, config_json, digest):
    """Rewrite `run_dir`'s manifest as boi wrote it before paths were recorded portably."""
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["config"], manifest["config_hash"] = config_json, digest
    path.write_text(json.dumps(manifest))


@pytest.mark.usefixtures("scripted")
def test_a_bias_test_run_names_no_machine_path_resumes_and_merges_anywhere(tmp_path, monkeypatch):
    """`boi bias test` on a suite file outside the working directory: its manifest records the
    file by name; a directory written with the paths as typed still resumes; its shards merge
    from another working directory into the unsharded run's report."""
    import shutil

    from benchmarks.study import Shard, run_study
    from bias.fairness_tests.run import FairnessStudy, run_fairness
    from boi.studies import merge_runs
    from tests.test_bias_fairness import TEXT_TO_CODE
    from tests.test_bias_fairness import _config as fairness_config

    suite = tmp_path / "inputs" / TEXT_TO_CODE.name
    suite.parent.mkdir()
    shutil.copyfile(TEXT_TO_CODE, suite)
    config = fairness_config(tmp_path / "whole", suite)
    outcome = run_fairness(config, log=lambda _: None)
    manifest = _no_machine_path(outcome.out_dir, tmp_path)
    assert manifest["config"]["suite"] == suite.name and manifest["config"]["out_dir"] == "run"
    assert manifest["report"]["html"] == os.path.join("report", "report.html")
    # As written before: the config and its hash with the paths as typed. It resumes.
    spec = FairnessStudy(config).claim_spec(str(outcome.out_dir))
    _as_typed(outcome.out_dir, spec.config, config_hash(spec.config))
    assert run_fairness(config, log=lambda _: None).out_dir == outcome.out_dir
    # Shards, merged where no path the shards' config names leads to the files.
    shards = []
    for index in range(2):
        out = tmp_path / f"shard{index}"
        shard_config = fairness_config(out, suite)
        run_study(FairnessStudy(shard_config), shard=Shard(index, 2), log=lambda _: None)
        _no_machine_path(out / "run", tmp_path)
        shards.append(out / "run")
    monkeypatch.chdir(suite.parent)  # a same-named file here: still the record, not this
    (suite.parent / suite.name).write_text("[]")
    merged = merge_runs(tmp_path / "merged" / "run", shards, lambda _: None).out_dir
    _no_machine_path(merged, tmp_path)
    for name in ("fairness.md", "fairness_cbs.csv", "fairness.json", "report.html"):
        assert (merged / "report" / name).read_bytes() == (
            outcome.out_dir / "report" / name
        ).read_bytes()


def test_a_bias_run_names_no_machine_path_resumes_and_merges_anywhere(
    tiny_bias_classifier, tmp_path, monkeypatch
):
    """`boi bias run` on a completions file outside the working directory (its content in the
    run's identity): the manifest records the file and the classifier by name; a directory
    written with the paths as typed still resumes; its shards merge from another working
    directory, where a same-named file is another file, into the unsharded run's report."""
    from benchmarks.study import Shard, run_study
    from bias.modifier_prompts.run import ModifierStudy, load_bias_config, run_bias
    from boi.studies import merge_runs
    from tests.test_bias_completions import SUITE, _completions_file

    inputs = tmp_path / "inputs"
    inputs.mkdir()
    completions = _completions_file(inputs)

    def config(out):
        return load_bias_config(
            None,
            {
                "out_dir": str(out),
                "suite": SUITE,
                "classifier": str(tiny_bias_classifier),
                "device": "cpu",
                "bootstrap": 50,
                "completions": str(completions),
            },
        )

    whole = tmp_path / "whole" / "run"
    outcome = run_bias(config(whole), log=lambda _: None)
    manifest = _no_machine_path(whole, tmp_path)
    assert manifest["config"]["completions"] == completions.name
    assert manifest["config"]["classifier"] == tiny_bias_classifier.name
    # As written before: the config and its hash with the paths as typed. It resumes.
    spec = ModifierStudy(config(whole)).claim_spec(str(whole))
    assert spec.also_accepted and spec.also_accepted[0] != spec.digest
    _as_typed(whole, spec.config, spec.also_accepted[0])
    assert run_bias(config(whole), log=lambda _: None).out_dir == outcome.out_dir
    shards = []
    for index in range(2):
        out = tmp_path / f"shard{index}" / "run"
        run_study(ModifierStudy(config(out)), shard=Shard(index, 2), log=lambda _: None)
        shards.append(out)
    monkeypatch.chdir(inputs)
    completions.write_text("{}\n")  # the file the shards read is gone; its name is another
    merged = merge_runs(tmp_path / "merged" / "run", shards, lambda _: None).out_dir
    ours = _no_machine_path(merged, tmp_path)
    assert ours["inputs"] == manifest["inputs"] and ours["config_hash"] == manifest["config_hash"]
    for name in ("cbs.md", "tables.md", "cbs.csv", "bias.json"):
        assert (merged / "report" / name).read_bytes() == (whole / "report" / name).read_bytes()
