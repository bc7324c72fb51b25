"""A run directory written by an older boi still opens: `tests/data/runs/dd66ed1` is a real
`boi run` directory written at commit dd66ed1 (before manifest format versions, result statuses
and the run layer), by

    boi run --config reference --dataset humaneval --limit 3 \
        --transforms original anonymize drop_examples --out /tmp/oldrun

with its report.html left out (it is rebuilt here). Every reader of a run directory must take it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import boi
from benchmarks.common.rundir import MANIFEST, RunDir
from benchmarks.execution import Status
from benchmarks.report import read_results
from boi.cli import main

OLD_RUN = Path(__file__).parent / "data" / "runs" / "dd66ed1"


@pytest.fixture
def old_run(tmp_path):
    path = tmp_path / "old"
    shutil.copytree(OLD_RUN, path)
    return path


def test_its_manifest_is_format_1_and_opens_with_typed_fields(old_run):
    assert "format_version" not in json.loads((old_run / MANIFEST).read_text())
    run = RunDir.open(old_run, what="boi run")
    assert run.format_version == 1 and run.completed
    assert run.seeds == [0] and run.config["transforms"] == [
        "original",
        "anonymize",
        "drop_examples",
    ]
    assert run.versions["python"] and "perturb" in run.timings


def test_its_results_read_with_statuses_from_before_the_field(old_run):
    written = [json.loads(line) for line in next((old_run / "results").rglob("*.jsonl")).open()]
    assert len(written) == 9 and all("status" not in r for r in written)
    assert {r["status"] for r in read_results(old_run)} == {Status.PASSED.value}
    run = boi.open_run(old_run)
    statuses = {r["status"] for r in run.results()}
    assert statuses == {Status.PASSED.value}
    table = run.table()
    assert {r["transform"] for r in table} == {"original", "anonymize", "drop_examples"}
    assert all(r["pass_at_k"] == 1.0 for r in table)


def test_its_report_rebuilds_and_an_analysis_runs(old_run, capsys):
    assert main(["report", str(old_run)]) == 0
    assert (old_run / "report" / "report.html").stat().st_size > 0
    assert main(["analyze", "hints", str(old_run)]) == 0
    assert (old_run / "analysis" / "hints").is_dir()
    assert "error" not in capsys.readouterr().err
