"""A tiny randomly initialised Llama and a byte-level BPE tokenizer trained in-process, so critic
tests run in seconds without the embedded model."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def tiny_lm():
    from benchmarks.loaders import load_benchmark
    from tests.tiny_models import tiny_llama

    corpus = [p.prompt for p in load_benchmark("humaneval").problems[:40]]
    # Sharpened hard so that differences between prompts (and bugs) show in the scores.
    return tiny_llama(corpus, vocab_size=400, max_positions=512, sharpen=20)


def tiny_scorer(**overrides):
    from critic.scoring import HFScorer, HFScorerConfig

    model, tokenizer = tiny_lm()
    return HFScorer(
        HFScorerConfig(model="tiny-test-llama", **overrides), model=model, tokenizer=tokenizer
    )
