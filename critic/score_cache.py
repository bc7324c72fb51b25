"""Critic summaries by prompt, kept on disk: a search that scores many prompts (`boi analyze
minimal`) scores each prompt once, across reruns.

The log is a `benchmarks.common.jsonl.KeyedLog` of records `{"scorer", "prompt_sha256",
"score"}`: `scorer` is the hash of the critic's kind and scorer config, so one log can hold
several scorers' records and each reads only its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.config import to_dict
from benchmarks.common.jsonl import KeyedLog
from benchmarks.common.provenance import config_hash
from benchmarks.generation import prompt_sha256  # the key a prompt is stored under
from benchmarks.problem import Problem
from critic.annotate import score_problems
from critic.scoring import load_scorer
from critic.similarity import ScoreSummary
from critic.spec import CriticSpec

__all__ = ["CriticScores", "prompt_sha256"]


class CriticScores:
    """Critic summaries by prompt: from the run's critic records (same scorer), then our own
    append-only log; the scorer is loaded only when a prompt is new to both.

    `records`: the run's critic.jsonl records (`boi.run_reader.Run.critic_records`), read only
    when the run's critic was on; each record with a prompt and its critic fields is known."""

    def __init__(
        self, path: Path, critic: CriticSpec, records: Iterable[Mapping[str, Any]] = ()
    ) -> None:
        self.critic = critic
        self.key = config_hash({"kind": critic.kind, "scorer": to_dict(critic.scorer)})
        self.scored = 0
        self._scorer: Any = None
        self._run: dict[str, ScoreSummary] = {}
        if critic.enabled:
            for obj in records:
                fields = obj.get("critic")
                if isinstance(fields, Mapping) and "logprob" in fields and "prompt" in obj:
                    self._run[prompt_sha256(obj["prompt"])] = ScoreSummary.from_json(fields)
        self._log = KeyedLog(
            path,
            lambda r: r["prompt_sha256"] if r.get("scorer") == self.key else None,
            lambda r: ScoreSummary.from_json(r["score"]),
        )

    def _known(self, sha: str) -> bool:
        return sha in self._log or sha in self._run

    def _summary(self, sha: str) -> ScoreSummary:
        """A known prompt's summary: our own log's first (written by this very scorer)."""
        if sha in self._log:
            summary: ScoreSummary = self._log.get(sha)
            return summary
        return self._run[sha]

    def summaries(self, problems: Sequence[Problem]) -> list[ScoreSummary]:
        missing: dict[str, Problem] = {}
        for problem in problems:
            sha = prompt_sha256(problem.prompt)
            if not self._known(sha):
                missing.setdefault(sha, problem)
        if missing:
            if self._scorer is None:
                self._scorer = load_scorer(self.critic.kind, self.critic.scorer)
            # Sorted by prompt hash: the same prompts are always scored in the same batches.
            todo = [missing[sha] for sha in sorted(missing)]
            for problem, summary in zip(todo, score_problems(self._scorer, todo), strict=True):
                sha = prompt_sha256(problem.prompt)
                self._log.put(
                    sha,
                    summary,
                    {"scorer": self.key, "prompt_sha256": sha, "score": summary.to_json()},
                )
                self.scored += 1
        return [self._summary(prompt_sha256(p.prompt)) for p in problems]

    def close(self) -> None:
        self._log.close()

    def __enter__(self) -> CriticScores:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
