"""HumanEval-X (Zheng et al., KDD 2023): HumanEval's 164 problems in C++, Java, JavaScript and Go.

One dataset per language (`humaneval_x_cpp`, `humaneval_x_java`, `humaneval_x_js`,
`humaneval_x_go`; `humaneval-x-cpp` is the same name), read from the file `boi data fetch
humaneval-x` puts in data/humaneval-x/, or from `data`: that file, or a folder holding it.
Records keep the dataset's task id (`CPP/0`), prompt, test and canonical solution unchanged.
The entry point is the last function the record's `declaration` defines, as the language spells
it (`has_close_elements`, `hasCloseElements`, `HasCloseElements`): the dataset has no such
field, and its own spelling differs from HumanEval's in 15 tasks (`filp_case`, `Digitsum`).
`metadata` holds the language (`Problem.language`), the `declaration`, the `example_test` (the
prompt's examples as a runnable test), Go's `test_setup` (the package clause and imports its
tests need) and the HumanEval task the problem translates (`humaneval_task_id`), which lines up
one problem across languages.

HumanEval-X's Python file is not loaded: its problems are HumanEval's own (`humaneval`), whose
task ids the Python results already use, and its tests call `check` themselves where boi's
Python judge adds the call.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields, require_new_id, require_strings
from benchmarks.languages import language_named
from benchmarks.languages.source import code_only, definitions, identifier_pattern
from benchmarks.loaders.result import LoadResult
from benchmarks.problem import Problem
from benchmarks.upstream import DEFAULT_DIR, fetched_path

UPSTREAM_NAME = "humaneval-x"
"""The dataset's name in `benchmarks.upstream` (`boi data fetch humaneval-x`)."""
FILES = {
    "cpp": "humaneval_cpp.jsonl.gz",
    "java": "humaneval_java.jsonl.gz",
    "javascript": "humaneval_js.jsonl.gz",
    "go": "humaneval_go.jsonl.gz",
}
"""The upstream file of each language (`benchmarks.languages` name -> file name)."""
FIELDS = ("task_id", "prompt", "canonical_solution", "test", "declaration")
# Kept beside the language: what the judge and the analyses need. The `text` (Java) and
# `docstring` (Go) fields are copies of the prompt's description, left out: a perturbation
# changes the prompt, and a stale copy would carry the removed hint along.
KEPT = ("declaration", "example_test", "test_setup")


def _source(language: str, data: str | os.PathLike[str] | None) -> Path:
    name = FILES[language]
    if data is None:
        found = fetched_path(UPSTREAM_NAME, file=name)
        if found is None:
            raise UserError(
                f"HumanEval-X's {name} is not in {DEFAULT_DIR}/{UPSTREAM_NAME}/; run `boi data "
                f"fetch {UPSTREAM_NAME}`, or pass the file (or its folder) with --data."
            )
        return found
    path = Path(data)
    if path.is_dir():
        path = path / name
    if not path.is_file():
        raise UserError(f"{path} does not exist; give HumanEval-X's {name} or the folder with it.")
    return path


def entry_point(declaration: str, language: str) -> str | None:
    """The function under test: the last one `declaration` defines (None when it defines none)."""
    found = definitions(declaration, language_named(language))
    return found[-1][0] if found else None


def load_humaneval_x(language: str, data: str | os.PathLike[str] | None = None) -> LoadResult:
    """HumanEval-X's 164 problems in `language` (a `benchmarks.languages` name)."""
    if language not in FILES:
        raise UserError(f"HumanEval-X has no {language!r} file; choose from {', '.join(FILES)}.")
    path = _source(language, data)
    lang = language_named(language)
    benchmark = f"humaneval_x_{'js' if language == 'javascript' else language}"
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for lineno, record in iter_jsonl(path):
        require_fields(path, lineno, record, FIELDS)
        require_strings(path, lineno, record, (*FIELDS, *(k for k in KEPT if k in record)))
        task_id = record["task_id"]
        require_new_id(path, lineno, task_id, seen)
        entry = entry_point(record["declaration"], language)
        if entry is None:
            raise UserError(
                f"{path} line {lineno}: field 'declaration' defines no {lang.display_name} "
                "function; it must end with the signature of the function under test."
            )
        if not any(n == entry for n, _ in definitions(record["prompt"], lang)):
            raise UserError(
                f"{path} line {lineno}: field 'prompt' does not define {entry}, the function its "
                "'declaration' ends with; the two must name the same function."
            )
        if not identifier_pattern(entry).search(code_only(record["test"], lang)):
            raise UserError(
                f"{path} line {lineno}: field 'test' never calls {entry}; it must test the "
                "function its 'declaration' ends with."
            )
        number = task_id.rpartition("/")[2]
        metadata = {
            "language": language,
            **{k: record[k] for k in KEPT if k in record},
            "humaneval_task_id": f"HumanEval/{number}" if number.isdigit() else None,
        }
        problems.append(
            Problem(
                task_id=task_id,
                benchmark=benchmark,
                prompt=record["prompt"],
                entry_point=entry,
                test=record["test"],
                canonical_solution=record["canonical_solution"],
                metadata=metadata,
            )
        )
    if not problems:
        raise UserError(f"{path} is empty; expected one HumanEval-X problem per line.")
    return LoadResult(problems)


# The loaders the one table of datasets names, one per language (`humaneval_x_cpp`, ...).
load_cpp = partial(load_humaneval_x, "cpp")
load_java = partial(load_humaneval_x, "java")
load_js = partial(load_humaneval_x, "javascript")
load_go = partial(load_humaneval_x, "go")
