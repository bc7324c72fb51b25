"""Hint audit: per problem, which block of the prompt a panel of models depends on.

Reads one or several `boi run` directories (several models, or one model under several
decoding settings) and nothing else: problems.jsonl says what each variant removed (its
lineage: the transformation, the dropped keyword, whether it did not apply), the results files
whether each sample passed, and the name-only probe (transformation `name_only`) whether a
problem is solvable from its name alone. Nothing is generated.

A panel member is one model under one decoding setting (`model` when every model has one
setting, else `model @ setting`). A member *solves* a variant (the original, a perturbed
variant or the name-only probe) when at least `pass_threshold` (default 0.5) of its samples of
it pass (`benchmarks.robustness.solved`, the rule the report's flip tables use with one passing
sample as the threshold), and *fails* it otherwise; it solves a problem when it solves the
original (`passes` in hints.json and `name_only_passes` in hints.csv keep their names). Variants
a transformation left unchanged (nothing to drop, no examples) and variants the run's critic
gate kept from generation are no evidence either way.

Per member and problem (`label` in hints.json):

- `unsolved`: the member does not solve the original.
- `example-dependent`: it solves the problem and fails the variant without examples
  (`drop_examples`).
- `keyword-dependent: K`: it solves the problem and fails the variant that drops keyword K
  alone (`drop_one`), for each such K.
- `name-dependent`: it solves the problem and fails the anonymized variant (`anonymize`).
- `combination-dependent`: it solves the problem, none of the single removals above makes it
  fail, but a combined one does (`drop_all`, `anon_drop_one`, `anon_drop_all`,
  `anon_drop_examples`).
- `robust`: it solves the problem and every variant.

Per problem, across the M members with results for it (`label`, one of LABELS; `flags`, every
label that applies, for filtering):

- `name-leak`: every member solves the name-only probe (all M were probed): the name gives the
  answer away. It heads the label whatever else holds.
- `unsolved`: no member solves the original.
- `example-dependent`, `keyword-dependent`, `name-dependent`, `combination-dependent`: the
  dependence the most solving members show (ties in that order); `detail` lists every
  dependence as m/S (m of the S solving members), keywords by name.
- `robust`: S >= 1 and no solving member depends on anything.
- `name-solvable` (a flag, never the label): at least one member solves the name-only probe.

Writes hints.csv (one row per problem, per-member pass rates), hints.json (everything, with the
per-variant evidence) and a report section with a table sorted and filtered without script.
Rerunning recomputes everything from the run directories (nothing to resume).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.config import add_dataclass_arguments, from_mapping, overrides_from_args
from benchmarks.common.errors import UserError
from benchmarks.problem import Problem
from benchmarks.report import esc, filtered_tables, natural_key
from benchmarks.report.sections import analysis_dir, write_section
from benchmarks.robustness import solved
from boi.reporting import rebuild_run_report
from boi.run_reader import Run, open_run

NAME = "hints"
LABELS = (
    "name-leak",
    "name-solvable",
    "unsolved",
    "example-dependent",
    "keyword-dependent",
    "name-dependent",
    "combination-dependent",
    "robust",
)
DEPENDENCES = ("example-dependent", "keyword-dependent", "name-dependent", "combination-dependent")
# Which dependence a failed variant shows; compound removals count only when no single one did.
SINGLE = {"drop_examples": "example-dependent", "anonymize": "name-dependent"}
COMPOUND = ("drop_all", "anon_drop_one", "anon_drop_all", "anon_drop_examples")


@dataclass(frozen=True)
class HintsConfig:
    """How the hint audit reads a panel of runs."""

    pass_threshold: float = field(
        default=0.5,
        metadata={
            "help": "a model solves a variant when at least this fraction of its samples pass"
        },
    )
    settings: tuple[str, ...] = field(
        default=(),
        metadata={"help": "only these decoding settings (labels); empty: every setting"},
    )
    models: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "only these model labels (as in results/LABEL/); empty: every model (leave "
            "out the reference backend: it solves every variant by construction)"
        },
    )
    out: str | None = field(
        default=None,
        metadata={
            "help": "folder for hints.csv / hints.json; None: RUN_DIR/analysis/hints of the first run"
        },
    )

    def __post_init__(self) -> None:
        check_threshold(self.pass_threshold)


def check_threshold(value: float) -> float:
    """`value` when it is a usable pass threshold (a fraction in (0, 1]), else one sentence."""
    if not 0.0 < value <= 1.0:
        raise UserError(
            f"--pass-threshold is {value}; give the fraction of samples that must pass, in (0, 1]."
        )
    return value


@dataclass(frozen=True)
class Outcome:
    """One member's samples of one variant."""

    task_id: str
    transform: str
    keyword: str | None
    passed: int
    samples: int

    @property
    def rate(self) -> float:
        return self.passed / self.samples

    @property
    def name(self) -> str:
        """How the evidence names the variant: `drop_one 'sorted'`, `anonymize`."""
        return f"{self.transform} {self.keyword!r}" if self.keyword else self.transform

    def to_json(self, threshold: float) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "transform": self.transform,
            "keyword": self.keyword,
            "passed": self.passed,
            "samples": self.samples,
            "rate": round(self.rate, 4),
            "passes": solved(self.passed, self.samples, threshold),
        }


@dataclass
class MemberAudit:
    """One member on one problem: its outcomes, and what they say."""

    member: str
    original: Outcome
    name_only: Outcome | None
    variants: list[Outcome]
    threshold: float

    @property
    def solves(self) -> bool:
        return solved(self.original.passed, self.original.samples, self.threshold)

    @property
    def name_solvable(self) -> bool | None:
        if self.name_only is None:
            return None
        return solved(self.name_only.passed, self.name_only.samples, self.threshold)

    @property
    def failed(self) -> list[Outcome]:
        """The variants it fails although it solves the original."""
        if not self.solves:
            return []
        return [v for v in self.variants if not solved(v.passed, v.samples, self.threshold)]

    @property
    def dependences(self) -> list[tuple[str, str | None]]:
        """(dependence, keyword or None) for every dependence it shows (see the docstring)."""
        found: list[tuple[str, str | None]] = []
        for outcome in self.failed:
            if outcome.transform in SINGLE:
                found.append((SINGLE[outcome.transform], None))
            elif outcome.transform == "drop_one" and outcome.keyword:
                found.append(("keyword-dependent", outcome.keyword))
        if not found and any(o.transform in COMPOUND for o in self.failed):
            found.append(("combination-dependent", None))
        return sorted(set(found), key=lambda d: (DEPENDENCES.index(d[0]), d[1] or ""))

    @property
    def label(self) -> str:
        if not self.solves:
            return "unsolved"
        if not self.dependences:
            return "robust"
        return "; ".join(f"{d}: {k}" if k else d for d, k in self.dependences)

    def evidence(self) -> str:
        parts = [f"original {self.original.passed}/{self.original.samples}"]
        if self.name_only is not None:
            parts.append(f"name only {self.name_only.passed}/{self.name_only.samples}")
        failed = self.failed
        if failed:
            parts.append("fails " + ", ".join(f"{o.name} {o.passed}/{o.samples}" for o in failed))
        return f"{self.member}: " + "; ".join(parts)

    def rate_of(self, transform: str) -> float | None:
        """Pass rate of the single variant of `transform` (None when absent or several)."""
        found = [v for v in self.variants if v.transform == transform]
        return round(found[0].rate, 4) if len(found) == 1 else None

    def to_json(self) -> dict[str, Any]:
        return {
            "original": self.original.to_json(self.threshold),
            "name_only": self.name_only.to_json(self.threshold) if self.name_only else None,
            "variants": [v.to_json(self.threshold) for v in self.variants],
            "solves": self.solves,
            "name_solvable": self.name_solvable,
            "dependences": [f"{d}: {k}" if k else d for d, k in self.dependences],
            "label": self.label,
        }


@dataclass
class ProblemAudit:
    """One problem across the panel, with its label and the evidence for it."""

    dataset: str
    source_task_id: str
    members: dict[str, MemberAudit]

    @property
    def solving(self) -> list[MemberAudit]:
        return [m for m in self.members.values() if m.solves]

    @property
    def name_only_passes(self) -> tuple[int, int]:
        """(members passing the name-only probe, members probed)."""
        probed = [m for m in self.members.values() if m.name_solvable is not None]
        return sum(bool(m.name_solvable) for m in probed), len(probed)

    @property
    def dependence_counts(self) -> dict[tuple[str, str | None], int]:
        """(dependence, keyword) -> solving members showing it, most frequent first."""
        counts: dict[tuple[str, str | None], int] = {}
        for member in self.solving:
            for dependence in member.dependences:
                counts[dependence] = counts.get(dependence, 0) + 1
        order = sorted(counts, key=lambda d: (-counts[d], DEPENDENCES.index(d[0]), d[1] or ""))
        return {d: counts[d] for d in order}

    @property
    def flags(self) -> list[str]:
        passing, probed = self.name_only_passes
        found = set()
        if probed and probed == len(self.members) and passing == probed:
            found.add("name-leak")
        if passing:
            found.add("name-solvable")
        if not self.solving:
            found.add("unsolved")
        found.update(d for d, _ in self.dependence_counts)
        if self.solving and not self.dependence_counts:
            found.add("robust")
        return [label for label in LABELS if label in found]

    @property
    def label(self) -> str:
        flags = self.flags
        if "name-leak" in flags:
            return "name-leak"
        if "unsolved" in flags:
            return "unsolved"
        counts = self.dependence_counts
        if counts:
            # The most frequent (dependence, keyword); a category's count is its best keyword's.
            return next(iter(counts))[0]
        return "robust"

    @property
    def detail(self) -> str:
        solving, total = len(self.solving), len(self.members)
        passing, probed = self.name_only_passes
        parts = []
        if "name-leak" in self.flags:
            parts.append(f"name only passes {passing}/{probed}")
        if not solving:
            parts.append(f"0/{total} solve the original")
        for (dependence, keyword), count in self.dependence_counts.items():
            what = f"{dependence} {keyword!r}" if keyword else dependence
            parts.append(f"{what} {count}/{solving}")
        if solving and not self.dependence_counts:
            parts.append(f"{solving}/{solving} solving keep passing every variant")
        return "; ".join(parts)

    def count(self, dependence: str) -> int:
        """Solving members showing `dependence` (any keyword, counted once per member)."""
        return sum(any(d == dependence for d, _ in m.dependences) for m in self.solving)

    def keyword_flips(self) -> str:
        return "; ".join(
            f"{k} {n}/{len(self.solving)}"
            for (d, k), n in self.dependence_counts.items()
            if d == "keyword-dependent"
        )

    def to_json(self) -> dict[str, Any]:
        passing, probed = self.name_only_passes
        return {
            "dataset": self.dataset,
            "source_task_id": self.source_task_id,
            "label": self.label,
            "detail": self.detail,
            "flags": self.flags,
            "members": len(self.members),
            "solving": len(self.solving),
            "name_only_passes": passing,
            "name_only_probed": probed,
            "dependences": [
                {"dependence": d, "keyword": k, "members": n}
                for (d, k), n in self.dependence_counts.items()
            ],
            "evidence": {name: m.to_json() for name, m in self.members.items()},
        }


# --------------------------------------------------------------------------- reading runs


def variant_kind(problem: Problem) -> tuple[str, str | None] | None:
    """(transformation, dropped keyword or None) of a variant; None when the transformation
    left it unchanged (its lineage says why), which is no evidence of anything."""
    if not problem.lineage:
        return ("original", None)
    step = problem.lineage[-1]
    if "unchanged" in step.changes:
        return None
    keyword = None
    if step.transform in ("drop_one", "anon_drop_one"):
        removed = [r for r in step.changes.get("removed", ()) if "keyword" in r]
        keyword = str(removed[0]["keyword"]) if len(removed) == 1 else None
    return (step.transform, keyword)


def audit_runs(runs: Sequence[Run | str | Path], config: HintsConfig) -> list[ProblemAudit]:
    """The audit of every problem in the runs (each a `Run` or its directory), in (dataset,
    natural task id) order."""
    loaded = []
    for run in map(open_run, runs):
        found = run.outcomes(config.settings, models=config.models)
        loaded.append((run.path, run.problems_by_id(), found.passed, found.datasets))
    pairs = sorted({(m, s) for _, _, outcomes, _ in loaded for m, s, _ in outcomes})
    if not pairs:
        raise UserError(
            "the runs hold no results for the chosen --setting / --model; check their labels "
            "in results/<model>/<setting>.jsonl."
        )
    several = len({m for m, _ in pairs}) < len(pairs)
    owner: dict[tuple[str, str, str], Path] = {}  # (member, dataset, problem) -> run dir
    audits: dict[tuple[str, str], ProblemAudit] = {}
    for run_dir, problems, outcomes, datasets in loaded:
        by_member: dict[tuple[str, str], dict[str, list[bool]]] = {}
        for (model, setting, task_id), passed in outcomes.items():
            by_member.setdefault((model, setting), {})[task_id] = passed
        for (model, setting), by_task in sorted(by_member.items()):
            member = f"{model} @ {setting}" if several else model
            for source, outcome_list in _member_outcomes(problems, by_task).items():
                dataset = datasets.get(source) or problems[source].benchmark
                original, name_only, variants = outcome_list
                if original is None:
                    continue  # the original was not run for this member: nothing to compare
                key = (member, dataset, source)
                if key in owner:
                    raise UserError(
                        f"{owner[key]} and {run_dir} both hold {member}'s results on {source}; "
                        "pass one of them."
                    )
                owner[key] = run_dir
                audit = audits.setdefault((dataset, source), ProblemAudit(dataset, source, {}))
                audit.members[member] = MemberAudit(
                    member, original, name_only, variants, config.pass_threshold
                )
    return [audits[k] for k in sorted(audits, key=lambda k: (k[0], natural_key(k[1])))]


def _member_outcomes(
    problems: Mapping[str, Problem], by_task: Mapping[str, list[bool]]
) -> dict[str, tuple[Outcome | None, Outcome | None, list[Outcome]]]:
    """source -> (original, name-only probe, other variants) of one member."""
    grouped: dict[str, tuple[Outcome | None, Outcome | None, list[Outcome]]] = {}
    for task_id in sorted(by_task, key=natural_key):
        problem = problems[task_id]
        kind = variant_kind(problem)
        if kind is None:
            continue
        passed = by_task[task_id]
        outcome = Outcome(task_id, kind[0], kind[1], sum(passed), len(passed))
        original, name_only, variants = grouped.get(problem.source_task_id, (None, None, []))
        if kind[0] == "original":
            original = outcome
        elif kind[0] == "name_only":
            name_only = outcome
        else:
            variants.append(outcome)
        grouped[problem.source_task_id] = (original, name_only, variants)
    return grouped


# --------------------------------------------------------------------------- outputs

PER_MEMBER = ("original", "name_only", "drop_examples", "anonymize", "drop_all")


def members_of(audits: Iterable[ProblemAudit]) -> list[str]:
    return sorted({m for a in audits for m in a.members}, key=natural_key)


def label_counts(audits: Iterable[ProblemAudit]) -> dict[str, int]:
    """Problems per label (a problem counts under every flag it has)."""
    audits = list(audits)
    return {label: sum(label in a.flags for a in audits) for label in LABELS}


def _rate(outcome: Outcome | None) -> float | None:
    return round(outcome.rate, 4) if outcome is not None else None


def csv_text(audits: Sequence[ProblemAudit]) -> str:
    """hints.csv: one row per problem; rates are fractions of passing samples (empty: n/a)."""
    members = members_of(audits)
    header = [
        "dataset", "problem", "label", "detail", "flags", "models", "solving",
        "name_only_passes", "example_flips", "keyword_flips", "name_flips",
        "combination_flips", "evidence",
    ]  # fmt: skip
    for member in members:
        header += [f"{member} {column}" for column in PER_MEMBER] + [f"{member} label"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for audit in audits:
        passing, probed = audit.name_only_passes
        row: list[Any] = [
            audit.dataset,
            audit.source_task_id,
            audit.label,
            audit.detail,
            " ".join(audit.flags),
            len(audit.members),
            len(audit.solving),
            f"{passing}/{probed}" if probed else "",
            audit.count("example-dependent"),
            audit.keyword_flips(),
            audit.count("name-dependent"),
            audit.count("combination-dependent"),
            " | ".join(m.evidence() for m in audit.members.values()),
        ]
        for member in members:
            found = audit.members.get(member)
            if found is None:
                row += [""] * (len(PER_MEMBER) + 1)
                continue
            rates = [_rate(found.original), _rate(found.name_only)]
            rates += [found.rate_of(t) for t in PER_MEMBER[2:]]
            row += ["" if r is None else r for r in rates] + [found.label]
        writer.writerow(row)
    return buffer.getvalue()


def section_html(audits: Sequence[ProblemAudit], run_dirs: Sequence[Path], threshold: float) -> str:
    members = members_of(audits)
    out = [
        "<h2>Hint audit</h2>",
        f'<p class="note">{len(audits)} problems, {len(members)} model(s) ('
        + esc(", ".join(members))
        + f") from {len(run_dirs)} run(s). A model solves a variant when at least "
        f"{threshold:g} of its samples pass. Labels: name-leak (every model solves it from the "
        "name alone), unsolved, example-/keyword-/name-dependent (fails without the examples, "
        "one keyword, the function name, while passing the original; m/S counts the S models "
        "that solve it), combination-dependent (only combined removals make it fail), robust. "
        "Data: hints.csv and hints.json.</p>",
    ]
    header = ["problem", "label", "detail", "solving", "name only"]
    header += [f"{m}: original / no examples / anon" for m in members]
    header.append("evidence")
    rows = []
    for audit in audits:
        passing, probed = audit.name_only_passes
        row: list[str | tuple[str, str]] = [
            f"{audit.dataset} {audit.source_task_id}",
            (audit.label, "pass" if audit.label == "robust" else "fail"),
            audit.detail,
            f"{len(audit.solving)}/{len(audit.members)}",
            f"{passing}/{probed}" if probed else "n/a",
        ]
        for member in members:
            found = audit.members.get(member)
            if found is None:
                row.append("n/a")
                continue
            rates = [
                _rate(found.original),
                found.rate_of("drop_examples"),
                found.rate_of("anonymize"),
            ]
            row.append(" / ".join("–" if r is None else f"{r:.2f}" for r in rates))
        row.append(" | ".join(m.evidence() for m in audit.members.values()))
        rows.append(row)
    natural = list(range(len(audits)))  # audits come in problem order
    sorts = [
        ("problem", natural),
        ("label", sorted(natural, key=lambda i: LABELS.index(audits[i].label))),
        ("most models solving", sorted(natural, key=lambda i: -len(audits[i].solving))),
        ("most name-only passes", sorted(natural, key=lambda i: -audits[i].name_only_passes[0])),
        (
            "most dependences",
            sorted(natural, key=lambda i: -sum(audits[i].dependence_counts.values())),
        ),
    ]
    out.append(
        filtered_tables(
            "hints",
            header,
            rows,
            sorts=sorts,
            categories=LABELS,
            row_categories=[a.flags for a in audits],
        )
    )
    return "".join(out)


def write_outputs(
    audits: Sequence[ProblemAudit], out: Path, run_dirs: Sequence[Path], config: HintsConfig
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"csv": out / "hints.csv", "json": out / "hints.json"}
    write_text_atomic(paths["csv"], csv_text(audits))
    document = {
        "run_dirs": [str(d) for d in run_dirs],
        "pass_threshold": config.pass_threshold,
        "settings": list(config.settings),
        "members": members_of(audits),
        "labels": label_counts(audits),
        "problems": [a.to_json() for a in audits],
    }
    write_text_atomic(paths["json"], json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return paths


# --------------------------------------------------------------------------- command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dirs",
        nargs="+",
        metavar="RUN_DIR",
        help="boi run directories (one per model, or one with several); the first gets the "
        "report section",
    )
    add_dataclass_arguments(parser, HintsConfig, flags={"settings": "--setting"})


def run(args: argparse.Namespace) -> int:
    config = from_mapping(HintsConfig, overrides_from_args(args, HintsConfig), "hints")
    runs = [open_run(d) for d in args.run_dirs]
    audits = audit_runs(runs, config)
    run_dirs = [run.path for run in runs]
    first = run_dirs[0]
    out = Path(config.out) if config.out else analysis_dir(first, NAME)
    paths = write_outputs(audits, out, run_dirs, config)
    write_section(first, NAME, "Hint audit", section_html(audits, run_dirs, config.pass_threshold))
    report = rebuild_run_report(first)
    counts = label_counts(audits)
    print(
        f"boi analyze hints: {len(audits)} problems, {len(members_of(audits))} model(s): "
        + ", ".join(f"{label} {n}" for label, n in counts.items() if n)
    )
    print(f"wrote {paths['csv']}, {paths['json']}; report: {report.html}")
    return 0
