"""`boi run` end to end with a tiny model saved to disk: report, manifest, resume, refusals."""

import json

import pytest

from benchmarks.common.errors import UserError
from boi.cli import main
from boi.runner import RunConfig, load_run_config, run_robustness

TASKS = ["HumanEval/23", "HumanEval/53"]


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    from tests.generation_helpers import tiny_generator

    model, tokenizer = tiny_generator()
    path = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def config_dict(model_dir, out_dir, **extra):
    data = {
        "out_dir": str(out_dir),
        "datasets": [{"name": "humaneval", "task_ids": TASKS}],
        "models": [{"kind": "hf", "model": model_dir, "device": "cpu"}],
        "settings": [
            {
                "label": "T=0.8",
                "ks": [1, 2],
                "decoding": {"temperature": 0.8, "n": 2, "max_new_tokens": 8},
            }
        ],
        "seeds": [0],
        "critic": {"enabled": True, "scorer": {"model": model_dir}},
        "bootstrap": 20,
        "keywords": {"code_threshold": 0.3, "context_threshold": 0.9},
    }
    data.update(extra)
    return data


@pytest.fixture(scope="module")
def tiny_embedder_patch():
    # Keyword extraction with the real embedder would dominate this test; the tiny one is enough.
    import perturb.keywords as keywords
    from tests.keyword_helpers import tiny_embedder

    original = keywords.sentence_transformer_embedder
    keywords.sentence_transformer_embedder = lambda *a, **k: tiny_embedder()
    yield
    keywords.sentence_transformer_embedder = original


@pytest.fixture(scope="module")
def finished_run(tiny_model_dir, tiny_embedder_patch, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "r"
    config = load_run_config(None, config_dict(tiny_model_dir, out))
    outcome = run_robustness(config, log=lambda m: None)
    return config, outcome


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def without_durations(text):
    return [
        {k: v for k, v in json.loads(line).items() if k != "duration"} for line in text.splitlines()
    ]


def test_run_writes_table_report_and_manifest(finished_run):
    _, outcome = finished_run
    out = outcome.out_dir
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["completed"] is True and manifest["seeds"] == [0]
    assert manifest["config"]["settings"][0]["decoding"]["n"] == 2
    assert manifest["versions"]["torch"] and "commit" in manifest["git"]
    for name in ("table.md", "table.csv", "table.json", "report.html"):
        assert (out / "report" / name).stat().st_size > 0
    assert "| Original" in outcome.table_markdown and "Anon+Drop All" in outcome.table_markdown
    problems = read_jsonl(out / "problems.jsonl")
    transforms = {p["transform"] for p in problems}
    assert {"original", "drop_all", "anonymize", "name_only"} <= transforms
    results = read_jsonl(next((out / "results").rglob("*.jsonl")))
    assert len(results) == 2 * len(problems)  # n=2 per variant, every variant executed
    assert all(
        {"passed", "result", "transform", "source_task_id", "sample_index"} <= set(r)
        for r in results
    )
    critic = read_jsonl(out / "critic.jsonl")
    assert critic and all("critic" in row for row in critic)


def test_every_transform_covers_every_problem(finished_run):
    _, outcome = finished_run
    problems = read_jsonl(outcome.out_dir / "problems.jsonl")
    for transform in ("drop_one", "drop_all", "drop_examples", "anonymize"):
        assert {p["source_task_id"] for p in problems if p["transform"] == transform} == set(TASKS)


def test_rerun_is_fully_cached_and_identical(finished_run):
    config, outcome = finished_run
    before = (next((outcome.out_dir / "results").rglob("*.jsonl"))).read_text()
    again = run_robustness(config, log=lambda m: None)
    assert again.generation["generated"] == 0 and again.generation["cache_hits"] > 0
    assert next((outcome.out_dir / "results").rglob("*.jsonl")).read_text() == before  # untouched


def test_rerun_reuses_the_perturbation(finished_run, monkeypatch):
    import boi.runner.stages as stages

    config, outcome = finished_run
    problems = (outcome.out_dir / "problems.jsonl").read_text()
    calls = []
    monkeypatch.setattr(stages, "run_catalogue", lambda *a, **k: calls.append(a))
    logged = []
    run_robustness(config, log=logged.append)
    assert calls == []  # the finished run's variants, not a second perturbation
    assert any("as perturbed before" in line for line in logged)
    assert (outcome.out_dir / "problems.jsonl").read_text() == problems


def test_interrupted_run_resumes_at_sample_granularity(finished_run):
    config, outcome = finished_run
    out = outcome.out_dir
    results_path = next((out / "results").rglob("*.jsonl"))
    complete_results = results_path.read_text()
    cache = out / "generations.jsonl"
    lines = cache.read_text().splitlines(keepends=True)
    keep = len(lines) // 2
    cache.write_text("".join(lines[:keep]) + lines[keep][: len(lines[keep]) // 2])  # torn tail
    result_lines = complete_results.splitlines(keepends=True)
    results_path.write_text("".join(result_lines[:3]) + '{"task_id": "torn')
    again = run_robustness(config, log=lambda m: None)
    assert 0 < again.generation["generated"] < again.generation["requested_samples"]
    assert again.generation["cache_hits"] > 0
    # same samples, same verdicts, no duplicates (only the measured durations differ)
    assert without_durations(results_path.read_text()) == without_durations(complete_results)


def test_a_different_config_is_refused_in_the_same_dir(
    finished_run, tiny_model_dir, capsys, tmp_path
):
    _, outcome = finished_run
    path = tmp_path / "c.yaml"
    import yaml

    data = config_dict(tiny_model_dir, outcome.out_dir, seeds=[1])
    path.write_text(yaml.safe_dump(data))
    assert main(["run", "--config", str(path)]) == 2
    assert "holds a different run" in capsys.readouterr().err


def test_config_typo_suggests_the_key(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text("settings:\n  - label: x\n    decoding: {temprature: 0.2}\n")
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "temprature is not a config key" in err and "did you mean 'temperature'" in err


def test_k_above_n_is_refused():

    with pytest.raises(UserError, match="k=100 exceeds the 2 samples"):
        load_run_config(
            None, {"settings": [{"label": "a", "ks": [100], "decoding": {"n": 2}}], "seeds": [0]}
        )


def test_unknown_model_is_a_clear_error(tmp_path, capsys, tiny_embedder_patch):
    data = config_dict(str(tmp_path / "no-such-model"), tmp_path / "out")
    data["critic"] = {"enabled": False}
    import yaml

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["run", "--config", str(path)]) == 2
    assert "no-such-model" in capsys.readouterr().err


def test_bundled_configs_load():
    from boi.runner import resolve_config_path

    demo = load_run_config(resolve_config_path("demo"), {})
    paper = load_run_config(resolve_config_path("paper"), {})
    assert isinstance(demo, RunConfig) and demo.settings[0].decoding.chat
    assert [s.ks for s in paper.settings] == [(1,), (1, 100)] and len(paper.seeds) == 10


def test_the_critic_gate_takes_an_endpoint_scorer(tiny_model_dir, tiny_embedder_patch, tmp_path):
    """`critic.kind: endpoint` scores the variants through an OpenAI-compatible server (a
    vLLM-like fake here) instead of a local model; every variant is sent, every one scored."""
    import threading
    from http.server import HTTPServer

    from tests.test_critic_endpoint import _Handler

    _Handler.mode, _Handler.requests, _Handler.failures_left = "ok", [], 0
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        critic = {
            "enabled": True,
            "kind": "endpoint",
            "scorer": {"url": f"http://127.0.0.1:{httpd.server_port}/v1", "model": "m"},
        }
        data = config_dict(tiny_model_dir, tmp_path / "r", critic=critic)
        data["datasets"] = [{"name": "humaneval", "task_ids": TASKS[:1]}]
        outcome = run_robustness(load_run_config(None, data), log=lambda m: None)
    finally:
        httpd.shutdown()
        httpd.server_close()
    sent = {p for r in _Handler.requests for p in r["body"]["prompt"]}
    critic_rows = read_jsonl(outcome.out_dir / "critic.jsonl")
    assert critic_rows and all(
        "similarity" in r["critic"] or r["critic"].get("original") for r in critic_rows
    )
    assert {r["prompt"] for r in critic_rows} <= sent
    manifest = json.loads((outcome.out_dir / "manifest.json").read_text())
    assert manifest["config"]["critic"]["kind"] == "endpoint"


def test_an_endpoint_critic_without_its_keys_is_one_sentence(tmp_path):
    with pytest.raises(
        Exception, match=r"critic.kind is 'endpoint': give critic.scorer .*url, model"
    ):
        load_run_config(None, {"critic": {"enabled": True, "kind": "endpoint"}})
