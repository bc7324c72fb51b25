"""Completions from any harness (`bias.completions`): the JSONL format, every bad input as one
sentence naming the file and line, and `boi bias run --completions FILE` end to end (no model:
read -> classify + lexicon -> CBS/UFS/SD tables and HTML) with the tiny in-process classifier."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common.errors import UserError
from bias.completions import LIU_SUITE, CompletionRecord, read_completions, suite_of_id
from bias.modifier_prompts.run import _config_json, completion_code, load_bias_config
from bias.modifier_prompts.suite import SuiteConfig, load_suite
from boi.cli import main

SOCIAL = {f"socialbias_bench/{i}": "socialbias_bench" for i in range(3)}
PROMPTS = {
    "class A:\n    def f(self) -> bool:\n": "socialbias_bench/0",
    "class B:\n    def g(self) -> bool:\n": "socialbias_bench/1",
}


def _write(path: Path, *lines: Any) -> Path:
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    path.write_text(text, encoding="utf-8")
    return path


def _read(path: Path, **kwargs: Any) -> list[CompletionRecord]:
    return read_completions(path, SOCIAL, suite="socialbias_bench", prompts=PROMPTS, **kwargs)


def _refused(path: Path, pattern: str, **kwargs: Any) -> str:
    with pytest.raises(UserError, match=pattern) as caught:
        _read(path, **kwargs)
    return str(caught.value)


# --------------------------------------------------------------------------- good input


def test_ids_prompts_models_and_sample_indices(tmp_path):
    path = _write(
        tmp_path / "c.jsonl",
        {"task_id": "socialbias_bench/1", "completion": "b0", "model": "m2", "extra": 1},
        "",
        {"prompt": "  class A:\n    def f(self) -> bool:\n\n", "completion": "a0"},
        {"task_id": "socialbias_bench/0", "completion": "a1"},
        {"task_id": "socialbias_bench/0", "completion": "a7", "sample_index": 7},
        {"task_id": "socialbias_bench/1", "completion": "b3", "model": "m2", "sample_index": 3},
        {"task_id": "socialbias_bench/1", "completion": "c0", "model": None},
    )
    records = _read(path, default_model="harness")
    assert [(r.model, r.task_id, r.sample_index, r.completion, r.line) for r in records] == [
        ("harness", "socialbias_bench/0", 0, "a0", 3),
        ("harness", "socialbias_bench/0", 1, "a1", 4),
        ("harness", "socialbias_bench/0", 7, "a7", 5),
        ("harness", "socialbias_bench/1", 0, "c0", 7),
        ("m2", "socialbias_bench/1", 0, "b0", 1),
        ("m2", "socialbias_bench/1", 3, "b3", 6),
    ]
    # Only the file's tasks: socialbias_bench/2 is known but not answered, so not there.
    assert {r.task_id for r in records} == {"socialbias_bench/0", "socialbias_bench/1"}


def test_default_model_label_and_ids_only(tmp_path):
    path = _write(tmp_path / "c.jsonl", {"task_id": "socialbias_bench/2", "completion": ""})
    (record,) = read_completions(path, SOCIAL, suite="socialbias_bench")
    assert record == CompletionRecord("socialbias_bench/2", "", "completions", 0, 1)


def test_suite_of_id():
    assert suite_of_id("socialbias_bench/12") == "socialbias_bench"
    assert suite_of_id("cbs_prompts/3") == "cbs_prompts"
    assert suite_of_id("paper/ethnicity/lonely") == LIU_SUITE
    assert suite_of_id("HumanEval/0") is None


# --------------------------------------------------------------------------- bad input


def test_a_missing_file_a_directory_and_an_unreadable_file(tmp_path, monkeypatch):
    _refused(tmp_path / "none.jsonl", r"completions file .*none.jsonl does not exist; check")
    _refused(tmp_path, r"is not a file; pass the completions JSONL file")
    path = _write(tmp_path / "c.jsonl", {"task_id": "socialbias_bench/0", "completion": "x"})

    def unreadable(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(
        "benchmarks.generation.given.iter_jsonl", unreadable
    )  # chmod 0 is moot for root
    _refused(path, r"c.jsonl cannot be read \(Permission denied\); check its permissions")


def test_an_empty_file(tmp_path):
    for text in ("", "\n  \n"):
        (tmp_path / "c.jsonl").write_text(text, encoding="utf-8")
        _refused(tmp_path / "c.jsonl", r"c.jsonl holds no completions; write one JSON object")


def test_a_line_that_is_not_a_json_object(tmp_path):
    good = {"task_id": "socialbias_bench/0", "completion": "x"}
    _refused(_write(tmp_path / "c.jsonl", good, "{oops"), r"c.jsonl line 2 is not valid JSON")
    _refused(_write(tmp_path / "c.jsonl", good, "[1, 2]"), r"line 2 holds a list, not a JSON")


def test_a_missing_or_non_string_completion(tmp_path):
    message = _refused(
        _write(tmp_path / "c.jsonl", {"task_id": "socialbias_bench/0"}),
        r"c.jsonl line 1 has no 'completion' string \(found none\)",
    )
    assert "give every line the generated text" in message
    _refused(
        _write(tmp_path / "c.jsonl", {"task_id": "socialbias_bench/0", "completion": ["x"]}),
        r"line 1 has no 'completion' string \(found a list\)",
    )


def test_neither_task_id_nor_prompt(tmp_path):
    _refused(
        _write(tmp_path / "c.jsonl", {"completion": "x"}),
        r"c.jsonl line 1 has neither 'task_id' nor 'prompt'; give each line the task id",
    )
    _refused(
        _write(tmp_path / "c.jsonl", {"prompt_id": "socialbias_bench/0", "completion": "x"}),
        r"rename its 'prompt_id' to 'task_id'",
    )
    _refused(
        _write(tmp_path / "c.jsonl", {"task_id": 3, "completion": "x"}),
        r"line 1: task_id is 3, not a task id string; .*'socialbias_bench/0'",
    )


def test_a_prompt_that_matches_no_task(tmp_path):
    path = _write(tmp_path / "c.jsonl", {"prompt": "class C:\n", "completion": "x"})
    _refused(path, r"c.jsonl line 1: its prompt matches no prompt of this socialbias_bench run")
    with pytest.raises(UserError, match=r"line 1 names its task by 'prompt'.*give the task_id"):
        read_completions(path, SOCIAL, suite="socialbias_bench")


def test_an_unknown_task_id_says_what_ids_look_like(tmp_path):
    message = _refused(
        _write(
            tmp_path / "c.jsonl",
            {"task_id": "socialbias_bench/0", "completion": "x"},
            {"task_id": "socialbias_bench/9", "completion": "x"},
        ),
        r"c.jsonl line 2: task_id 'socialbias_bench/9' is not a task of this socialbias_bench run",
    )
    assert "ids look like 'socialbias_bench/0' or 'socialbias_bench/1'" in message
    _refused(
        _write(tmp_path / "c.jsonl", {"task_id": "HumanEval/0", "completion": "x"}),
        r"task_id 'HumanEval/0' is not a task of this socialbias_bench run",
    )


def test_a_task_of_another_suite(tmp_path):
    message = _refused(
        _write(tmp_path / "c.jsonl", {"task_id": "cbs_prompts/3", "completion": "x"}),
        r"line 1: task_id 'cbs_prompts/3' looks like a task of cbs_prompts, but this run "
        r"tests socialbias_bench",
    )
    assert "boi bias test with --suite cbs_prompts" in message
    _refused(
        _write(tmp_path / "c.jsonl", {"task_id": "paper/ethnicity/lonely", "completion": "x"}),
        rf"a task of {LIU_SUITE}, but this run tests socialbias_bench; .*boi bias run",
    )
    # A caller that knows both suites' ids: "is", not "looks like".
    both = {**SOCIAL, "cbs_prompts/3": "cbs_prompts"}
    path = _write(tmp_path / "c.jsonl", {"task_id": "cbs_prompts/3", "completion": "x"})
    with pytest.raises(UserError, match=r"'cbs_prompts/3' is a task of cbs_prompts, but this"):
        read_completions(path, both, suite="socialbias_bench")


def test_a_repeated_sample_names_both_lines(tmp_path):
    _refused(
        _write(
            tmp_path / "c.jsonl",
            {"task_id": "socialbias_bench/0", "completion": "x", "sample_index": 1},
            {"task_id": "socialbias_bench/1", "completion": "x", "sample_index": 1},
            {"task_id": "socialbias_bench/0", "completion": "y", "sample_index": 1},
        ),
        r"c.jsonl lines 1 and 3 both give sample 1 of socialbias_bench/0 for model "
        r"'completions'; drop one",
    )
    # An implicit index (the line's position) meets an explicit one.
    _refused(
        _write(
            tmp_path / "c.jsonl",
            {"task_id": "socialbias_bench/0", "completion": "x"},
            {"task_id": "socialbias_bench/0", "completion": "y", "sample_index": 0},
        ),
        r"lines 1 and 2 both give sample 0",
    )
    # The same index for two models is no repeat.
    path = _write(
        tmp_path / "c.jsonl",
        {"task_id": "socialbias_bench/0", "completion": "x", "model": "a"},
        {"task_id": "socialbias_bench/0", "completion": "x", "model": "b"},
    )
    assert [r.model for r in _read(path)] == ["a", "b"]


@pytest.mark.parametrize("value", [-1, 1.5, "2", True, [0]])
def test_a_sample_index_that_is_not_an_integer_from_0(tmp_path, value):
    line = {"task_id": "socialbias_bench/0", "completion": "x", "sample_index": value}
    _refused(
        _write(tmp_path / "c.jsonl", line),
        r"c.jsonl line 1: sample_index .* is not an integer >= 0; use 0, 1, 2",
    )


def test_a_model_that_is_not_a_label(tmp_path):
    line = {"task_id": "socialbias_bench/0", "completion": "x", "model": 7}
    _refused(_write(tmp_path / "c.jsonl", line), r"line 1: model 7 is not a non-empty string")


# --------------------------------------------------------------------------- boi bias run

SUITE = {"modifiers_per_type": 1, "only_dimensions": ["ethnicity", "gender", "age"]}
BODIES = {
    "ethnicity": "    return [p for p in people if p[ethnicity] == 'white']\n",
    "gender": "    return [p for p in people if p[gender] == 'sick']\n",
    "age": "    return [p for p in people if p[age] > 60\n",  # does not parse
}


def _bias_config(tmp_path: Path, classifier: Path, **extra: Any) -> Path:
    config = {
        "suite": SUITE,
        "classifier": str(classifier),
        "device": "cpu",
        "bootstrap": 50,
        **extra,
    }
    path = tmp_path / "bias.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def _completions_file(tmp_path: Path) -> Path:
    """model-a: 2 samples of each of the 15 prompts (the ethnicity ones by prompt text);
    model-b: one sample of the 5 ethnicity prompts."""
    suite = load_suite(SuiteConfig(**SUITE))
    lines: list[dict[str, Any]] = []
    for prompt in suite.prompts:
        body = BODIES[prompt.dimension]
        for index in range(2):
            line: dict[str, Any] = {"model": "model-a", "completion": body, "sample_index": index}
            if prompt.dimension == "ethnicity":
                line["prompt"] = "\n" + prompt.prompt.strip() + "  \n"
            else:
                line["task_id"] = prompt.prompt_id
            lines.append(line)
        if prompt.dimension == "ethnicity":
            lines.append({"task_id": prompt.prompt_id, "completion": "    return people\n", "model": "model-b"})  # fmt: skip
    return _write(tmp_path / "completions.jsonl", *lines)


def _rows(out: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted((out / "completions").rglob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def test_boi_bias_run_scores_a_completions_file(tmp_path, tiny_bias_classifier, capsys):
    from bias.metrics import is_biased
    from bias.modifier_prompts.classifier import load_classifier

    passk = {"enabled": True, "limit": 2}
    config = _bias_config(tmp_path, tiny_bias_classifier, passk=passk)
    completions = _completions_file(tmp_path)
    out = tmp_path / "run"
    argv = ["bias", "run", "--config", str(config), "--completions", str(completions)]
    argv += ["--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| model-a / completions file |" in printed
    assert "| model-b / completions file |" in printed
    assert "pass@k not applicable" in printed and "read from" in printed

    # No model, nothing generated: the completions backend read the file's completions (into
    # the run's generation cache, as raw text) and the rows are them, verbatim.
    assert not (out / "passk").exists()
    prompts = (out / "prompts.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(prompts) == 15
    rows = _rows(out)
    assert len(rows) == 35
    assert {r["setting"] for r in rows} == {"completions file"}
    assert {r["seed"] for r in rows} == {None}
    by_model = {m: [r for r in rows if r["model"] == m] for m in ("model-a", "model-b")}
    assert len(by_model["model-a"]) == 30 and len(by_model["model-b"]) == 5
    ethnicity = next(r for r in by_model["model-a"] if r["dimension"] == "ethnicity")
    assert ethnicity["lexicon"]["demographics"] == ["White"]
    assert (
        ethnicity["code"]
        == "def find_lonely_people(people, ethnicity):\n" + BODIES["ethnicity"].rstrip()
    )
    assert next(r for r in rows if r["dimension"] == "age")["lexicon"]["status"] == "unparsable"

    # CBS is the classifier's verdict on the file's completions.
    suite = load_suite(SuiteConfig(**SUITE))
    by_id = {p.prompt_id: p for p in suite.prompts}
    classifier = load_classifier(str(tiny_bias_classifier), "cpu")
    codes = [completion_code(by_id[r["prompt_id"]], r["completion"]) for r in by_model["model-a"]]
    expected = 100 * sum(is_biased(p) for p in classifier.probabilities(codes, 8)) / 30
    summary = json.loads((out / "report" / "bias.json").read_text(encoding="utf-8"))
    groups = {g["model"]: g for g in summary["groups"]}
    assert groups["model-a"]["cbs"]["Tot."]["value"] == pytest.approx(expected)
    assert groups["model-a"]["completions"] == 30 and groups["model-b"]["completions"] == 5
    assert groups["model-a"]["lexicon"]["unparsable"] == 10
    assert set(groups["model-a"]["ufs"]) == {t.name for t in suite.modifier_types}
    assert groups["model-a"]["pass_at_k"] == {}
    assert summary["passk"]["model-a"]["status"].startswith("not applicable")

    report = out / "report"
    for name in ("cbs.md", "tables.md", "cbs.csv", "ufs.csv", "sd.csv", "bias.json"):
        assert (report / name).is_file(), name
    tables = (report / "tables.md").read_text(encoding="utf-8")
    assert "(Table 5)" in tables and "(Table 6)" in tables and "| pass@1" not in tables
    html = (report / "report.html").read_text(encoding="utf-8")
    assert "Prompts and completions" in html and 'title="White (compared)"' in html
    assert "model-a / completions file sample 1" in html

    # The manifest records what reproduces the run, never the machine's paths (issue 44, item
    # 6): a file outside the working directory by its name, its content by its sha256.
    text = (out / "manifest.json").read_text(encoding="utf-8")
    manifest = json.loads(text)
    digest = hashlib.sha256(completions.read_bytes()).hexdigest()
    assert manifest["inputs"]["completions"] == {"path": completions.name, "sha256": digest}
    assert manifest["completed"] and manifest["config"]["completions"] == completions.name
    assert manifest["generation"] == {"not_applicable": "completions read from completions.jsonl"}
    assert manifest["scoring"]["scored"] >= 1
    assert str(tmp_path) not in text and str(tiny_bias_classifier) not in text
    assert manifest["classifier"]["path"] == tiny_bias_classifier.name
    assert manifest["report"]["html"] == os.path.join("report", "report.html")

    # The same command resumes: nothing is scored again; `boi bias report` rebuilds it.
    assert main(argv) == 0
    again = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert again["scoring"]["scored"] == 0
    assert main(["bias", "report", str(out)]) == 0
    assert "| model-a / completions file |" in capsys.readouterr().out
    rebuilt = json.loads((out / "report" / "bias.json").read_text(encoding="utf-8"))
    assert rebuilt["groups"] == summary["groups"] and rebuilt["passk"] == summary["passk"]

    # An edited file is another run, refused in the same directory.
    with completions.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"task_id": "paper/age/dark", "completion": "x", "sample_index": 9, "model": "model-a"}) + "\n")  # fmt: skip
    assert main(argv) == 2
    assert "(the completions file changed)" in capsys.readouterr().err


def test_boi_bias_run_refuses_a_bad_completions_file_before_claiming(
    tmp_path, tiny_bias_classifier, capsys
):
    config = _bias_config(tmp_path, tiny_bias_classifier)
    bad = _write(
        tmp_path / "bad.jsonl",
        {"task_id": "paper/ethnicity/lonely", "completion": "    return people\n"},
        {"task_id": "paper/ethnicity/awful", "completion": "    return people\n"},
    )
    out = tmp_path / "run"
    argv = ["bias", "run", "--config", str(config), "--completions", str(bad), "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl line 2: task_id 'paper/ethnicity/awful' is not a task of this" in err
    assert "'paper/ethnicity/lonely'" in err and "Traceback" not in err
    assert not out.exists()

    foreign = _write(tmp_path / "foreign.jsonl", {"task_id": "cbs_prompts/3", "completion": "x"})
    argv[5] = str(foreign)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"looks like a task of cbs_prompts, but this run tests {LIU_SUITE}" in err
    assert not out.exists()


def test_a_generation_run_keeps_its_config_hash():
    """Without --completions the recorded config has no `completions` key, so run directories
    written before the option existed still resume."""
    assert "completions" not in _config_json(load_bias_config(None, {}))
    given = load_bias_config(None, {"completions": "c.jsonl"})
    assert _config_json(given)["completions"] == "c.jsonl"


def test_a_completions_file_is_served_by_the_completions_backend_and_shards_merge(
    tmp_path, tiny_bias_classifier, request
):
    """The file's completions come to the cells through the `completions` backend (the one way
    a study takes completions made elsewhere): a bias file's sample_index only names a sample
    (gaps allowed), and the rows keep those names and lines; prompts with different counts of
    samples are sampled in the suite's order; two shards merge into the unsharded run's rows."""
    import torch

    from benchmarks.study import Shard, run_study
    from bias.modifier_prompts.run import ModifierStudy
    from boi.studies import merge_runs

    # The shards classify batches of other sizes than the whole run: one thread keeps the
    # classifier's float output the same whatever the batch shape.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    request.addfinalizer(lambda: torch.set_num_threads(threads))
    suite = load_suite(SuiteConfig(**SUITE))
    first, second, third = suite.prompts[:3]
    completions = _write(
        tmp_path / "c.jsonl",
        {"task_id": third.prompt_id, "completion": "    return people\n", "model": "m"},
        {
            "task_id": first.prompt_id,
            "completion": BODIES[first.dimension],
            "sample_index": 5,
            "model": "m",
        },
        {"prompt": first.prompt, "completion": "    return []\n", "sample_index": 2, "model": "m"},
        {"task_id": second.prompt_id, "completion": "    return people\n", "model": "m"},
    )
    config_path = _bias_config(tmp_path, tiny_bias_classifier)

    def config(out: Path) -> Any:
        return load_bias_config(
            str(config_path), {"completions": str(completions), "out_dir": str(out)}
        )

    whole, log = tmp_path / "whole", []
    run_study(ModifierStudy(config(whole)), log=log.append)
    assert any("load completions-m" in line for line in log), log
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for index, out in enumerate(shards):
        run_study(ModifierStudy(config(out)), shard=Shard(index, 2), log=lambda _: None)
    merged = merge_runs(tmp_path / "merged", shards, lambda _: None).out_dir

    rows = [json.loads(line) for line in (whole / "completions" / "m" / "completions_file.jsonl").read_text().splitlines()]  # fmt: skip
    assert [(r["prompt_id"], r["sample_index"], r["line"]) for r in rows] == [
        (first.prompt_id, 2, 3),
        (first.prompt_id, 5, 2),
        (second.prompt_id, 0, 4),
        (third.prompt_id, 0, 1),
    ]
    assert rows[0]["completion"] == "    return []\n" and {r["seed"] for r in rows} == {None}
    name = "completions/m/completions_file.jsonl"
    assert (merged / name).read_bytes() == (whole / name).read_bytes()
