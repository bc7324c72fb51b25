"""`boi analyze hints`: the labels of a hand-made run directory with two models, checked by hand;
hints.csv's columns; the report section; one sentence for a run this version cannot read."""

from __future__ import annotations

import csv
import io
import json

import pytest

from boi.analysis.hints import HintsConfig, audit_runs
from boi.cli import main
from tests.analysis_helpers import run_config, toy_problem, variants, write_run

A, B = "hf-a", "hf-b"
DESCRIPTION = "Return the sum of the strictly positive integers found in the given list."
FAIL, PASS, HALF = [False, False], [True, True], [True, False]


@pytest.fixture
def panel(tmp_path):
    """Six problems, two models; every variant passes unless said otherwise below."""
    problems = []
    for number in range(6):
        problem = toy_problem(number, DESCRIPTION, examples=number != 5)
        problems += variants(problem, ["positive", "integers"])
    passed = {}
    for problem in problems:
        for model in (A, B):
            # The name-only probe fails unless said otherwise, everything else passes.
            passed[(model, problem.task_id)] = FAIL if problem.transform == "name_only" else PASS
    passed.update({
        # Toy/0: both models pass from the name alone -> name-leak.
        (A, "Toy/0::name_only"): PASS, (B, "Toy/0::name_only"): HALF,  # 1 of 2 = 0.5 passes
        # Toy/1: A needs the examples, B the name: a tie, broken in favour of examples.
        (A, "Toy/1::drop_examples"): FAIL, (B, "Toy/1::anonymize"): HALF,  # 0.5 still passes...
        (B, "Toy/1::anon_drop_examples"): FAIL,  # ...so B's only failure is combined
        # Toy/2: dropping 'positive' breaks both models, 'integers' only A.
        (A, "Toy/2::drop_one/0"): FAIL, (B, "Toy/2::drop_one/0"): FAIL,
        (A, "Toy/2::drop_one/1"): FAIL,
        # Toy/3: nobody solves the original (its variants' passes are no evidence).
        (A, "Toy/3"): FAIL, (B, "Toy/3"): FAIL,
        # Toy/4: A fails only when every keyword goes; B does not solve it.
        (A, "Toy/4::drop_all"): FAIL, (B, "Toy/4"): FAIL,
        # Toy/5 has no examples: its (unchanged) Drop Ex variant is no evidence; B passes
        # from the name alone, A does not.
        (A, "Toy/5::drop_examples"): FAIL, (B, "Toy/5::name_only"): PASS,
    })  # fmt: skip
    return write_run(tmp_path / "run", problems, passed, run_config())


def test_labels_match_the_hand_checked_evidence(panel):
    audits = {a.source_task_id: a for a in audit_runs([panel], HintsConfig())}
    assert audits["Toy/0"].label == "name-leak"
    assert audits["Toy/0"].flags == ["name-leak", "name-solvable", "robust"]
    assert audits["Toy/1"].label == "example-dependent"
    assert audits["Toy/1"].detail == "example-dependent 1/2; combination-dependent 1/2"
    assert audits["Toy/1"].members[A].label == "example-dependent"
    assert audits["Toy/1"].members[B].label == "combination-dependent"
    assert audits["Toy/2"].label == "keyword-dependent"
    assert audits["Toy/2"].keyword_flips() == "positive 2/2; integers 1/2"
    assert audits["Toy/2"].members[A].label == (
        "keyword-dependent: integers; keyword-dependent: positive"
    )
    assert audits["Toy/3"].label == "unsolved" and audits["Toy/3"].flags == ["unsolved"]
    assert audits["Toy/4"].label == "combination-dependent"
    assert audits["Toy/4"].detail == "combination-dependent 1/1"
    assert [m.label for m in audits["Toy/4"].members.values()] == [
        "combination-dependent",
        "unsolved",
    ]
    assert audits["Toy/5"].label == "robust"
    assert audits["Toy/5"].flags == ["name-solvable", "robust"]
    assert audits["Toy/5"].members[A].rate_of("drop_examples") is None  # unchanged: no evidence


def test_a_stricter_threshold_changes_the_labels(panel):
    audits = {a.source_task_id: a for a in audit_runs([panel], HintsConfig(pass_threshold=1.0))}
    assert "name-leak" not in audits["Toy/0"].flags  # B passes 1 of 2 from the name alone
    assert audits["Toy/1"].members[B].label == "name-dependent"


def test_several_run_directories_make_one_panel(tmp_path, panel):
    problems = [p for n in range(6) for p in variants(toy_problem(n, DESCRIPTION), ["positive"])]
    other = write_run(
        tmp_path / "other",
        problems,
        {("hf-c", p.task_id): FAIL if p.transform == "name_only" else PASS for p in problems},
        run_config(),
    )
    audits = {a.source_task_id: a for a in audit_runs([panel, other], HintsConfig())}
    assert set(audits["Toy/2"].members) == {A, B, "hf-c"}
    assert audits["Toy/2"].keyword_flips() == "positive 2/3; integers 1/3"
    assert audits["Toy/0"].label != "name-leak"  # hf-c does not pass from the name alone


def test_command_writes_csv_json_and_the_report_section(panel, capsys):
    assert main(["analyze", "hints", str(panel)]) == 0
    out = panel / "analysis" / "hints"
    rows = list(csv.DictReader(io.StringIO((out / "hints.csv").read_text())))
    assert [r["problem"] for r in rows] == [f"Toy/{n}" for n in range(6)]
    assert list(rows[0])[:13] == [
        "dataset", "problem", "label", "detail", "flags", "models", "solving",
        "name_only_passes", "example_flips", "keyword_flips", "name_flips",
        "combination_flips", "evidence",
    ]  # fmt: skip
    assert f"{A} original" in rows[0] and f"{B} label" in rows[0]
    assert rows[2]["label"] == "keyword-dependent" and rows[2]["keyword_flips"].startswith(
        "positive"
    )
    assert rows[1][f"{A} drop_examples"] == "0.0" and rows[1][f"{A} original"] == "1.0"
    document = json.loads((out / "hints.json").read_text())
    assert document["labels"]["name-leak"] == 1 and document["members"] == [A, B]
    html = (panel / "report" / "report.html").read_text()
    assert 'id="analysis-hints"' in html and "Hint audit" in html
    assert 'name="hints-f"' in html and "<script" not in html
    assert "name-leak 1" in capsys.readouterr().out


def test_out_folder_and_rerun_give_the_same_files(panel, tmp_path):
    assert main(["analyze", "hints", str(panel), "--out", str(tmp_path / "a")]) == 0
    assert main(["analyze", "hints", str(panel), "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "a" / "hints.csv").read_text() == (tmp_path / "b" / "hints.csv").read_text()


def test_incompatible_run_directory_is_one_sentence(tmp_path, panel, capsys):
    old = tmp_path / "old"
    old.mkdir()
    (old / "manifest.json").write_text(json.dumps({"completed": True}))
    (old / "problems.jsonl").write_text((panel / "problems.jsonl").read_text())
    assert main(["analyze", "hints", str(old)]) == 2
    err = capsys.readouterr().err.strip()
    assert "incompatible boi version" in err and err.count("\n") == 0
    assert not (old / "analysis").exists()  # nothing written

    results = next((panel / "results").rglob("*.jsonl"))
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    results.write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "model"}) + "\n" for r in rows)
    )
    assert main(["analyze", "hints", str(panel)]) == 2
    err = capsys.readouterr().err.strip()
    assert "has no 'model' field" in err and err.count("\n") == 0


def test_threshold_outside_zero_one_is_refused(panel, capsys):
    assert main(["analyze", "hints", str(panel), "--pass-threshold", "0"]) == 2
    assert "--pass-threshold is 0.0" in capsys.readouterr().err
