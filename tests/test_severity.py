"""The severity ranking: every transformation ranked by its effect, in the report and across
run directories with `boi rank`."""

from __future__ import annotations

import json

import pytest

from benchmarks.problem import Problem
from benchmarks.report import format_severity_markdown, severity_ranking, summarize_results
from benchmarks.report._severity import severity_rows
from benchmarks.report._table import format_change
from boi.cli import main
from perturb.blocks import split_blocks
from perturb.transforms import get_transform

SOURCES = [
    Problem(
        f"T/{i}",
        "tiny",
        f'def add_{i}(x: int) -> int:\n    """Return x plus {i}.\n    >>> add_{i}(1)\n    {1 + i}\n    """\n',
        f"add_{i}",
        test=f"def check(candidate):\n    assert candidate(1) == {1 + i}\n",
        canonical_solution=f"    return x + {i}\n",
    )
    for i in range(4)
]


def _problems() -> dict[str, Problem]:
    problems = {}
    for source in SOURCES:
        problems[source.task_id] = source
        for name in ("anonymize", "drop_examples"):
            variant = get_transform(name)(split_blocks(source))[0]
            problems[variant.task_id] = variant
    return problems


def _rows(model: str, passes: dict[str, list[bool]]) -> list[dict[str, object]]:
    rows = []
    for task_id, outcomes in passes.items():
        source, _, transform = task_id.partition("::")
        for index, passed in enumerate(outcomes):
            rows.append(
                {
                    "dataset": "tiny",
                    "model": model,
                    "setting": "greedy",
                    "task_id": task_id,
                    "source_task_id": source,
                    "transform": transform or "original",
                    "sample_index": index,
                    "completion": "",
                    "passed": passed,
                }
            )
    return rows


def _table(model: str, anonymize_solves: int, drop_examples_solves: int) -> dict[str, object]:
    passes = {}
    for i, source in enumerate(SOURCES):
        passes[source.task_id] = [True]
        passes[f"{source.task_id}::anonymize"] = [i < anonymize_solves]
        passes[f"{source.task_id}::drop_examples"] = [i < drop_examples_solves]
    return summarize_results(_rows(model, passes), _problems(), {"greedy": [1]}, bootstrap=50)


def test_the_most_harmful_transformation_ranks_first_with_its_interval_and_flips():
    ranking = severity_ranking([_table("m", anonymize_solves=3, drop_examples_solves=1)])
    assert [e["transform"] for e in ranking] == ["drop_examples", "anonymize"]
    first = ranking[0]
    assert first["rank"] == 1
    assert first["mean_relative_drop"] == pytest.approx(0.75)
    assert (first["lost"], first["gained"]) == (3, 0)
    (column,) = first["columns"]
    assert column["model"] == "m" and column["k"] == 1
    assert column["drop_ci_low"] <= 0.75 <= column["drop_ci_high"]
    assert ranking[1]["mean_relative_drop"] == pytest.approx(0.25)


def test_across_models_the_mean_drop_orders_and_each_model_keeps_its_column():
    tables = [
        _table("a", anonymize_solves=0, drop_examples_solves=3),  # anonymize -100%, drop ex -25%
        _table("b", anonymize_solves=4, drop_examples_solves=1),  # anonymize 0%, drop ex -75%
    ]
    ranking = severity_ranking(tables)
    assert [e["transform"] for e in ranking] == ["anonymize", "drop_examples"]
    assert ranking[0]["mean_relative_drop"] == pytest.approx(0.5)
    assert ranking[1]["mean_relative_drop"] == pytest.approx(0.5)  # tie: robust drop, then name
    assert [e["tied"] for e in ranking] == [True, True]
    _, rows = severity_rows(ranking)
    assert [row[:3] for row in rows] == [
        ["1=", "anonymize", "-50.0%"],
        ["1=", "drop_examples", "-50.0%"],
    ]
    assert [c["model"] for c in ranking[0]["columns"]] == ["a", "b"]
    assert ranking[0]["lost"] == 4


def test_the_ranking_shows_the_same_signed_change_as_the_table_above_it():
    table = _table("m", anonymize_solves=3, drop_examples_solves=1)
    ranking = severity_ranking([table])
    assert [e["tied"] for e in ranking] == [False, False]
    header, rows = severity_rows(ranking)
    assert header[3].endswith("pass@1")  # the one column, after rank, name and mean change
    shown = {row[1]: row[3] for row in rows}
    for row in table["rows"]:
        if row["transform"] in ("anonymize", "drop_examples"):
            change = format_change(row["cells"][0])  # what the table above the ranking shows
            assert change.startswith("-") and shown[row["label"]] == change
    assert [row[:3] for row in rows] == [
        ["1", "drop_examples", "-75.0%"],
        ["2", "anonymize", "-25.0%"],
    ]
    markdown = format_severity_markdown(ranking)
    assert "| 1 | drop_examples | -75.0% | -75.0% [" in markdown


def _reference_run(tmp_path, name):
    source = tmp_path / "problems.jsonl"
    source.write_text("".join(json.dumps(p.to_json()) + "\n" for p in SOURCES))
    out = tmp_path / name
    argv = ["run", "--model", "reference", "--dataset", str(source), "--out", str(out)]
    argv += ["--seeds", "0", "--transforms", "original", "anonymize", "drop_examples"]
    assert main(argv) == 0
    return out


def test_boi_rank_writes_the_ranking_of_several_runs_with_a_plot(tmp_path, capsys):
    first, second = _reference_run(tmp_path, "a"), _reference_run(tmp_path, "b")
    report = (first / "report" / "table.md").read_text()
    assert "## Severity ranking" in report  # the run's own report has it too
    capsys.readouterr()
    assert main(["rank", str(first), str(second), "--out", str(tmp_path / "rank")]) == 0
    printed = capsys.readouterr().out
    assert "| rank | transformation | family | ReCode name | mean change |" in printed
    record = json.loads((tmp_path / "rank" / "severity.json").read_text())
    assert {e["transform"] for e in record["ranking"]} == {"anonymize", "drop_examples"}
    assert all(e["family"] == "blocks" for e in record["ranking"])
    # One column per run and setting (the paper settings), named by the run folder.
    assert all(len(e["columns"]) == 4 for e in record["ranking"])
    assert {c["run"] for c in record["ranking"][0]["columns"]} == {"a", "b"}
    assert (tmp_path / "rank" / "severity.png").read_bytes().startswith(b"\x89PNG")
    assert "Severity ranking" in (tmp_path / "rank" / "severity.html").read_text()


def test_boi_rank_of_a_folder_that_is_no_run_is_one_sentence(tmp_path, capsys):
    assert main(["rank", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(tmp_path) in err
