"""`boi run --dry-run`: the counts a run will have, before anything runs, and nothing written."""

from __future__ import annotations

import json

import pytest

from benchmarks.common.errors import UserError
from boi.cli import main
from boi.runner import estimate_run, run_robustness
from tests.test_shards import coin, config_for, quiet  # noqa: F401  (coin is a fixture)


def test_the_estimate_counts_what_the_run_then_does(coin, tmp_path, code_contests_path):  # noqa: F811
    config = config_for(tmp_path / "run", code_contests_path)
    estimate = estimate_run(config, quiet, tokens_per_second=1000, gpus=4)
    assert not (tmp_path / "run").exists()  # nothing written

    outcome = run_robustness(config, quiet)
    assert estimate.requested_samples == outcome.generation["requested_samples"]
    assert estimate.generations == outcome.generation["unique_samples"]
    executed = sum(1 for p in (tmp_path / "run" / "results").rglob("*.jsonl") for _ in p.open())
    assert estimate.executions == executed
    problems = (tmp_path / "run" / "problems.jsonl").read_text().splitlines()
    assert estimate.units == f"variants: {len(problems)}"
    # n=2 + n=1 samples per prompt and seed, 512 new tokens at most each (the default).
    assert estimate.max_output_tokens == estimate.generations * 512
    assert estimate.gpu_hours == pytest.approx(estimate.max_output_tokens / 1000 / 3600)
    assert "on 4 GPUs" in estimate.lines()[-1]


def test_the_dry_run_command_prints_and_writes_nothing(coin, tmp_path, capsys, code_contests_path):  # noqa: F811
    config = config_for(tmp_path / "run", code_contests_path)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config.to_json()))
    assert main(["run", "--config", str(path), "--dry-run", "--tokens-per-second", "500"]) == 0
    out = capsys.readouterr().out
    assert "boi run --dry-run (1 models x 2 settings x 2 seeds)" in out
    assert "GPU-hours" in out and "executions:" in out
    assert not (tmp_path / "run").exists()
    with pytest.raises(UserError, match="give a positive rate"):
        estimate_run(config, quiet, tokens_per_second=0)
