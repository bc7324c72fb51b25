"""`boi critic FILE --out FILE`: score a perturbed-dataset file and judge every variant.

Each input record (a `Problem` as written by `boi perturb`) is copied to the output unchanged
plus one `critic` object: the prompt's log-probability (total, per token, per block), and for a
variant its similarity to the original (total and per token), the log-probability change per
block, and the plausibility gate's verdict with its reason. Originals are found in the file
itself (a record with no transformation in its lineage) or in a dataset the caller passes, by
`source_task_id`.

The output is append-only: records are written as soon as their chunk is scored, and a rerun
skips the task ids already there, so an interrupted or failed run loses nothing. Once every
record is scored, the output's provenance is written beside it as `OUT.manifest.json`
(`benchmarks.common.provenance.write_output_manifest`: scorer, gate and originals as the config,
the input's sha256, versions, git, ..., and the run's counts).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import JsonlAppender, iter_jsonl, require_fields, require_new_id
from benchmarks.common.provenance import write_output_manifest
from benchmarks.problem import REQUIRED_FIELDS, Problem
from critic.scoring import EmptyPromptError, PromptScore, Scorer
from critic.similarity import PlausibilityGate, ScoreSummary, block_logprobs, compare
from perturb.blocks import SplitError, split_blocks

# Lineage steps that leave a problem as it was (how a perturbed file marks its originals).
IDENTITY_TRANSFORMS = frozenset({"original", "identity"})


def is_original(problem: Problem) -> bool:
    """True for a record that no transformation has touched."""
    return all(step.transform in IDENTITY_TRANSFORMS for step in problem.lineage)


def with_blocks(problem: Problem) -> Problem:
    """The problem with blocks split, when they are missing and the prompt can be split."""
    if problem.blocks is not None:
        return problem
    try:
        return split_blocks(problem)
    except SplitError:
        return problem


def summarize(problem: Problem, score: PromptScore) -> ScoreSummary:
    """What the critic records about one scored prompt."""
    return ScoreSummary(
        logprob=score.total,
        tokens=score.n_tokens,
        blocks=block_logprobs(problem.blocks, score.logprobs, score.offsets),
        truncated_tokens=score.truncated_tokens,
    )


def score_problems(scorer: Scorer, problems: list[Problem]) -> list[ScoreSummary]:
    """Score problems' prompts in one batched call; an empty prompt names its task."""
    try:
        scores = scorer.score([p.prompt for p in problems])
    except EmptyPromptError as err:
        raise UserError(
            f"task {problems[err.index].task_id} has an empty prompt; remove it from the input or fix it."
        ) from None
    return [summarize(p, s) for p, s in zip(problems, scores, strict=True)]


@dataclass
class AnnotateStats:
    scored: int = 0
    skipped_existing: int = 0
    accepted: int = 0
    rejected: int = 0
    originals: int = 0


def read_perturbed(path: str | os.PathLike[str]) -> list[tuple[dict[str, Any], Problem]]:
    records: list[tuple[dict[str, Any], Problem]] = []
    seen: dict[str, int] = {}  # task_id -> the line it first appeared on
    for lineno, obj in iter_jsonl(path):
        require_fields(path, lineno, obj, REQUIRED_FIELDS)
        try:
            problem = with_blocks(Problem.from_json(obj))
        except (TypeError, KeyError, ValueError) as err:
            raise UserError(f"{path} line {lineno}: malformed problem record ({err}).") from None
        require_new_id(
            path, lineno, problem.task_id, seen, needs="every record needs its own task id"
        )
        records.append((obj, problem))
    if not records:
        raise UserError(f"{path} is empty; expected the JSONL output of boi perturb.")
    return records


def annotate_file(
    input_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    scorer: Scorer,
    gate: PlausibilityGate,
    *,
    originals: Iterable[Problem] = (),
    originals_source: str | None = None,
    chunk_size: int = 128,
    log: Callable[[str], None] = print,
) -> AnnotateStats:
    """Score `input_path` into `out_path` (append-only, resumable) and write its provenance
    beside it (`OUT.manifest.json`); see the module docstring. `originals_source` names where
    `originals` came from (a dataset name or file, recorded in the manifest; a file is hashed).
    """
    if chunk_size < 1:
        raise UserError(f"chunk size must be at least 1 (got {chunk_size}).")
    records = read_perturbed(input_path)
    scorer_info = scorer.describe()
    originals_by_id: dict[str, Problem] = {p.task_id: with_blocks(p) for p in originals}
    for _, problem in records:
        if is_original(problem):
            originals_by_id[problem.source_task_id] = problem
    missing = sorted(
        {p.source_task_id for _, p in records if p.source_task_id not in originals_by_id}
    )
    if missing:
        raise UserError(
            f"{input_path} has no original for {missing[0]}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            + "; include the originals in the file or pass the dataset with --originals."
        )

    stats = AnnotateStats()
    original_scores: dict[str, ScoreSummary] = {}
    with JsonlAppender(out_path) as out:
        done = set()
        for old in out.existing:
            critic = old.get("critic") or {}
            if critic.get("scorer") != scorer_info or critic.get("gate") != _gate_json(gate):
                raise UserError(
                    f"{out_path} was scored with other critic settings ({critic.get('scorer')}); "
                    "write to a new --out file or rerun with the same settings."
                )
            done.add(old["task_id"])
            if critic.get("original") is True:
                original_scores[old["source_task_id"]] = ScoreSummary.from_json(critic)
        todo = [(obj, p) for obj, p in records if p.task_id not in done]
        stats.skipped_existing = len(records) - len(todo)
        if stats.skipped_existing:
            log(f"[critic] resuming: {stats.skipped_existing} records already in {out_path}")
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start : start + chunk_size]
            need = sorted(
                {p.source_task_id for _, p in chunk if p.source_task_id not in original_scores}
            )
            # Originals go into the same call as their variants, so shared prefixes run once.
            batch = [originals_by_id[t] for t in need] + [p for _, p in chunk]
            summaries = score_problems(scorer, batch)
            for task, summary in zip(need, summaries, strict=False):
                original_scores[task] = summary
            for (obj, problem), summary in zip(chunk, summaries[len(need) :], strict=True):
                record = dict(obj)
                record["critic"] = _critic_fields(
                    problem, summary, original_scores[problem.source_task_id], gate, scorer_info
                )
                out.append(record)
                stats.scored += 1
                verdict = record["critic"]["verdict"]
                stats.originals += verdict == "original"
                stats.accepted += verdict == "accept"
                stats.rejected += verdict == "reject"
            log(f"[critic] {start + len(chunk)}/{len(todo)} scored")
    write_output_manifest(
        out_path,
        {"scorer": scorer_info, "gate": dataclasses.asdict(gate), "originals": originals_source},
        inputs={"input": input_path, "originals": originals_source},
        record={"completed": True, "stats": dataclasses.asdict(stats)},
    )
    return stats


def _gate_json(gate: PlausibilityGate) -> dict[str, Any]:
    return {"min_similarity": gate.min_similarity, "measure": gate.measure}


def _critic_fields(
    problem: Problem,
    summary: ScoreSummary,
    original: ScoreSummary,
    gate: PlausibilityGate,
    scorer_info: dict[str, Any],
) -> dict[str, Any]:
    fields: dict[str, Any] = summary.to_json()
    if is_original(problem):
        fields.update(original=True, verdict="original", reason="the unmodified challenge")
    else:
        comparison = compare(original, summary)
        verdict, reason = gate.judge(original, summary, comparison)
        fields.update(original=False, **comparison, verdict=verdict, reason=reason)
        fields["original_logprob"] = original.logprob
    fields["scorer"] = scorer_info
    fields["gate"] = _gate_json(gate)
    return fields
