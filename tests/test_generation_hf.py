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


def _ragged_prompts() -> list[str]:
    """Prompts cut at different places: on the tiny model their greedy continuations differ
    and end (EOS, the stop below, or max_new_tokens) after anywhere from 2 to 30 tokens."""
    prompts = list(humaneval_prompts().values())
    return [prompts[i][: 40 + 23 * i] for i in range(12)]


def _one_at_a_time(prompt: str, decoding: DecodingConfig) -> str:
    """A plain `model.generate` on the prompt alone, cut at the first stop sequence."""
    import torch

    model, tokenizer = tiny_generator()
    ids = torch.tensor([tokenizer(prompt)["input_ids"]])
    with torch.inference_mode():
        output = model.generate(
            ids,
            max_new_tokens=decoding.max_new_tokens,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id,
        )
    text = tokenizer.decode(output[0, ids.shape[1] :], skip_special_tokens=True)
    return truncate_at_stop(text, decoding.stop)


def test_batched_greedy_equals_one_prompt_at_a_time_as_rows_finish_apart(monkeypatch):
    prompts = _ragged_prompts()
    greedy = DecodingConfig(temperature=0, max_new_tokens=30, stop=(" import",))
    expected = [_one_at_a_time(prompt, greedy) for prompt in prompts]
    requests = [_request(prompt, [0]) for prompt in prompts]
    backend = tiny_backend(batch_size=8)
    calls: list[int] = []  # the rows of every generate call
    generate = backend.model.generate

    def recording(*args, **kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        return generate(*args, **kwargs)

    monkeypatch.setattr(backend.model, "generate", recording)
    batched = dict(backend.complete_many(requests, greedy))
    raw = [batched[i][0] for i in range(len(prompts))]
    assert [truncate_at_stop(text, greedy.stop) for text in raw] == expected
    # The rows really ended apart: by EOS, by the stop sequence, and at max_new_tokens.
    assert len({len(text) for text in raw}) >= 4, raw
    assert any(" import" in text for text in raw)
    # Finished rows left their batch: the calls after the first went on with fewer rows.
    assert calls[0] == 8 and len(calls) > 2 and min(calls) < 4, calls
    monkeypatch.undo()
    assert dict(tiny_backend(batch_size=1).complete_many(requests, greedy)) == batched


def test_seeded_samples_do_not_depend_on_which_rows_finish_beside_them():
    prompts = _ragged_prompts()[:6]
    sampling = DecodingConfig(
        temperature=0.8, top_p=0.95, max_new_tokens=24, n=3, seed=5, stop=(" import",)
    )
    requests = [_request(prompt, [0, 1, 2]) for prompt in prompts]
    whole = dict(tiny_backend(batch_size=8).complete_many(requests, sampling))
    assert len({len(text) for texts in whole.values() for text in texts}) > 3, whole
    # One sample at a time, and packed in other groups and orders.
    for batch_size in (1, 4):
        assert dict(tiny_backend(batch_size=batch_size).complete_many(requests, sampling)) == whole
    reordered = [
        _request(prompts[5], [2, 0]),
        _request(prompts[0], [1]),
        _request(prompts[3], [0, 1, 2]),
    ]
    again = dict(tiny_backend(batch_size=8).complete_many(reordered, sampling))
    assert again == {0: [whole[5][2], whole[5][0]], 1: [whole[0][1]], 2: whole[3]}


def test_batch_size_defaults_by_device():
    from benchmarks.generation._hf import BATCH_SIZE_BY_DEVICE

    assert tiny_backend().batch_size == BATCH_SIZE_BY_DEVICE["cpu"]
    assert tiny_backend().max_samples_per_call == BATCH_SIZE_BY_DEVICE["cpu"]
    assert tiny_backend(batch_size=3).batch_size == 3
    with pytest.raises(UserError, match="batch_size must be a positive integer"):
        tiny_backend(batch_size=0)
