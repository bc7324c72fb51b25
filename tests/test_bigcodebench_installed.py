"""BigCodeBench's installed tier (issue 45): a run that lets its candidates import libraries
(`execution.candidate_libraries`) judges the installed-tier tasks that need only those, with
the shipped reference check for them counted only under the library versions it ran with."""

from __future__ import annotations

import json

import pytest

import benchmarks.loaders.bigcodebench as bcb
from benchmarks.common.config import to_dict
from benchmarks.common.provenance import run_record
from benchmarks.execution import ExecutionConfig, execute_samples, resolve_libraries
from benchmarks.loaders import load_benchmark
from benchmarks.upstream import sha256_of
from boi.runner import load_run_config
from boi.runner.config import run_hash, with_overrides
from tests.sandbox_helpers import ADD, GOOD
from tests.test_bigcodebench import record, write

pytest.importorskip("numpy")
pytest.importorskip("pandas")


def records(tmp_path):
    return write(
        tmp_path / "bcb.jsonl",
        [
            record(),
            record("BigCodeBench/1", libs="['numpy']"),
            record("BigCodeBench/2", libs="['numpy', 'pandas']"),
            record("BigCodeBench/3", libs="['numpy', 'pytest']"),
            record("BigCodeBench/4", libs="['no_such_library_here']"),
        ],
    )


def test_the_installed_tasks_whose_libraries_a_run_allows_are_kept(tmp_path):
    path = records(tmp_path)
    loaded = load_benchmark("bigcodebench", path, candidate_libraries=("numpy", "pandas"))
    tiers = {p.task_id: p.metadata["tier"] for p in loaded.problems}
    assert tiers == {
        "BigCodeBench/0": "stdlib",
        "BigCodeBench/1": "installed",
        "BigCodeBench/2": "installed",
    }
    left = {i.task_id: i.reason for i in loaded.issues if i.dropped}
    assert "candidate_libraries (numpy, pandas)" in left["1 tasks of tier installed"]
    assert "pytest" in left["1 tasks of tier installed"]
    # Without the setting, as before: the standard-library tier alone.
    alone = load_benchmark("bigcodebench", path)
    assert [p.task_id for p in alone.problems] == ["BigCodeBench/0"]
    left = {i.task_id: i.reason for i in alone.issues if i.dropped}
    assert "execution.candidate_libraries" in left["3 tasks of tier installed"]


def checked_file(tmp_path, data, versions):
    checked = tmp_path / "reference.json"
    checked.write_text(
        json.dumps(
            {
                "source_sha256": sha256_of(data),
                "failures": {},
                "installed": {
                    "candidate_libraries": ["numpy", "pandas"],
                    "versions": versions,
                    "checked": ["BigCodeBench/1", "BigCodeBench/2"],
                    "failures": {"BigCodeBench/2": "failed: needs a shared directory"},
                },
            }
        )
    )
    return checked


def test_installed_references_count_only_under_the_versions_they_were_checked_with(
    tmp_path, monkeypatch
):
    path = records(tmp_path)
    here = resolve_libraries(("numpy", "pandas")).versions
    monkeypatch.setattr(bcb, "REFERENCE_FILE", checked_file(tmp_path, path, here))
    loaded = bcb.load_bigcodebench(path, candidate_libraries=("numpy", "pandas"))
    assert [p.task_id for p in loaded.problems] == ["BigCodeBench/0", "BigCodeBench/1"]
    assert loaded.reference_failures == {"BigCodeBench/2": "failed: needs a shared directory"}
    assert not any("unchecked" in i.reason for i in loaded.issues)

    other = {**here, "numpy": "0.0.1"}
    monkeypatch.setattr(bcb, "REFERENCE_FILE", checked_file(tmp_path, path, other))
    loaded = bcb.load_bigcodebench(path, candidate_libraries=("numpy", "pandas"))
    assert [p.task_id for p in loaded.problems] == [f"BigCodeBench/{i}" for i in range(3)]
    [unchecked] = [i for i in loaded.issues if "unchecked" in i.reason]
    assert unchecked.task_id == "2 tasks of tier installed"
    assert "numpy 0.0.1" in unchecked.reason and f"numpy {here['numpy']}" in unchecked.reason
    assert "\n" not in unchecked.reason


def test_the_setting_reaches_the_run_config_and_leaves_old_identities_alone(tmp_path):
    assert "candidate_libraries" not in to_dict(ExecutionConfig())
    allowed = ExecutionConfig(candidate_libraries=["pandas", "numpy", "pandas"])
    assert to_dict(allowed)["candidate_libraries"] == ["numpy", "pandas"]
    base = {
        "datasets": [{"name": "bigcodebench"}],
        "transforms": ["original"],
        "execution": {"timeout": 9.0},
    }
    plain = with_overrides(base, {}, "config")
    flagged = with_overrides(base, {"execution": {"candidate_libraries": ["numpy"]}}, "config")
    # The flag sets its key and keeps the config file's other execution keys.
    assert flagged.execution.timeout == 9.0 and flagged.execution.candidate_libraries == ("numpy",)
    assert run_hash(plain) != run_hash(flagged)
    # A config without the option hashes as it did before the option existed.
    assert "candidate_libraries" not in json.dumps(to_dict(plain))
    assert load_run_config(None, base).execution == plain.execution


def test_a_run_records_the_versions_of_its_candidate_libraries(tmp_path):
    recorded = run_record({"execution": {"candidate_libraries": ["pandas"]}})["versions"]
    assert recorded["pandas"] == resolve_libraries(("pandas",)).versions["pandas"]
    assert "pandas" not in run_record({"execution": {}})["versions"]
    config = ExecutionConfig(workers=1, candidate_libraries=("pandas",))
    done = execute_samples(
        [ADD], [{"task_id": ADD.task_id, "completion": GOOD}], config, tmp_path / "out.jsonl"
    )
    assert done.results[0]["passed"]
    # Every distribution a candidate could import, with its version.
    assert done.summary["candidate_libraries"] == resolve_libraries(("pandas",)).versions
    assert {"numpy", "pandas"} <= set(done.summary["candidate_libraries"])
