"""The critic's score cache (`critic.score_cache.CriticScores`): a prompt is scored once, the
run's critic records count as scored, and a log written before the cache moved to `critic`
(records `{"scorer", "prompt_sha256", "score"}`) still resumes."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from benchmarks.common.provenance import config_hash
from benchmarks.problem import Problem
from critic.score_cache import CriticScores, prompt_sha256
from critic.scoring import SCORERS, PromptScore
from critic.similarity import ScoreSummary
from critic.spec import CriticSpec

KIND = "fake_score_cache"


@dataclass(frozen=True)
class FakeConfig:
    """No settings."""


class FakeScorer:
    """-1 per whitespace-separated token; counts what it scores."""

    Config = FakeConfig
    scored: list[str] = []

    def __init__(self, config: FakeConfig | None = None) -> None:
        self.config = config

    def describe(self) -> dict:
        return {"backend": "fake"}

    def score(self, prompts: Sequence[str]) -> list[PromptScore]:
        FakeScorer.scored += prompts
        out = []
        for prompt in prompts:
            spans = tuple((m.start(), m.end()) for m in re.finditer(r"\S+", prompt))
            out.append(PromptScore(tuple(-1.0 for _ in spans), spans))
        return out


@pytest.fixture
def critic():
    SCORERS.register(KIND, f"{__name__}:FakeScorer")
    FakeScorer.scored = []
    yield CriticSpec(enabled=True, kind=KIND, scorer={})
    SCORERS.unregister(KIND)


def problem(task_id: str, prompt: str) -> Problem:
    return Problem(task_id=task_id, benchmark="toy", prompt=prompt, entry_point="f")


def test_prompts_are_scored_once_and_read_back(tmp_path, critic) -> None:
    log = tmp_path / "critic_scores.jsonl"
    a, b = problem("T/1", "def f(): pass"), problem("T/2", "def f(x): return x")
    with CriticScores(log, critic) as scores:
        first = scores.summaries([a, b, a])
        assert [s.logprob for s in first] == [-3.0, -4.0, -3.0]
        assert scores.summaries([b]) == [first[1]]
        assert scores.scored == 2
    assert sorted(FakeScorer.scored) == sorted([a.prompt, b.prompt])

    FakeScorer.scored = []
    with CriticScores(log, critic) as again:
        assert again.summaries([b, a]) == [first[1], first[0]]
        assert again.scored == 0
    assert FakeScorer.scored == []
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert {r["prompt_sha256"] for r in records} == {
        prompt_sha256(a.prompt),
        prompt_sha256(b.prompt),
    }
    assert all(set(r) == {"scorer", "prompt_sha256", "score"} for r in records)


def test_a_log_written_before_the_move_resumes(tmp_path, critic) -> None:
    """The key is the hash of the critic's kind and scorer config, as boi.analysis.minimal wrote
    it; another scorer's records in the same log are left alone."""
    a = problem("T/1", "def f(): pass")
    known = ScoreSummary(logprob=-7.5, tokens=3)
    log = tmp_path / "critic_scores.jsonl"
    lines = [
        {"scorer": "another", "prompt_sha256": prompt_sha256(a.prompt), "score": {"logprob": -1.0, "tokens": 1}},
        {"scorer": config_hash({"kind": KIND, "scorer": {}}), "prompt_sha256": prompt_sha256(a.prompt), "score": known.to_json()},
    ]  # fmt: skip
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with CriticScores(log, critic) as scores:
        assert scores.summaries([a]) == [known]
        assert scores.scored == 0
    assert FakeScorer.scored == []


def test_the_runs_critic_records_count_as_scored_when_its_critic_was_on(tmp_path, critic) -> None:
    a, b = problem("T/1", "def f(): pass"), problem("T/2", "def f(x): return x")
    records = [
        {"task_id": "T/1", "prompt": a.prompt, "critic": {"logprob": -9.0, "tokens": 3}},
        {"task_id": "T/2", "prompt": b.prompt, "critic": {"verdict": "accept"}},  # no scores
    ]
    with CriticScores(tmp_path / "on.jsonl", critic, records) as scores:
        assert [s.logprob for s in scores.summaries([a, b])] == [-9.0, -4.0]
        assert scores.scored == 1
    off = CriticSpec(enabled=False, kind=KIND, scorer={})
    with CriticScores(tmp_path / "off.jsonl", off, records) as scores:
        assert [s.logprob for s in scores.summaries([a])] == [-3.0]
