"""The run layer: a run directory is claimed, resumed, refused, completed and opened the
same way by every command; manifests carry a format version; the sampling loop is shared."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest

from benchmarks.common.errors import UserError
from benchmarks.common.rundir import MANIFEST, MANIFEST_FORMAT, RunDir
from benchmarks.generation import (
    BACKENDS,
    BackendBase,
    DecodingConfig,
    PromptGroup,
    Request,
    sample_prompts,
)
from tests.generation_fakes import CountingBackend

CONFIG = {"model": "tiny", "seeds": [0, 1]}


def test_a_new_run_is_claimed_with_a_versioned_incomplete_manifest(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("x")
    run = RunDir.claim(tmp_path / "run", CONFIG, inputs={"data": data}, record={"seeds": [0, 1]})
    manifest = json.loads((tmp_path / "run" / MANIFEST).read_text())
    assert manifest["format_version"] == MANIFEST_FORMAT and manifest["boi_version"]
    assert manifest["completed"] is False and manifest["config"] == CONFIG
    assert manifest["inputs"]["data"]["sha256"] and not run.resumed
    run.timings["generate"] = 1.5
    run.complete(report={"html": "report.html"})
    opened = RunDir.open(tmp_path / "run")
    assert opened.completed and opened.timings == {"generate": 1.5}
    assert opened.seeds == [0, 1] and opened.config == CONFIG
    assert opened.config_hash == run.config_hash and opened.versions["python"]


def test_the_same_config_resumes_and_another_is_refused_naming_the_key(tmp_path):
    RunDir.claim(tmp_path, CONFIG)
    assert RunDir.claim(tmp_path, CONFIG).resumed
    with pytest.raises(UserError, match=r"holds a different run \(changed: model\)"):
        RunDir.claim(tmp_path, {**CONFIG, "model": "other"})


def test_a_directory_with_other_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match=r"is not empty and holds no manifest\.json"):
        RunDir.claim(tmp_path, CONFIG)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_manifest_written_before_format_versions_opens_and_resumes(tmp_path):
    """A run directory from before the run layer (no format_version) still opens."""
    old = {"config": CONFIG, "config_hash": RunDir.claim(tmp_path / "probe", CONFIG).config_hash}
    old.update({"seeds": [0, 1], "completed": True, "timings_s": {"report": 0.1}})
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / MANIFEST).write_text(json.dumps(old))
    opened = RunDir.open(tmp_path / "old")
    assert opened.format_version == 1 and opened.completed and opened.seeds == [0, 1]
    resumed = RunDir.claim(tmp_path / "old", CONFIG)
    assert resumed.resumed and resumed.format_version == MANIFEST_FORMAT


def test_a_manifest_from_a_newer_boi_is_refused_in_one_sentence(tmp_path):
    newer = {"config": CONFIG, "format_version": MANIFEST_FORMAT + 1, "boi_version": "9.0"}
    (tmp_path / MANIFEST).write_text(json.dumps(newer))
    for attempt in (lambda: RunDir.open(tmp_path), lambda: RunDir.claim(tmp_path, CONFIG)):
        with pytest.raises(UserError) as err:
            attempt()
        message = str(err.value)
        assert "written by boi 9.0" in message and "upgrade boi" in message
        assert "\n" not in message
    assert json.loads((tmp_path / MANIFEST).read_text()) == newer  # nothing rewritten


def test_open_says_what_is_wrong_with_a_directory(tmp_path):
    with pytest.raises(UserError, match=r"is not a boi run directory \(it does not exist"):
        RunDir.open(tmp_path / "missing", what="boi run")
    with pytest.raises(UserError, match=r"no manifest\.json"):
        RunDir.open(tmp_path, what="boi run")
    (tmp_path / MANIFEST).write_text("{not json")
    with pytest.raises(UserError, match="is damaged"):
        RunDir.open(tmp_path)


def test_an_opened_run_is_never_written(tmp_path):
    RunDir.claim(tmp_path, CONFIG)
    opened = RunDir.open(tmp_path)
    with pytest.raises(RuntimeError, match="opened for reading"):
        opened.update(extra=1)


def test_sampling_numbers_samples_across_seeds_and_keeps_each_groups_decoding(tmp_path):
    backend = CountingBackend(per_call=4)
    functions = PromptGroup({"a": "def a():\n", "b": "def b():\n"}, DecodingConfig(n=2))
    programs = PromptGroup({"c": "print(1)\n"}, DecodingConfig(n=2, stop=()), "programs")
    samples, totals = sample_prompts(backend, [functions, programs], [7, 8], tmp_path / "g.jsonl")
    keys = [(s.prompt_id, s.seed, s.sample_index) for s in samples]
    assert keys == [
        ("a", 7, 0), ("a", 7, 1), ("b", 7, 0), ("b", 7, 1), ("c", 7, 0), ("c", 7, 1),
        ("a", 8, 2), ("a", 8, 3), ("b", 8, 2), ("b", 8, 3), ("c", 8, 2), ("c", 8, 3),
    ]  # fmt: skip
    assert totals.generated == 12 and totals.cache_hits == 0
    # A function completion is cut at HumanEval's stops; the program group keeps everything.
    assert (
        samples[0].completion.startswith("    return") and "def helper" not in samples[0].completion
    )
    assert "def helper" in samples[4].completion and samples[4].raw == samples[4].completion
    again, totals = sample_prompts(backend, [functions, programs], [7, 8], tmp_path / "g.jsonl")
    assert again == samples and totals.cache_hits == 12 and totals.generated == 0


class EmptyForFirstModel(BackendBase):
    """Model "empty" answers every prompt with nothing usable; any other answers with a body."""

    def __init__(self, spec) -> None:
        self.identity = f"empty-test|{spec.model}"
        self.empty = spec.model == "empty"

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        text = "\ndef other():\n    pass\n" if self.empty else "    return 0\n"
        for position, request in enumerate(requests):
            yield position, [text for _ in request.indices]


def test_the_empty_completions_warning_names_only_the_model_that_had_them(tmp_path, monkeypatch):
    """Regression: the count used to add up across models, so the second model was warned about
    the first one's empty completions."""
    import perturb.keywords as keywords
    from boi.runner import load_run_config, run_robustness
    from tests.keyword_helpers import tiny_embedder

    monkeypatch.setattr(keywords, "sentence_transformer_embedder", lambda *a, **k: tiny_embedder())
    BACKENDS.register("empty_test", f"{__name__}:EmptyForFirstModel")
    try:
        config = load_run_config(
            None,
            {
                "out_dir": str(tmp_path / "run"),
                "datasets": [{"name": "humaneval", "task_ids": ["HumanEval/53"]}],
                "transforms": ["original"],
                "name_only_probe": False,
                "models": [
                    {"kind": "empty_test", "model": "empty"},
                    {"kind": "empty_test", "model": "fine"},
                ],
                "settings": [{"label": "greedy", "ks": [1], "decoding": {"temperature": 0}}],
                "seeds": [0],
                "bootstrap": 10,
            },
        )
        lines: list[str] = []
        outcome = run_robustness(config, log=lines.append)
    finally:
        BACKENDS.unregister("empty_test")
    warnings = [line for line in lines if "empty after post-processing" in line]
    assert len(warnings) == 1 and "from empty_test-empty " in warnings[0]
    # Empties are the judge's finding (replies are read where judged), not sampling's count.
    assert "empty" not in outcome.generation
    # The perturb line counts the problems the run selected, not the whole dataset.
    assert any("humaneval: 1 variants of 1 problems" in line for line in lines), lines
