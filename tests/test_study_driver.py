"""One driver for every study (`benchmarks.study`): each flag it owns works for each study.

- `--shard` + `boi merge`: a sharded and merged `boi bias test` (SocialBias-Bench methods and
  text-to-code functions, with a feedback round) and `boi bias run` give the unsharded run's
  report byte for byte (boi run's is tests/test_shards.py);
- `--dry-run`: the counts match the run that follows, for the bias studies (boi run's is
  tests/test_dry_run.py);
- `--completions`: completions made elsewhere are judged by `boi run` as a model's;
- the flags are there, with one meaning, on every study's command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common.config import to_dict
from benchmarks.common.errors import UserError
from benchmarks.study import Shard, estimate_study, run_study
from bias.fairness_tests.run import FairnessStudy
from bias.modifier_prompts.run import ModifierStudy
from boi.cli import main
from boi.runner import RobustnessStudy, load_run_config
from boi.studies import merge_runs
from tests.test_bias_fairness import TASKS, TEXT_TO_CODE, scripted  # noqa: F401  (a fixture)
from tests.test_bias_fairness import _config as fairness_config
from tests.test_bias_run import _config as modifier_config
from tests.test_bias_run import scripted as scripted_bias  # noqa: F401  (a fixture)


def quiet(message: str) -> None:
    pass


def report_files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "report").iterdir()) if p.is_file()}


def untimed(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in path.open()]


def shard_and_merge(make: Any, tmp_path: Path, count: int) -> Path:
    """Run the study's shards, each in its own directory, and merge them; the merged run."""
    shards = []
    for index in range(count):
        out = tmp_path / f"shard{index}"
        outcome = run_study(make(out), shard=Shard(index, count), log=quiet)
        assert f"shard {index}/{count}" in outcome.summary_line
        assert not (out / "report").exists()  # a shard has no report of its own
        shards.append(out)
    merged = merge_runs(tmp_path / "merged" / "run", shards, quiet)  # titles name the folder
    assert f"boi merge: {count} shards" in merged.summary_line
    return merged.out_dir


@pytest.mark.usefixtures("scripted")
@pytest.mark.parametrize("suite", [TASKS, TEXT_TO_CODE], ids=["methods", "text-to-code"])
def test_a_sharded_fairness_run_merges_into_the_unsharded_report(tmp_path, suite):
    def make(out: Path) -> FairnessStudy:
        config = fairness_config(tmp_path, suite, feedback_rounds=1)
        return FairnessStudy.from_config({**to_dict(config), "out_dir": str(out)})

    whole = run_study(make(tmp_path / "whole" / "run"), log=quiet)
    merged = shard_and_merge(make, tmp_path, 2)
    assert report_files(merged) == report_files(whole.out_dir)
    verdicts = sorted(
        p.relative_to(whole.out_dir) for p in whole.out_dir.rglob("verdicts/**/*.jsonl")
    )
    # Every verdict in the unsharded order (all but `seconds`, the sandbox's own timing).
    assert verdicts and all(
        untimed(merged / path) == untimed(whole.out_dir / path) for path in verdicts
    )
    rounds = {
        json.loads(line)["round"] for path in verdicts for line in (whole.out_dir / path).open()
    }
    assert rounds == {0, 1}  # the feedback round was sharded and merged too


@pytest.mark.usefixtures("scripted_bias")
def test_a_sharded_modifier_run_merges_into_the_unsharded_report(tiny_bias_classifier, tmp_path):
    def make(out: Path) -> ModifierStudy:
        config = modifier_config(tmp_path, tiny_bias_classifier)
        return ModifierStudy.from_config({**to_dict(config), "out_dir": str(out)})

    whole = run_study(make(tmp_path / "whole" / "run"), log=quiet)
    merged = shard_and_merge(make, tmp_path, 3)
    assert report_files(merged) == report_files(whole.out_dir)
    manifest = json.loads((merged / "manifest.json").read_text())
    assert manifest["study"] == "boi bias run" and manifest["classifier"]


@pytest.mark.usefixtures("scripted", "scripted_bias")
def test_shards_of_two_studies_are_not_merged(tiny_bias_classifier, tmp_path):
    fairness = FairnessStudy(fairness_config(tmp_path / "f", TASKS))
    modifier = ModifierStudy(modifier_config(tmp_path / "m", tiny_bias_classifier))
    run_study(fairness, shard=Shard(0, 2), log=quiet)
    run_study(modifier, shard=Shard(1, 2), log=quiet)
    with pytest.raises(UserError, match=r"is a shard of boi bias run but .* of boi bias test"):
        merge_runs(tmp_path / "merged", [fairness.config.out_dir, modifier.config.out_dir], quiet)
    assert not (tmp_path / "merged").exists()


@pytest.mark.usefixtures("scripted")
def test_the_fairness_estimate_counts_what_the_run_then_does(tmp_path):
    study = FairnessStudy(fairness_config(tmp_path, TASKS))
    estimate = estimate_study(study, quiet)
    assert not (tmp_path / "run").exists()  # nothing written
    outcome = run_study(study, log=quiet)
    verdicts = [
        json.loads(line)
        for p in (outcome.out_dir / "verdicts").rglob("*.jsonl")
        for line in p.open()
    ]
    assert estimate.requested_samples == len(verdicts)
    assert estimate.generations == len(verdicts)  # distinct prompts, n each, one seed
    executed = [v for v in verdicts if v["reading"]["status"] == "extracted"]
    assert len(executed) <= estimate.executions


@pytest.mark.usefixtures("scripted_bias")
def test_the_modifier_estimate_counts_what_the_run_then_does(tiny_bias_classifier, tmp_path):
    study = ModifierStudy(modifier_config(tmp_path, tiny_bias_classifier))
    estimate = estimate_study(study, quiet)
    assert not (tmp_path / "run").exists()
    outcome = run_study(study, log=quiet)
    assert estimate.requested_samples == outcome.generation["requested_samples"]
    assert estimate.generations == outcome.generation["unique_samples"]
    rows = sum(1 for p in (outcome.out_dir / "completions").rglob("*.jsonl") for _ in p.open())
    assert estimate.requested_samples == rows


def _robustness_config(out: Path, completions: Path) -> Any:
    return load_run_config(
        None,
        {
            "out_dir": str(out),
            "datasets": [{"name": "humaneval", "task_ids": ["HumanEval/0", "HumanEval/2"]}],
            "transforms": ["original"],
            "name_only_probe": False,
            "models": [{"kind": "completions", "model": str(completions)}],
            "settings": [{"label": "given", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
            "seeds": [0],
            "bootstrap": 0,
            "execution": {"calibrate": False},
        },
    )


def test_boi_run_judges_completions_made_elsewhere(tmp_path, capsys):
    from benchmarks.loaders import load_benchmark

    problems = {p.task_id: p for p in load_benchmark("humaneval").problems}
    path = tmp_path / "completions.jsonl"
    lines = [
        # By task id: the right solution; by prompt text: a wrong one.
        {"task_id": "HumanEval/0", "completion": problems["HumanEval/0"].canonical_solution},
        {"prompt": problems["HumanEval/2"].prompt, "completion": "    return None\n"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(_robustness_config(tmp_path / "run", path).to_json()))

    assert main(["run", "--config", str(config_path), "--completions", str(path)]) == 0
    # Nothing was generated: the summary says the samples were read from the file.
    summary = capsys.readouterr().out
    assert "2 read from the given completions" in summary and "generated" not in summary
    results = [
        json.loads(line)
        for line in (
            tmp_path / "run" / "results" / "completions-completions.jsonl" / "given.jsonl"
        ).open()
    ]
    assert {r["task_id"]: r["passed"] for r in results} == {
        "HumanEval/0": True,
        "HumanEval/2": False,
    }
    # The dry run counts the file's samples as a model's, and writes nothing.
    capsys.readouterr()
    dry = tmp_path / "dry.json"
    dry.write_text(json.dumps(_robustness_config(tmp_path / "dry", path).to_json()))
    assert main(["run", "--config", str(dry), "--dry-run"]) == 0
    assert "samples: 2 requested" in capsys.readouterr().out
    assert not (tmp_path / "dry").exists()


def test_boi_run_takes_a_completions_file_of_several_models_as_one_model_each(tmp_path):
    from benchmarks.loaders import load_benchmark

    problem = load_benchmark("humaneval").problems[0]
    path = tmp_path / "completions.jsonl"
    lines = [
        {"task_id": problem.task_id, "completion": problem.canonical_solution, "model": "good"},
        {"task_id": problem.task_id, "completion": "    return None\n", "model": "bad x"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config_path = tmp_path / "config.json"
    config = _robustness_config(tmp_path / "run", path).to_json()
    config["datasets"][0]["task_ids"] = [problem.task_id]
    config_path.write_text(json.dumps(config))
    assert main(["run", "--config", str(config_path), "--completions", str(path)]) == 0
    passed = {
        folder.name: json.loads(folder.joinpath("given.jsonl").read_text())["passed"]
        for folder in sorted((tmp_path / "run" / "results").iterdir())
    }
    assert passed == {"completions-bad_x": False, "completions-good": True}


def test_a_completions_file_that_lacks_a_prompt_is_one_sentence(tmp_path):
    path = tmp_path / "completions.jsonl"
    path.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "    return 1\n"}) + "\n")
    study = RobustnessStudy(_robustness_config(tmp_path / "run", path))
    with pytest.raises(UserError, match=r"has no completion for the prompt 'def truncate_number"):
        run_study(study, log=quiet)
    missing = RobustnessStudy(_robustness_config(tmp_path / "other", tmp_path / "none.jsonl"))
    with pytest.raises(UserError, match=r"completions file .*none.jsonl does not exist"):
        run_study(missing, log=quiet)
    assert not (tmp_path / "other").exists()  # refused before the directory was claimed
    broken = tmp_path / "broken.jsonl"
    line = json.dumps({"task_id": "HumanEval/0", "completion": "    return 1\n"})
    broken.write_text(line + "\nnot json\n")
    study = RobustnessStudy(_robustness_config(tmp_path / "third", broken))
    with pytest.raises(UserError, match=r"broken.jsonl line 2 is not valid JSON"):
        run_study(study, log=quiet)
    assert not (tmp_path / "third").exists()  # read before the claim, not when the model loads


@pytest.mark.parametrize("command", [["run"], ["bias", "run"], ["bias", "test"]])
def test_every_study_command_has_the_driver_flags(command, capsys):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = capsys.readouterr().out
    for flag in (
        "--shard",
        "--dry-run",
        "--tokens-per-second",
        "--gpus",
        "--ray",
        "--ray-shards",
        "--completions",
    ):
        assert flag in text, (command, flag)


def test_an_ablation_has_the_estimate_and_shards_its_runs_as_test_runs(capsys):
    with pytest.raises(SystemExit):
        main(["bias", "experiment", "--help"])
    text = capsys.readouterr().out
    assert "--dry-run" in text and "--tokens-per-second" in text
    # Its sub-runs are boi bias test runs, sharded and merged each as such.
    assert "--shard" not in text and "--ray" not in text
