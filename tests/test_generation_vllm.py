"""The vLLM backend with a fake engine (vLLM needs a GPU): requests, seeds, chat input, rounds."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import BackendSpec, DecodingConfig, Request, generate_samples
from benchmarks.generation._decoding import prompt_sha256, sample_seed
from benchmarks.generation._vllm import VLLMBackend, sampling_arguments
from tests.generation_helpers import tiny_generator

PROMPT = 'def add(a, b):\n    """Add two numbers."""\n'


@dataclass
class FakeSamplingParams:
    n: int
    temperature: float
    max_tokens: int
    seed: int
    top_p: float = 1.0
    stop: list | None = None


@dataclass
class _Completion:
    index: int
    text: str


@dataclass
class _Output:
    outputs: list


class FakeEngine:
    """vLLM's seed semantics: child i of a request with seed s samples with seed s + i."""

    def __init__(self, tokenizer=None):
        self.calls = []
        self.tokenizer = tokenizer

    def get_tokenizer(self):
        return self.tokenizer

    def generate(self, inputs, params, use_tqdm=True):
        self.calls.append((inputs, params))
        return [
            _Output([_Completion(i, f"    return {p.seed + i}\n") for i in reversed(range(p.n))])
            for p in params
        ]


def _backend(engine, **overrides):
    return VLLMBackend(
        BackendSpec(kind="vllm", model="fake", **overrides),
        engine=engine,
        sampling_params=FakeSamplingParams,
        identity="vllm|fake",
    )


def test_sampling_arguments():
    prompt_hash = prompt_sha256(PROMPT)
    decoding = DecodingConfig(temperature=0.8, top_p=0.95, max_new_tokens=64, n=10, seed=4)
    arguments = sampling_arguments(Request(PROMPT, prompt_hash, (3, 4, 5)), decoding)
    assert arguments == {
        "n": 3,
        "temperature": 0.8,
        "top_p": 0.95,
        "max_tokens": 64,
        "seed": sample_seed(4, prompt_hash, 3),
        "stop": list(decoding.stop),
    }
    greedy = sampling_arguments(
        Request(PROMPT, prompt_hash, (0, 1)), DecodingConfig(temperature=0, chat=True)
    )
    assert greedy["n"] == 1 and "top_p" not in greedy and "stop" not in greedy


def test_samples_keep_their_seed_however_requests_are_split(tmp_path):
    decoding = DecodingConfig(temperature=0.8, n=10, seed=1)
    base = sample_seed(1, prompt_sha256(PROMPT), 0)
    expected = [f"    return {base + j}\n" for j in range(10)]
    one_request = generate_samples(
        _backend(FakeEngine()), {"a": PROMPT}, decoding, tmp_path / "a.jsonl", progress=False
    )
    assert one_request.completions["a"] == expected
    engine = FakeEngine()
    split = generate_samples(
        _backend(engine, samples_per_request=3),
        {"a": PROMPT},
        decoding,
        tmp_path / "b.jsonl",
        progress=False,
    )
    assert split.completions["a"] == expected
    assert [(p.n, p.seed - base) for p in engine.calls[0][1]] == [(3, 0), (3, 3), (3, 6), (1, 9)]


def test_non_consecutive_indices_become_separate_requests():
    engine = FakeEngine()
    backend = _backend(engine)
    decoding = DecodingConfig(temperature=0.8, n=10)
    request = Request(PROMPT, prompt_sha256(PROMPT), (0, 1, 5))
    ((position, texts),) = list(backend.complete_many([request], decoding))
    base = sample_seed(0, prompt_sha256(PROMPT), 0)
    assert position == 0 and texts == [f"    return {base + j}\n" for j in (0, 1, 5)]
    assert [(p.n, p.seed - base) for p in engine.calls[0][1]] == [(2, 0), (1, 5)]


def test_rounds_and_greedy(tmp_path):
    engine = FakeEngine()
    backend = _backend(engine, round_requests=2)
    prompts = {f"p{i}": PROMPT + f"# {i}\n" for i in range(5)}
    outcome = generate_samples(
        backend, prompts, DecodingConfig(temperature=0, n=4), tmp_path / "c.jsonl", progress=False
    )
    assert [len(inputs) for inputs, _ in engine.calls] == [2, 2, 1]
    assert all(p.n == 1 for _, params in engine.calls for p in params)
    assert all(len(set(c)) == 1 and len(c) == 4 for c in outcome.completions.values())


def test_chat_input_is_templated_token_ids():
    _, tokenizer = tiny_generator()
    engine = FakeEngine(tokenizer)
    _backend(engine).complete(PROMPT, DecodingConfig(chat=True), [0])
    (engine_input,) = engine.calls[0][0]
    text = tokenizer.decode(engine_input["prompt_token_ids"])
    assert text.startswith("<s>user\n") and text.endswith("<s>assistant\n")
    assert PROMPT.rstrip() in text
    with pytest.raises(UserError, match="no chat template"):
        _backend(FakeEngine(type("T", (), {"chat_template": None})())).complete(
            PROMPT, DecodingConfig(chat=True), [0]
        )


def test_missing_vllm_is_a_clear_error():
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(UserError, match=r"pip install -e '\.\[vllm\]'"):
            VLLMBackend(BackendSpec(kind="vllm", model="embedded"))
    else:
        pytest.skip("vLLM is installed")
