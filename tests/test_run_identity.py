"""A run directory belongs to what decides the run's numbers, not to how requests travel: a
pool's servers, timeouts, concurrency and retries can change and the run resumes."""

from __future__ import annotations

import json

from benchmarks.common.provenance import config_hash
from boi.runner import load_run_config, run_hash, work_hash

POOL = ["http://10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1", "http://10.0.0.3:8000/v1"]


def config(tmp_path, **model):
    spec = {"kind": "openai", "model": "coder", "base_url": POOL, **model}
    return load_run_config(None, {"out_dir": str(tmp_path / "run"), "models": [spec]})


def test_how_requests_travel_is_not_the_runs_identity(tmp_path):
    base = run_hash(config(tmp_path))
    assert run_hash(config(tmp_path, base_url=POOL[:2])) == base  # a dead server taken out
    assert run_hash(config(tmp_path, base_url=POOL[::-1])) == base
    assert run_hash(config(tmp_path, timeout_s=30, retries=1, max_concurrency=64)) == base
    assert work_hash(config(tmp_path, base_url=POOL[1:])) == work_hash(config(tmp_path))


def test_what_decides_the_numbers_is(tmp_path):
    base = run_hash(config(tmp_path))
    assert run_hash(config(tmp_path, model="other")) != base
    assert run_hash(config(tmp_path, server_stop=False)) != base
    # One server's URL stays part of it: another server may serve other weights by that name.
    one = run_hash(config(tmp_path, base_url=POOL[0]))
    assert run_hash(config(tmp_path, base_url=POOL[1])) != one


def test_a_run_directory_hashed_the_old_way_resumes(tmp_path):
    """Directories written when the hash covered every option keep resuming: their config
    was flat then (`RunConfig.flat_json`, before `perturb` nested)."""
    from benchmarks.study import claim_study
    from boi.runner import RobustnessStudy

    cfg = config(tmp_path)
    out = tmp_path / "run"
    out.mkdir()
    legacy = config_hash(cfg.flat_json())
    assert legacy != run_hash(cfg)
    (out / "manifest.json").write_text(
        json.dumps({"config": cfg.flat_json(), "config_hash": legacy, "shard": None})
    )
    run = claim_study(RobustnessStudy(cfg), None)
    assert run.resumed and run.config_hash == legacy
