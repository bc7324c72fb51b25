"""One end-to-end look at the real embedded SmolLM2-135M through the chat path."""

from __future__ import annotations

import pytest

from benchmarks.generation import BackendSpec, DecodingConfig, generate_samples, load_backend
from tests.generation_helpers import humaneval_prompts


@pytest.mark.embedded
def test_smollm2_chat_reply_becomes_a_body_that_parses(tmp_path):
    backend = load_backend(BackendSpec(kind="hf", model="embedded", device="cpu"))
    assert backend.identity.startswith("hf|SmolLM2-135M-Instruct#sha256:")
    prompt = humaneval_prompts()["HumanEval/3"]
    decoding = DecodingConfig(temperature=0, n=2, max_new_tokens=64, chat=True)
    cache = tmp_path / "c.jsonl"
    outcome = generate_samples(backend, {"HumanEval/3": prompt}, decoding, cache, progress=False)
    raw, completion = outcome.raw["HumanEval/3"][0], outcome.completions["HumanEval/3"][0]
    assert "```" in raw  # the instruct model answers in a fenced block...
    assert (
        completion.startswith("    ") and "def below_zero" not in completion
    )  # ...reduced to a body
    compile(prompt + completion, "<completion>", "exec")
    assert outcome.completions["HumanEval/3"] == [completion, completion]  # greedy
    again = generate_samples(backend, {"HumanEval/3": prompt}, decoding, cache, progress=False)
    assert again.generated == 0 and again.completions == outcome.completions
