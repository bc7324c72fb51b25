"""DeepMind CodeContests in its upstream field format (JSONL or Parquet).

Fields used: `name`, `description`, `public_tests`/`private_tests`/`generated_tests`
(`{"input": [...], "output": [...]}`), `solutions` (`{"language": [...], "solution": [...]}`,
language 3 = PYTHON3), `time_limit` and the contest metadata. The prompt is the statement
inside a module docstring; a completion is a whole stdin/stdout program written after it.

When the data carries `solutions` (the upstream dataset does), problems without a Python 3
solution are dropped and reported, as the paper keeps only those (8139 of the train split). A
problem's output is judged the way its statement says (`OutputJudge`, read from the
statement): tokens, floats within the stated error, letters in any case when allowed. A
problem that accepts several answers needs a special judge we do not have; it is kept,
marked, and reported, so its failures are never mistaken for wrong programs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.problem import OutputJudge, Problem, StdioTest

CC_FIELDS = ("name", "description")
PYTHON3 = 3
TEST_SPLITS = ("public_tests", "private_tests", "generated_tests")
METADATA_FIELDS = (
    "source",
    "difficulty",
    "cf_contest_id",
    "cf_index",
    "cf_points",
    "cf_rating",
    "cf_tags",
    "time_limit",
    "memory_limit_bytes",
)


# "If there are multiple answers, print any of them", "Print any beautiful table", "find an
# array b, such that" (an object is asked for, not the object).
_SEVERAL_ANSWERS = re.compile(
    r"\b(?:print|output) any\b(?! case)[^.\n]*"
    r"|\bfind (?:an?|any) (?:\w+ ){0,3}\w+,? such that\b[^.\n]*"
    r"|\bif there (?:are|exist) (?:multiple|several|many)\b(?: \w+){0,3} (?:answers|solutions)\b[^.\n]*",
    re.IGNORECASE,
)
# "You can print each letter in any case", "... will be recognized as positive".
_ANY_CASE = re.compile(r"\bin any (?:case|register)\b|\bcase[- ]insensitive\b", re.IGNORECASE)
# "absolute or relative error does not exceed 10^{-6}" (also 10^-9, 10 - 6 after extraction).
_TOLERANCE = re.compile(
    r"\b(?:absolute|relative)\b[^.]{0,80}?\berror\b[^.]{0,80}?10\s*\^?\s*\{?\s*[-\u2212]\s*(\d+)",
    re.IGNORECASE,
)


def output_judge(description: str) -> OutputJudge:
    """How the statement says outputs are judged."""
    tolerance = _TOLERANCE.search(description)
    several = _SEVERAL_ANSWERS.search(description)
    return OutputJudge(
        float_tolerance=10.0 ** -int(tolerance.group(1))
        if tolerance
        else OutputJudge.float_tolerance,
        case_insensitive=bool(_ANY_CASE.search(description)),
        several_answers=several.group(0).strip() if several else None,
    )


def _time_limit_seconds(record: dict[str, Any]) -> float | None:
    limit = record.get("time_limit")
    if isinstance(limit, dict):
        seconds = (limit.get("seconds") or 0) + (limit.get("nanos") or 0) / 1e9
        return float(seconds) if seconds > 0 else None
    return None


def statement_prompt(description: str) -> str:
    """The statement as a module docstring (raw when it holds backslashes, so it still parses)."""
    quote = "'''" if '"""' in description else '"""'
    raw = "r" if "\\" in description else ""
    return f"{raw}{quote}\n{description.strip()}\n{quote}\n"


def _tests(path: Path, lineno: int, record: dict[str, Any]) -> tuple[StdioTest, ...]:
    tests = []
    for split in TEST_SPLITS:
        block = record.get(split) or {}
        inputs, outputs = block.get("input") or [], block.get("output") or []
        if len(inputs) != len(outputs):
            raise UserError(
                f"{path} line {lineno}: field {split!r} has {len(inputs)} inputs but {len(outputs)} outputs."
            )
        tests += [
            StdioTest(i, o, split.removesuffix("_tests"))
            for i, o in zip(inputs, outputs, strict=True)
        ]
    return tuple(tests)


def _python3_solution(record: dict[str, Any]) -> str | None:
    solutions = record.get("solutions") or {}
    for language, code in zip(
        solutions.get("language") or [], solutions.get("solution") or [], strict=False
    ):
        if language == PYTHON3:
            python: str = code
            return python
    return None


def _json_safe(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy values from Parquet
        return value.tolist()
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if path.suffix == ".parquet":
        if not path.exists():
            raise UserError(f"{path} does not exist; check the path.")
        import pyarrow.parquet as pq  # heavy, and only Parquet input needs it

        try:
            table = pq.read_table(path)
        except Exception as err:
            raise UserError(f"{path} is not a readable Parquet file ({err}).") from None
        return [(i + 1, _json_safe(row)) for i, row in enumerate(table.to_pylist())]
    return list(iter_jsonl(path))


def _download() -> list[tuple[int, dict[str, Any]]]:
    try:
        from datasets import load_dataset  # heavy, and only a download needs it

        rows = load_dataset("deepmind/code_contests", split="train")
    except Exception as err:
        raise UserError(
            f"CodeContests could not be downloaded ({type(err).__name__}); pass --data PATH to a "
            "CodeContests JSONL or Parquet file (`boi data fetch code_contests` puts a 30-problem "
            "sample in data/code_contests/)."
        ) from None
    return [(i + 1, _json_safe(dict(r))) for i, r in enumerate(rows)]


def load_code_contests(data: str | os.PathLike[str] | None = None) -> LoadResult:
    """CodeContests problems; those without any test are loaded and reported."""
    path = Path(data) if data is not None else Path("deepmind/code_contests")
    rows = _rows(path) if data is not None else _download()
    if not rows:
        raise UserError(f"{path} is empty; expected one CodeContests problem per line.")
    problems, issues = [], []
    # Upstream data names every problem's solutions; a file without that field (a sample that
    # kept the statements only) has nothing to filter on.
    filter_python3 = any("solutions" in record for _, record in rows)
    for lineno, record in rows:
        require_fields(path, lineno, record, CC_FIELDS)
        if not isinstance(record["description"], str) or not record["description"].strip():
            raise UserError(
                f"{path} line {lineno}: field 'description' is empty; every problem needs a statement."
            )
        task_id = f"CodeContests/{record['name']}"
        solution = _python3_solution(record)
        if filter_python3 and solution is None:
            issues.append(LoadIssue(task_id, "no Python 3 solution", dropped=True))
            continue
        tests = _tests(path, lineno, record)
        if not tests:
            issues.append(LoadIssue(task_id, "no stdin/stdout tests"))
        judge = output_judge(record["description"])
        if judge.several_answers:
            issues.append(
                LoadIssue(
                    task_id,
                    f"accepts several answers ({judge.several_answers!r}); judged against the "
                    "expected output only, so a different correct answer fails",
                )
            )
        problems.append(
            Problem(
                task_id=task_id,
                benchmark="code_contests",
                prompt=statement_prompt(record["description"]),
                entry_point=None,
                canonical_solution=solution,
                stdio_tests=tests,
                metadata={
                    "name": record["name"],
                    **{k: _json_safe(record[k]) for k in METADATA_FIELDS if k in record},
                    "time_limit_seconds": _time_limit_seconds(record),
                    "output_judge": judge.to_json(),
                },
            )
        )
    if not problems:
        raise UserError(
            f"{path}: none of its {len(rows)} problems has a Python 3 solution (language 3); "
            "check that this is CodeContests data."
        )
    return LoadResult(problems, issues)
