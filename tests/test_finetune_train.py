"""Single-process training: resume after a kill, refusals, export, bad input."""

from __future__ import annotations

import json

import pytest

from benchmarks.common.errors import UserError
from finetune.config import load_train_config
from tests.finetune_helpers import run_python, toy_examples, write_toy_run

# Kills the training process (SIGKILL, no clean-up) while it is renaming the step-6 checkpoint
# into place, i.e. after the step-4 checkpoint is complete and the step-6 one is half done.
CRASH_DURING_CHECKPOINT = """
import os, signal, sys
import finetune.train as train
replace_dir = train.replace_dir
def crash(tmp, final):
    if tmp.name == ".tmp-step-00000006":
        os.kill(os.getpid(), signal.SIGKILL)
    replace_dir(tmp, final)
train.replace_dir = crash
sys.exit(train.main(["--config", sys.argv[1]]))
"""


def _weights(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _data_order(run):
    return (run / "data_order" / "rank-0.jsonl").read_text()


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("uninterrupted")
    config = write_toy_run(tmp, eval_every=2, checkpoint_every=2, max_epochs=2, patience=20)
    proc = run_python(["-m", "finetune.train", "--config", str(config)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    (tmp / "stderr.txt").write_text(proc.stderr)
    return tmp


def test_training_shows_a_bar_over_steps(uninterrupted):
    import re

    err = (uninterrupted / "stderr.txt").read_text()
    # tqdm's line: description, percent, count of optimizer steps, then elapsed<ETA.
    assert re.search(r"train:\s+\d+%\|.*\| \d+/\d+ \[[\d:]+<", err), err[-2000:]


def test_training_writes_results_and_a_loadable_best_model(uninterrupted):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run = uninterrupted / "run"
    results = json.loads((run / "all_results.json").read_text())
    assert results["completed"] and results["stop_reason"] == "max_epochs 2 reached"
    assert results["config"]["learning_rate"] == 3e-3
    assert results["distributed"]["gradient_accumulation_steps"] == 2
    assert results["distributed"]["effective_batch_size"] == 4
    assert results["data"]["pad_token"].startswith("eos")
    val = dict(results["val_losses"])
    assert val[results["best_step"]] == results["best_val_loss"] == min(val.values())
    assert val[0] > results["best_val_loss"]  # baseline before training is worse
    model = AutoModelForCausalLM.from_pretrained(run / "model")
    tokenizer = AutoTokenizer.from_pretrained(run / "model")
    assert model.config.num_hidden_layers == 2 and tokenizer.eos_token == "<eos>"
    assert (
        json.loads((run / "model" / "boi_training.json").read_text())["best_step"]
        == results["best_step"]
    )
    assert len(list((run / "checkpoints").glob("step-*"))) == 1  # keep_checkpoints: 1


def test_resume_after_kill_matches_uninterrupted_run(tmp_path, uninterrupted):
    config = write_toy_run(tmp_path, eval_every=2, checkpoint_every=2, max_epochs=2, patience=20)
    run = tmp_path / "run"
    killed = run_python(["-c", CRASH_DURING_CHECKPOINT, str(config)])
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert (run / "checkpoints" / ".tmp-step-00000006").exists()
    assert [p.name for p in (run / "checkpoints").glob("step-*")] == ["step-00000004"]
    assert not (run / "all_results.json").exists()

    resumed = run_python(["-m", "finetune.train", "--config", str(config)])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming from" in resumed.stdout and "step-00000004" in resumed.stdout
    assert not (run / "checkpoints" / ".tmp-step-00000006").exists()

    reference = uninterrupted / "run"
    ours, theirs = (json.loads((r / "all_results.json").read_text()) for r in (run, reference))
    assert ours["resumed_from"].endswith("step-00000004")
    for key in ("train_losses", "val_losses"):
        flat = [[x for pair in r[key] for x in pair] for r in (ours, theirs)]
        assert flat[0] == pytest.approx(flat[1], rel=1e-6), key
    assert _data_order(run) == _data_order(reference)
    mine, reference_weights = _weights(run / "model"), _weights(reference / "model")
    assert mine.keys() == reference_weights.keys()
    for name, tensor in mine.items():
        assert tensor.allclose(reference_weights[name], atol=1e-6), name
    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [m["step"] for m in metrics if "train_loss" in m]
    assert steps == sorted(set(steps))  # no duplicated lines from the killed session


def test_output_dir_of_another_run_is_refused_and_left_alone(tmp_path, uninterrupted):
    run = uninterrupted / "run"
    before = _weights(run / "model")
    config = write_toy_run(
        tmp_path,
        eval_every=2,
        checkpoint_every=2,
        max_epochs=2,
        patience=20,
        learning_rate=1e-3,
        output_dir=str(run),
    )
    proc = run_python(["-m", "finetune.train", "--config", str(config)])
    assert proc.returncode == 2
    assert "holds a different training run (changed:" in proc.stderr
    assert "learning_rate" in proc.stderr
    after = _weights(run / "model")
    assert all(before[k].equal(after[k]) for k in before)


def test_finished_run_is_not_retrained(uninterrupted):
    config = uninterrupted / "train.yaml"
    proc = run_python(["-m", "finetune.train", "--config", str(config)])
    assert proc.returncode == 0 and "already holds the finished run" in proc.stdout


def test_the_manifest_names_no_machine_path_and_an_older_one_still_resumes(uninterrupted, tmp_path):
    """run_config.json records what reproduces the run, not the machine (issue 44, item 6):
    the model folder, data file and output_dir by name; a directory written before, with the
    paths as typed and the identity over them, is still this run."""
    import shutil

    from benchmarks.common.provenance import file_sha256

    text = (uninterrupted / "run" / "run_config.json").read_text()
    assert str(uninterrupted) not in text
    manifest = json.loads(text)
    assert manifest["config"]["model"] == "tiny-model" and manifest["config"]["output_dir"] == "run"
    assert manifest["inputs"]["data"]["path"] == "data.jsonl"
    assert manifest["results"] == "all_results.json"
    older = tmp_path / "older"
    shutil.copytree(uninterrupted / "run", older)
    config = load_train_config(uninterrupted / "train.yaml", {"output_dir": str(older)})
    identity = config.identity(file_sha256(config.data), portable=False)
    assert identity != manifest["identity"]
    written = {**manifest, "config": config.to_json(), "identity": identity}
    (older / "run_config.json").write_text(json.dumps(written))
    argv = ["-m", "finetune.train", "--config", str(uninterrupted / "train.yaml")]
    proc = run_python([*argv, "--output-dir", str(older)])
    assert proc.returncode == 0 and "already holds the finished run" in proc.stdout, proc.stderr


def test_config_errors_are_one_clear_sentence(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("learning_rat: 1e-5\n")
    with pytest.raises(
        UserError, match="learning_rat is not a config key \\(did you mean 'learning_rate'\\?\\)"
    ):
        load_train_config(bad)
    with pytest.raises(UserError, match="not a multiple of per_device_batch_size"):
        load_train_config(None, {"batch_size": 64, "per_device_batch_size": 6})
    assert load_train_config(None).learning_rate == 1e-5  # paper defaults
    assert load_train_config(None, {"learning_rate": "3e-5"}).learning_rate == 3e-5
    written = tmp_path / "lr.yaml"
    written.write_text("learning_rate: 1e-5\n")  # YAML 1.1 (PyYAML) reads this as a string
    assert load_train_config(written).learning_rate == 1e-5
    with pytest.raises(UserError, match=r"lr_schedule 'cosin'.*did you mean 'cosine'"):
        load_train_config(None, {"lr_schedule": "cosin"})


def test_empty_training_split_is_refused(tmp_path):
    examples = [e.__class__(**{**e.__dict__, "split": "validation"}) for e in toy_examples(4)]
    config = write_toy_run(tmp_path, examples)
    proc = run_python(["-m", "finetune.train", "--config", str(config)])
    assert proc.returncode == 2 and "has no training examples" in proc.stderr
