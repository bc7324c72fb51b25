"""Pinned keyword picks: a file of keyword analyses the keyword-dropping transformations use
instead of finding keywords (`PerturbConfig.keyword_file`, `boi run`'s `keyword_file`).

A published table's variants must stay what they were when the keyword rules move on: its
config names the file of the picks it used, and every later `boi` makes the same variants from
it. The file is JSONL, one problem a line, in the shape `boi keywords extract --out` and `boi
perturb --keywords-out` write (`KeywordAnalysis.to_json`): `task_id` (as the run names the
problem: `humanevalplus:HumanEval/0` for a dataset whose ids an earlier one uses), `skipped`
(why no keywords were looked for, or null), `decisions` (each with `keyword`, `droppable`,
`rule`, `occurrences` as `{start, end, text}` in the prompt; the scores, `needs_name` and
`forms` optional) and, optionally, `prompt_sha256`. Only the droppable decisions matter to a
transformation, so a file may hold just those. Each occurrence must be the text of its prompt at
its span (and the prompt's sha256 the recorded one), so picks made on another prompt are refused
in one sentence naming the file and line, never applied to the wrong words.

`picks_from_variants` rebuilds such a file from a run's variants (their lineage records every
removed keyword with its spans): `scripts/pin_keywords.py RUN_DIR OUT`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.generation import prompt_sha256
from benchmarks.problem import Problem
from perturb.keywords import KeywordAnalysis, KeywordDecision, Occurrence

KEYWORD_FILE_HELP = (
    "a file of pinned keyword picks (JSONL, one problem a line, as `boi keywords extract --out` "
    "writes them): the keyword-dropping transformations use these instead of finding keywords, "
    "so a published table's variants stay the same whatever later keyword rules do "
    "(docs/results.md); every problem needs its line, and picks whose spans are not in the "
    "problem's prompt are refused"
)
# What the transformations read from a decision, with the type each must have; the rest of
# a decision is optional and takes KeywordDecision's defaults.
_REQUIRED = {"keyword": str, "droppable": bool, "rule": str, "occurrences": list}
_OPTIONAL: dict[str, tuple[type, ...]] = {
    "keybert_score": (int, float),
    "best_anchor": (str,),
    "anchor_similarity": (int, float),
    "context_token": (str, type(None)),
    "context_similarity": (int, float, type(None)),
    "needs_name": (bool,),
    "forms": (list,),
}


def analysis_record(analysis: KeywordAnalysis, problem: Problem | None = None) -> dict[str, Any]:
    """One line of a keyword file: the analysis, with its prompt's sha256 when `problem` is
    given (so the file is refused for another prompt)."""
    record = analysis.to_json()
    if problem is not None:
        record["prompt_sha256"] = prompt_sha256(problem.prompt)
    return record


def _decision(where: str, task_id: str, index: int, item: Any) -> KeywordDecision:
    what = f"{where}: {task_id}'s decision {index}"
    if not isinstance(item, dict):
        raise UserError(f"{what} is not an object; write it as `boi keywords extract` does.")
    for key, kind in _REQUIRED.items():
        if not isinstance(item.get(key), kind):
            raise UserError(f"{what} needs {key!r} as a {kind.__name__}; add it.")
    for key, kinds in _OPTIONAL.items():
        if key in item and (
            not isinstance(item[key], kinds) or (bool in kinds) != isinstance(item[key], bool)
        ):
            raise UserError(
                f"{what} has {key!r} = {item[key]!r}, of the wrong type; fix or drop it."
            )
    occurrences = []
    for spot in item["occurrences"]:
        if not (
            isinstance(spot, dict)
            and type(spot.get("start")) is int
            and type(spot.get("end")) is int
            and isinstance(spot.get("text"), str)
            and 0 <= spot["start"] <= spot["end"]
        ):
            raise UserError(
                f"{what} ({item['keyword']!r}) has an occurrence that is not "
                "{start, end, text} with 0 <= start <= end; fix it."
            )
        occurrences.append(Occurrence(spot["start"], spot["end"], spot["text"]))
    if item["droppable"] and not occurrences:
        raise UserError(
            f"{what} ({item['keyword']!r}) is droppable but has no occurrence; add its spans."
        )
    return KeywordDecision(
        keyword=item["keyword"],
        keybert_score=float(item.get("keybert_score", 0.0)),
        best_anchor=item.get("best_anchor", ""),
        anchor_similarity=float(item.get("anchor_similarity", 0.0)),
        droppable=item["droppable"],
        rule=item["rule"],
        context_token=item.get("context_token"),
        context_similarity=item.get("context_similarity"),
        occurrences=tuple(occurrences),
        needs_name=item.get("needs_name", False),
        forms=tuple(str(f) for f in item.get("forms", ())),
    )


def read_keyword_file(
    path: str | os.PathLike[str],
) -> dict[str, tuple[int, KeywordAnalysis, str | None]]:
    """task id -> (line, analysis, prompt sha256 or None); every line checked, one sentence
    naming the file and line for the first that is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"keyword_file {path} does not exist; check the path.") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"keyword_file {path} cannot be read ({err}).") from None
    picks: dict[str, tuple[int, KeywordAnalysis, str | None]] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path} line {lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise UserError(f"{where} is not JSON ({err.msg}); one analysis a line.") from None
        if not isinstance(record, dict) or not isinstance(record.get("task_id"), str):
            raise UserError(f"{where} needs an object with a 'task_id'; one analysis a line.")
        task_id = record["task_id"]
        if task_id in picks:
            raise UserError(
                f"{where}: {task_id} already has its picks on line {picks[task_id][0]}; keep one."
            )
        skipped, decisions, digest = (
            record.get("skipped"),
            record.get("decisions"),
            record.get("prompt_sha256"),
        )
        if skipped is not None and not isinstance(skipped, str):
            raise UserError(f"{where}: 'skipped' must be a reason or null.")
        if not isinstance(decisions, list):
            raise UserError(f"{where}: {task_id} needs 'decisions' as a list (may be empty).")
        if digest is not None and not isinstance(digest, str):
            raise UserError(f"{where}: 'prompt_sha256' must be a hex string.")
        analysis = KeywordAnalysis(
            task_id,
            tuple(_decision(where, task_id, i, d) for i, d in enumerate(decisions)),
            skipped,
        )
        picks[task_id] = (lineno, analysis, digest)
    if not picks:
        raise UserError(f"keyword_file {path} is empty; one analysis a line.")
    return picks


def pinned_keywords(
    path: str | os.PathLike[str], problems: Sequence[Problem]
) -> dict[str, KeywordAnalysis]:
    """The pinned analyses of `problems` (split into blocks) from the keyword file `path`:
    each problem needs its line, and its picks must lie in its prompt."""
    picks = read_keyword_file(path)
    out: dict[str, KeywordAnalysis] = {}
    for problem in problems:
        if problem.task_id not in picks:
            raise UserError(
                f"keyword_file {path} has no line for {problem.task_id}; add its picks, or "
                "leave keyword_file out to find keywords."
            )
        lineno, analysis, digest = picks[problem.task_id]
        where = f"{path} line {lineno}"
        if digest is not None and digest != prompt_sha256(problem.prompt):
            raise UserError(
                f"{where}: {problem.task_id}'s prompt is not the one these picks were made on "
                "(prompt_sha256 differs); pin picks made on this prompt."
            )
        for decision in analysis.droppable:
            for spot in decision.occurrences:
                found = problem.prompt[spot.start : spot.end]
                if found != spot.text:
                    raise UserError(
                        f"{where}: {problem.task_id}'s {decision.keyword!r} at {spot.start}-"
                        f"{spot.end} reads {found!r} in the prompt, not {spot.text!r}; the "
                        "picks were made on another prompt."
                    )
        out[problem.task_id] = analysis
    return out


# --- rebuilding the picks from a run's variants ------------------------------------------

_NO_KEYWORD = "no droppable keyword"
_NAME_ONLY = "every droppable keyword is recovered only from the function's name"


def _removed(variant: Mapping[str, Any]) -> list[dict[str, Any]] | str:
    """The keywords a variant's last lineage step removed, or why it was left unchanged."""
    step = variant["lineage"][-1]
    changes = step.get("changes") or {}
    if "unchanged" in changes:
        return str(changes["unchanged"])
    return list(changes.get("removed") or [])


def _decision_of(removed: Mapping[str, Any], needs_name: bool) -> dict[str, Any]:
    return {
        "keyword": removed["keyword"],
        "keybert_score": removed.get("keybert_score", 0.0),
        "anchor_similarity": removed.get("anchor_similarity", 0.0),
        "droppable": True,
        "rule": removed["rule"],
        "context_token": removed.get("context_token"),
        "context_similarity": removed.get("context_similarity"),
        "occurrences": [
            {"start": start, "end": end, "text": text}
            for (start, end), text in zip(removed["spans"], removed["texts"], strict=True)
        ],
        "needs_name": needs_name,
    }


def picks_from_variants(variants: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The keyword file of a run whose transformations include drop_all (and, to tell which
    picks only the function's name recovers, anon_drop_all), from its variants (`problems.jsonl`
    records): one line per source problem with its droppable picks in their order. drop_one's
    variants, where present, must be those picks one by one (ValueError otherwise)."""
    by_source: dict[str, dict[str, Any]] = {}
    for variant in variants:
        source = variant["source_task_id"]
        entry = by_source.setdefault(source, {"drop_one": []})
        if variant["transform"] == "original":
            entry["prompt"] = variant["prompt"]
        elif variant["transform"] in ("drop_all", "anon_drop_all"):
            entry[variant["transform"]] = _removed(variant)
        elif variant["transform"] == "drop_one":
            entry["drop_one"].append(variant)
    lines = []
    for source, entry in by_source.items():
        if "prompt" not in entry or "drop_all" not in entry:
            raise ValueError(f"{source}: the run has no original or no drop_all variant of it")
        every = entry["drop_all"]
        anon = entry.get("anon_drop_all")
        skipped = None
        if isinstance(every, str):
            if every.startswith("the result would not be valid Python"):
                # drop_all found picks and failed on them: they are not in its lineage
                raise ValueError(f"{source}: drop_all did not apply ({every}); its picks are lost")
            skipped = None if every == _NO_KEYWORD else every
            every = []
        if isinstance(anon, list):
            kept = {r["keyword"] for r in anon}
            needs = [r["keyword"] not in kept for r in every]
        else:  # all need the name, or the chain failed for another reason (then it is moot)
            needs = [anon == _NAME_ONLY] * len(every)
        ones = [
            _removed(v)
            for v in sorted(entry["drop_one"], key=lambda v: _index(v["task_id"]))
            if not isinstance(_removed(v), str)
        ]
        if ones and [r[0]["keyword"] for r in ones if isinstance(r, list)] != [
            r["keyword"] for r in every
        ]:
            raise ValueError(f"{source}: drop_one's keywords are not drop_all's, one by one")
        lines.append(
            {
                "task_id": source,
                "skipped": skipped,
                "prompt_sha256": prompt_sha256(entry["prompt"]),
                "decisions": [_decision_of(r, n) for r, n in zip(every, needs, strict=True)],
            }
        )
    return lines


def _index(task_id: str) -> int:
    tail = task_id.rpartition("::")[2]
    return int(tail.partition("/")[2] or 0)
