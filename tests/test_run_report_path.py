"""One path for a run's report, and a run config's `perturb` block (issue 47, steps 1 and 2).

`boi report RUN` and every analysis's rebuild build the report with the run's own builder
(`boi.runner.build_run_report`), from the run's critic by the run's measure; `RunConfig.perturb`
is a `PerturbConfig`, an older flat config (a run directory's manifest, an older YAML file)
reads into it with its identity unchanged, and the report's bootstrap has a seed of its own."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import boi
from benchmarks.common.config import from_mapping
from benchmarks.common.errors import UserError
from benchmarks.common.rundir import MANIFEST
from boi.cli import main
from boi.reporting import rebuild_run_report
from boi.runner import RunConfig, load_run_config, run_hash, run_variants, work_hash
from perturb.catalogue import PerturbConfig

# A run config as boi wrote it before `perturb` nested, and the hashes boi at commit 0896f9b
# computed for it (run_hash, work_hash): a directory claimed by them must stay this run.
FLAT = {
    "out_dir": "runs/old",
    "datasets": [{"name": "humaneval", "limit": 2}],
    "transforms": ["original", "anonymize"],
    "anonymous_name": "XYZ",
    "transform_params": {},
    "keep_unchanged": False,
    "keyword_file": None,
    "models": [{"kind": "reference"}],
    "settings": [{"label": "greedy", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
    "seeds": [0],
    "critic": {"enabled": False},
    "bootstrap": 50,
    "perturb_seed": 3,
    "random_seeds": 2,
}
FLAT_RUN_HASH, FLAT_WORK_HASH = "e819e82f9020a277", "fcfda8ca9938fb75"


def test_an_old_flat_config_reads_into_perturb_with_its_identity():
    config = from_mapping(RunConfig, FLAT)
    assert config.perturb == PerturbConfig(
        transforms=("original", "anonymize"),
        anonymous_name="XYZ",
        seed=3,
        keep_unchanged=False,
        random_seeds=2,
    )
    # Its report was bootstrapped with the perturbation seed: it keeps that seed.
    assert config.bootstrap_seed == 3
    assert (run_hash(config), work_hash(config)) == (FLAT_RUN_HASH, FLAT_WORK_HASH)
    # Written back in today's shape, it is the same run.
    again = from_mapping(RunConfig, config.to_json())
    assert again == config and run_hash(again) == FLAT_RUN_HASH
    # A bootstrap seed of its own is another report, so another identity.
    nested = {k: v for k, v in config.to_json().items() if k != "bootstrap_seed"}
    assert from_mapping(RunConfig, nested).bootstrap_seed == 0
    assert run_hash(from_mapping(RunConfig, nested)) != FLAT_RUN_HASH


def test_a_key_in_both_shapes_is_refused_and_flags_override_perturb_keys(tmp_path, capsys):
    both = {**FLAT, "perturb": {"seed": 4}}
    with pytest.raises(UserError, match=r"gives both perturb_seed and perturb\.seed"):
        from_mapping(RunConfig, both)
    path = tmp_path / "run.yaml"
    path.write_text("perturb:\n  transforms: [original, anonymize]\n  seed: 5\n")
    # A perturbation flag replaces its key of the file's perturb, not the whole block.
    config = load_run_config(str(path), {"perturb": {"seed": 9}, "bootstrap_seed": None})
    assert config.perturb.transforms == ("original", "anonymize") and config.perturb.seed == 9
    assert config.bootstrap_seed == 0
    assert main(["run", "--config", str(path), "--transforms", "drop_one", "--dry-run"]) == 2
    assert "perturb.transforms ['drop_one'] lack 'original'" in capsys.readouterr().err


def _toy(tmp_path: Path) -> Path:
    data = tmp_path / "toy.jsonl"
    rows = [
        {
            "task_id": f"Toy/{i}",
            "prompt": f'def add_{i}(a, b):\n    """Add two numbers.\n    >>> add_{i}(1, 2)\n    3\n    """\n',
            "entry_point": f"add_{i}",
            "canonical_solution": "    return a + b\n",
            "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
        }
        for i in range(3)
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return data


def test_boi_report_and_an_analysis_build_the_runs_report_with_its_critic_measure(tmp_path):
    out = tmp_path / "run"
    boi.run(
        "reference",
        out_dir=str(out),
        datasets=[{"name": str(_toy(tmp_path))}],
        perturb={"transforms": ["original", "anonymize"], "seed": 7},
        bootstrap=20,
        bootstrap_seed=5,
        log=None,
    )
    table = (out / "report" / "table.md").read_text(encoding="utf-8")
    assert "(20 resamples, seed 5)" in table  # its own seed, not the perturbation's 7
    # The run as if its critic had scored by the per-token measure (the reference model needs
    # no scorer): each variant's two measures differ, so the page shows which one was read.
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    manifest["config"]["critic"] = {
        "enabled": True,
        "measure": "similarity_per_token",
        "min_similarity": 0,
    }
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    problems = [json.loads(line) for line in (out / "problems.jsonl").read_text().splitlines()]
    low = "Toy/0::anonymize"  # below a gate of 50 by the per-token measure, not by the total
    records = [
        {
            "task_id": p["task_id"],
            "critic": {"original": True}
            if "::" not in p["task_id"]
            else {"similarity": 90.0, "similarity_per_token": 40.0}
            if p["task_id"] == low
            else {"similarity": 11.5, "similarity_per_token": 87.5},
        }
        for p in problems
    ]
    (out / "critic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    run = boi.open_run(out)
    assert run.run_config.critic.measure == "similarity_per_token"
    # The run's gate, by its measure, as the run applied it.
    gated = replace(run.run_config, critic=replace(run.run_config.critic, min_similarity=50))
    variants, similarity = run_variants(gated, out)
    assert similarity[low] == 40.0 and low not in {v.task_id for v in variants}
    assert len(variants) == len(problems) - 1

    assert main(["report", str(out)]) == 0
    html = (out / "report" / "report.html").read_text(encoding="utf-8")
    assert "critic similarity 87.5%" in html and "critic similarity 11.5%" not in html
    assert (out / "report" / "table.md").read_text(encoding="utf-8") == table
    # Every analysis ends by rebuilding the report the same way.
    rebuild_run_report(out)
    assert (out / "report" / "report.html").read_text(encoding="utf-8") == html
