"""Model resolution and the embedded model's one-time conversion (atomic, recorded, reused)."""

from __future__ import annotations

import json

import pytest

from benchmarks.common import models
from benchmarks.common.provenance import file_sha256
from tests.critic_helpers import tiny_lm


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BOI_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def fake_gguf_load(monkeypatch):
    """Replace the slow GGUF dequantisation by the tiny in-process model; count the loads."""
    import transformers

    model, tokenizer = tiny_lm()
    loads = []

    def load_model(path, gguf_file=None, **kwargs):
        loads.append(gguf_file)
        model.config.quantization_config = {"quant_method": "gguf"}  # what a GGUF load leaves
        return model

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", load_model)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: tokenizer)
    return loads


def test_prepare_converts_once_and_records_the_source(cache, fake_gguf_load):
    first = models.prepare_embedded_model(log=False)
    assert first.converted and first.path.parent == cache / "models"
    marker = json.loads((first.path / models.MARKER).read_text())
    assert marker["source_sha256"] == file_sha256(models.embedded_gguf_path())
    assert (first.path / "config.json").is_file() and (first.path / "tokenizer.json").is_file()
    assert "quantization_config" not in json.loads((first.path / "config.json").read_text())
    again = models.prepare_embedded_model(log=False)
    assert not again.converted and fake_gguf_load == [models.EMBEDDED_GGUF]
    assert models.resolve_model("embedded") == models.resolve_model(None) == str(first.path)


def test_a_failed_conversion_leaves_nothing_behind(cache, fake_gguf_load, monkeypatch):
    model, _ = tiny_lm()

    def crash(*args, **kwargs):
        raise KeyboardInterrupt  # what a user's Ctrl-C mid-write looks like

    monkeypatch.setattr(type(model), "save_pretrained", crash)
    with pytest.raises(KeyboardInterrupt):
        models.prepare_embedded_model(log=False)
    assert list((cache / "models").iterdir()) == []


def test_a_folder_without_marker_is_not_trusted(cache, fake_gguf_load):
    folder = models.embedded_model_dir()
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")  # a half-copied folder from elsewhere
    assert models.prepare_embedded_model(log=False).converted


@pytest.mark.embedded
def test_embedded_smollm2_scores_and_ranks_plausibility(humaneval):
    """The real prepared SmolLM2: batched equals the naive loop, and a garbled prompt is far less
    plausible than a renamed one."""
    from critic.scoring import HFScorer, HFScorerConfig
    from critic.similarity import log_prob_similarity

    scorer = HFScorer(HFScorerConfig(model="embedded"))
    problem = humaneval.problems[2]
    words = problem.prompt.split(" ")
    garbled = " ".join(words[::2] + words[1::2])
    prompts = [problem.prompt, problem.prompt.replace(problem.entry_point, "func"), garbled]
    batched = scorer.score(prompts)
    naive = scorer.score_one_at_a_time(prompts)
    for a, b in zip(batched, naive, strict=True):
        assert a.total == pytest.approx(b.total, rel=1e-4)
    original, renamed, shuffled = (s.total for s in batched)
    assert log_prob_similarity(original, renamed) > 90 > log_prob_similarity(original, shuffled)
