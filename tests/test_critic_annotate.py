"""`boi critic FILE --out FILE`: fields added, rest kept, append-only and resumable."""

from __future__ import annotations

import json

import pytest

from benchmarks.common.errors import UserError
from benchmarks.problem import LineageStep, write_problems
from boi.cli import main
from critic.annotate import annotate_file
from critic.similarity import PlausibilityGate
from tests.critic_helpers import tiny_lm, tiny_scorer


@pytest.fixture(scope="module")
def perturbed_file(humaneval, tmp_path_factory):
    records = []
    for problem in humaneval.problems[:3]:
        records.append(problem)
        records.append(
            problem.replace(
                task_id=f"{problem.task_id}/anonymize",
                prompt=problem.prompt.replace(problem.entry_point, "func"),
                lineage=(LineageStep("anonymize", "1", {"name": "func"}),),
            )
        )
        records.append(
            problem.replace(
                task_id=f"{problem.task_id}/drop_examples",
                prompt=problem.prompt.split(">>>")[0] + '"""\n',
                lineage=(LineageStep("drop_examples", "1"),),
            )
        )
    path = tmp_path_factory.mktemp("critic") / "perturbed.jsonl"
    write_problems(path, records)
    return path


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    model, tokenizer = tiny_lm()
    folder = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_fields_added_and_everything_else_kept(perturbed_file, tmp_path):
    out = tmp_path / "scored.jsonl"
    stats = annotate_file(
        perturbed_file, out, tiny_scorer(), PlausibilityGate(min_similarity=95), log=lambda _: None
    )
    rows = _read(out)
    inputs = _read(perturbed_file)
    assert [r["task_id"] for r in rows] == [r["task_id"] for r in inputs]
    for row, original in zip(rows, inputs, strict=True):
        assert {k: v for k, v in row.items() if k != "critic"} == original
    original, anonymized, dropped = (r["critic"] for r in rows[:3])
    assert original["verdict"] == "original" and original["original"] is True
    assert anonymized["original_logprob"] == original["logprob"]
    assert anonymized["similarity"] < 100 and anonymized["verdict"] in ("accept", "reject")
    # dropping the examples removes many tokens: the gate rejects it and says why
    assert dropped["verdict"] == "reject" and "below the gate's 95 %" in dropped["reason"]
    assert dropped["block_delta"]["examples"] > 0  # fewer tokens, a less negative sum
    assert stats.scored == 9 and stats.originals == 3


def test_resume_after_interruption_does_not_duplicate(perturbed_file, tmp_path):
    gate = PlausibilityGate()
    full = tmp_path / "full.jsonl"
    annotate_file(perturbed_file, full, tiny_scorer(), gate, log=lambda _: None)
    lines = full.read_text().splitlines(keepends=True)
    partial = tmp_path / "partial.jsonl"
    partial.write_text("".join(lines[:4]) + lines[4][:30])  # a killed writer's torn line
    stats = annotate_file(
        perturbed_file, partial, tiny_scorer(), gate, chunk_size=2, log=lambda _: None
    )
    assert stats.skipped_existing == 4 and stats.scored == 5
    resumed, reference = _read(partial), _read(full)
    assert [r["task_id"] for r in resumed] == [r["task_id"] for r in reference]
    for a, b in zip(resumed, reference, strict=True):
        assert a["critic"]["logprob"] == pytest.approx(b["critic"]["logprob"], abs=1e-4)
        assert a["critic"].get("similarity") == pytest.approx(
            b["critic"].get("similarity"), abs=1e-3
        )
    with pytest.raises(UserError, match="other critic settings"):
        annotate_file(perturbed_file, partial, tiny_scorer(), PlausibilityGate(min_similarity=50))


def test_missing_originals_are_named(perturbed_file, tmp_path, humaneval):
    variants_only = tmp_path / "variants.jsonl"
    variants_only.write_text(
        "".join(
            line + "\n"
            for line in perturbed_file.read_text().splitlines()
            if "/" in json.loads(line)["task_id"][10:]
        )
    )
    with pytest.raises(UserError, match=r"no original for HumanEval/0.*--originals"):
        annotate_file(variants_only, tmp_path / "o.jsonl", tiny_scorer(), PlausibilityGate())
    stats = annotate_file(
        variants_only,
        tmp_path / "o.jsonl",
        tiny_scorer(),
        PlausibilityGate(),
        originals=humaneval.problems,
        log=lambda _: None,
    )
    assert stats.scored == 6 and stats.originals == 0


def test_cli_scores_with_a_local_model_folder(perturbed_file, tiny_model_dir, tmp_path, capsys):
    out = tmp_path / "cli.jsonl"
    assert (
        main(["critic", str(perturbed_file), "--out", str(out), "--model", str(tiny_model_dir)])
        == 0
    )
    assert "9 records scored (3 originals" in capsys.readouterr().out
    assert all("critic" in row for row in _read(out))
    # The provenance lies beside the output (written by annotate_file, so the API has it too).
    manifest = json.loads((tmp_path / "cli.jsonl.manifest.json").read_text())
    assert manifest["completed"] is True and manifest["stats"]["scored"] == 9
    # Recorded as a manifest records a path (by name, outside the working directory).
    assert manifest["inputs"]["input"]["path"] == perturbed_file.name
    assert not (tmp_path / "cli.jsonl.meta.json").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["critic", "{missing}", "--out", "{out}"], "does not exist"),
        (
            ["critic", "{empty_prompt}", "--out", "{out}", "--model", "{model}"],
            "has an empty prompt",
        ),
        (
            ["critic", "{file}", "--out", "{out}", "--model", "{missing}"],
            "model path .* does not exist",
        ),
        (["critic", "{file}"], "--out is required"),
        (
            ["critic", "{file}", "--out", "{out}", "--endpoint", "http://127.0.0.1:9/v1"],
            "needs --model",
        ),
        (["critic", "{file}", "--out", "{out}", "--min-similarity", "120"], "outside 0-100"),
    ],
)
def test_cli_bad_input(argv, message, perturbed_file, tiny_model_dir, tmp_path, capsys, humaneval):
    import re

    empty = tmp_path / "empty_prompt.jsonl"
    write_problems(empty, [humaneval.problems[0].replace(prompt="  ")])
    values = {
        "missing": str(tmp_path / "nope" / "x.jsonl"),
        "out": str(tmp_path / "out.jsonl"),
        "file": str(perturbed_file),
        "empty_prompt": str(empty),
        "model": str(tiny_model_dir),
    }
    assert main([a.format(**values) for a in argv]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert "Traceback" not in err
