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
