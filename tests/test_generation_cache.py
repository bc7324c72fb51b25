"""generate_samples and the generation cache: de-duplication, resume, stale knobs, torn lines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import (
    DecodingConfig,
    GenerationCache,
    PromptGroup,
    generate_samples,
    sample_prompts,
    unread_replies_warning,
)
from tests.generation_fakes import CountingBackend

PROMPT_A = 'def f(x):\n    """Return x."""\n'
PROMPT_B = 'def g(x):\n    """Return 2x."""\n'
DECODING = DecodingConfig(temperature=0.8, n=5, max_new_tokens=32, seed=1)


def test_identical_prompts_are_generated_once(tmp_path):
    backend = CountingBackend(per_call=4)
    prompts = {
        "A": PROMPT_A,
        "A::drop_one": PROMPT_A,
        "B": PROMPT_B,
        "B::anonymize": PROMPT_B + " ",
    }
    outcome = generate_samples(backend, prompts, DECODING, tmp_path / "c.jsonl", progress=False)
    assert outcome.requested_samples == 20
    assert outcome.unique_prompts == 3
    assert outcome.unique_samples == 15
    assert outcome.deduplicated == 5
    assert outcome.generated == backend.samples_generated == 15
    assert outcome.cache_hits == 0
    # Aligned chunks of 4: indices (0..3) and (4,) per prompt.
    assert sorted(i for _, i in backend.calls) == sorted([(0, 1, 2, 3), (4,)] * 3)
    assert outcome.completions["A"] == outcome.completions["A::drop_one"]
    assert len(outcome.completions["B"]) == 5
    # Post-processing: cut at the stop sequence "\ndef ".
    assert all(c.startswith("    return ") and "def" not in c for c in outcome.completions["A"])
    assert "def helper" in outcome.raw["A"][0]
    assert len(set(outcome.completions["A"])) == 5
    assert outcome.empty == []


def test_rerun_is_all_cache_and_more_samples_extend(tmp_path):
    path = tmp_path / "c.jsonl"
    first = generate_samples(CountingBackend(), {"A": PROMPT_A}, DECODING, path, progress=False)
    again = CountingBackend()
    rerun = generate_samples(again, {"A": PROMPT_A}, DECODING, path, progress=False)
    assert again.calls == [] and rerun.cache_hits == 5 and rerun.generated == 0
    assert rerun.completions == first.completions
    more = CountingBackend()
    wider = DecodingConfig(**{**DECODING.to_json(), "n": 7})
    extended = generate_samples(more, {"A": PROMPT_A}, wider, path, progress=False)
    assert more.calls == [(PROMPT_A, (5, 6))]  # chunk [4, 8) minus the cached 4
    assert extended.completions["A"][:5] == first.completions["A"]


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.2},
        {"top_p": 0.5},
        {"max_new_tokens": 64},
        {"seed": 2},
        {"stop": ["\nclass "]},
        {"chat": True},
    ],
)
def test_a_changed_knob_never_reuses_stale_samples(tmp_path, change):
    path = tmp_path / "c.jsonl"
    generate_samples(CountingBackend(), {"A": PROMPT_A}, DECODING, path, progress=False)
    changed = DecodingConfig(**{**DECODING.to_json(), **change})
    backend = CountingBackend()
    outcome = generate_samples(backend, {"A": PROMPT_A}, changed, path, progress=False)
    assert outcome.cache_hits == 0 and backend.samples_generated == 5


def test_another_model_never_reuses_samples(tmp_path):
    path = tmp_path / "c.jsonl"
    generate_samples(CountingBackend("m1"), {"A": PROMPT_A}, DECODING, path, progress=False)
    other = CountingBackend("m2")
    outcome = generate_samples(other, {"A": PROMPT_A}, DECODING, path, progress=False)
    assert outcome.cache_hits == 0 and other.samples_generated == 5


def test_greedy_ignores_top_p_and_n_is_not_part_of_the_key(tmp_path):
    path = tmp_path / "c.jsonl"
    greedy = DecodingConfig(temperature=0, top_p=0.95, n=2)
    generate_samples(CountingBackend(), {"A": PROMPT_A}, greedy, path, progress=False)
    backend = CountingBackend()
    same = DecodingConfig(temperature=0, top_p=0.5, n=1)
    assert generate_samples(backend, {"A": PROMPT_A}, same, path, progress=False).cache_hits == 1
    assert backend.calls == []


def test_interrupted_run_resumes_without_redoing_finished_requests(tmp_path):
    path = tmp_path / "c.jsonl"
    prompts = {"A": PROMPT_A, "B": PROMPT_B}
    broken = CountingBackend(per_call=2, fail_after=3)
    with pytest.raises(KeyboardInterrupt):
        generate_samples(broken, prompts, DECODING, path, progress=False)
    # The three finished requests (indices 0-1, 2-3, 4 of the first prompt) were saved.
    assert len(path.read_text().splitlines()) == 5
    with path.open("a") as handle:
        handle.write('{"key": "torn')  # what a kill in the middle of a write leaves
    resumed = CountingBackend(per_call=2)
    outcome = generate_samples(resumed, prompts, DECODING, path, progress=False)
    assert outcome.cache_hits == 5 and outcome.generated == 5
    assert set(resumed.calls).isdisjoint(broken.calls)
    fresh = generate_samples(
        CountingBackend(per_call=2), prompts, DECODING, tmp_path / "fresh.jsonl", progress=False
    )
    assert outcome.completions == fresh.completions


def test_sigkill_mid_run_then_rerun(tmp_path):
    path = tmp_path / "c.jsonl"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        import time
        from benchmarks.generation import DecodingConfig, generate_samples
        from tests.generation_fakes import CountingBackend

        class Stalling(CountingBackend):
            # Never finishes: after 20 requests (40 samples) it waits to be killed, so the
            # kill comes mid-run however late the test sees the first 10 samples.
            def complete_many(self, requests, decoding):
                for item in super().complete_many(requests, decoding):
                    if len(self.calls) > 20:
                        time.sleep(3600)
                    yield item

        prompts = {{f"P{{i}}": f"def f{{i}}():\\n" for i in range(40)}}
        generate_samples(Stalling(per_call=2, delay_s=0.01), prompts,
                         DecodingConfig(temperature=0.8, n=2), {str(path)!r}, progress=False)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 120  # a bound on a broken child only
        while not (path.exists() and len(path.read_bytes().splitlines()) >= 10):
            assert process.poll() is None, "the child ended before it was killed"
            assert time.monotonic() < deadline, "the child wrote no 10 samples in 120 s"
            time.sleep(0.02)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    saved = len(GenerationCache(path))
    assert 10 <= saved <= 40
    backend = CountingBackend(per_call=2)
    prompts = {f"P{i}": f"def f{i}():\n" for i in range(40)}
    outcome = generate_samples(
        backend, prompts, DecodingConfig(temperature=0.8, n=2), path, progress=False
    )
    assert outcome.cache_hits == saved and outcome.generated == 80 - saved


def test_empty_completions_are_kept_and_reported(tmp_path):
    backend = CountingBackend(empty_for="g(")
    outcome = generate_samples(
        backend, {"A": PROMPT_A, "B": PROMPT_B}, DECODING, tmp_path / "c.jsonl", progress=False
    )
    assert outcome.completions["B"] == [""] * 5
    assert outcome.empty == [("B", i) for i in range(5)]
    # Reported where the samples are judged (the sampling loop reads no reply).
    samples, _ = sample_prompts(
        backend, [PromptGroup({"A": PROMPT_A, "B": PROMPT_B}, DECODING)], [0], tmp_path / "c.jsonl"
    )
    assert "reading" not in vars(samples[0])
    warning = unread_replies_warning(samples, "m")
    assert warning is not None and "5 completions from m are empty" in warning


def test_bad_cache_file_and_no_prompts(tmp_path):
    bad = tmp_path / "other.jsonl"
    bad.write_text(json.dumps({"task_id": "x"}) + "\n")
    with pytest.raises(UserError, match="not a generation cache"):
        generate_samples(CountingBackend(), {"A": PROMPT_A}, DECODING, bad, progress=False)
    with pytest.raises(UserError, match="no prompts"):
        generate_samples(CountingBackend(), {}, DECODING, tmp_path / "c.jsonl", progress=False)


def test_real_model_resume_matches_fresh_run(tmp_path):
    from tests.generation_helpers import humaneval_prompts, tiny_backend

    prompts = dict(list(humaneval_prompts().items())[:2])
    decoding = DecodingConfig(temperature=0.8, n=3, max_new_tokens=10, seed=5, stop=())
    fresh = generate_samples(
        tiny_backend(batch_size=2), prompts, decoding, tmp_path / "a.jsonl", progress=False
    )
    # Part of the work done by a differently batched backend, the rest after "resuming".
    partial = {k: v for k, v in list(prompts.items())[:1]}
    generate_samples(
        tiny_backend(batch_size=8), partial, decoding, tmp_path / "b.jsonl", progress=False
    )
    resumed = generate_samples(
        tiny_backend(batch_size=2), prompts, decoding, tmp_path / "b.jsonl", progress=False
    )
    assert resumed.cache_hits == 3 and resumed.generated == 3
    assert resumed.raw == fresh.raw
