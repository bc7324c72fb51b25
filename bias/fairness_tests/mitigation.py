"""Bias-mitigation prompts: the strategies of Huang et al. (Table 3) and Solar, and the feedback
prompt of the iterative rounds, as text put before the task prompt.

Strategy and feedback text goes in Python comments above the task's code prompt, so one prompt
works for completion models and chat models alike, and the post-processing that finds the
function to complete is unchanged (commented code defines nothing). The strategies are data
(`bias/data/mitigation.yaml`); a user's file replaces it.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError, suggest
from bias import DATA_DIR, load_data_file
from bias.fairness_tests.tasks import FairnessTask


@dataclass(frozen=True)
class Strategy:
    name: str = field(metadata={"help": "how configs name it"})
    text: str = field(default="", metadata={"help": "instruction put before the task prompt"})


@dataclass(frozen=True)
class MitigationFile:
    strategies: list[Strategy] = field(metadata={"help": "the prompt strategies"})
    feedback: str = field(
        metadata={"help": "the feedback rounds' request; {report} is the test report"}
    )
    protected: str = field(default="", metadata={"help": "fills {protected} in strategy texts"})

    def __post_init__(self) -> None:
        if "{report}" not in self.feedback:
            raise UserError("the mitigation file's feedback text has no {report}; add it.")

    def strategy(self, name: str) -> Strategy:
        by_name = {s.name: s for s in self.strategies}
        if name not in by_name:
            raise UserError(
                f"mitigation strategy {name!r} is unknown{suggest(name, by_name)}; known: "
                f"{', '.join(by_name)}."
            )
        return by_name[name]


def load_mitigations(path: str | None = None) -> MitigationFile:
    where = Path(path) if path else DATA_DIR / "mitigation.yaml"
    return load_data_file(MitigationFile, where, "mitigation")


def comment(text: str, width: int = 96) -> str:
    """Text as Python comment lines (blank input gives nothing)."""
    lines = []
    for paragraph in text.strip().splitlines():
        wrapped = textwrap.wrap(paragraph, width) or [""]
        lines += [f"# {line}".rstrip() for line in wrapped]
    return "\n".join(lines) + "\n" if lines else ""


def task_prompt(task: FairnessTask) -> str:
    """What the model completes: a method's code prompt, or a text-to-code request as a
    comment (the model writes the whole function)."""
    if task.kind == "method":
        return task.prompt
    return comment(task.prompt) + comment("Write it as one Python function.")


def strategy_prompt(task: FairnessTask, strategy: Strategy, mitigations: MitigationFile) -> str:
    text = strategy.text.replace("{protected}", mitigations.protected)
    return (comment(text) + "\n" if text.strip() else "") + task_prompt(task)


def feedback_prompt(
    task: FairnessTask,
    strategy: Strategy,
    mitigations: MitigationFile,
    previous_code: str,
    report: str,
) -> str:
    """The round's prompt: the strategy, the request to correct with the report, the previous
    code (as comments), then the task prompt to complete again."""
    text = strategy.text.replace("{protected}", mitigations.protected)
    request = mitigations.feedback.replace("{report}", report)
    code = textwrap.dedent(previous_code).rstrip()
    previous = "\n".join(f"#     {line}".rstrip() for line in code.splitlines())
    return (
        (comment(text) if text.strip() else "")
        + comment(request)
        + "# Previous code:\n"
        + previous
        + "\n\n"
        + task_prompt(task)
    )


def describe_failure(verdict_report: dict[str, Any], attributes: list[str]) -> str:
    """The test report in words: which attribute changed the outcome, with the failing case."""
    parts = []
    for name in attributes:
        entry = verdict_report.get("attributes", {}).get(name, {})
        example = entry.get("example")
        if example:
            outcomes = ", ".join(
                f"{name}={value} gave {outcome}" for value, outcome in example["outcomes"]
            )
            base = ", ".join(f"{k}={v!r}" for k, v in example["base"].items())
            parts.append(f"With {base}: {outcomes}.")
        else:
            parts.append(
                f"Changing only {name} changed the outcome in {entry.get('differ', 0)} of {entry.get('groups', 0)} tests."
            )
    return " ".join(parts)
