"""`boi run`'s stages before execution: its inputs checked and loaded (models, datasets), the
perturbation, the critic gate, and the sampling of one model under one setting."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.common.http import unreachable
from benchmarks.common.jsonl import iter_jsonl, write_jsonl
from benchmarks.common.models import check_local_model
from benchmarks.common.provenance import file_sha256
from benchmarks.execution.reference_check import machine_reference_failures
from benchmarks.generation import (
    PROGRAM_CHAT_INSTRUCTION,
    PROGRAM_STOP,
    DecodingConfig,
    PromptGroup,
    backend_class,
    check_models,
    for_kind,
    for_language,
)
from benchmarks.loaders import LoadResult, load_benchmark
from benchmarks.problem import Problem, read_problems, select_tasks
from boi.runner.config import DatasetSpec, RunConfig
from critic.annotate import annotate_file
from critic.scoring import load_scorer
from critic.similarity import PlausibilityGate, read_similarities
from perturb.blocks import split_dataset
from perturb.catalogue import PerturbConfig, run_catalogue

__all__ = ["check_run_models", "load_datasets", "prompt_groups"]


def check_run_models(config: RunConfig) -> None:
    """Every model the run will load or call can be reached (`check_models`), the critic's
    scorer included: one sentence before any work, not an error after the perturbation and
    the critic (minutes on a CPU)."""
    check_models(config.models, config.seeds)
    if config.critic.enabled:
        scorer = config.critic.scorer
        url = getattr(scorer, "url", None)
        if url and unreachable([url]):
            raise UserError(
                f"critic.scorer.url {url}: nothing answers there; start the scorer's server "
                "(or fix the URL, or set critic.enabled: false) before the run."
            )
        if not url and hasattr(scorer, "model"):
            check_local_model(
                scorer.model, getattr(scorer, "revision", None), what="critic.scorer.model"
            )


def _released(problems: list[Problem], spec: DatasetSpec) -> list[Problem]:
    """The problems inside the dataset's release window (their contest dates)."""
    if not (spec.released_after or spec.released_before):
        return problems
    undated = next((p for p in problems if not p.metadata.get("contest_date")), None)
    if undated is not None:
        raise UserError(
            f"dataset {spec.label}: {undated.task_id} has no contest date, so released_after / "
            "released_before cannot select it; they apply to datasets that date their problems "
            "(livecodebench)."
        )
    kept = [p for p in problems if spec.released(str(p.metadata["contest_date"]))]
    if not kept:
        dates = sorted(str(p.metadata["contest_date"]) for p in problems)
        raise UserError(
            f"dataset {spec.label}: no problem was released in the window (after "
            f"{spec.released_after or 'any date'}, before {spec.released_before or 'any date'}); "
            f"its contest dates run from {dates[0]} to {dates[-1]}."
        )
    return kept


def _select(problems: list[Problem], spec: DatasetSpec) -> list[Problem]:
    return select_tasks(
        _released(problems, spec), spec.task_ids, spec.limit, f"the dataset {spec.label}"
    )


def _given_variants(problems: list[Problem], spec: DatasetSpec) -> list[Problem]:
    """A dataset of variants made elsewhere (`boi perturb --out`, ReCode's released files):
    every record already carries its lineage, so the run takes them as they are. task_ids and
    limit select source problems, with all their variants."""
    originals = [p for p in problems if p.transform == "original"]
    if not originals:
        raise UserError(
            f"dataset {spec.label} holds variants but no original problems; drops are measured "
            "against the originals, so include them (boi perturb writes them with the variants)."
        )
    kept = {p.task_id for p in _select(originals, spec)}
    return [p for p in problems if p.source_task_id in kept]


def _qualified(problem: Problem, label: str) -> Problem:
    """`problem` under the id `label:ID`, for a dataset whose ids an earlier one uses."""
    task_id = f"{label}:{problem.task_id}"
    return dataclasses.replace(problem, task_id=task_id, source_task_id=task_id)


def load_datasets(config: RunConfig) -> list[LoadResult]:
    """Every dataset of the run, loaded and its selection checked (task_ids in the dataset,
    originals among given variants): done before the run directory is claimed, so that a
    wrong path or id costs one sentence and the corrected command then runs, instead of
    meeting a manifest written for the mistaken config."""
    # The selection goes to the loader: one that computes per problem (HumanEval+'s expected
    # outputs) builds only what the run selects, instead of minutes for the whole dataset.
    loaded = [
        load_benchmark(
            spec.name,
            spec.data,
            task_ids=spec.task_ids,
            limit=spec.limit,
            candidate_libraries=config.execution.candidate_libraries,
        )
        for spec in config.datasets
    ]
    for spec, result in zip(config.datasets, loaded, strict=True):
        if any(p.lineage for p in result.problems):
            _given_variants(result.problems, spec)
            continue
        selected = _select(result.problems, spec)
        failures = split_dataset(selected).failures
        if selected and len(failures) == len(selected):
            # Nothing to perturb, generate or judge: said now, not as a report with no rows.
            task_id, reason = next(iter(failures.items()))
            raise UserError(
                f"dataset {spec.label}: none of its {len(selected)} problems splits into "
                f"blocks ({task_id}: {reason}); boi run perturbs prompts it can split (a "
                "function with its docstring, a problem statement): "
                f"`boi blocks {spec.name}` says why."
            )
    _check_given_task_ids(config, loaded)
    return loaded


def _check_given_task_ids(config: RunConfig, datasets: Sequence[LoadResult]) -> None:
    """A completions file's task ids against the run's problems and transformations, before
    the claim (the backend matches the exact variants only after the perturbation): an id of
    a problem or a transformation the run does not have is refused now, naming file and line.
    The problems are named as `_perturb` names them (given variants as given; a problem whose
    id an earlier dataset has, as `label:ID`)."""
    checks = [
        (model, check)
        for model in config.models
        if (check := getattr(backend_class(model.kind), "check_task_ids", None)) is not None
    ]
    if not checks:
        return
    sources: set[str] = set()
    given: set[str] = set()
    for spec, loaded in zip(config.datasets, datasets, strict=True):
        if any(p.lineage for p in loaded.problems):
            variants = _given_variants(loaded.problems, spec)
            given.update(v.task_id for v in variants)
            sources.update(v.source_task_id for v in variants)
            continue
        ids = [p.task_id for p in _select(loaded.problems, spec)]
        if any(task_id in sources for task_id in ids):
            ids = [f"{spec.label}:{task_id}" for task_id in ids]
        sources.update(ids)
    names = set(config.perturb.transforms) | ({"name_only"} if config.name_only_probe else set())

    def could_be(task_id: str) -> bool:
        # A variant's id is SOURCE::NAME[/i][@sK] (perturb.transforms); the original's, SOURCE.
        source, _, variant = task_id.partition("::")
        name = variant.split("/")[0].split("@")[0]
        return task_id in given or (source in sources and (not variant or name in names))

    for model, check in checks:
        check(model, could_be, sorted(sources))


def _perturb(
    config: RunConfig,
    out: Path | None,
    log: Callable[[str], None],
    datasets: Sequence[LoadResult] = (),
) -> tuple[list[Problem], dict[str, str]]:
    """All variants of all datasets (+ the name-only probe); problem id -> dataset label.
    Written to `out` (problems.jsonl, not_applied.jsonl) unless it is None (a dry run).
    `datasets`: what `load_datasets` loaded (loaded here when empty)."""
    # The run's own perturbation, with the name-only probe among its transformations.
    perturb_config = dataclasses.replace(
        config.perturb,
        transforms=tuple(config.perturb.transforms)
        + (("name_only",) if config.name_only_probe else ()),
    )
    datasets = datasets or load_datasets(config)
    key = _perturbation_key(perturb_config, config, datasets) if out is not None else ""
    if out is not None and _read_json(out / PERTURBATION_MARKER).get("key") == key:
        # A finished (or resumed) run's own variants: the ones its samples were made from.
        every = read_problems(out / "problems.jsonl")
        log(f"  {len(every)} variants as perturbed before ({out / 'problems.jsonl'})")
        return every, {
            str(row["task_id"]): str(row.get("dataset") or "")
            for _, row in iter_jsonl(out / "problems.jsonl")
        }
    variants: list[Problem] = []
    dataset_of: dict[str, str] = {}
    sources: set[str] = set()  # the problems of the datasets so far
    not_applied = []
    left_out: list[dict[str, str]] = []  # problems whose own reference fails on this machine
    for spec, loaded in zip(config.datasets, datasets, strict=True):
        for issue in loaded.issues:
            log(f"  {spec.label}: {issue.task_id}: {issue.reason}")
        # Left out by the loader's own reference check (BigCodeBench's): recorded with the
        # ones this run checks, so the run directory says which tasks it did not judge and why.
        left_out += [
            {"dataset": spec.label, "task_id": task_id, "reason": reason}
            for task_id, reason in loaded.reference_failures.items()
        ]
        if any(p.lineage for p in loaded.problems):
            given = _given_variants(loaded.problems, spec)
            sources.update(v.source_task_id for v in given)
            variants += given
            dataset_of.update({v.task_id: spec.label for v in given})
            names = Counter(v.transform for v in given)
            log(
                f"  {spec.label}: {len(given)} variants as given (not perturbed again); "
                + ", ".join(f"{name} {count}" for name, count in names.items())
            )
            continue
        selected = _select(loaded.problems, spec)
        if any(p.task_id in sources for p in selected):
            # The same problems with other tests (HumanEval and HumanEval+): the variants and
            # results of each dataset stay apart under ids of their own, and the prompts, being
            # identical, share their samples through the generation cache.
            selected = [_qualified(p, spec.label) for p in selected]
            log(
                f"  {spec.label}: task ids shared with an earlier dataset, taken as {spec.label}:ID"
            )
        if out is not None and any(p.language != "python" for p in selected):
            selected = _without_failing_references(selected, spec.label, config, log, left_out)
        sources.update(p.task_id for p in selected)
        result = run_catalogue(selected, perturb_config)
        for task_id, reason in result.split_failures.items():
            log(f"  {spec.label}: skipped {task_id}: {reason}")
        variants += result.variants
        dataset_of.update({v.task_id: spec.label for v in result.variants})
        not_applied += [
            {"dataset": spec.label, "task_id": t, "transform": n, "reason": r}
            for t, n, r in result.not_applied
        ]
        log(
            f"  {spec.label}: {len(result.variants)} variants of {len(selected)} problems; "
            + ", ".join(f"{row['transform']} {row['variants']}" for row in result.summary())
        )
    if out is not None:
        write_jsonl(out / "not_applied.jsonl", not_applied)
        if left_out or any(p.language != "python" for p in variants):  # where a check ran
            write_jsonl(out / REFERENCE_FAILURES, left_out)
        write_jsonl(
            out / "problems.jsonl",
            ({**v.to_json(), "dataset": dataset_of[v.task_id]} for v in variants),
        )
        # Last: its key says both files above are whole and what they were made from.
        write_text_atomic(out / PERTURBATION_MARKER, json.dumps({"key": key}) + "\n")
    return variants, dataset_of


PERTURBATION_MARKER = ".perturbation.json"
# The problems left out of a run because their own reference fails on this machine (or, for a
# loader that ships its check, where that check was run: `LoadResult.reference_failures`).
REFERENCE_FAILURES = "reference_failures.jsonl"


def _without_failing_references(
    problems: list[Problem],
    label: str,
    config: RunConfig,
    log: Callable[[str], None],
    left_out: list[dict[str, str]],
) -> list[Problem]:
    """`problems` less those whose canonical solution fails in this machine's sandbox (issue
    46: a toolchain's missing library, a dataset's wrong reference), each said in the log and
    recorded in `left_out`, instead of scoring every model zero on them. The check is kept per
    machine (`machine_reference_failures`): a dataset's first run here judges its references,
    later runs read the verdicts. Python datasets are not checked here: their loaders check
    what they compute (HumanEval+'s expected outputs, BigCodeBench's shipped list)."""
    failures = machine_reference_failures(problems, config.execution, log=log)
    for problem in problems:
        if problem.task_id in failures:
            reason = failures[problem.task_id]
            log(f"  {label}: left out {problem.task_id}: its reference fails here ({reason})")
            left_out.append({"dataset": label, "task_id": problem.task_id, "reason": reason})
    return [p for p in problems if p.task_id not in failures]


"""Beside problems.jsonl: the key of the perturbation that wrote it (`_perturbation_key`)."""


def _perturbation_key(
    perturb_config: PerturbConfig, config: RunConfig, datasets: Sequence[LoadResult]
) -> str:
    """What decides a run's variants: the perturbation's config, each dataset's selection and
    every loaded problem (prompts, tests, blocks), and the pinned keyword file's content."""
    keyword_file = perturb_config.keyword_file
    record = {
        "perturb": dataclasses.asdict(perturb_config),
        "keyword_file_sha256": file_sha256(keyword_file)
        if keyword_file and Path(keyword_file).is_file()
        else None,
        "datasets": [
            {
                "spec": dataclasses.asdict(spec),
                "problems": [p.to_json() for p in loaded.problems],
            }
            for spec, loaded in zip(config.datasets, datasets, strict=True)
        ],
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _critic_gate(
    config: RunConfig, out: Path, variants: list[Problem], log: Callable[[str], None]
) -> tuple[list[Problem], dict[str, float]]:
    scored = [v for v in variants if v.transform != "name_only"]
    write_jsonl(out / "critic_input.jsonl", (v.to_json() for v in scored))
    scorer = load_scorer(config.critic.kind, config.critic.scorer)
    gate = PlausibilityGate(
        min_similarity=config.critic.min_similarity, measure=config.critic.measure
    )
    annotate_file(
        out / "critic_input.jsonl", out / "critic.jsonl", scorer, gate, log=lambda m: log("  " + m)
    )
    similarity = read_similarities(out / "critic.jsonl", config.critic.measure)
    rejected = {t for t, s in similarity.items() if s < config.critic.min_similarity}
    if rejected:
        log(
            f"  critic gate: {len(rejected)} variants below {config.critic.min_similarity}% similarity are not generated (see critic.jsonl)"
        )
    return [v for v in variants if v.task_id not in rejected], similarity


def prompt_groups(variants: Sequence[Problem], decoding: DecodingConfig) -> list[PromptGroup]:
    """The record decides how a prompt is completed: a function body (HumanEval's stops and
    instruction) or a whole stdin/stdout program (no stops but the model's end, a program
    instruction); each kind is generated with its own decoding."""
    functions = {v.task_id: v.prompt for v in variants if not v.is_stdio and v.language == "python"}
    programs = {v.task_id: v.prompt for v in variants if v.is_stdio}
    groups = [
        PromptGroup(functions, decoding, "functions"),
        PromptGroup(
            programs, for_kind(decoding, PROGRAM_STOP, PROGRAM_CHAT_INSTRUCTION), "programs"
        ),
    ]
    # Functions in other languages: each language's stops, instruction and reply reading.
    for language in sorted({v.language for v in variants if not v.is_stdio} - {"python"}):
        prompts = {
            v.task_id: v.prompt for v in variants if not v.is_stdio and v.language == language
        }
        groups.append(PromptGroup(prompts, for_language(decoding, language), language))
    return groups
