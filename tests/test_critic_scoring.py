"""The local HF scorer: batched scores equal the naive loop, and bad input is explained."""

from __future__ import annotations

import math
import warnings

import pytest

from benchmarks.common.errors import UserError
from critic.scoring import EmptyPromptError, HFScorerConfig
from critic.similarity import PlausibilityGate, ScoreSummary, block_logprobs, compare
from tests.critic_helpers import tiny_scorer


@pytest.fixture(scope="module")
def prompts(humaneval):
    out = []
    for problem in humaneval.problems[:6]:
        out += [
            problem.prompt,
            problem.prompt.replace(problem.entry_point, "func"),
            problem.prompt.replace(" the ", " ", 1),
            problem.prompt.replace(" list", "", 1),
        ]
    return out + ["x", "def f():\n    pass\n", humaneval.problems[0].prompt]  # a duplicate too


def _assert_same(a, b, tol=1e-4):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.offsets == y.offsets
        assert x.n_tokens == y.n_tokens
        assert math.isclose(x.total, y.total, rel_tol=tol, abs_tol=tol)
        assert max(abs(u - v) for u, v in zip(x.logprobs, y.logprobs, strict=True)) < tol


def test_batched_equals_one_at_a_time(prompts):
    scorer = tiny_scorer()
    batched = scorer.score(prompts)
    _assert_same(batched, scorer.score_one_at_a_time(prompts))
    # the duplicate gets the same score as its first occurrence
    assert batched[-1] == batched[0]


def test_prefix_sharing_and_small_batches_do_not_change_scores(prompts):
    reference = tiny_scorer(share_prefixes=False).score(prompts)
    shared = tiny_scorer(min_shared_prefix=4)
    groups, _ = shared._prefix_groups([shared.encode(p) for p in dict.fromkeys(prompts)])
    assert groups, "variants of one prompt should share a prefix"
    _assert_same(shared.score(prompts), reference)
    _assert_same(tiny_scorer(max_batch=3, batch_tokens=200, head_chunk=7).score(prompts), reference)


def test_padding_side_is_irrelevant(prompts):
    scorer = tiny_scorer()
    sequences = [scorer.encode(p).ids for p in prompts[:8]]
    right = scorer._score_batch(sequences, padding_side="right")
    left = scorer._score_batch(sequences, padding_side="left")
    for r, l_ in zip(right, left, strict=True):
        assert max(abs(a - b) for a, b in zip(r, l_, strict=True)) < 1e-4


def test_every_token_scored_once_and_blocks_add_up(humaneval):
    from perturb.blocks import split_blocks

    problem = split_blocks(humaneval.problems[0])
    score = tiny_scorer().score([problem.prompt])[0]
    # the spans tile the prompt: every character belongs to exactly one scored token
    assert "".join(problem.prompt[s:e] for s, e in score.offsets) == problem.prompt
    blocks = block_logprobs(problem.blocks, score.logprobs, score.offsets)
    assert set(blocks) == {b.kind for b in problem.blocks}
    assert math.isclose(sum(b["logprob"] for b in blocks.values()), score.total, rel_tol=1e-9)
    assert sum(b["tokens"] for b in blocks.values()) == score.n_tokens


def test_long_prompt_is_cut_from_the_left_with_a_warning(prompts):
    scorer = tiny_scorer(max_length=16)
    long_prompt = prompts[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score = scorer.score([long_prompt])[0]
    assert any("exceeds the model's context of 16" in str(w.message) for w in caught)
    assert score.n_tokens == 15 and score.truncated_tokens > 0
    assert score.offsets[-1][1] == len(long_prompt)  # the tail is what is kept
    summary = ScoreSummary(score.total, score.n_tokens, truncated_tokens=score.truncated_tokens)
    verdict, reason = PlausibilityGate().judge(summary, summary, compare(summary, summary))
    assert verdict == "reject" and "context" in reason


def test_empty_prompt_is_refused_with_its_position():
    with pytest.raises(EmptyPromptError) as err:
        tiny_scorer().score(["def f(): pass", "  \n"])
    assert err.value.index == 1


def test_bad_config_and_missing_model_path(tmp_path):
    with pytest.raises(UserError, match="float32 or bfloat16"):
        HFScorerConfig(dtype="float16x")
    from benchmarks.common.models import resolve_model

    with pytest.raises(UserError, match="does not exist"):
        resolve_model(str(tmp_path / "no-such-model"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"no config\.json"):
        resolve_model(str(tmp_path / "empty"))
    assert resolve_model("HuggingFaceTB/SmolLM2-135M") == "HuggingFaceTB/SmolLM2-135M"


def test_similarity_definition():
    from critic.similarity import log_prob_similarity

    assert log_prob_similarity(-200.0, -200.0) == 100.0
    assert log_prob_similarity(-200.0, -210.0) == pytest.approx(95.0)
    assert log_prob_similarity(-200.0, -190.0) == pytest.approx(95.0)  # either direction
    assert log_prob_similarity(-200.0, -900.0) == 0.0  # clipped
    original = ScoreSummary(-200.0, 100, {"name": {"logprob": -20.0, "tokens": 10}})
    variant = ScoreSummary(-230.0, 100, {"name": {"logprob": -50.0, "tokens": 10}})
    comparison = compare(original, variant)
    assert comparison["similarity"] == pytest.approx(85.0)
    assert comparison["block_delta"] == {"name": pytest.approx(-30.0)}
    gate = PlausibilityGate(min_similarity=90)
    assert gate.judge(original, variant, comparison)[0] == "reject"
    assert "below the gate's 90 %" in gate.judge(original, variant, comparison)[1]
    with pytest.raises(UserError, match="measure 'mean' is unknown"):
        PlausibilityGate(measure="mean")
