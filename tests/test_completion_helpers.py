"""Completion mode's two readings (decoding `keep_helpers`): HumanEval's convention ends a
completion at the first top-level `def`, which cuts off a helper the model was about to write;
`keep_helpers` generates past it and keeps what the function calls, read by the same code that
reads a chat reply's helpers."""

from __future__ import annotations

import pytest

from benchmarks.common.errors import UserError
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.generation import (
    HUMANEVAL_STOP,
    DecodingConfig,
    Request,
    generate_samples,
    read_generated,
)
from benchmarks.generation._backend import BackendBase
from benchmarks.generation._cache import decoding_key
from benchmarks.generation._decoding import prompt_sha256
from benchmarks.generation._vllm import sampling_arguments
from benchmarks.problem import Problem

PROMPT = (
    "from typing import List\n\n\n"
    "def sum_squares(xs: List[int]) -> int:\n"
    '    """The sum of the squares of xs.\n'
    "    >>> sum_squares([1, 2])\n"
    "    5\n"
    '    """\n'
)
BODY = "    return sum(square(x) for x in xs) * SCALE\n"
# What a model writes past the function: a comment announcing the helper, the helper, a
# constant it reads, a function nothing calls, tests and a print (where generation stops).
AFTER = (
    "\n\n# Helper function to square a number\n"
    "def square(x):\n    return x * x\n\n\n"
    "SCALE = 1\n\n\n"
    "def unused():\n    return missing_name\n\n\n"
    "assert sum_squares([3]) == 9\n"
    "print(sum_squares([1, 2]))\n"
    "print('more')\n"
)
HELPERS = DecodingConfig(temperature=0, max_new_tokens=384, keep_helpers=True)
DEFAULT = DecodingConfig(temperature=0, max_new_tokens=384)


def _read(raw: str, decoding: DecodingConfig, prompt: str = PROMPT):
    return read_generated(raw, prompt, decoding)


def test_the_default_keeps_humaneval_stops_and_its_cache_key():
    assert DEFAULT.generation_stop == HUMANEVAL_STOP
    # The committed results run's decoding key (docs/results/qwen-humaneval-run.tar.gz): its
    # cached generations still serve the default reading.
    committed = DecodingConfig(temperature=0.0, n=1, max_new_tokens=384, chat=False)
    assert decoding_key(committed) == "105057ab1fa1f5d9"
    assert "keep_helpers" not in committed.cache_fields()


def test_keep_helpers_changes_the_stops_and_the_cache_key():
    assert HELPERS.generation_stop == ("\nif __name__", "\nprint(", "\n```")
    assert HELPERS.stop == HUMANEVAL_STOP  # the configured stops are kept as written
    assert decoding_key(HELPERS) != decoding_key(DEFAULT)
    custom = DecodingConfig(stop=["\nassert ", "\ndef ", "\n@"], keep_helpers=True)
    assert custom.generation_stop == ("\nassert ", "\n```")
    with pytest.raises(UserError, match="keep_helpers is for completion mode"):
        DecodingConfig(chat=True, keep_helpers=True)


def test_backends_send_the_generation_stops():
    request = Request(PROMPT, prompt_sha256(PROMPT), (0,))
    assert sampling_arguments(request, HELPERS)["stop"] == ["\nif __name__", "\nprint(", "\n```"]
    assert sampling_arguments(request, DEFAULT)["stop"] == list(HUMANEVAL_STOP)


def test_the_hf_backend_stops_at_the_generation_stops(monkeypatch):
    from benchmarks.generation import _hf
    from tests.generation_helpers import tiny_backend

    seen: list[tuple[str, ...]] = []
    real = _hf._UntilARowFinishes

    def watching(tokenizer, stop, eos, width):
        seen.append(tuple(stop))
        return real(tokenizer, stop, eos, width)

    monkeypatch.setattr(_hf, "_UntilARowFinishes", watching)
    backend = tiny_backend()
    for decoding in (DEFAULT, HELPERS):
        tiny = DecodingConfig(**{**decoding.to_json(), "max_new_tokens": 2})
        backend.complete(PROMPT, tiny, [0])
    assert seen == [HUMANEVAL_STOP, ("\nif __name__", "\nprint(", "\n```")]


def test_helpers_the_function_calls_are_kept_and_the_rest_left_out():
    reading = _read(BODY + AFTER, HELPERS)
    assert reading.status == "extracted"
    assert reading.completion == (BODY + "\n\ndef square(x):\n    return x * x\n\n\nSCALE = 1\n")
    assert reading.shape == (
        "continuation; helpers kept; constants kept; code after the function left out"
    )
    # HumanEval's reading of the same output: the function alone.
    assert _read(BODY + AFTER, DEFAULT).completion == BODY + "\n"


def test_a_continuation_with_nothing_after_the_function_is_unchanged():
    for raw in (BODY, BODY + "\n\n", BODY + "\n\nif __name__ == '__main__':\n    pass\n"):
        assert _read(raw, HELPERS).completion == _read(raw, DEFAULT).completion
        assert _read(raw, HELPERS).shape == "continuation"


def test_imports_come_first_and_prompt_names_are_not_taken_from_the_continuation():
    prompt = 'def shift(s):\n    return s\n\n\ndef decode(s: str) -> str:\n    """Undo."""\n'
    raw = (
        "    return helper(shift(s))\n\n\ndef shift(s):\n    return s[::-1]\n\n\n"
        "def helper(s):\n    return ''.join(sorted(s, key=math.floor))\n\n\nimport math\n"
    )
    completion = _read(raw, HELPERS, prompt).completion
    assert completion == (
        "    return helper(shift(s))\n\n\nimport math\n\n\n"
        "def helper(s):\n    return ''.join(sorted(s, key=math.floor))\n"
    )


def test_a_helper_cut_off_by_the_token_limit_is_truncated_not_missing():
    raw = BODY + "\n\ndef square(x):\n    return (x *\n"
    reading = _read(raw, HELPERS)
    assert reading.status == "truncated"
    assert reading.reason == "the completion was cut off inside square, which sum_squares calls"
    # Cut inside code the function does not call: the function and its helpers still count.
    raw = BODY + AFTER.split("def unused")[0] + "def unused():\n    return (\n"
    reading = _read(raw, HELPERS)
    assert reading.status == "extracted"
    assert "def square" in reading.completion and "unused" not in reading.completion


def test_a_closed_fence_and_prose_after_the_code_end_it():
    # An instruct model continuing a prompt ends its code with a fence and explains it.
    raw = BODY + AFTER.split("assert")[0] + "check()\n```\n\nThis code defines `square`.\n"
    reading = _read(raw, HELPERS)
    assert reading.completion == _read(BODY + AFTER, HELPERS).completion


def test_a_function_that_does_not_parse_is_left_as_written():
    raw = "    return (\n\ndef square(x):\n    return x\n"
    assert _read(raw, HELPERS).completion == raw
    statement = '"""Read n and print n + 1."""\n'  # a program: nothing to read helpers for
    program = "n = int(input())\nprint(n + 1)\n"
    assert _read(program, HELPERS, statement) == _read(program, DEFAULT, statement)


class _Continuing(BackendBase):
    """Writes BODY + AFTER and stops as a real backend does: just past the first of the
    decoding's generation stops."""

    identity = "fake|continuing"

    def __init__(self) -> None:  # no spec: nothing to load
        pass

    def complete_many(self, requests, decoding):
        text = BODY + AFTER
        ends = [text.find(s) + len(s) for s in decoding.generation_stop if s in text]
        raw = text[: min(ends)] if ends else text
        for position, request in enumerate(requests):
            yield position, [raw for _ in request.indices]


def test_a_helper_after_the_function_passes_only_under_keep_helpers(tmp_path):
    problem = Problem(
        task_id="t/sum_squares",
        benchmark="test",
        prompt=PROMPT,
        entry_point="sum_squares",
        test="def check(candidate):\n    assert candidate([1, 2]) == 5\n    assert candidate([]) == 0\n",
    )
    cache = tmp_path / "generations.jsonl"
    config = ExecutionConfig(timeout=10.0, calibrate=False, reference_timing=False, workers=1)
    outcomes = {}
    for label, decoding in (("default", DEFAULT), ("helpers", HELPERS)):
        generated = generate_samples(
            _Continuing(), {problem.task_id: PROMPT}, decoding, cache, progress=False
        )
        assert generated.generated == 1  # one reading's text is never the other's
        samples = [
            {"task_id": problem.task_id, "completion": generated.completions[problem.task_id][0]}
        ]
        report = execute_samples([problem], samples, config, tmp_path / f"{label}.jsonl")
        outcomes[label] = report.results[0]
    assert not outcomes["default"]["passed"]
    assert "NameError" in outcomes["default"]["result"]
    assert outcomes["helpers"]["passed"], outcomes["helpers"]["result"]


def test_the_comparison_script_finds_the_samples_keep_helpers_can_change():
    from scripts.compare_readings import _why_candidate

    assert _why_candidate(PROMPT, BODY) == "calls SCALE, square, which nothing binds"
    assert _why_candidate(PROMPT, "    return sum(x * x for x in xs)\n") == ""
    assert _why_candidate(PROMPT, "    return sum(\n") == "does not parse"
    # What the completion or the prompt binds at module level is no helper to wait for.
    assert _why_candidate(PROMPT, "    return List and g(xs)\n\n\ndef g(xs):\n    return 0\n") == ""


class _Cut(_Continuing):
    identity = "fake|cut"

    def complete_many(self, requests, decoding):
        for position, request in enumerate(requests):
            yield position, [BODY + "\n\ndef square(x):\n    return (x *" for _ in request.indices]


def test_a_keep_helpers_reading_reaches_the_result_rows(tmp_path):
    from benchmarks.generation import PromptGroup, sample_prompts

    fields = {}
    for label, decoding in (("default", DEFAULT), ("helpers", HELPERS)):
        group = PromptGroup({"t/sum_squares": PROMPT}, decoding)
        samples, _ = sample_prompts(_Cut(), [group], [0], tmp_path / "generations.jsonl")
        fields[label] = samples[0].reply_fields()
    assert fields["default"] == {}  # a continuation taken as it is has nothing to report
    assert fields["helpers"] == {
        "reply_status": "truncated",
        "reply_shape": "continuation; cut inside a helper",
        "reply_reason": "the completion was cut off inside square, which sum_squares calls",
    }
