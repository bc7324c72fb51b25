"""Long steps show a bar with counts (perturbation: embedding, keywords, transformations), a
finished run's perturbation is keyed by its inputs, and torch's thread count is boi's choice."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from benchmarks.common.errors import UserError
from benchmarks.common.models import configure_threads
from benchmarks.common.progress import progress_bar
from benchmarks.common.threads import THREADS_ENV, default_threads
from benchmarks.loaders import load_benchmark
from boi.runner.stages import _perturbation_key
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.keywords import encode_with_progress
from tests.keyword_helpers import tiny_embedder


class FakeSentenceModel:
    """Vectors from the text alone; each batch of `encode` is a forward pass that calls the
    registered hooks, as a SentenceTransformer's does."""

    def __init__(self):
        self.batch_sizes = []
        self.hooks = []

    def register_forward_hook(self, hook):
        self.hooks.append(hook)
        hooks = self.hooks

        class Handle:
            def remove(self):
                hooks.remove(hook)

        return Handle()

    def encode(self, texts, batch_size, convert_to_numpy, show_progress_bar):
        out = []
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            self.batch_sizes.append(len(batch))
            vectors = np.array([[len(t), t.count("a"), sum(map(ord, t)) % 97] for t in batch], "f4")
            for hook in self.hooks:
                hook(self, (), {"sentence_embedding": vectors})
            out.append(vectors)
        return np.concatenate(out)


def recording_bars(monkeypatch, module):
    """The bars `module` draws (real ones), with every (done, total) they were given."""
    seen: dict[str, list[tuple[int, int]]] = {}

    def bar(total, description, unit="sample"):
        draw = progress_bar(total, description, unit)

        def update(done, total):
            seen.setdefault(description, []).append((done, total))
            draw(done, total)

        return update

    monkeypatch.setattr(module, "progress_bar", bar)
    return seen


def test_embedding_shows_a_bar_over_the_model_batches(capsys, monkeypatch):
    import perturb.keywords

    seen = recording_bars(monkeypatch, perturb.keywords)
    texts = [("word " * (i % 13)) + f"a{i}" for i in range(300)]
    model = FakeSentenceModel()
    vectors = encode_with_progress(model, texts, batch_size=128)
    expected = FakeSentenceModel().encode(texts, 300, True, False)
    assert np.array_equal(vectors, expected)
    assert model.batch_sizes == [128, 128, 44]  # the model's own batches: one encode call
    assert model.hooks == []  # the counting hook is removed again
    err = capsys.readouterr().err
    assert "embed:" in err and "0/300" in err  # drawn on stderr, with the count
    assert seen["embed"][-1] == (300, 300) and len(seen["embed"]) == len(model.batch_sizes)


def test_perturbation_shows_keyword_and_transform_bars(capsys, monkeypatch):
    import perturb.catalogue
    import perturb.keywords

    keyword_bars = recording_bars(monkeypatch, perturb.keywords)
    transform_bars = recording_bars(monkeypatch, perturb.catalogue)
    problems = load_benchmark("humaneval").problems[:3]
    result = run_catalogue(problems, PerturbConfig(), tiny_embedder())
    assert result.variants
    err = capsys.readouterr().err
    assert "keywords:" in err and "transform:" in err and "0/3" in err
    assert keyword_bars["keywords"] == [(1, 3), (2, 3), (3, 3)]
    assert transform_bars["transform"] == [(1, 3), (2, 3), (3, 3)]


def test_the_perturbation_key_follows_its_inputs():
    from boi.runner.config import load_run_config

    config = load_run_config(
        None,
        {
            "out_dir": "unused",
            "datasets": [{"name": "humaneval", "task_ids": ["HumanEval/0"]}],
            "models": [{"kind": "reference"}],
        },
    )
    loaded = load_benchmark("humaneval")
    key = _perturbation_key(PerturbConfig(), config, [loaded])
    assert key == _perturbation_key(PerturbConfig(), config, [loaded])
    other_seed = dataclasses.replace(PerturbConfig(), seed=1)
    assert key != _perturbation_key(other_seed, config, [loaded])
    changed = dataclasses.replace(loaded, problems=[loaded.problems[0].replace(prompt="x")])
    assert key != _perturbation_key(PerturbConfig(), config, [changed])


def test_default_threads_is_half_the_usable_cpus_or_the_environment(monkeypatch):
    import os

    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert default_threads() == max(1, len(os.sched_getaffinity(0)) // 2)
    monkeypatch.setenv(THREADS_ENV, "3")
    assert default_threads() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(UserError, match=THREADS_ENV):
            default_threads()


def test_configure_threads_sets_torch(monkeypatch):
    import torch

    from benchmarks.common import models

    # The process's choice is put back with torch's count: a later load must not believe
    # this test's count is still set.
    monkeypatch.setattr(models, "_configured", None)
    before = torch.get_num_threads()
    try:
        assert configure_threads(1) == 1 and torch.get_num_threads() == 1
        monkeypatch.setenv(THREADS_ENV, "2")
        assert configure_threads(2) == 2 and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_run_records_the_thread_count_it_ran_with(monkeypatch):
    """The count can move a model's logits in their last digits, so a manifest says it, and
    BOI_THREADS set to the recorded value reproduces it."""
    from benchmarks.common.provenance import run_record

    monkeypatch.setenv(THREADS_ENV, "3")
    assert run_record({"x": 1})["threads"] == 3
    monkeypatch.delenv(THREADS_ENV)
    assert run_record({"x": 1})["threads"] == default_threads()
