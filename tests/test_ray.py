"""`boi run --ray`: the shards run as Ray tasks on a local cluster the test starts, and the
merged report is the unsharded run's, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common.errors import UserError
from benchmarks.study.ray import run_study_on_ray, shard_dirs
from boi.runner import RobustnessStudy, load_run_config, run_robustness

ray = pytest.importorskip("ray")
# A local Ray cluster starts for these (`pytest -m "not slow"` leaves them out; CI runs them).
pytestmark = pytest.mark.slow

REPORT_FILES = ("table.json", "table.md", "table.csv", "report.html")


def reference_config(out: Path) -> Any:
    return load_run_config(
        None,
        {
            "out_dir": str(out),
            "datasets": [{"name": "humaneval", "task_ids": ["HumanEval/0", "HumanEval/2", "HumanEval/7"]}],
            "transforms": ["original", "anonymize", "drop_examples"],
            "name_only_probe": False,
            "models": [{"kind": "reference"}],
            "settings": [{"label": "reference", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
            "seeds": [0],
            "bootstrap": 50,
        },
    )  # fmt: skip


def test_an_unreachable_cluster_is_one_sentence(tmp_path):
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    with pytest.raises(UserError, match=r"could not connect to the Ray cluster at 127\.0\.0\.1:1"):
        run_study_on_ray(RobustnessStudy(reference_config(tmp_path / "run")), "127.0.0.1:1", 2)
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_shards_merge_into_the_unsharded_report(local_cluster, tmp_path):
    whole = run_robustness(reference_config(tmp_path / "whole" / "run"), lambda m: None)
    lines: list[str] = []
    merged = run_study_on_ray(
        RobustnessStudy(reference_config(tmp_path / "ray" / "run")), None, 2, lines.append
    )
    for name in REPORT_FILES:
        assert (merged.out_dir / "report" / name).read_bytes() == (
            whole.out_dir / "report" / name
        ).read_bytes(), name
    assert all((d / "manifest.json").is_file() for d in shard_dirs(merged.out_dir, 2))
    assert any("2 shards" in line for line in lines)


def test_a_livecodebench_release_runs_as_ray_tasks(local_cluster, tmp_path):
    """The driver's --ray for a dataset read from a user's release file, judged from given
    completions (issue 45): the merged report is the unsharded run's."""
    import json

    from tests.livecodebench_helpers import SOLUTIONS, write_release

    release = write_release(tmp_path / "test.jsonl")
    completions = tmp_path / "completions.jsonl"
    completions.write_text(
        "".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, c in SOLUTIONS.items())
    )

    def config(out: Path) -> Any:
        return load_run_config(
            None,
            {
                "out_dir": str(out),
                "datasets": [{"name": "livecodebench", "data": str(release)}],
                "transforms": ["original"],
                "name_only_probe": False,
                "models": [{"kind": "completions", "model": str(completions)}],
                "settings": [{"label": "given", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
                "seeds": [0],
                "bootstrap": 0,
            },
        )

    whole = run_robustness(config(tmp_path / "whole" / "run"), lambda m: None)
    merged = run_study_on_ray(RobustnessStudy(config(tmp_path / "ray" / "run")), None, 2)
    table = "table.json"
    assert (merged.out_dir / "report" / table).read_bytes() == (
        whole.out_dir / "report" / table
    ).read_bytes()
    (results,) = (merged.out_dir / "results").glob("completions-*/given.jsonl")
    passed = {r["task_id"]: r["passed"] for r in map(json.loads, results.open())}
    assert passed == dict.fromkeys(SOLUTIONS, True)  # stdin and functional, judged in the tasks


def test_bigcodebench_runs_as_ray_tasks(local_cluster, tmp_path):
    """The driver's --ray for BigCodeBench (issue 45): its TestCase classes judged in the Ray
    tasks, Drop Requirements and Drop Ex beside the original, the installed-tier task left out
    as in an unsharded run, whose report the merged one is."""
    from tests.test_bigcodebench import record, write

    data = write(
        tmp_path / "bcb.jsonl",
        [record(), record("BigCodeBench/1", libs="['numpy']"), record("BigCodeBench/2")],
    )

    def config(out: Path) -> Any:
        return load_run_config(
            None,
            {
                "out_dir": str(out),
                "datasets": [{"name": "bigcodebench", "data": str(data)}],
                "transforms": ["original", "drop_requirements", "drop_examples"],
                "name_only_probe": False,
                "models": [{"kind": "reference"}],
                "settings": [{"label": "given", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
                "seeds": [0],
                "bootstrap": 0,
                "execution": {"calibrate": False},
            },
        )

    whole = run_robustness(config(tmp_path / "whole" / "run"), lambda m: None)
    merged = run_study_on_ray(RobustnessStudy(config(tmp_path / "ray" / "run")), None, 2)
    for name in ("table.json", "table.md"):
        assert (merged.out_dir / "report" / name).read_text() == (
            whole.out_dir / "report" / name
        ).read_text().replace(str(tmp_path / "whole"), str(tmp_path / "ray")), name
    (results,) = (merged.out_dir / "results").glob("*/given.jsonl")
    passed = {r["task_id"]: r["passed"] for r in map(json.loads, results.open())}
    assert len(passed) == 6 and all(passed.values())  # 2 stdlib tasks x 3 settings
    assert "Drop Requirements" in (merged.out_dir / "report" / "table.md").read_text()
