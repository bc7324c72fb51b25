"""Minimal hint search: the smallest critic-approved perturbation that makes a solved problem
fail, per problem and model of a `boi run` directory.

For each model, and each problem the model solved on the original (at least `pass_threshold`
of its samples passed: `benchmarks.robustness.solved`, the hint audit's rule), candidate
perturbations are built with the catalogue's own transformations and tried smallest first:

- size: the number of hint units removed. A droppable keyword is one unit (the run's keyword
  analysis, read from its Drop One / Drop All lineage, or recomputed with the run's keyword
  config when it had neither), the function's name (Anonymize) one, the example block one.
  Keywords and examples are never removed together (the catalogue's rule), so a candidate is a
  set of dropped keywords (`drop_all` on just that set), optionally with the name anonymized
  (`anon_drop_all`), or Anonymize, Drop Ex, or both (`anon_drop_examples`);
- within a size, by critic similarity to the original (highest first; the run's critic
  scorer and measure), ties by the candidate's key. Candidates below the gate
  (`min_similarity`, default the run's) are never tried; neither is a candidate whose prompt an
  earlier one already had.

A candidate is tested by generating the run's samples for it (the chosen setting, n samples
per seed of the run) through the run's generation cache and executing them in the sandbox
(`execute_samples`); it *flips* the problem when the problem is no longer solved on it (fewer
than `pass_threshold` of them pass: a `lost` flip in the report's terms). The
search stops at the first flip (the minimal flipping perturbation) or when the next candidate
would exceed `budget` generations for that problem and model. Cached samples count against the
budget as if generated, so the result never depends on what the cache held.

Deterministic: sample seeds come from (run seed, prompt, index), candidates are ordered by
(size, similarity, key), and every tested candidate is appended to tested.jsonl and critic
scores to critic_scores.jsonl, so an interrupted search resumes where it stopped and a rerun
costs nothing. Writes minimal.jsonl (one line per problem and model), summary.json (the rate
of problems that flip within the budget) and a report section.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.config import (
    add_dataclass_arguments,
    from_mapping,
    overrides_from_args,
)
from benchmarks.common.errors import UserError, suggest
from benchmarks.common.jsonl import JsonlAppender, write_jsonl
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash
from benchmarks.execution import execute_samples
from benchmarks.generation import (
    Backend,
    load_backend,
    prompt_sha256,
    sample_prompts,
)
from benchmarks.problem import Problem
from benchmarks.report import esc, filtered_tables, natural_key
from benchmarks.report.sections import analysis_dir, write_section
from benchmarks.robustness import solved
from boi.analysis.hints import check_threshold
from boi.reporting import rebuild_run_report
from boi.run_reader import Outcomes, Run, open_run
from boi.runner import RunConfig, SettingSpec, prompt_groups
from critic.score_cache import CriticScores
from critic.similarity import PlausibilityGate, compare
from perturb.keywords import KeywordAnalysis, KeywordDecision, Occurrence, analyze_keywords
from perturb.transforms import NotApplicable, Transform, bind_transforms

NAME = "minimal"
KEYWORD_TRANSFORMS = ("drop_one", "drop_all", "anon_drop_one", "anon_drop_all")
OUTCOMES = ("flipped", "budget", "exhausted")
"""flipped: a candidate made it fail; budget: the next candidate would exceed the budget;
exhausted: every approved candidate was tested without a flip."""


@dataclass(frozen=True)
class MinimalConfig:
    """How the minimal hint search runs on a `boi run` directory."""

    budget: int = field(
        default=20,
        metadata={
            "help": "generations (samples) per problem and model; a candidate costs the "
            "setting's n x seeds samples, cached ones included"
        },
    )
    setting: str | None = field(
        default=None,
        metadata={"help": "the run's decoding setting to search under; None: its first"},
    )
    models: tuple[str, ...] = field(
        default=(),
        metadata={"help": "only these model labels (as in results/LABEL/); empty: every model"},
    )
    seeds: tuple[int, ...] = field(
        default=(),
        metadata={"help": "the run's seeds whose samples test a candidate; empty: all of them"},
    )
    task_ids: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "only these problems (source task ids); empty: every problem a model solved"
        },
    )
    min_similarity: float | None = field(
        default=None,
        metadata={
            "help": "critic gate: candidates below this similarity (percent) are never tested "
            "; None: the run's critic.min_similarity"
        },
    )
    pass_threshold: float = field(
        default=0.5,
        metadata={
            "help": "a problem counts as passed when at least this fraction of its samples pass"
        },
    )
    out: str | None = field(
        default=None,
        metadata={
            "help": "folder for minimal.jsonl / summary.json; None: RUN_DIR/analysis/minimal"
        },
    )

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise UserError(
                f"--budget is {self.budget}; give at least one candidate's samples (the "
                "setting's n x seeds) as generations per problem."
            )
        check_threshold(self.pass_threshold)


# --------------------------------------------------------------------------- the run


@dataclass
class Scope:
    """Where in the run the search works: the run, the setting and seeds whose samples test a
    candidate, the original problems, and how each model did on them there."""

    run: Run
    setting: SettingSpec
    seeds: tuple[int, ...]
    originals: dict[str, Problem]
    outcomes: Outcomes

    @property
    def config(self) -> RunConfig:
        return self.run.run_config

    @property
    def cost(self) -> int:
        """Samples one candidate takes: n per seed."""
        return self.setting.decoding.n * len(self.seeds)


def read_run(run: Run | str | Path, config: MinimalConfig) -> Scope:
    """The search's scope in a run (a `Run` or its directory); one sentence when it will not do."""
    run = open_run(run)
    run_dir, run_config = run.path, run.run_config
    settings = {s.label: s for s in run_config.settings}
    label = config.setting or run_config.settings[0].label
    if label not in settings:
        raise UserError(
            f"--setting {label!r} is not a setting of {run_dir}; it has {', '.join(settings)}."
        )
    seeds = config.seeds or run_config.seeds
    unknown = [s for s in seeds if s not in run_config.seeds]
    if unknown:
        raise UserError(
            f"--seeds {unknown[0]} is not a seed of {run_dir}; it has {list(run_config.seeds)}."
        )
    models = {m.label for m in run_config.models}
    for model in config.models:
        if model not in models:
            raise UserError(
                f"--model {model!r} is not a model of {run_dir}; it has {', '.join(sorted(models))}."
            )
    outcomes = run.outcomes((label,), seeds)
    originals = {t: p for t, p in run.problems_by_id().items() if not p.lineage}
    missing = [t for t in config.task_ids if t not in originals]
    if missing:
        # Not an empty analysis with exit 0: an id the run does not hold is a typo to fix.
        shown = ", ".join(sorted(originals, key=natural_key)[:5])
        raise UserError(
            f"--task-id {missing[0]!r} is not a problem of {run_dir}{suggest(missing[0], originals)}; "
            f"its problems are {shown}{' ...' if len(originals) > 5 else ''}."
        )
    scope = Scope(run, settings[label], tuple(seeds), originals, outcomes)
    if config.budget < scope.cost:
        raise UserError(
            f"--budget {config.budget} is below one candidate's cost of {scope.cost} samples "
            f"(n={scope.setting.decoding.n} x {len(seeds)} seeds); raise it or pass fewer --seeds."
        )
    return scope


def _decision(removed: Mapping[str, Any]) -> KeywordDecision:
    """A droppable keyword as the run's lineage recorded it (spans in the original prompt)."""
    spans = removed.get("spans") or ()
    texts = removed.get("texts") or ()
    return KeywordDecision(
        keyword=str(removed["keyword"]),
        keybert_score=float(removed.get("keybert_score") or 0.0),
        best_anchor="",
        anchor_similarity=float(removed.get("anchor_similarity") or 0.0),
        droppable=True,
        rule=str(removed.get("rule") or ""),
        context_token=removed.get("context_token"),
        context_similarity=removed.get("context_similarity"),
        occurrences=tuple(
            Occurrence(int(s), int(e), str(t)) for (s, e), t in zip(spans, texts, strict=True)
        ),
    )


def droppable_keywords(scope: Scope) -> dict[str, tuple[KeywordDecision, ...]]:
    """source -> its droppable keywords: from the run's keyword lineage, or recomputed with the
    run's keyword config when the run applied no keyword transformation."""
    if not any(t in scope.config.perturb.transforms for t in KEYWORD_TRANSFORMS):
        originals = sorted(scope.originals.values(), key=lambda p: natural_key(p.task_id))
        analyses = analyze_keywords(originals, scope.config.perturb.keywords)
        return {a.task_id: a.droppable for a in analyses}
    found: dict[str, dict[str, KeywordDecision]] = {s: {} for s in scope.originals}
    for problem in scope.run.problems():
        if not problem.lineage or problem.source_task_id not in found:
            continue
        step = problem.lineage[-1]
        if step.transform not in KEYWORD_TRANSFORMS or "unchanged" in step.changes:
            continue
        for removed in step.changes.get("removed", ()):
            if "keyword" in removed:
                found[problem.source_task_id].setdefault(
                    str(removed["keyword"]), _decision(removed)
                )
    return {s: tuple(d.values()) for s, d in found.items()}


# --------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class Candidate:
    """One critic-approved perturbation of a problem: what it removes, the variant, and its
    critic similarity to the original (percent, the run's measure)."""

    key: str
    units: tuple[str, ...]
    problem: Problem
    similarity: float

    @property
    def size(self) -> int:
        return len(self.units)

    @property
    def prompt_sha256(self) -> str:
        return prompt_sha256(self.problem.prompt)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "units": list(self.units),
            "size": self.size,
            "similarity": round(self.similarity, 4),
            "task_id": self.problem.task_id,
            "prompt": self.problem.prompt,
        }


def _drop_key(keywords: Sequence[str]) -> str:
    return "drop " + ", ".join(repr(k) for k in keywords)


def raw_candidates(
    original: Problem,
    keywords: Sequence[KeywordDecision],
    size: int,
    transforms: Mapping[str, Transform],
    seed: int,
) -> tuple[list[tuple[str, tuple[str, ...], Problem]], list[tuple[str, str]]]:
    """Every perturbation of `size` units: ((key, units, variant) list, (key, reason) list of
    those that do not apply)."""
    ordered = sorted(keywords, key=lambda d: d.keyword)
    plans: list[tuple[str, tuple[str, ...], str, tuple[KeywordDecision, ...]]] = []
    for subset in combinations(ordered, size):
        names = [d.keyword for d in subset]
        plans.append((_drop_key(names), tuple(f"keyword:{n}" for n in names), "drop_all", subset))
    if size >= 2:
        for subset in combinations(ordered, size - 1):
            names = [d.keyword for d in subset]
            units = ("name", *(f"keyword:{n}" for n in names))
            plans.append(("anonymize + " + _drop_key(names), units, "anon_drop_all", subset))
    if size == 1:
        plans.append(("anonymize", ("name",), "anonymize", ()))
        plans.append(("drop examples", ("examples",), "drop_examples", ()))
    if size == 2:
        plans.append(("anonymize + drop examples", ("name", "examples"), "anon_drop_examples", ()))
    made: list[tuple[str, tuple[str, ...], Problem]] = []
    skipped: list[tuple[str, str]] = []
    for key, units, name, subset in plans:
        analysis = KeywordAnalysis(original.source_task_id, subset)
        outcome = transforms[name](original, analysis, seed)
        if isinstance(outcome, NotApplicable):
            skipped.append((key, outcome.reason))
            continue
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]
        variant = outcome[0].replace(task_id=f"{original.task_id}::minimal/{digest}")
        made.append((key, units, variant))
    return made, skipped


class Ladder:
    """One problem's approved candidates in test order, built a size at a time (a size is
    scored only when a search reaches it)."""

    def __init__(
        self,
        original: Problem,
        keywords: Sequence[KeywordDecision],
        transforms: Mapping[str, Transform],
        seed: int,
        scores: CriticScores,
        gate: PlausibilityGate,
    ) -> None:
        self.original = original
        self.keywords = keywords
        self.transforms = transforms
        self.seed = seed
        self.scores = scores
        self.gate = gate
        self.ordered: list[Candidate] = []
        self.rejected = 0
        self.not_applicable = 0
        self.size = 0
        # Every keyword and the name; at least 2, for Anonymize + Drop Ex.
        self.max_size = max(len(keywords) + 1, 2)
        self._prompts = {original.prompt}

    def get(self, position: int) -> Candidate | None:
        """The approved candidate at `position` in test order, None past the last."""
        while len(self.ordered) <= position and self.size < self.max_size:
            self.size += 1
            self._extend(self.size)
        return self.ordered[position] if position < len(self.ordered) else None

    def _extend(self, size: int) -> None:
        made, skipped = raw_candidates(
            self.original, self.keywords, size, self.transforms, self.seed
        )
        self.not_applicable += len(skipped)
        fresh = []
        for key, units, variant in sorted(made, key=lambda m: m[0]):
            if variant.prompt in self._prompts:
                continue  # the same prompt as a smaller (or equal, earlier) candidate
            self._prompts.add(variant.prompt)
            fresh.append((key, units, variant))
        if not fresh:
            return
        original, *summaries = self.scores.summaries([self.original] + [v for _, _, v in fresh])
        level = []
        for (key, units, variant), summary in zip(fresh, summaries, strict=True):
            comparison = compare(original, summary)
            verdict, _ = self.gate.judge(original, summary, comparison)
            if verdict != "accept":
                self.rejected += 1
                continue
            level.append(Candidate(key, units, variant, float(comparison[self.gate.measure])))
        # Rounded so that float noise in the last digits cannot reorder candidates.
        level.sort(key=lambda c: (-round(c.similarity, 6), c.key))
        self.ordered += level


# --------------------------------------------------------------------------- the search


@dataclass
class Search:
    """One (model, problem) search: where it stands and what it found."""

    model: str
    dataset: str
    source: str
    original_passed: int
    original_samples: int
    spent: int = 0
    position: int = 0
    tested: list[dict[str, Any]] = field(default_factory=list)
    flip: dict[str, Any] | None = None
    outcome: str | None = None

    def to_json(
        self, setting: str, seeds: Sequence[int], budget: int, ladder: Ladder
    ) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "model": self.model,
            "setting": setting,
            "seeds": list(seeds),
            "source_task_id": self.source,
            "original_passed": self.original_passed,
            "original_samples": self.original_samples,
            "outcome": self.outcome,
            "budget": budget,
            "generations": self.spent,
            "tested": [
                {k: t[k] for k in ("key", "size", "similarity", "passed", "samples")}
                for t in self.tested
            ],
            "flip": self.flip,
            "candidates_rejected_by_critic": ladder.rejected,
            "candidates_not_applicable": ladder.not_applicable,
        }


def _test_key(scope: Scope, search: Search, candidate: Candidate) -> str:
    """A tested candidate's key in tested.jsonl: model, setting, seeds, problem and prompt."""
    where = [search.model, scope.setting.label, list(scope.seeds), search.source]
    return json.dumps([*where, candidate.prompt_sha256])


class MinimalSearch:
    """The whole search over a run (see the module docstring)."""

    def __init__(
        self,
        scope: Scope,
        config: MinimalConfig,
        out: Path,
        log: Callable[[str], None] = print,
    ) -> None:
        self.scope = scope
        self.config = config
        self.out = out
        self.log = log
        self.timings: dict[str, float] = {}
        critic = scope.config.critic
        threshold = (
            config.min_similarity if config.min_similarity is not None else critic.min_similarity
        )
        self.gate = PlausibilityGate(min_similarity=threshold, measure=critic.measure)
        self.transforms = {
            t.name: t
            for t in bind_transforms(
                ("drop_all", "anon_drop_all", "anonymize", "drop_examples", "anon_drop_examples"),
                scope.config.perturb.params,
                scope.config.perturb.anonymous_name,
            )
        }
        self._backends: dict[str, Backend] = {}
        self.generated = 0

    def _backend(self, model: str) -> Backend:
        """The model's backend, loaded the first time a candidate needs it."""
        if model not in self._backends:
            spec = next(m for m in self.scope.config.models if m.label == model)
            self._backends[model] = load_backend(self.scope.run.loadable(spec))
        return self._backends[model]

    def searches(self) -> list[Search]:
        """A search per (model, problem) the run solved on the original, in a fixed order."""
        threshold = self.config.pass_threshold
        found = []
        models = self.config.models or tuple(m.label for m in self.scope.config.models)
        for model in sorted(models, key=natural_key):
            for source in sorted(self.scope.originals, key=natural_key):
                if self.config.task_ids and source not in self.config.task_ids:
                    continue
                passed = self.scope.outcomes.passed.get((model, self.scope.setting.label, source))
                if passed and solved(sum(passed), len(passed), threshold):
                    dataset = self.scope.outcomes.datasets.get(source, "")
                    found.append(Search(model, dataset, source, sum(passed), len(passed)))
        return found

    def run(self) -> tuple[list[Search], dict[str, Ladder]]:
        scope = self.scope
        searches = self.searches()
        keywords = droppable_keywords(scope) if searches else {}
        scores = CriticScores(
            self.out / "critic_scores.jsonl", scope.config.critic, scope.run.critic_records()
        )
        ladders = {
            s.source: Ladder(
                scope.originals[s.source],
                keywords.get(s.source, ()),
                self.transforms,
                scope.config.perturb.seed,
                scores,
                self.gate,
            )
            for s in searches
        }
        try:
            self._search(searches, ladders, self.out / "tested.jsonl")
        finally:
            scores.close()
        self.log(f"  critic scored {scores.scored} new prompts; {self.generated} samples generated")
        return searches, ladders

    def _search(self, searches: list[Search], ladders: Mapping[str, Ladder], log: Path) -> None:
        """Rounds of one candidate per unfinished search, until every search has finished."""
        with JsonlAppender(log) as tested:
            index = {r["test_key"]: r for r in tested.existing if "test_key" in r}
            if index:
                self.log(f"  resuming: {len(index)} candidates already tested")
            round_number = 0
            while True:
                needs: dict[int, Candidate] = {}
                started = time.perf_counter()  # ordering includes scoring new candidates
                for number, search in enumerate(searches):
                    candidate = self._advance(search, ladders[search.source], index)
                    if candidate is not None:
                        needs[number] = candidate
                elapsed = time.perf_counter() - started
                self.timings["order"] = round(self.timings.get("order", 0.0) + elapsed, 2)
                if not needs:
                    break
                round_number += 1
                with stage(
                    f"round {round_number}: test {len(needs)} candidate(s)",
                    self.log,
                    self.timings,
                    "boi analyze minimal",
                ):
                    for record in self._test([(searches[n], c) for n, c in needs.items()]):
                        tested.append(record)
                        index[record["test_key"]] = record

    def _advance(
        self, search: Search, ladder: Ladder, index: Mapping[str, dict[str, Any]]
    ) -> Candidate | None:
        """Walk `search` through candidates already tested; the next one to test, or None when
        it is finished (flipped, out of budget, or out of candidates)."""
        scope, config = self.scope, self.config
        while search.outcome is None:
            candidate = ladder.get(search.position)
            if candidate is None:
                search.outcome = "exhausted"
            elif search.spent + scope.cost > config.budget:
                search.outcome = "budget"
            else:
                record = index.get(_test_key(scope, search, candidate))
                if record is None:
                    return candidate
                search.spent += scope.cost
                search.position += 1
                search.tested.append(record)
                if not solved(record["passed"], record["samples"], config.pass_threshold):
                    search.flip = {
                        **candidate.to_json(),
                        "passed": record["passed"],
                        "samples": record["samples"],
                    }
                    search.outcome = "flipped"
        return None

    def _test(self, batch: Sequence[tuple[Search, Candidate]]) -> Iterable[dict[str, Any]]:
        """Generate and execute the run's samples for one candidate per search."""
        scope = self.scope
        setting = scope.setting
        samples: list[dict[str, Any]] = []
        problems: dict[str, Problem] = {}
        by_model: dict[str, list[Candidate]] = {}
        for search, candidate in batch:
            by_model.setdefault(search.model, []).append(candidate)
            problems[candidate.problem.task_id] = candidate.problem
        for model, candidates in sorted(by_model.items()):
            backend = self._backend(model)
            for note in backend.prepare([c.problem for c in candidates]):
                self.log(f"  {note}")
            # Sorted by id, as before the shared sampling loop, so execution files keep their names.
            variants = sorted((c.problem for c in candidates), key=lambda p: p.task_id)
            generated, totals = sample_prompts(
                backend,
                prompt_groups(variants, setting.decoding),
                scope.seeds,
                scope.run.generations_path,
            )
            self.generated += totals.generated
            samples += [
                {
                    "task_id": s.prompt_id, "completion": s.completion, "model": model,
                    "setting": setting.label, "seed": s.seed, "sample_index": s.sample_index,
                    "source_task_id": problems[s.prompt_id].source_task_id, **s.reply_fields(),
                }
                for s in generated
            ]  # fmt: skip
        digest = config_hash(
            [[s["model"], s["task_id"], s["sample_index"], s["completion"]] for s in samples]
        )
        report = execute_samples(
            problems,
            samples,
            scope.config.execution,
            self.out / "executions" / f"{digest}.jsonl",
            progress=progress_bar(len(samples), "execute"),
        )
        passed: dict[tuple[str, str], list[bool]] = {}
        for row in report.results:
            passed.setdefault((row["model"], row["task_id"]), []).append(bool(row["passed"]))
        for search, candidate in batch:
            got = passed.get((search.model, candidate.problem.task_id), [])
            yield {
                "test_key": _test_key(scope, search, candidate),
                "model": search.model,
                "setting": setting.label,
                "seeds": list(scope.seeds),
                "source_task_id": search.source,
                "key": candidate.key,
                "size": candidate.size,
                "similarity": round(candidate.similarity, 4),
                "passed": sum(got),
                "samples": len(got),
                "execution": digest,
            }


# --------------------------------------------------------------------------- outputs


def summarize(
    searches: Sequence[Search], config: MinimalConfig, scope: Scope, gate: PlausibilityGate
) -> dict[str, Any]:
    """The flip rate within the budget, overall and per model."""

    def block(group: Sequence[Search]) -> dict[str, Any]:
        flips = [s.flip for s in group if s.flip]
        return {
            "searched": len(group),
            "flipped": len(flips),
            "flip_rate": round(len(flips) / len(group), 4) if group else None,
            "outcomes": {o: sum(s.outcome == o for s in group) for o in OUTCOMES},
            "mean_flip_size": round(sum(f["size"] for f in flips) / len(flips), 3)
            if flips
            else None,
            "mean_flip_similarity": (
                round(sum(f["similarity"] for f in flips) / len(flips), 2) if flips else None
            ),
            "generations": sum(s.spent for s in group),
        }

    models = sorted({s.model for s in searches}, key=natural_key)
    return {
        "run_dir": str(scope.run.path),
        "setting": scope.setting.label,
        "seeds": list(scope.seeds),
        "budget": config.budget,
        "samples_per_candidate": scope.cost,
        "pass_threshold": config.pass_threshold,
        "min_similarity": gate.min_similarity,
        "measure": gate.measure,
        **block(searches),
        "per_model": {m: block([s for s in searches if s.model == m]) for m in models},
    }


def section_html(searches: Sequence[Search], summary: Mapping[str, Any]) -> str:
    rate = summary["flip_rate"]
    out = [
        "<h2>Minimal hint search</h2>",
        f'<p class="note">For each problem a model solved on the original (at least '
        f"{summary['pass_threshold']:g} of its samples pass), the smallest perturbation the "
        f"critic approves ({esc(summary['measure'])} &ge; {summary['min_similarity']:g} %) that "
        "makes it fail: size is the number of hint units removed (a keyword, the function name, "
        "the examples), then the highest critic similarity first. Budget: "
        f"{summary['budget']} generations per problem and model ({summary['samples_per_candidate']} "
        f"per candidate; setting {esc(summary['setting'])}). Data: minimal.jsonl, summary.json.</p>",
        f"<p><b>{summary['flipped']} of {summary['searched']} solved problems flip within the "
        f"budget</b>"
        + (f" ({100 * rate:.1f} %)" if rate is not None else "")
        + "; "
        + ", ".join(
            f"{esc(m)}: {b['flipped']}/{b['searched']}" for m, b in summary["per_model"].items()
        )
        + "</p>",
    ]
    if not searches:
        out.append("<p>No problem was solved on the original, so there is nothing to flip.</p>")
        return "".join(out)
    header = [
        "problem", "model", "original", "outcome", "minimal flip", "size", "similarity",
        "flip pass rate", "tested", "generations",
    ]  # fmt: skip
    rows: list[list[str | tuple[str, str]]] = []
    for s in searches:
        flip = s.flip or {}
        rows.append([
            f"{s.dataset} {s.source}", s.model, f"{s.original_passed}/{s.original_samples}",
            (s.outcome or "", "fail" if s.outcome == "flipped" else "pass"),
            flip.get("key", ""), str(flip.get("size", "")),
            f"{flip['similarity']:.1f}" if flip else "",
            f"{flip['passed']}/{flip['samples']}" if flip else "",
            str(len(s.tested)), str(s.spent),
        ])  # fmt: skip
    natural = list(range(len(searches)))
    sorts = [
        ("problem", natural),
        (
            "smallest flip",
            sorted(
                natural,
                key=lambda i: (
                    searches[i].flip is None,
                    (searches[i].flip or {}).get("size", 0),
                    -(searches[i].flip or {}).get("similarity", 0.0),
                ),
            ),
        ),
        ("most generations", sorted(natural, key=lambda i: -searches[i].spent)),
    ]
    out.append(
        filtered_tables(
            "minimal",
            header,
            rows,
            sorts=sorts,
            categories=OUTCOMES,
            row_categories=[[s.outcome or ""] for s in searches],
        )
    )
    flips = [s for s in searches if s.flip]
    if flips:
        out.append("<h3>Flipping prompts</h3>")
        for s in flips:
            flip = s.flip or {}
            out.append(
                f"<details><summary>{esc(s.source)} / {esc(s.model)}: {esc(flip['key'])} "
                f'(similarity {flip["similarity"]:.1f})</summary><div class="body">'
                f"<pre>{esc(flip['prompt'])}</pre></div></details>"
            )
    return "".join(out)


# --------------------------------------------------------------------------- command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a boi run directory")
    add_dataclass_arguments(
        parser, MinimalConfig, flags={"models": "--model", "task_ids": "--task-id"}
    )


def minimal_search(
    run: Run | str | Path,
    config: MinimalConfig,
    *,
    log: Callable[[str], None] = print,
) -> tuple[list[dict[str, Any]], dict[str, Any], Path]:
    """Run (or resume) the search in a run (a `Run` or its directory); returns minimal.jsonl's
    records, the summary and the folder they were written to."""
    scope = read_run(run, config)
    run_dir = scope.run.path
    out = Path(config.out) if config.out else analysis_dir(run_dir, NAME)
    out.mkdir(parents=True, exist_ok=True)
    search = MinimalSearch(scope, config, out, log)
    searches, ladders = search.run()
    records = [
        s.to_json(scope.setting.label, scope.seeds, config.budget, ladders[s.source])
        for s in searches
    ]
    summary = summarize(searches, config, scope, search.gate)
    summary["timings_s"] = search.timings
    write_jsonl(out / "minimal.jsonl", records)
    write_text_atomic(
        out / "summary.json", json.dumps(summary, indent=1, ensure_ascii=False) + "\n"
    )
    write_section(run_dir, NAME, "Minimal hints", section_html(searches, summary))
    return records, summary, out


def run(args: argparse.Namespace) -> int:
    config = from_mapping(MinimalConfig, overrides_from_args(args, MinimalConfig), "minimal")
    _, summary, out = minimal_search(args.run_dir, config, log=print)
    report = rebuild_run_report(args.run_dir)
    rate = summary["flip_rate"]
    print(
        f"boi analyze minimal: {summary['flipped']} of {summary['searched']} solved problems "
        f"flip within {config.budget} generations"
        + (f" ({100 * rate:.1f} %)" if rate is not None else "")
    )
    print(f"wrote {out / 'minimal.jsonl'}, {out / 'summary.json'}; report: {report.html}")
    return 0
