"""Careless input, issue 49: what the held-out sweeps still found. Each test is one cause, met
as a user meets it (the `boi` command line, small files in a temporary folder), and fails on the
code before its fix: a refusal names the file, line or field and what to do, in one sentence;
nothing the user named as input is written; no bad input ends in exit 0 or a wrong number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from boi.cli import main


def _config(tmp_path: Path, **overrides: Any) -> Path:
    """A `boi run` config (JSON, which is YAML) of two HumanEval problems judged by their own
    solutions (`reference`): nothing to load, nothing to download."""
    config = {
        "out_dir": str(tmp_path / "run"),
        "datasets": [{"name": "humaneval", "task_ids": ["HumanEval/0", "HumanEval/2"]}],
        "transforms": ["original"],
        "name_only_probe": False,
        "models": [{"kind": "reference"}],
        "settings": [{"label": "ref", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
        "seeds": [0],
        "bootstrap": 0,
        "execution": {"calibrate": False},
        **overrides,
    }
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(config))
    return path


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's stderr, which must be one sentence (no traceback)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err


# --------------------------------------------------------------------------- the study driver


def test_an_empty_shard_is_refused_not_taken_for_the_whole_run(tmp_path, capsys):
    """`--shard "$SHARD"` with the variable unset: before, the whole run ran into --out."""
    config = _config(tmp_path)
    assert main(["run", "--config", str(config), "--shard", ""]) == 2
    assert "--shard '' is not I/N" in _error(capsys)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("count", ["-1", "0"])
def test_ray_shards_below_one_is_refused_by_name(tmp_path, capsys, count):
    """Before: -1 ended in the merge's "boi merge needs the shard directories", 0 silently
    took the default."""
    config = _config(tmp_path)
    assert main(["run", "--config", str(config), "--ray", "--ray-shards", count]) == 2
    assert f"--ray-shards is {count}; give at least 1" in _error(capsys)
    assert main(["run", "--config", str(config), "--ray-shards", "2"]) == 2
    assert "add --ray" in _error(capsys)


def test_a_dry_run_refuses_what_the_run_would_refuse(tmp_path, capsys):
    """Before, `--dry-run` printed an estimate and exited 0 for runs that cannot start."""
    # A completions file that does not parse: the run refuses it before its claim.
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"task_id": "HumanEval/0", "completion": "    return 1\\n"}\nnot json\n')
    config = _config(tmp_path, models=[{"kind": "completions", "model": str(broken)}])
    assert main(["run", "--config", str(config), "--dry-run"]) == 2
    assert "broken.jsonl line 2 is not valid JSON" in _error(capsys)
    # A --reuse-generations file that is not there.
    config = _config(tmp_path)
    missing = tmp_path / "none.jsonl"
    assert (
        main(["run", "--config", str(config), "--reuse-generations", str(missing), "--dry-run"])
        == 2
    )
    assert "--reuse-generations" in _error(capsys)
    # An --out that holds another run: the claim would refuse it.
    other = tmp_path / "run"
    other.mkdir()
    (other / "manifest.json").write_text(
        json.dumps({"format_version": 2, "config_hash": "0123", "config": {"seeds": [5]}})
    )
    assert main(["run", "--config", str(config), "--dry-run"]) == 2
    assert "holds a different run" in _error(capsys)
    assert sorted(p.name for p in other.iterdir()) == ["manifest.json"]
    # The same config with a new --out is estimated as before, and nothing is written.
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "new"), "--dry-run"]) == 0
    assert "boi run --dry-run" in capsys.readouterr().out
    assert not (tmp_path / "new").exists()


def test_merge_with_out_left_out_names_the_shard_given_as_out(tmp_path, capsys):
    """`boi merge SHARD_0 SHARD_1`: before, "shard 0/2 is missing" though it was given."""
    for index in (0, 1):
        shard = tmp_path / f"shard{index}"
        shard.mkdir()
        manifest = {
            "format_version": 2,
            "config": {},
            "study": "boi run",
            "work_hash": "w",
            "shard": f"{index}/2",
            "completed": True,
        }
        (shard / "manifest.json").write_text(json.dumps(manifest))
    assert main(["merge", str(tmp_path / "shard0"), str(tmp_path / "shard1")]) == 2
    err = _error(capsys)
    assert f"OUT {tmp_path / 'shard0'} is shard 0/2 of a run" in err
    assert "boi merge OUT SHARD_DIR" in err
