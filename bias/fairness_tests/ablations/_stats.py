"""What the ablations' tables count, read from the sub-runs' verdicts and reports, and how a
table cell is written: shared by every paper's builders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

# The sub-runs' reports name the overall scope OVERALL, and the builders write a rate as the
# report does (pct); any verdict status but the EXECUTABLE ones (fair, biased) is not comparable.
from bias.fairness_tests.cases import EXECUTABLE
from bias.fairness_tests.report import OVERALL
from bias.fairness_tests.report import pct as pct

if TYPE_CHECKING:
    from bias.fairness_tests.ablations._driver import RunData

# Column order of the papers' tables; other attributes follow in the report's order.
SOLAR_ORDER = (
    "age",
    "gender",
    "religion",
    "race",
    "employment_status",
    "marital_status",
    "education",
)
HUANG_ORDER = ("age", "region", "gender", "education", "occupation", "race")
DISPLAY = {
    "none": "Default",
    "cot": "COT",
    "p_cot": "P-COT",
    **{f"huang_prompt{i}": f"Prompt{i}" for i in range(1, 6)},
}
"""The papers' names of the prompt strategies (rows and columns of their tables)."""


def biased_in(row: Mapping[str, Any], attribute: str) -> bool:
    """Whether a verdict is biased (towards `attribute`, or at all for `overall`)."""
    if attribute == OVERALL:
        return row.get("status") == "biased"
    return attribute in (row.get("biased_attributes") or [])


def was_tested(
    row: Mapping[str, Any], attribute: str, tasks: Mapping[str, Mapping[str, Any]]
) -> bool:
    """Whether the completion's tests varied `attribute` (its recorded cases, else the task's
    sensitive attributes)."""
    if attribute == OVERALL:
        return True
    cases = row.get("cases")
    if isinstance(cases, Mapping) and cases:
        return attribute in cases
    return attribute in (tasks.get(row.get("task_id", ""), {}).get("sensitive") or [])


def executable_rows(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The verdicts the tests could run to an answer (fair or biased)."""
    return [r for r in rows if r.get("status") in EXECUTABLE]


def reported_attributes(runs: Sequence[RunData], order: Sequence[str]) -> list[str]:
    """The attributes the sub-runs report CBS for, in the paper's column order."""
    seen: list[str] = []
    for run in runs:
        for group in run.groups():
            seen += [a for a in group.get("cbs", {}) if a != OVERALL and a not in seen]
    return [a for a in order if a in seen] + [a for a in seen if a not in order]


def cbs_of(group: Mapping[str, Any], attribute: str) -> tuple[float | None, int]:
    """A report group's CBS for one attribute, and its denominator."""
    cell = (group.get("cbs") or {}).get(attribute) or {}
    return cell.get("value"), int(cell.get("n") or 0)


def cbs_definition(runs: Sequence[RunData]) -> str:
    """What the reported CBS divides by, as the sub-runs' reports define it."""
    definitions = {str(run.summary.get("definition", "solar")) for run in runs}
    if definitions == {"huang"}:
        return "CBS: biased completions of all completions generated (Huang's N, H:122)."
    if definitions == {"solar"}:
        return "CBS: biased completions of the executable ones (Solar's N_e, S:137)."
    return "CBS as each sub-run's report defines it (fairness.json `definition`)."


# --------------------------------------------------------------------------- table cells


def column_title(attribute: str) -> str:
    return "Overall" if attribute == OVERALL else attribute.replace("_", " ").title()


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
