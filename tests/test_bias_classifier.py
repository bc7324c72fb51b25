"""The code bias classifier: trained, saved, reloaded to the same numbers, evaluated with a
confusion matrix; bad data and missing classifiers get one sentence. A tiny in-process BERT
stands in for MiniLM (the real training is a command: docs/reference/bias.md, "The classifier")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.common.errors import UserError
from bias.modifier_prompts.classifier import (
    ClassifierConfig,
    evaluate,
    load_classifier,
    metrics_table,
    read_split,
    train_classifier,
)
from tests.bias_helpers import annotated_data


def test_evaluate_on_a_hand_counted_example():
    metrics = evaluate([1, 1, 0, 0, 1], [0.9, 0.2, 0.5, 0.1, 0.5])
    assert metrics["confusion"] == {"tn": 1, "fp": 1, "fn": 1, "tp": 2}
    assert metrics["accuracy"] == pytest.approx(3 / 5)
    assert metrics["precision"] == pytest.approx(2 / 3) and metrics["recall"] == pytest.approx(
        2 / 3
    )


@pytest.fixture(scope="module")
def trained(tiny_bias_classifier):
    record = json.loads((tiny_bias_classifier / "classifier.json").read_text(encoding="utf-8"))
    return Path(record["data"]["val"]["path"]).parent, tiny_bias_classifier, record


def test_training_writes_a_classifier_that_reloads_to_its_recorded_numbers(trained):
    data, folder, record = trained
    assert (folder / "classifier.json").is_file() and (folder / "model.safetensors").is_file()
    assert record["kind"] == "finetune" and record["data"]["train"]["examples"] == 16
    assert record["data"]["test"]["sha256"] and record["paper"]["test_accuracy"] == 0.9605
    classifier = load_classifier(str(folder), device="cpu")
    val = read_split(data / "val.jsonl")
    probabilities = classifier.probabilities([e.code for e in val], batch_size=5)
    assert all(0.0 <= p <= 1.0 for p in probabilities)
    again = evaluate([e.label for e in val], probabilities)
    assert again["confusion"] == record["metrics"]["val"]["confusion"]
    assert classifier.describe()["identity"] == record["identity"]
    table = metrics_table(record)
    assert "| val | 16 |" in table and "95.47" in table and "96.05" in table


def test_bad_data_and_missing_classifiers_are_one_sentence(tmp_path):
    folder = annotated_data(tmp_path / "data", per_split=2)
    (folder / "val.jsonl").write_text(
        json.dumps({"code": "x", "label": 2}) + "\n", encoding="utf-8"
    )
    with pytest.raises(UserError, match=r"val.jsonl line 1: label must be 0 or 1"):
        train_classifier(ClassifierConfig(data=str(folder), out=str(tmp_path / "c")))
    (folder / "test.jsonl").unlink()
    with pytest.raises(UserError, match=r"has no test\.jsonl"):
        train_classifier(ClassifierConfig(data=str(folder), out=str(tmp_path / "c")))
    with pytest.raises(UserError, match="no training data given; pass --data"):
        train_classifier(ClassifierConfig())
    with pytest.raises(
        UserError, match=r"holds no classifier\.json; .*train one with `boi bias train-classifier"
    ):
        load_classifier(str(tmp_path / "nowhere"))
    with pytest.raises(UserError, match="kind 'svm' is unknown"):
        ClassifierConfig(kind="svm")
    assert not (tmp_path / "c").exists()  # nothing half-written


@pytest.mark.embedded
def test_the_head_classifier_on_the_real_embedder(tmp_path):
    """The frozen all-MiniLM-L6-v2 + logistic regression path, trained on a small fixture:
    saved, reloaded through load_classifier, and giving back its recorded confusion."""
    data = annotated_data(tmp_path / "data")
    folder, record = train_classifier(
        ClassifierConfig(data=str(data), kind="head", out=str(tmp_path / "head")),
        log=lambda _: None,
    )
    classifier = load_classifier(str(folder))
    assert classifier.kind == "head" and (folder / "head.json").is_file()
    val = read_split(data / "val.jsonl")
    probabilities = classifier.probabilities([e.code for e in val])
    again = evaluate([e.label for e in val], probabilities)
    assert again["confusion"] == record["metrics"]["val"]["confusion"]
    # The fixture separates on the compared literal; even a linear head finds most of it.
    assert record["metrics"]["val"]["accuracy"] >= 0.75
