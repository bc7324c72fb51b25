"""Careless input (issue 34, the input side): every JSONL reader reads every kind of bad file
one way and says on the console which lines it could not use; inputs are checked before a run
directory is claimed, so the corrected command runs; resuming does not depend on how --out is
spelled; a shard is never taken for a whole run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import JsonlAppender, iter_jsonl, scan_jsonl
from benchmarks.execution import read_samples
from boi.cli import main
from tests.helpers import reference_run_config

BOM = b"\xef\xbb\xbf"
R1 = {"task_id": "X/0", "completion": "    return x\n", "content": "def f():\n    return 1\n"}
R2 = {"task_id": "X/1", "completion": "    return 2\n", "content": "def g():\n    return 2\n"}
L1, L2 = (json.dumps(r).encode() for r in (R1, R2))

# Each kind of bad file: its bytes, and the line a reader must name (None: every record is
# read and nothing is said).
BAD_FILES: dict[str, tuple[bytes, int | None]] = {
    "bom": (BOM + L1 + b"\n" + L2 + b"\n", None),
    "crlf": (L1 + b"\r\n" + L2 + b"\r\n", None),
    "bom_crlf": (BOM + L1 + b"\r\n" + L2 + b"\r\n", None),
    "blank_lines": (b"\n" + L1 + b"\n \n\r\n" + L2 + b"\n\n", None),
    "no_final_newline": (L1 + b"\n" + L2, None),
    "truncated_last_line": (L1 + b"\n" + L2 + b"\n" + L2[:17], 3),
    "binary_garbage": (L1 + b"\n\x89PNG\x00\xff\xfe garbage\n" + L2 + b"\n", 2),
    "not_json": (L1 + b"\n{oops\n" + L2 + b"\n", 2),
    "empty": (b"", None),
}
KINDS = sorted(BAD_FILES)


def bad_file(tmp_path: Path, kind: str, name: str = "data.jsonl") -> tuple[Path, int | None]:
    content, line = BAD_FILES[kind]
    path = tmp_path / name
    path.write_bytes(content)
    return path, line


def expected_records(kind: str) -> list[dict[str, Any]]:
    return [] if kind == "empty" else [R1, R2]


# --------------------------------------------------------------------------- every reader


@pytest.mark.parametrize("kind", KINDS)
def test_the_strict_reader(tmp_path, capsys, kind):
    """Our own files and datasets: a bad line is refused in one sentence naming file and line;
    the rest (BOM, CRLF, blank lines) read every record and say nothing."""
    path, line = bad_file(tmp_path, kind)
    if line is None:
        assert [obj for _, obj in iter_jsonl(path)] == expected_records(kind)
        assert capsys.readouterr().err == ""
        return
    with pytest.raises(UserError) as caught:
        list(iter_jsonl(path))
    message = str(caught.value)
    assert f"{path} line {line} " in message and message.count("\n") == 0


@pytest.mark.parametrize("kind", KINDS)
def test_the_resume_log_readers(tmp_path, capsys, kind):
    """An append-only log and a tolerant read of one: a torn last line (a killed writer) is
    dropped with a note naming it; every other bad line is still refused."""
    path, line = bad_file(tmp_path, kind)
    if kind in ("binary_garbage", "not_json"):
        with pytest.raises(UserError, match=rf"line {line} "):
            list(iter_jsonl(path, tolerate_torn_tail=True))
        return
    read = [obj for _, obj in iter_jsonl(path, tolerate_torn_tail=True)]
    err = capsys.readouterr().err
    assert read == expected_records(kind)
    assert (f"{path} line {line} is cut off" in err) if line else err == ""
    with JsonlAppender(path) as log:
        assert log.existing == expected_records(kind)
        log.append({"task_id": "X/9"})
    err = capsys.readouterr().err
    assert (f"{path} line {line} was cut off" in err) if line else err == ""
    assert [obj["task_id"] for _, obj in iter_jsonl(path)][-1] == "X/9"


@pytest.mark.parametrize("kind", KINDS)
def test_the_samples_reader(tmp_path, capsys, kind):
    """boi execute's samples: nothing is dropped (a BOM used to cost the first sample) and a
    bad line becomes a failed sample, named on the console."""
    path, line = bad_file(tmp_path, kind)
    if kind == "empty":
        with pytest.raises(UserError, match=r"data.jsonl is empty"):
            read_samples(path)
        return
    samples = read_samples(path)
    err = capsys.readouterr().err
    good = [s for s in samples if "_invalid" not in s]
    assert good == [R1, R2]
    if line is None:
        assert err == "" and len(samples) == 2
    else:
        assert len(samples) == 3 and samples[line - 1].get("_invalid", "").startswith(
            f"line {line}"
        )
        assert "will be judged as failed samples" in err and f"{path} line {line} " in err


@pytest.mark.parametrize("kind", KINDS)
def test_the_corpus_reader(tmp_path, kind):
    """A copy-search corpus (streamed, tolerant): a bad row is skipped and counted with its
    place, never fatal; BOM and CRLF rows are read."""
    from benchmarks.copy_index import Corpus, CorpusSource, IndexConfig

    path, line = bad_file(tmp_path, kind)
    rows = list(Corpus((CorpusSource("jsonl", str(path)),), IndexConfig()).documents())
    texts = [r.text for r in rows if r.skip is None]
    assert texts == [r["content"] for r in expected_records(kind)]
    skipped = [r.name for r in rows if r.skip is not None]
    assert skipped == ([] if line is None else [f"{path}:{line}"])


def test_many_bad_lines_are_listed_then_counted(tmp_path, capsys):
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b"".join(b"{oops\n" for _ in range(30)) + L1 + b"\n")
    assert len(read_samples(path)) == 31
    err = capsys.readouterr().err
    assert "30 lines of" in err and f"{path} line 20 " in err and f"{path} line 21 " not in err
    assert "and 10 more: lines 21, 22" in err


def test_a_gzip_file_that_is_cut_off(tmp_path):
    import gzip

    path = tmp_path / "data.jsonl.gz"
    path.write_bytes(gzip.compress(L1 + b"\n" + L2 + b"\n")[:-12])
    with pytest.raises(UserError, match=r"data.jsonl.gz is not a valid gzip file"):
        list(scan_jsonl(path))


# --------------------------------------------------------------------------- boi execute

PROBLEM = {
    "task_id": "X/0",
    "prompt": 'def f(x):\n    """Id."""\n',
    "entry_point": "f",
    "test": "def check(candidate):\n    assert candidate(1) == 1\n",
}
FAST = ["--timeout", "10", "--no-calibration", "--processes", "64"]


def test_execute_names_bad_sample_lines_and_keeps_a_bom_file_first_sample(tmp_path, capsys):
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps(PROBLEM) + "\n")
    good = json.dumps({"task_id": "X/0", "completion": "    return x\n"}).encode()
    samples = tmp_path / "samples.jsonl"
    samples.write_bytes(BOM + good + b"\r\n" + b"\x00\xff binary\r\n" + good + b"\r\n" + good[:9])
    out = tmp_path / "results.jsonl"
    assert main(["execute", str(problems), str(samples), "--out", str(out), *FAST]) == 0
    captured = capsys.readouterr()
    assert "2 lines of" in captured.err
    assert f"{samples} line 2 is not valid UTF-8" in captured.err
    assert f"{samples} line 4 is cut off" in captured.err
    results = [obj for _, obj in iter_jsonl(out)]
    assert [r["passed"] for r in results] == [True, False, True, False]  # the first is kept
    assert "samples 4: passed 2, failed 2" in captured.out


# --------------------------------------------------------------------------- boi run


def _problems_file(tmp_path: Path) -> Path:
    from benchmarks.loaders import load_benchmark

    path = tmp_path / "two.jsonl"
    problems = load_benchmark("humaneval").problems[:2]
    path.write_text("".join(json.dumps(p.to_json()) + "\n" for p in problems))
    return path


def _run_config(tmp_path: Path, data: Path | str) -> Path:
    """A `boi run` config of the reference backend (each problem's own solution): no model."""
    config = reference_run_config(
        data,
        bootstrap=20,
        execution={"calibrate": False, "reference_timing": False, "timeout": 10.0},
    )
    path = tmp_path / f"config-{abs(hash(str(data)))}.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def _boi(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_corrected_run_command_runs(tmp_path, capsys):
    """A new user's second command after a mistake works: the mistaken one claimed nothing."""
    out = tmp_path / "runs" / "x"
    missing = tmp_path / "tow.jsonl"
    code, text = _boi(capsys, "run", "--config", str(_run_config(tmp_path, missing)), "--out", str(out))  # fmt: skip
    assert code == 2 and "tow.jsonl" in text and "Traceback" not in text
    assert not (out / "manifest.json").exists()
    code, text = _boi(capsys, "run", "--config", str(_run_config(tmp_path, _problems_file(tmp_path))), "--out", str(out), "--bootstrap", "-1")  # fmt: skip
    assert code == 2 and "bootstrap is -1" in text
    assert not (out / "manifest.json").exists()
    code, text = _boi(capsys, "run", "--config", str(_run_config(tmp_path, _problems_file(tmp_path))), "--out", str(out))  # fmt: skip
    assert code == 0, text
    assert json.loads((out / "manifest.json").read_text())["completed"] is True


def test_an_unknown_task_id_is_refused_before_the_claim(tmp_path):
    from boi.runner import load_run_config, run_robustness

    out = tmp_path / "run"
    config = load_run_config(
        None,
        reference_run_config(
            {"name": str(_problems_file(tmp_path)), "task_ids": ["HumanEval/99"]}, out_dir=str(out)
        ),
    )
    with pytest.raises(UserError, match=r"task_ids \['HumanEval/99'\] are not in the dataset"):
        run_robustness(config, log=lambda m: None)
    assert not out.exists()


@pytest.fixture
def finished_run(tmp_path_factory) -> Path:
    """A finished reference run at runs/x under its own folder (relative paths are tried from
    that folder)."""
    root = tmp_path_factory.mktemp("spelling")
    config = _run_config(root, _problems_file(root))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["run", "--config", str(config), "--out", "runs/x"]) == 0
    finally:
        os.chdir(cwd)
    return root


@pytest.mark.parametrize("spelling", ["./runs/x", "runs/x/", "runs//x", "ABSOLUTE"])
def test_resume_does_not_depend_on_how_out_is_spelled(finished_run, monkeypatch, capsys, spelling):
    monkeypatch.chdir(finished_run)
    out = str(finished_run / "runs" / "x") if spelling == "ABSOLUTE" else spelling
    manifest = finished_run / "runs" / "x" / "manifest.json"
    before = json.loads(manifest.read_text())
    config = next(finished_run.glob("config-*.yaml"))
    code, text = _boi(capsys, "run", "--config", str(config), "--out", out)
    assert code == 0, text
    after = json.loads(manifest.read_text())
    assert after["config_hash"] == before["config_hash"]
    assert after["config"]["out_dir"] == "runs/x"  # as the run first spelled it
    assert after["generation"]["generated"] == 0  # resumed: nothing generated again


# --------------------------------------------------------------------------- shards


@pytest.fixture
def shard(tmp_path) -> Path:
    from benchmarks.study.shards import Shard
    from boi.runner import load_run_config, run_robustness

    out = tmp_path / "shard0"
    config = load_run_config(
        str(_run_config(tmp_path, _problems_file(tmp_path))), {"out_dir": str(out)}
    )
    run_robustness(config, log=lambda m: None, shard=Shard(0, 2))
    return out


def test_a_shard_is_never_taken_for_a_run(shard, capsys):
    import boi

    for argv in (["report", str(shard)], ["rank", str(shard)]):
        code, text = _boi(capsys, *argv)
        assert code == 2, argv
        assert "is shard 0/2 of a run, not a whole run" in text and "boi merge" in text
        assert "Traceback" not in text
    with pytest.raises(UserError, match=r"is shard 0/2 of a run.*boi merge"):
        boi.open_run(shard)
    code, text = _boi(capsys, "analyze", "hints", str(shard))
    assert code == 2 and "boi merge" in text


def test_an_unfinished_run_is_not_ranked_and_its_report_says_so(finished_run, capsys):
    run = finished_run / "runs" / "x"
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "completed": False}))
    code, text = _boi(capsys, "rank", str(run))
    assert code == 2 and "is an unfinished run" in text
    code, text = _boi(capsys, "report", str(run))
    assert code == 0 and "is an unfinished run" in text and "covers only the samples" in text


def test_minimal_refuses_a_task_id_the_run_does_not_hold(finished_run):
    from boi.analysis.minimal import MinimalConfig, read_run

    with pytest.raises(UserError, match=r"--task-id 'HumanEval/9' is not a problem of .*HumanEval/0"):  # fmt: skip
        read_run(finished_run / "runs" / "x", MinimalConfig(task_ids=("HumanEval/9",)))


# --------------------------------------------------------------------------- bias configs


def _socialbias_task(**fields: Any) -> dict[str, Any]:
    return {
        "class_name": "Person",
        "related_attributes": ["income"],
        "method_name": "qualifies",
        "docstring": "Return True if the person qualifies.",
        "test_related_attributes": [["income", "int", "[24000, 25000]"]],
        "sensitive_attributes": ["gender", "age"],
        **fields,
    }


def test_a_string_where_a_list_belongs_is_refused_naming_the_field(tmp_path):
    from bias.fairness_tests.tasks import load_socialbias_bench

    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([_socialbias_task(), _socialbias_task(related_attributes="income")]))
    with pytest.raises(UserError, match=r"task 1: related_attributes is a str \('income'\), not a list"):  # fmt: skip
        load_socialbias_bench(path)
    path.write_bytes(BOM + json.dumps([_socialbias_task()]).encode())  # a BOM is read past
    tasks, issues = load_socialbias_bench(path)
    assert len(tasks) == 1 and not issues


def test_a_temperature_ablation_over_fixed_completions_is_refused(tmp_path):
    from benchmarks.common.config import from_mapping
    from bias.fairness_tests.ablations import ExperimentConfig

    completions = tmp_path / "c.jsonl"
    completions.write_text(json.dumps({"task_id": "socialbias_bench/0", "completion": "x"}) + "\n")
    with pytest.raises(UserError, match=r"compares temperatures, but base.completions"):
        from_mapping(
            ExperimentConfig,
            {
                "kind": "solar_temperature",
                "axis": [1.0, 0.2],
                "out_dir": str(tmp_path / "exp"),
                "base": {"completions": str(completions), "models": [{"kind": "reference"}]},
            },
        )


def test_a_bias_experiment_checks_its_inputs_before_claiming(tmp_path, capsys):
    config = tmp_path / "exp.yaml"
    config.write_text(
        json.dumps(
            {
                "kind": "huang_temperature",
                "axis": [0.0, 1.0],
                "base": {"suite": "socialbias_bench", "models": [{"kind": "reference"}]},
            }
        )
    )
    out = tmp_path / "exp"
    code, text = _boi(capsys, "bias", "experiment", str(config), "--data", str(tmp_path / "missing.json"), "--out", str(out))  # fmt: skip
    assert code == 2 and "missing.json" in text and "Traceback" not in text
    assert not (out / "experiment-manifest.json").exists()
