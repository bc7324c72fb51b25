"""`boi bias run` end to end on a scripted backend and a tiny classifier: prompts -> generate ->
classify + lexicon -> tables and HTML, resumable (a rerun generates and scores nothing), refusing
a run directory that holds another run, and `boi bias report` rebuilding the report."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import BACKENDS, BackendBase, DecodingConfig, Request
from bias.modifier_prompts.run import load_bias_config, run_bias
from boi.cli import main

BODIES = {
    "ethnicity": "    return [p for p in people if p[ethnicity] == 'white']\n",
    "gender": "    return [p for p in people if p[gender] == 'sick']\n",
    "age": "    return [p for p in people if p[age] > 60\n",  # does not parse
}


class ScriptedBackend(BackendBase):
    """A body per dimension (the dimension is the signature's second parameter)."""

    calls = 0

    def __init__(self, spec) -> None:
        self.spec = spec
        self.identity = "scripted-bias"

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        for position, request in enumerate(requests):
            ScriptedBackend.calls += len(request.indices)
            last = request.prompt.rstrip().splitlines()[-1]
            dimension = last.split(",")[-1].strip(" ):")
            body = BODIES.get(dimension, "    return people\n")
            yield position, [body + "\ndef other():\n    pass\n" for _ in request.indices]


@pytest.fixture
def scripted():
    BACKENDS.register("scripted_bias", f"{__name__}:ScriptedBackend")
    ScriptedBackend.calls = 0
    yield "scripted_bias"
    BACKENDS.unregister("scripted_bias")


def _config(tmp_path, classifier, **extra):
    overrides = {
        "out_dir": str(tmp_path / "run"),
        "suite": {"modifiers_per_type": 1, "only_dimensions": ["ethnicity", "gender", "age"]},
        "models": [{"kind": "scripted_bias"}],
        "decoding": {"temperature": 0.8, "n": 2, "max_new_tokens": 32},
        "sweep": {"temperature": [0.2]},
        "classifier": str(classifier),
        "device": "cpu",
        "bootstrap": 50,
        **extra,
    }
    return load_bias_config(None, overrides)


def test_bias_run_end_to_end_and_resume(scripted, tmp_path, tiny_bias_classifier, capsys):
    passk = {"enabled": True, "limit": 2, "ks": [1], "decoding": {"temperature": 0.2, "n": 1}}
    config = _config(tmp_path, tiny_bias_classifier, passk=passk)
    outcome = run_bias(config, log=lambda _: None)
    out = outcome.out_dir
    prompts = [json.loads(line) for line in (out / "prompts.jsonl").read_text().splitlines()]
    assert len(prompts) == 15  # 5 types x 1 modifier x 3 dimensions
    assert ScriptedBackend.calls == 15 * 2 * 2 + 2  # 2 samples x 2 settings, + 2 HumanEval
    passk_results = (out / "passk" / "scripted_bias-embedded" / "results.jsonl").read_text()
    assert passk_results.count('"passed": false') == 2  # `return people` solves no HumanEval task
    rows = [
        json.loads(line)
        for path in sorted((out / "completions").rglob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert len(rows) == 60 and {r["setting"] for r in rows} == {
        "T=0.8 top_p=0.95",
        "T=0.2 top_p=0.95",
    }
    by_dimension = {r["dimension"]: r for r in rows}
    assert by_dimension["ethnicity"]["lexicon"]["demographics"] == ["White"]
    assert by_dimension["ethnicity"]["code"].startswith(
        "def find_better_people(people, ethnicity):\n    return"
    )
    assert by_dimension["gender"]["lexicon"]["demographics"] == []
    assert by_dimension["age"]["lexicon"]["status"] == "unparsable"

    summary = json.loads(outcome.report.json.read_text())
    base = next(g for g in summary["groups"] if g["setting"] == "T=0.8 top_p=0.95")
    members = [r for r in rows if r["setting"] == "T=0.8 top_p=0.95"]
    assert base["cbs"]["Tot."]["value"] == pytest.approx(
        100 * sum(r["biased"] for r in members) / 30
    )
    assert base["lexicon"]["unparsable"] == 10
    tables = outcome.report.tables_md.read_text()
    assert "UFS per modifier type and dimension (Table 5)" in tables and "(Table 6)" in tables
    html = outcome.report.html.read_text()
    assert 'title="White (compared)"' in html and "Prompts and completions" in html
    assert "CBS vs temperature" not in html or "Sweeps" in html
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["completed"] and manifest["classifier"]["kind"] == "finetune"
    assert manifest["scoring"]["scored"] >= 1

    again = run_bias(config, log=lambda _: None)
    assert ScriptedBackend.calls == 62  # nothing generated again
    second = json.loads((out / "manifest.json").read_text())
    assert second["generation"]["generated"] == 0 and second["scoring"]["scored"] == 0
    assert again.table_markdown == outcome.table_markdown
    assert "| CBS Tot. | pass@1 | completions |" in outcome.table_markdown
    # The classifier changes CBS, so the console's table, cbs.md and the summary name it.
    assert "Classifier: finetune, base " in outcome.table_markdown
    assert "Classifier: finetune" in outcome.report.cbs_md.read_text()
    assert "(classifier: finetune)" in outcome.summary_line
    assert base["pass_at_k"] == {"pass@1": 0.0}

    assert main(["bias", "report", str(out)]) == 0
    assert "| scripted_bias-embedded / T=0.8 top_p=0.95 |" in capsys.readouterr().out

    with pytest.raises(UserError, match=r"holds a different run \(changed: decoding\)"):
        run_bias(
            _config(tmp_path, tiny_bias_classifier, decoding={"n": 3}, passk=passk),
            log=lambda _: None,
        )


def test_a_missing_classifier_is_refused_before_the_run_directory_is_claimed(
    scripted, tmp_path, capsys
):
    code = main(
        ["bias", "run", "--out", str(tmp_path / "run"), "--classifier", str(tmp_path / "none")]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "holds no classifier.json" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def _modifiers(path, negative: str, positive: str):
    path.write_text(
        "types:\n"
        f"  - {{name: neg, label: Neg, column: Neg, words: [{negative}]}}\n"
        f"  - {{name: pos, label: Pos, column: Pos, words: [{positive}]}}\n"
    )
    return path


def _json_lines(data: bytes) -> list:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


# How far the classifier's P(biased) may move with the batch it was scored in. It is a float32
# softmax of logits whose matrix products are summed in another order for another batch shape
# (padding to another length): a few float32 ULPs of a logit, which grow with the logits'
# size (3e-8 at 0.5, 2.4e-7 at a logit of 3), where a relative 1e-6 is only ~16 ULPs of 0.5.
# The verdicts must still agree: every probability is asserted far from the threshold.
PROBABILITY_NOISE = 1e-5


def _close(a: object, b: object, key: str = "") -> bool:
    """Equal JSON data, floats to 1e-6 (relative), the classifier's probabilities to
    PROBABILITY_NOISE."""
    if isinstance(a, float) and isinstance(b, float):
        if key == "probability":
            return abs(a - b) <= PROBABILITY_NOISE
        return a == pytest.approx(b, rel=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], k) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, key) for x, y in zip(a, b, strict=True))
    return a == b


def test_report_and_merge_read_the_runs_own_suite_and_passk_files(
    scripted, tmp_path, tiny_bias_classifier, monkeypatch, request
):
    """A suite file and pass@k data outside the working directory, which the manifest names by
    their last part only: the run keeps copies of what its report and merge need, so its shards
    merge, and `boi bias report` rebuilds, from another working directory holding same-named
    decoys, into the unsharded run's files; no decoy is read. A copy that is not the recorded
    file is refused, and a directory written before the copies still reports where its
    manifest's paths lead, refused where they lead to another file."""
    import shutil

    import bias as bias_package
    from benchmarks.common.rundir import RunDir
    from benchmarks.loaders import load_benchmark
    from benchmarks.study import Shard, run_study
    from bias.modifier_prompts import run as run_module
    from bias.modifier_prompts.run import ModifierStudy, rebuild_report
    from boi.studies import merge_runs

    inputs = tmp_path / "inputs"
    inputs.mkdir()
    modifiers = _modifiers(inputs / "mods.yaml", "lonely", "superb")
    problems = [
        p
        for p in load_benchmark("humaneval").problems
        if p.task_id in ("HumanEval/0", "HumanEval/2")
    ]
    data = inputs / "he.jsonl"
    data.write_text("".join(json.dumps(p.to_json()) + "\n" for p in problems))
    passk = {"enabled": True, "limit": 2, "ks": [1], "decoding": {"temperature": 0.2, "n": 1}}

    def config(out):
        suite = {"modifiers": str(modifiers), "modifiers_per_type": 1}
        suite["only_dimensions"] = ["ethnicity", "gender", "age"]
        return _config(
            out.parent, tiny_bias_classifier, out_dir=str(out), suite=suite,
            passk={**passk, "data": str(data)}, sweep={},
        )  # fmt: skip

    import torch

    # The whole run and the shards classify batches of other sizes; with several torch
    # threads the classifier's float output can differ in its last digits by batch shape.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    request.addfinalizer(lambda: torch.set_num_threads(threads))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    whole = tmp_path / "whole" / "run"
    run_bias(config(whole), log=lambda _: None)
    shards = []
    for index in range(2):
        out = tmp_path / f"shard{index}" / "run"
        run_study(ModifierStudy(config(out)), shard=Shard(index, 2), log=lambda _: None)
        shards.append(out)
    manifest = json.loads((whole / "manifest.json").read_text())
    assert manifest["config"]["suite"]["modifiers"] == "mods.yaml"
    assert manifest["inputs"]["suite.modifiers"]["path"] == "mods.yaml"
    assert (whole / "inputs" / "modifiers.yaml").read_bytes() == modifiers.read_bytes()

    # Elsewhere, same-named files that are other files: reading one would change the prompts
    # (another modifier) or the pass@k rows' order (the problems reversed).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    _modifiers(elsewhere / "mods.yaml", "angry", "stylish")
    (elsewhere / "he.jsonl").write_text(
        "".join(json.dumps(p.to_json()) + "\n" for p in reversed(problems))
    )
    read: list[str] = []
    # The suite's files are read through bias.load_data_file, which reads YAML with
    # bias.load_yaml.
    real_yaml, real_benchmark = bias_package.load_yaml, run_module.load_benchmark
    monkeypatch.setattr(
        bias_package, "load_yaml", lambda p, *a, **k: read.append(str(p)) or real_yaml(p, *a, **k)
    )
    monkeypatch.setattr(
        run_module,
        "load_benchmark",
        lambda d, p=None, *a, **k: read.append(str(p)) or real_benchmark(d, p, *a, **k),
    )
    merged = merge_runs(tmp_path / "merged" / "run", shards, lambda _: None).out_dir
    assert main(["bias", "report", str(merged)]) == 0
    assert not [p for p in read if "elsewhere" in p or p in ("mods.yaml", "he.jsonl")], read
    assert any(p.endswith("modifiers.yaml") for p in read), read  # the run's own copy was read
    # No probability within the batches' noise of the threshold, so no verdict can differ
    # between the whole run and its shards (the tiny classifier gives about 0.497).
    from bias.metrics import THRESHOLD

    scored = [json.loads(line) for line in (whole / "scores.jsonl").read_text().splitlines()]
    assert scored and all(
        abs(r["probability"] - THRESHOLD) > 100 * PROBABILITY_NOISE for r in scored
    )
    same = ["prompts.jsonl", "passk_problems.jsonl", "inputs/modifiers.yaml"]
    same += [str(p.relative_to(whole)) for p in (whole / "completions").rglob("*.jsonl")]
    same += [f"report/{n}" for n in ("cbs.md", "tables.md", "cbs.csv", "bias.json")]
    for name in same:
        first, second = (merged / name).read_bytes(), (whole / name).read_bytes()
        if name.endswith((".jsonl", ".json")) and first != second:
            # The classifier's probabilities may differ in their last digits between the
            # whole run's batches and the shards' (seen in CI's whole suite, not alone; the
            # byte-identical merge of bias runs is tests/test_study_driver.py's): equal
            # otherwise, and to 1e-6.
            parse = json.loads if name.endswith(".json") else _json_lines
            assert _close(parse(first), parse(second)), name
        else:
            assert first == second, name

    def executed(run):  # the pass@k rows in order, without their timings
        path = run / "passk" / "scripted_bias-embedded" / "results.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        return [(r["task_id"], r["sample_index"], r["status"]) for r in rows]

    assert executed(merged) == executed(whole) == [("HumanEval/0", 0, "failed"), ("HumanEval/2", 0, "failed")]  # fmt: skip
    ours = json.loads((merged / "manifest.json").read_text())
    assert ours["inputs"] == manifest["inputs"] and tmp_path.name not in json.dumps(ours)

    # A copy edited after the run: refused, in one sentence.
    copy = merged / "inputs" / "modifiers.yaml"
    copy.write_text(copy.read_text().replace("lonely", "angry"))
    with pytest.raises(UserError, match=r"is not the suite file the run used"):
        rebuild_report(merged)

    # Written before runs kept their suite files: the manifest's paths as typed then still
    # report; a path that leads to another file (the decoy here) is refused.
    older = tmp_path / "older"
    shutil.copytree(whole, older)
    shutil.rmtree(older / "inputs")
    recorded = json.loads((older / "manifest.json").read_text())
    recorded["inputs"] = {k: v for k, v in recorded["inputs"].items() if not k.startswith("suite.")}
    recorded["config"]["suite"]["modifiers"] = str(modifiers)
    (older / "manifest.json").write_text(json.dumps(recorded))
    rebuild_report(older)
    assert (older / "report" / "cbs.md").read_bytes() == (whole / "report" / "cbs.md").read_bytes()
    recorded["config"]["suite"]["modifiers"] = "mods.yaml"
    (older / "manifest.json").write_text(json.dumps(recorded))
    with pytest.raises(UserError, match=r"written before boi kept .* is another file"):
        rebuild_report(older)
    assert RunDir.open(older).completed
