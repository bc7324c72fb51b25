"""Blocks of Influence for prompts that describe a function in a comment (C++, Java, JavaScript,
Go: HumanEval-X), and what the catalogue needs to perturb them: the anonymizer and the check
that a variant is still a program. `perturb.blocks.split_blocks`, `perturb.transforms` and
`perturb.keywords` hand a problem here when `Problem.language` is not Python; every syntax fact
comes from the problem's `benchmarks.languages` module, so a new language needs no code here.

The split follows the Python splitter's rules (perturb/blocks.py) on the comment attached to
the function under test (the last definition of its entry point): the comment just inside its
body when there is one (HumanEval-X's C++ prompts with a helper before the function do that),
else the last comment before its definition with no other definition between them: a `/* */`
before a C++ signature (after it, the includes), a Javadoc before a Java method, a `/* */`
before a JavaScript arrow function, `//` lines before a Go `func`.

- `description`: from the comment's line (its opening marker included, as Python's includes
  the docstring's quotes) to the examples;
- `examples`: from the first line whose text, comment markers aside, starts with `>>>` or an
  `Example`/`For example` marker, else with a call of the function; the comment's prose is all
  description when there is none, and `absent_blocks` says so (with whether the dataset's
  `example_test` holds examples the prompt does not show): examples are never guessed;
- `suffix`: the closing marker's line (`*/`); a line comment has none;
- `name`: the definition's line(s), up to the comment when it is inside the body, else to the
  end;
- `prefix`: the code before, and for a comment before the definition, the code between the
  comment and the definition too (C++'s includes): a second `prefix` block, so that what keeps
  the prefix (`name_only`) keeps every line of code.

When the comment comes before the definition the blocks are in the order prefix, description,
examples, suffix, prefix, name, which is the prompt's order; they join back to the prompt byte
for byte.
"""

from __future__ import annotations

import re
from typing import Any

from benchmarks.languages import Language, language_named
from benchmarks.languages.source import (
    Segment,
    code_only,
    comment_prose,
    definitions,
    ends_in_code,
    identifier_pattern,
    rename_in_code,
    segments,
)
from benchmarks.problem import Block, Problem

# A line's text, comment markers aside, that starts the examples (the Python splitter's markers).
_MARKER = re.compile(r"(>>>|(?:for\s+)?examples?\b)", re.IGNORECASE)
_LEADING_MARKERS = re.compile(r"[ \t]*(?://+|/\*+|\*(?!/))?[ \t]*")


class CommentSplitError(ValueError):
    """The prompt has no definition of its entry point (perturb.blocks re-raises it as a
    SplitError)."""


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def block_start(text: str, offset: int) -> int:
    """Where a block whose text begins at `offset` starts: at its line's start when only blanks
    stand before it there (the block takes its indentation along), else at `offset` itself
    (it shares its line with what comes before). The Python splitter (`perturb.blocks`, which
    imports this module) cuts its docstrings by the same rule."""
    line_start = _line_start(text, offset)
    return offset if text[line_start:offset].strip() else line_start


def _line_end(text: str, offset: int) -> int:
    """The offset just after the newline that ends `offset`'s line (or the end of `text`)."""
    newline = text.find("\n", offset)
    return len(text) if newline < 0 else newline + 1


def _comment_runs(found: list[Segment], prompt: str) -> list[tuple[int, int, str]]:
    """Comments as runs: consecutive line comments separated by nothing but a line break and
    indentation are one run (Go's `//` lines); a block comment is a run of its own.
    Each run is (start, end, kind of its last comment)."""
    runs: list[tuple[int, int, str]] = []
    for segment in found:
        if segment.kind not in ("line_comment", "block_comment"):
            continue
        if (
            runs
            and segment.kind == "line_comment"
            and runs[-1][2] == "line_comment"
            and re.fullmatch(r"[ \t]*\n[ \t]*", prompt[runs[-1][1] : segment.start])
        ):
            runs[-1] = (runs[-1][0], segment.end, segment.kind)
        else:
            runs.append((segment.start, segment.end, segment.kind))
    return runs


def _definition_end(prompt: str, start: int, language: Language) -> int:
    """Where the definition at `start` ends its header: after the line of its opening brace."""
    brace = code_only(prompt, language).find("{", start)
    return len(prompt) if brace < 0 else _line_end(prompt, brace)


def _examples_start(prompt: str, start: int, end: int, entry: str) -> int | None:
    """The offset of the first examples line in the comment span [start, end), or None."""
    call = re.compile(rf"{re.escape(entry)}\s*\(")
    for pattern in (_MARKER, call):
        offset = start
        while offset < end:
            line_end = min(_line_end(prompt, offset), end)
            line = prompt[offset:line_end]
            lead = _LEADING_MARKERS.match(line)
            text_at = lead.end() if lead else 0
            if pattern.match(line, text_at):
                before = line[:text_at].strip()
                # On the comment's opening line (`/* For example`) the opener stays with the
                # description; a `//` or Javadoc `*` goes with its examples line.
                if before.startswith("/*"):
                    return offset + text_at
                return offset
            offset = line_end
    return None


def split_comment_prompt(problem: Problem) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """The cuts (block kind, start offset, in order) and absent blocks of `problem`'s prompt,
    which `perturb.blocks` cuts into blocks; raises CommentSplitError."""
    language = language_named(problem.language)
    prompt, entry = problem.prompt, problem.entry_point
    if not prompt.strip():
        raise CommentSplitError("the prompt is empty")
    defined = definitions(prompt, language)
    target = [d for d in defined if d[0] == entry] if entry else defined
    if not target:
        raise CommentSplitError(
            f"the prompt defines no {language.display_name} function"
            + (f" called {entry}" if entry else "")
        )
    name, def_start = target[-1]
    header_end = _definition_end(prompt, def_start, language)
    runs = _comment_runs(segments(prompt, language), prompt)
    inside = [r for r in runs if r[0] >= header_end]
    before = [r for r in runs if r[1] <= def_start]
    absent: dict[str, str] = {}
    if inside:
        start, end = inside[0][0], inside[-1][1]
        # Consecutive runs inside the body (a `//` line, then `/* */`) are one description.
        for run in inside[1:]:
            if prompt[end : run[0]].strip():
                break
            end = run[1]
        comment = (start, end)
        where = "inside"
    elif before and not any(
        before[-1][1] <= offset < def_start for _, offset in defined if offset != def_start
    ):
        comment = before[-1][:2]
        where = "before"
    else:
        reason = f"no comment describes {name}"
        absent = {"description": reason, "examples": reason}
        return [("prefix", 0), ("name", def_start)], absent
    start, end = comment
    description_start = block_start(prompt, start)
    closing = language.block_comment[1] if language.block_comment else None
    if closing and prompt.endswith(closing, 0, end) and prompt.startswith("/*", start):
        marker = end - len(closing)
        suffix_start = max(block_start(prompt, marker), description_start + 1)
        suffix_end = (
            _line_end(prompt, end) if not prompt[end : _line_end(prompt, end)].strip() else end
        )
    else:  # line comments: the run ends with its last line's break
        suffix_start = suffix_end = _line_end(prompt, end - 1) if end > start else end
    examples_start = _examples_start(prompt, description_start, suffix_start, name)
    if examples_start is None:
        given = str(problem.metadata.get("example_test") or "").strip()
        absent["examples"] = (
            f"no '>>>' line, 'Example' marker or call of {name}() in the comment"
            + (
                " (the dataset's example_test has examples the prompt does not show)"
                if given
                else ""
            )
        )
        examples_start = suffix_start
    if not re.search(
        r"[A-Za-z]", comment_prose(prompt[description_start:examples_start], language)
    ):
        absent["description"] = "the comment has no prose before its examples"
    described = [
        ("description", description_start),
        ("examples", examples_start),
        ("suffix", suffix_start),
    ]
    if where == "inside":
        cuts = [("prefix", 0), ("name", def_start), *described]
    else:
        cuts = [("prefix", 0), *described, ("prefix", suffix_end), ("name", def_start)]
    return cuts, absent


# --- perturbing ----------------------------------------------------------------------------


def invalid_program(problem: Problem) -> str | None:
    """Why the variant would not be a program its tests can judge, or None. No compiler is
    called (perturb never runs one): the checks are the ones a transformation can break. The
    prompt must end in code (not inside a comment a drop left open), still define the entry
    point as its last function, keep its name block, the test must still call it and the
    dataset's `declaration` (where there is one) still declare it; with
    the canonical solution after it, the braces must balance (a dropped `}` or `*/` shows)."""
    language = language_named(problem.language)
    entry = problem.entry_point or ""
    if not ends_in_code(problem.prompt, language):
        return "the prompt ends inside a comment or string"
    defined = definitions(problem.prompt, language)
    if not defined or defined[-1][0] != entry:
        return f"the prompt no longer defines {entry} last"
    name = problem.block("name")
    if problem.blocks is not None and (name is None or entry not in name.text):
        return f"the name block no longer declares {entry}"
    if not identifier_pattern(entry).search(code_only(problem.test, language)):
        return f"the test no longer calls {entry}"
    declaration = problem.metadata.get("declaration")
    if isinstance(declaration, str):
        declared = definitions(declaration, language)
        if not declared or declared[-1][0] != entry:
            return f"the dataset's declaration no longer declares {entry}"
    if problem.canonical_solution is not None:
        code = code_only(problem.prompt + problem.canonical_solution, language)
        if code.count("{") != code.count("}"):
            return "the prompt and its solution no longer balance their braces"
    return None


def anonymous_name(name: str, language: Language) -> str:
    """The anonymous name `name` (`func`, `my_func`) written in the language's naming
    convention: `func` stays `func` in C++, Java and JavaScript and becomes `Func` in Go,
    where every HumanEval-X function is exported (and `func` is a keyword)."""
    found: list[str] = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)
    words = [w.lower() for w in found] or [name]
    if language.naming == "snake_case":
        return "_".join(words)
    if language.naming == "camelCase":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    return "".join(w.capitalize() for w in words)


def rename_blocks(problem: Problem, old: str, new: str) -> tuple[tuple[Block, ...], dict[str, int]]:
    """The blocks with the function `old` renamed `new`: in code (prefix, name, suffix) as a
    whole identifier outside comments and strings; in the examples wherever the name is a
    whole word; in the description only where it reads as code (a call, or a name that is not
    an English word), as the Python anonymizer does."""
    language = language_named(problem.language)
    # Which positions are code is a property of the whole prompt (a block alone may open a
    # comment it does not close), so the scan runs on the prompt and each block takes its part.
    code = code_only(problem.prompt, language)
    word = identifier_pattern(old)
    call = re.compile(rf"(?<![\w$]){re.escape(old)}(?=\s*\()")
    code_like = "_" in old or any(c.isdigit() for c in old) or old != old.lower()
    blocks, offset = [], 0
    counts: dict[str, int] = {}
    for block in problem.blocks or ():
        lo, hi = offset, offset + len(block.text)
        offset = hi
        if block.kind in ("examples", "description"):
            pattern = word if block.kind == "examples" or code_like else call
            text, count = pattern.subn(new, block.text)
        else:
            spans = [m.span() for m in word.finditer(code, lo, hi)]
            text, last = "", lo
            for start, end in spans:
                text += problem.prompt[last:start] + new
                last = end
            text += problem.prompt[last:hi]
            count = len(spans)
        if count:
            counts[block.kind] = counts.get(block.kind, 0) + count
        blocks.append(Block(block.kind, text))
    return tuple(blocks), counts


def anonymize_in_language(problem: Problem, name: str) -> tuple[Problem, dict[str, Any]] | str:
    """`problem` with its function renamed to `name` in the language's naming convention
    (`anonymous_name`), and the lineage changes; or why it cannot be.

    The function is renamed where the prompt, the test, the canonical solution and the
    dataset's `declaration` and `example_test` use it, so the test still reaches it: the
    program is judged as the dataset wrote it, only with another name. An alias the test binds
    (`const hasCloseElements = func;`) would not do: Java has no function aliases (a
    delegating method would have to be written into class Solution after the model's code),
    C++ and Go would need one placed after the completion, and a model that defines a helper
    under the original name would collide with it."""
    language = language_named(problem.language)
    old = problem.entry_point or ""
    new = anonymous_name(name, language)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", new) or new in language.reserved_words:
        return f"the anonymous name {new!r} is not a {language.display_name} identifier"
    if old == new:
        return f"the function is already called {new}"
    metadata = {k: v for k, v in problem.metadata.items()}
    texts = [problem.prompt, problem.test, problem.canonical_solution or ""]
    texts += [str(metadata.get(k) or "") for k in ("declaration", "example_test")]
    if any(identifier_pattern(new).search(text) for text in texts):
        return f"the name {new!r} is already used in the problem; choose another anonymous name"
    blocks, counts = rename_blocks(problem, old, new)
    for key in ("declaration", "example_test"):
        if isinstance(metadata.get(key), str):
            metadata[key] = rename_in_code(metadata[key], old, new, language)[0]
    solution = problem.canonical_solution
    renamed = problem.replace(
        prompt="".join(b.text for b in blocks),
        blocks=blocks,
        entry_point=new,
        test=rename_in_code(problem.test, old, new, language)[0],
        canonical_solution=None
        if solution is None
        else rename_in_code(solution, old, new, language)[0],
        metadata=metadata,
    )
    return renamed, {"old_name": old, "new_name": new, "renamed_in": counts}
