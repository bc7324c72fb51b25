"""Careless input, issue 49: what the held-out sweeps still found. Each test is one cause, met
as a user meets it (the `boi` command line, small files in a temporary folder), and fails on the
code before its fix: a refusal names the file, line or field and what to do, in one sentence;
nothing the user named as input is written; no bad input ends in exit 0 or a wrong number."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common.errors import UserError
from boi.cli import main
from tests.helpers import reference_run_config


def _config(tmp_path: Path, **overrides: Any) -> Path:
    """A `boi run` config (JSON, which is YAML) of two HumanEval problems judged by their own
    solutions (`reference`): nothing to load, nothing to download."""
    config = reference_run_config(
        {"name": "humaneval", "task_ids": ["HumanEval/0", "HumanEval/2"]},
        out_dir=str(tmp_path / "run"),
        bootstrap=0,
        execution={"calibrate": False},
    )
    config.update(overrides)
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


# --------------------------------------------------------------------------- reading a run back


def _run_dir(path: Path, **manifest: Any) -> Path:
    """A directory holding only a manifest (what a killed, a foreign or a newer run leaves)."""
    path.mkdir(parents=True)
    record = {"format_version": 2, "config": {"settings": [], "models": []}, **manifest}
    (path / "manifest.json").write_text(json.dumps(record))
    return path


def test_a_run_dir_that_is_a_file_is_called_a_file(tmp_path, capsys):
    """Before: "(it does not exist)" for a file that is there."""
    path = tmp_path / "results.txt"
    path.write_text("x\n")
    assert main(["rank", str(path)]) == 2
    assert f"{path} is not a boi run directory (it is a file)" in _error(capsys)
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "nothing does not exist; pass a boi run directory or a results JSONL" in _error(capsys)


def test_an_interrupted_run_is_not_called_incompatible(tmp_path, capsys):
    """A run killed (or refused after its claim) before problems.jsonl: before, "written by an
    incompatible boi version"."""
    run = _run_dir(tmp_path / "run", study="boi run", completed=False)
    for command in (["rank", str(run)], ["report", str(run)]):
        assert main(command) == 2
        err = _error(capsys)
        assert "stopped before it wrote problems.jsonl; rerun the same `boi run`" in err
        assert "incompatible" not in err


def test_another_studys_run_dir_is_named_as_such(tmp_path, capsys):
    """A `boi bias run` directory given to boi run's readers, and the reverse: before, an
    "incompatible boi version" or a KeyError-shaped refusal."""
    bias = _run_dir(tmp_path / "bias", study="boi bias run", completed=True)
    assert main(["rank", str(bias)]) == 2
    assert f"{bias} is a `boi bias run` directory, not a `boi run` one" in _error(capsys)
    assert main(["report", str(bias)]) == 2
    assert "is a `boi bias run` directory, not a `boi run` one" in _error(capsys)
    robustness = _run_dir(tmp_path / "robustness", study="boi run", completed=True)
    assert main(["bias", "report", str(robustness)]) == 2
    assert "is a `boi run` directory, not a `boi bias run` one" in _error(capsys)


def test_bias_report_refuses_a_shard(tmp_path, capsys):
    """Before: a whole-run report of the shard's half of the tasks, written into the shard."""
    shard = _run_dir(tmp_path / "shard", study="boi bias run", shard="0/2", completed=True)
    assert main(["bias", "report", str(shard)]) == 2
    assert f"{shard} is shard 0/2 of a run, not a whole run" in _error(capsys)
    assert sorted(p.name for p in shard.iterdir()) == ["manifest.json"]


def test_boi_report_refuses_a_newer_manifest_format(tmp_path, capsys):
    """Before: `boi report` read a manifest of a newer format on trust."""
    run = _run_dir(tmp_path / "run", study="boi run", completed=True, format_version=99)
    (run / "problems.jsonl").write_text("")
    assert main(["report", str(run)]) == 2
    assert "manifest format 99" in _error(capsys)


# --------------------------------------------------------------------------- configs


def test_a_key_given_twice_in_a_yaml_config_is_refused_with_both_lines(tmp_path, capsys):
    """Before: YAML kept the last `seeds:` silently, so the run differed from the file's top."""
    path = tmp_path / "twice.yaml"
    path.write_text("seeds: [0]\nmodels:\n  - kind: reference\nseeds: [1, 2]\n")
    assert main(["run", "--config", str(path), "--dry-run"]) == 2
    assert f"{path} gives 'seeds' twice (lines 1 and 4)" in _error(capsys)
    # Nested mappings too; a merge key's values may be overridden (that is what it is for).
    path.write_text("models:\n  - kind: reference\n    kind: hf\n")
    assert main(["run", "--config", str(path), "--dry-run"]) == 2
    assert "gives 'kind' twice (lines 2 and 3)" in _error(capsys)
    from benchmarks.common.config import load_yaml

    path.write_text("base: &b {seeds: [0]}\nother:\n  <<: *b\n  seeds: [1]\n")
    assert load_yaml(path)["other"] == {"seeds": [1]}


def test_a_config_folder_is_called_a_folder(tmp_path, capsys):
    """Before: "Config file X does not exist" for a folder that is there."""
    assert main(["run", "--config", str(tmp_path)]) == 2
    assert f"Config file {tmp_path} is a folder; pass a YAML file" in _error(capsys)


# --------------------------------------------------------------------------- given completions


def _solutions() -> dict[str, Any]:
    from benchmarks.loaders import load_benchmark

    wanted = ("HumanEval/0", "HumanEval/2")
    return {p.task_id: p for p in load_benchmark("humaneval").problems if p.task_id in wanted}


def _completions(tmp_path: Path, lines: list[dict[str, Any]], name: str = "given.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _results(run: Path) -> dict[str, list[bool]]:
    passed: dict[str, list[bool]] = {}
    for path in sorted((run / "results").rglob("*.jsonl")):
        if path.is_file():
            for line in path.read_text().splitlines():
                row = json.loads(line)
                passed.setdefault(row["task_id"], []).append(row["passed"])
    return passed


def test_given_completions_under_several_seeds_are_refused(tmp_path, capsys):
    """Before: each seed took the same completions again, pooled as independent samples."""
    problems = _solutions()
    path = _completions(
        tmp_path, [{"task_id": t, "completion": p.canonical_solution} for t, p in problems.items()]
    )
    config = _config(tmp_path, seeds=[0, 1])
    assert main(["run", "--config", str(config), "--completions", str(path)]) == 2
    assert "gives the same samples under every seed" in _error(capsys)
    assert not (tmp_path / "run").exists()  # refused before the claim


def test_a_completions_file_numbering_samples_from_one_is_refused(tmp_path, capsys):
    """Before: sample 0 of every task was an empty completion, judged failed."""
    problems = _solutions()
    lines = [
        {"task_id": t, "completion": p.canonical_solution, "sample_index": 1}
        for t, p in problems.items()
    ]
    path = _completions(tmp_path, lines)
    config = _config(tmp_path)
    assert main(["run", "--config", str(config), "--completions", str(path)]) == 2
    err = _error(capsys)
    assert f"{path} line 1: the samples of 'HumanEval/0'" in err
    assert "have no sample_index 0 (they are 1)" in err
    assert not (tmp_path / "run").exists()


def test_prompts_match_without_surrounding_whitespace_and_an_edited_file_is_another_run(
    tmp_path, capsys
):
    """The format promises prompts matched without surrounding whitespace (before: compared
    byte for byte, so no prompt matched); an edited file is refused as another run by its
    name (before: a sentence about the run's internal results file)."""
    problems = _solutions()
    lines = [
        {"prompt": "\n" + p.prompt + "  \n", "completion": p.canonical_solution}
        for p in problems.values()
    ]
    path = _completions(tmp_path, lines)
    config = _config(tmp_path)
    assert main(["run", "--config", str(config), "--completions", str(path)]) == 0
    assert _results(tmp_path / "run") == {"HumanEval/0": [True], "HumanEval/2": [True]}
    capsys.readouterr()
    lines[0]["completion"] = "    return None\n"
    _completions(tmp_path, lines)
    assert main(["run", "--config", str(config), "--completions", str(path)]) == 2
    assert "the content of a file it hashes did: a completions file?" in _error(capsys)
    assert _results(tmp_path / "run") == {"HumanEval/0": [True], "HumanEval/2": [True]}


# --------------------------------------------------------------------------- datasets


def test_a_dataset_where_no_problem_splits_is_refused_before_the_claim(tmp_path, capsys):
    """Before: the run claimed its directory, ran, and ended in "there are no result rows to
    report on; run the samples through boi execute first"."""
    data = tmp_path / "flat.jsonl"
    record = {
        "task_id": "X/0",
        "prompt": "x = 1\n",
        "entry_point": "f",
        "test": "",
        "canonical_solution": "",
    }
    data.write_text(json.dumps(record) + "\n")
    config = _config(tmp_path, datasets=[{"name": str(data)}])
    assert main(["run", "--config", str(config)]) == 2
    err = _error(capsys)
    assert "dataset flat: none of its 1 problems splits into blocks (X/0: the prompt defines" in err
    assert "boi execute" not in err
    assert not (tmp_path / "run").exists()


def test_humanevalplus_data_that_is_a_folder_is_called_a_folder(tmp_path, capsys):
    config = _config(tmp_path, datasets=[{"name": "humanevalplus", "data": str(tmp_path)}])
    assert main(["run", "--config", str(config), "--dry-run"]) == 2
    assert f"{tmp_path} is a folder; pass the HumanEval+" in _error(capsys)


# --------------------------------------------------------------------------- reused generations

# Opens for writing of the paths a test watches, seen through the interpreter's audit hook (a
# hook cannot be removed, so it is added once and watches only while a test fills the set).
_WATCHED: set[str] = set()
_WRITES: list[str] = []
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_TRUNC | os.O_CREAT


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _WATCHED and isinstance(args[0], str | os.PathLike):
        path = os.path.realpath(os.fspath(args[0]))
        mode, flags = args[1], args[2]
        if path in _WATCHED and (
            (isinstance(mode, str) and set(mode) & set("wax+")) or flags & _WRITE_FLAGS
        ):
            _WRITES.append(f"{path} opened with mode {mode!r}, flags {flags:#o}")


sys.addaudithook(_audit)


def test_a_reused_generation_cache_is_only_read(tmp_path, capsys):
    """`--reuse-generations FILE` names another run's cache: before, it was opened for
    appending and its torn last line cut, and a read-only cache was refused."""
    first = _config(tmp_path)
    assert main(["run", "--config", str(first)]) == 0
    source = tmp_path / "other-generations.jsonl"
    source.write_bytes(
        (tmp_path / "run" / "generations.jsonl").read_bytes() + b'{"key": "abc", "raw": "de'
    )
    os.utime(source, (1_000_000_000, 1_000_000_000))
    source.chmod(0o444)
    before = source.read_bytes()
    capsys.readouterr()
    _WRITES.clear()
    _WATCHED.add(os.path.realpath(source))
    try:
        second = _config(tmp_path, out_dir=str(tmp_path / "second"))
        assert main(["run", "--config", str(second), "--reuse-generations", str(source)]) == 0
    finally:
        _WATCHED.clear()
    assert _WRITES == []
    assert source.read_bytes() == before
    assert source.stat().st_mtime == 1_000_000_000
    captured = capsys.readouterr()
    assert "0 generated (2 from cache)" in captured.out
    assert "other-generations.jsonl line 3 is cut off" in captured.err  # skipped, said
    # What was reused is in this run's own cache.
    own = (tmp_path / "second" / "generations.jsonl").read_text().splitlines()
    assert len(own) == 2


# --------------------------------------------------------------------------- HumanEval+


def test_humanevalplus_computes_only_what_a_run_selects_and_says_so(tmp_path, capsys, monkeypatch):
    """The first HumanEval+ load of a machine runs every canonical solution on every input:
    before, minutes without a word whatever --limit said (a dry run of two problems took
    133 s here); now only the selected problems, with a line and a progress bar."""
    import benchmarks.loaders.humanevalplus as hep

    monkeypatch.setenv("BOI_CACHE_DIR", str(tmp_path / "cache"))
    real = hep.run_jobs
    ran: list[str] = []
    quick = {"HumanEval/0", "HumanEval/1", "HumanEval/2"}

    def recording(jobs: list[dict[str, Any]], hash_seed: str, **kwargs: Any) -> dict[str, Any]:
        # Runs only problems that take milliseconds, so that the old code fails fast too.
        ran.extend(job["task_id"] for job in jobs)
        skipped = {
            j["task_id"]: {"error": "not run here"} for j in jobs if j["task_id"] not in quick
        }
        return {**skipped, **real([j for j in jobs if j["task_id"] in quick], hash_seed, **kwargs)}

    monkeypatch.setattr(hep, "run_jobs", recording)
    config = _config(tmp_path, datasets=[{"name": "humanevalplus", "limit": 2}])
    assert main(["run", "--config", str(config), "--dry-run"]) == 0
    assert sorted(set(ran)) == ["HumanEval/0", "HumanEval/1"]
    err = capsys.readouterr().err
    assert "computing the expected outputs of 2 problems" in err
    assert "HumanEval+ expected outputs" in err  # the progress bar
    # Another selection computes what the cache lacks, and the first load's problems stay.
    ran.clear()
    config = _config(tmp_path, datasets=[{"name": "humanevalplus", "task_ids": ["HumanEval/2"]}])
    assert main(["run", "--config", str(config), "--dry-run"]) == 0
    assert sorted(set(ran)) == ["HumanEval/2"]
    ran.clear()
    loaded = hep.load_humanevalplus(task_ids=["HumanEval/1", "HumanEval/0"])
    assert [p.task_id for p in loaded.problems] == ["HumanEval/0", "HumanEval/1"] and ran == []
    # The run's prompts digest covers the dataset, whatever the selection built.
    every = [(r["task_id"], r["prompt"]) for r in hep._records(hep.DATA_FILE)]
    assert loaded.dataset_prompts == every and len(every) == 164


# --------------------------------------------------------------------------- file names


def test_a_file_name_that_is_not_utf8_is_refused_before_anything_is_written(tmp_path, capsys):
    """A Latin-1 file name reaches Python as lone surrogates: before, `--dataset` of one ended
    in "this is a bug in boi" writing problems.jsonl (its label is the file's name), and `--out`
    of one in the same writing the HTML report, after the run had claimed its directory."""
    problems = _solutions()
    data = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"he\xff.jsonl"))
    Path(data).write_text(
        "".join(json.dumps(p.to_json()) + "\n" for p in problems.values()), encoding="utf-8"
    )
    config = _config(tmp_path)
    out = str(tmp_path / "run")
    assert main(["run", "--config", str(config), "--dataset", data, "--out", out]) == 2
    err = _error(capsys)
    assert "--dataset '" in err and "he\\xff.jsonl' is not valid UTF-8" in err
    assert "rename the file or folder to a UTF-8 name" in err
    assert "bug in boi" not in err
    odd_out = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"o\xff"))
    assert main(["run", "--config", str(config), "--out", odd_out]) == 2
    assert "--out '" in (err := _error(capsys)) and "o\\xff' is not valid UTF-8" in err
    assert sorted(os.listdir(os.fsencode(tmp_path))) == [b"config.yaml", b"he\xff.jsonl"]
    # Through the Python API (a name from a listing of the file system), the config says which key.
    from boi.runner.config import load_run_config

    with pytest.raises(UserError, match=r"config.out_dir 'o\\xff' is not valid UTF-8"):
        load_run_config(None, {"out_dir": "o\udcff"})


# --------------------------------------------------------------------------- many-valued flags


@pytest.mark.parametrize(
    ("line", "flag", "taken", "missing"),
    [
        # An optional positional: before, taken silently, then "boi perturb needs a DATASET".
        ("perturb --transforms original anonymize humaneval --out OUT", "--transforms", "original anonymize humaneval", "DATASET"),
        # Required ones: before, argparse's bare "the following arguments are required".
        ("keywords extract --extra-stop-words foo humaneval", "--extra-stop-words", "foo humaneval", "DATASET"),
        ("finetune build-data --out OUT --transforms original a.jsonl", "--transforms", "original a.jsonl", "SOURCE"),
        ("analyze attention --transforms original RUN", "--transforms", "original RUN", "RUN_DIR"),
        ("execute --preload json a.jsonl b.jsonl --out OUT", "--preload", "json a.jsonl b.jsonl", "PROBLEMS and SAMPLES"),
    ],
)  # fmt: skip
def test_a_flag_of_many_values_never_takes_a_positional_silently(
    tmp_path, capsys, line, flag, taken, missing
):
    words = line.replace("OUT", str(tmp_path / "out")).split()
    assert main(words) == 2
    err = _error(capsys)
    assert f"{flag} reads every word after it up to the next flag, so it took {taken!r}" in err
    assert f"left {missing} out; put {missing} before {flag}." in err
    assert not (tmp_path / "out").exists()


def test_a_positional_before_a_flag_of_many_values_is_read_as_before(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert main(["perturb", "humaneval", "--transforms", "original", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 164


def test_a_completions_task_id_the_run_lacks_is_refused_before_the_claim(tmp_path, capsys):
    """Before: the run claimed its directory (manifest, problems.jsonl) and then refused the
    file when the backend loaded, after the perturbation."""
    problems = _solutions()
    lines = [{"task_id": t, "completion": p.canonical_solution} for t, p in problems.items()]
    config = _config(tmp_path)
    for wrong in ("HumanEval/999", "HumanEval/0::anonymize", "HumanEval/1"):
        path = _completions(tmp_path, [*lines, {"task_id": wrong, "completion": "    pass\n"}])
        assert main(["run", "--config", str(config), "--completions", str(path)]) == 2
        err = _error(capsys)
        assert f"{path} line 3: task_id {wrong!r} is not a task of this run" in err
        assert not (tmp_path / "run").exists()
    # The file's own tasks, by id, run as before.
    path = _completions(tmp_path, lines)
    assert main(["run", "--config", str(config), "--completions", str(path)]) == 0
    assert _results(tmp_path / "run") == {"HumanEval/0": [True], "HumanEval/2": [True]}
