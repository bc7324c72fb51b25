"""DeepMind CodeContests in its upstream field format (JSONL or Parquet).

Fields used: `name`, `description`, `public_tests`/`private_tests`/`generated_tests`
(`{"input": [...], "output": [...]}`), `solutions` (`{"language": [...], "solution": [...]}`,
language 3 = PYTHON3) and the contest metadata. The prompt is the statement inside a module
docstring; a completion is a whole stdin/stdout program written after it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.problem import Problem, StdioTest

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
            return code
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
            f"CodeContests could not be downloaded ({type(err).__name__}); pass --data PATH to a CodeContests JSONL or Parquet file."
        ) from None
    return [(i + 1, _json_safe(dict(r))) for i, r in enumerate(rows)]


def load_code_contests(data: str | os.PathLike[str] | None = None) -> LoadResult:
    """CodeContests problems; those without any test are loaded and reported."""
    path = Path(data) if data is not None else Path("deepmind/code_contests")
    rows = _rows(path) if data is not None else _download()
    if not rows:
        raise UserError(f"{path} is empty; expected one CodeContests problem per line.")
    problems, issues = [], []
    for lineno, record in rows:
        require_fields(path, lineno, record, CC_FIELDS)
        if not isinstance(record["description"], str) or not record["description"].strip():
            raise UserError(
                f"{path} line {lineno}: field 'description' is empty; every problem needs a statement."
            )
        task_id = f"CodeContests/{record['name']}"
        tests = _tests(path, lineno, record)
        if not tests:
            issues.append(LoadIssue(task_id, "no stdin/stdout tests"))
        solution = _python3_solution(record)
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
                },
            )
        )
    return LoadResult(problems, issues)
