"""The paper's LM-critic protocol (section 5.2, Table 2).

A seeded random sample of challenges from HumanEval + MBPP; each is transformed by
Anonymization, Drop One, Drop All, Anon+Drop One and Anon+Drop All, once with the context-aware
filter (CAF) and once without; the critic scores the original and every variant, and the table
gives the mean and standard deviation of the similarity per method (total log-probability, and
per token). Drop Examples is left out, as in the paper: it removes too many tokens for a local
comparison to mean anything.

A variant whose prompt equals its original (Drop One/All on a challenge with no droppable
keyword) is not a perturbation: it is counted as "unchanged" and left out of the mean, so the
figures describe what the transformations actually did.
"""

from __future__ import annotations

import csv
import io
import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.errors import UserError
from benchmarks.common.provenance import provenance_record
from benchmarks.loaders import load_benchmark
from benchmarks.problem import Problem
from benchmarks.stats import mean_std
from critic.annotate import is_original, score_problems
from critic.scoring import Scorer
from critic.similarity import ScoreSummary, compare
from perturb import KeywordConfig, PerturbConfig, run_catalogue
from perturb.blocks import split_dataset

SOURCES_PER_CALL = 10

# (row label, transform name in perturb.transforms.TRANSFORMS), in the paper's order.
METHODS: tuple[tuple[str, str], ...] = (
    ("Anonymization", "anonymize"),
    ("Drop One", "drop_one"),
    ("Drop All", "drop_all"),
    ("Anon+Drop One", "anon_drop_one"),
    ("Anon+Drop All", "anon_drop_all"),
)
# Paper Table 2 (Codex-v2 critic), similarity %: (with CAF, without CAF).
PAPER_FIGURES: dict[str, tuple[float, float]] = {
    "Anonymization": (98.5, 98.5),
    "Drop One": (97.3, 84.2),
    "Drop All": (95.3, 80.3),
    "Anon+Drop One": (95.8, 80.9),
    "Anon+Drop All": (94.6, 78.4),
}


@dataclass
class Table2Config:
    """The sample the protocol scores."""

    n: int = field(default=200, metadata={"help": "challenges sampled from HumanEval + MBPP"})
    seed: int = field(default=0, metadata={"help": "seed of the sample and the transformations"})
    mbpp_data: str | None = field(
        default=None, metadata={"help": "MBPP JSONL path (default: download with datasets)"}
    )

    def __post_init__(self) -> None:
        if self.n < 1:
            raise UserError(f"the sample size must be at least 1 (got {self.n}).")


def sample_challenges(config: Table2Config) -> list[Problem]:
    """`config.n` challenges drawn without replacement from HumanEval + MBPP, blocks split."""

    pool: list[Problem] = []
    for name, data in (("humaneval", None), ("mbpp", config.mbpp_data)):
        split = split_dataset(load_benchmark(name, data).problems)
        pool += [p for p in split.problems if p.blocks is not None]
    if config.n > len(pool):
        raise UserError(f"the sample size {config.n} exceeds the {len(pool)} challenges available.")
    return random.Random(config.seed).sample(pool, config.n)


def make_variants(problems: list[Problem], caf: bool, seed: int) -> dict[str, list[Problem]]:
    """transform name -> the variants it makes of `problems`, with or without the CAF.

    One catalogue run per filter setting, so keywords are extracted once for all methods.
    """
    config = PerturbConfig(
        transforms=tuple(name for _, name in METHODS),
        seed=seed,
        keywords=KeywordConfig(context_aware=caf),
        # Table 2 compares prompts a transformation changed; no unchanged stand-ins.
        keep_unchanged=False,
    )
    result = run_catalogue(problems, config)
    by_transform: dict[str, list[Problem]] = {name: [] for _, name in METHODS}
    for variant in result.variants:
        if not is_original(variant):
            by_transform[variant.transform].append(variant)
    return by_transform


@dataclass
class Cell:
    """One method under one filter setting."""

    similarities: list[float]
    similarities_per_token: list[float]
    unchanged: int
    problems: int

    def stats(self) -> dict[str, Any]:
        mean, std = mean_std(self.similarities)
        mean_tok, std_tok = mean_std(self.similarities_per_token)
        return {
            "mean": mean,
            "std": std,
            "mean_per_token": mean_tok,
            "std_per_token": std_tok,
            "variants": len(self.similarities),
            "unchanged": self.unchanged,
            "problems": self.problems,
        }


def run_table2(
    config: Table2Config,
    scorer: Scorer,
    out_dir: str | Path,
    *,
    variant_maker: Callable[[list[Problem], bool, int], dict[str, list[Problem]]] = make_variants,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the protocol; writes table2.json, table2.csv and variants.jsonl into `out_dir`."""
    started = time.time()
    problems = sample_challenges(config)
    log(f"[table2] {len(problems)} challenges sampled (seed {config.seed})")
    by_id = {p.task_id: p for p in problems}
    variants: dict[tuple[str, bool], list[Problem]] = {}
    for caf in (True, False):
        made = variant_maker(problems, caf, config.seed)
        for label, transform in METHODS:
            variants[(label, caf)] = made[transform]
            setting = "with" if caf else "without"
            log(f"[table2] {label} ({setting} CAF): {len(made[transform])} variants")
    # Score source by source (an original beside its variants, so their shared prefix runs
    # once), a few sources per call so progress shows.
    by_source: dict[str, list[Problem]] = {p.task_id: [p] for p in problems}
    for group in variants.values():
        for variant in group:
            by_source[variant.source_task_id].append(variant)
    total = sum(len(g) for g in by_source.values())
    distinct = len({p.prompt for g in by_source.values() for p in g})
    log(f"[table2] scoring {total} prompts ({distinct} distinct)")
    scored: dict[int, ScoreSummary] = {}  # by id(problem): variant ids repeat across CAF runs
    sources = list(by_source)
    for start in range(0, len(sources), SOURCES_PER_CALL):
        batch = [p for s in sources[start : start + SOURCES_PER_CALL] for p in by_source[s]]
        for problem, summary in zip(batch, score_problems(scorer, batch), strict=True):
            scored[id(problem)] = summary
        log(
            f"[table2] {min(start + SOURCES_PER_CALL, len(sources))}/{len(sources)} challenges scored"
        )
    original = {p.task_id: scored[id(p)] for p in problems}
    per_variant = []
    cells: dict[tuple[str, bool], Cell] = {}
    for key, group in variants.items():
        cell = Cell([], [], 0, len({v.source_task_id for v in group}))
        for variant in group:
            summary = scored[id(variant)]
            source = variant.source_task_id
            if variant.prompt == by_id[source].prompt:
                cell.unchanged += 1
                continue
            comparison = compare(original[source], summary)
            cell.similarities.append(comparison["similarity"])
            cell.similarities_per_token.append(comparison["similarity_per_token"])
            per_variant.append(
                {
                    "method": key[0],
                    "caf": key[1],
                    "task_id": variant.task_id,
                    "source_task_id": source,
                    "logprob": summary.logprob,
                    "original_logprob": original[source].logprob,
                    **comparison,
                }
            )
        cells[key] = cell
    rows = [
        {
            "method": label,
            "with_caf": cells[(label, True)].stats(),
            "without_caf": cells[(label, False)].stats(),
            "paper_with_caf": PAPER_FIGURES[label][0],
            "paper_without_caf": PAPER_FIGURES[label][1],
        }
        for label, _ in METHODS
    ]
    result = {
        "protocol": "LM critic, paper section 5.2 / Table 2",
        "config": asdict(config),
        "scorer": scorer.describe(),
        "sample": [p.task_id for p in problems],
        "rows": rows,
        "prompts_scored": total,
        "distinct_prompts": distinct,
        "seconds": round(time.time() - started, 1),
    }
    result["provenance"] = provenance_record({**asdict(config), "scorer": result["scorer"]})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "table2.json", json.dumps(result, indent=2) + "\n")
    write_text_atomic(out / "table2.csv", table2_csv(rows))
    write_text_atomic(out / "variants.jsonl", "".join(json.dumps(r) + "\n" for r in per_variant))
    return result


def _fmt(mean: float | None, std: float | None) -> str:
    return "-" if mean is None else f"{mean:5.1f} ± {std:4.1f}"


def table2_csv(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(
        [
            "method",
            "caf",
            "mean",
            "std",
            "mean_per_token",
            "std_per_token",
            "variants",
            "unchanged",
            "problems",
            "paper",
        ]
    )
    for row in rows:
        for caf, key, paper in (
            (True, "with_caf", "paper_with_caf"),
            (False, "without_caf", "paper_without_caf"),
        ):
            s = row[key]
            writer.writerow(
                [
                    row["method"],
                    caf,
                    s["mean"],
                    s["std"],
                    s["mean_per_token"],
                    s["std_per_token"],
                    s["variants"],
                    s["unchanged"],
                    s["problems"],
                    row[paper],
                ]
            )
    return buffer.getvalue()


def format_table2(result: dict[str, Any]) -> str:
    """The table as printed by `boi critic table2`."""
    head = (
        f"{'method':<15} {'with CAF':>14} {'without CAF':>14}   "
        f"{'per token, CAF':>15} {'no CAF':>14}   {'n (CAF/no)':>11}   paper (CAF/no)"
    )
    lines = [
        f"LM critic similarity (%), {len(result['sample'])} challenges, critic {result['scorer'].get('model')}",
        head,
        "-" * len(head),
    ]
    for row in result["rows"]:
        w, wo = row["with_caf"], row["without_caf"]
        lines.append(
            f"{row['method']:<15} {_fmt(w['mean'], w['std']):>14} {_fmt(wo['mean'], wo['std']):>14}   "
            f"{_fmt(w['mean_per_token'], w['std_per_token']):>15} "
            f"{_fmt(wo['mean_per_token'], wo['std_per_token']):>14}   "
            f"{w['variants']:>5}/{wo['variants']:<5}   "
            f"{row['paper_with_caf']:.1f} / {row['paper_without_caf']:.1f}"
        )
    lines.append(
        "n = variants that changed the prompt; unchanged ones (no droppable keyword) are left out."
    )
    return "\n".join(lines)
