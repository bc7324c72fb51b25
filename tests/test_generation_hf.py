"""The transformers backend on a tiny in-process Llama: seeds per sample, greedy, stops, chat."""

from __future__ import annotations

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import DecodingConfig, Request, truncate_at_stop
from benchmarks.generation._decoding import prompt_sha256
from tests.generation_helpers import humaneval_prompts, tiny_backend, tiny_generator

SAMPLING = DecodingConfig(temperature=0.8, top_p=0.95, max_new_tokens=12, n=4, seed=3, stop=())


def _prompt(i: int) -> str:
    return list(humaneval_prompts().values())[i]


def _request(prompt: str, indices) -> Request:
    return Request(prompt, prompt_sha256(prompt), tuple(indices))


def test_sample_depends_on_index_not_on_how_work_is_split():
    backend = tiny_backend(batch_size=8)
    prompt = _prompt(0)
    whole = backend.complete(prompt, SAMPLING, [0, 1, 2, 3])
    assert len(set(whole)) > 1, "sampled completions of one prompt should differ"
    assert backend.complete(prompt, SAMPLING, [2, 3]) == whole[2:]
    assert backend.complete(prompt, SAMPLING, [1]) == whole[1:2]
    # Packed with another prompt (left padding), in another order.
    packed = dict(
        backend.complete_many([_request(_prompt(1), [0, 1]), _request(prompt, [3, 0])], SAMPLING)
    )
    assert packed[1] == [whole[3], whole[0]]
    # A smaller batch size changes the call shapes, not the samples.
    assert tiny_backend(batch_size=1).complete(prompt, SAMPLING, [0, 1, 2, 3]) == whole


def test_seed_changes_samples_and_greedy_ignores_it():
    backend = tiny_backend()
    prompt = _prompt(2)
    seed3 = backend.complete(prompt, SAMPLING, [0, 1])
    seed4 = backend.complete(prompt, DecodingConfig(**{**SAMPLING.to_json(), "seed": 4}), [0, 1])
    assert seed3 != seed4
    greedy = DecodingConfig(temperature=0, max_new_tokens=12, n=3, stop=())
    outputs = backend.complete(prompt, greedy, [0, 1, 2])
    assert len(set(outputs)) == 1
    assert (
        backend.complete(
            prompt, DecodingConfig(temperature=0, max_new_tokens=12, seed=9, stop=()), [5]
        )
        == outputs[:1]
    )
    assert outputs[0] != seed3[0]


def test_stop_sequence_ends_generation_early_and_is_cut():
    backend = tiny_backend()
    prompt = _prompt(3)
    sampling = DecodingConfig(temperature=0.8, max_new_tokens=40, seed=1, stop=())
    free = backend.complete(prompt, sampling, [0])[0]
    starts = [
        i
        for i in range(5, len(free) - 3)
        if free[i : i + 3].isascii() and free[i : i + 3].isprintable()
    ]
    assert starts and len(free) > starts[0] + 20, free
    stop = free[starts[0] : starts[0] + 3]
    first = free.find(stop)
    with_stop = DecodingConfig(**{**sampling.to_json(), "stop": [stop]})
    stopped = backend.complete(prompt, with_stop, [0])[0]
    # The same draws up to the stop sequence, then generation ended within a token or two.
    assert stopped.startswith(free[: first + len(stop)])
    assert len(stopped) < first + len(stop) + 12 < len(free)
    assert truncate_at_stop(stopped, (stop,)) == free[:first]


def test_chat_mode_uses_the_chat_template():
    backend = tiny_backend()
    prompt = _prompt(0)
    chat = DecodingConfig(temperature=0.8, max_new_tokens=10, chat=True)
    plain = DecodingConfig(temperature=0.8, max_new_tokens=10, stop=())
    # Same seeds, different model input: the template (and the instruction) went in.
    assert backend.complete(prompt, chat, [0, 1]) != backend.complete(prompt, plain, [0, 1])
    _, tokenizer = tiny_generator()
    template = tokenizer.chat_template
    try:
        tokenizer.chat_template = None
        with pytest.raises(UserError, match="no chat template"):
            backend.complete(prompt, chat, [0])
    finally:
        tokenizer.chat_template = template


def test_identity_follows_weights():
    import torch

    backend = tiny_backend()
    assert backend.identity.startswith("hf|tiny-test-llama#tensors:")
    assert backend.identity == tiny_backend().identity
    model, _ = tiny_generator()
    with torch.no_grad():
        model.lm_head.weight[0, 0] += 1.0
    try:
        assert tiny_backend().identity != backend.identity
    finally:
        with torch.no_grad():
            model.lm_head.weight[0, 0] -= 1.0
