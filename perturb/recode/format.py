"""ReCode's format perturbations (its `format/*.py`) of the partial code, as registered transformations.

Each works on ReCode's partial-code prompt (`perturb.recode.partial`), or on the whole prompt
where the solution has one line (ReCode keeps those whole and formats their prompt all the same),
and is measured against `partial_code`:

- `format_tab_indent` (ReCode `tab_indent`): the prompt's indentation unit (the indent of the
  first line after the signature) becomes a tab, line by line.
- `format_split_lines` (`split_lines`): the longest code line of the prompt is split in the
  middle of its space-separated words with a backslash continuation (`a = b \\` / ` c`).
- `format_doc_to_comments` (`doc2comments`): the docstring becomes `#` comments.
- `format_new_lines` (`new_lines`, stochastic): after each newline that follows the docstring's
  closing quotes, a blank line with probability `ratio` (0.5).
- `format_new_line_after_code` (`new_line_aftercode`): a blank line after the partial code.
- `format_new_line_after_doc` (`new_line_afterdoc`): a blank line after the docstring.

The deterministic ones reproduce ReCode's released HumanEval prompts byte for byte
(`dataset-release/perturbed_finalized/humaneval/full/format/humaneval_<name>_s0.jsonl`;
`scripts/recode_agreement.py` counts the agreement), including ReCode's quirks, kept because its
prompts are the reference: a line with a one-line docstring turns every later line into
"comment" for `split_lines`, and only double-quoted strings are protected from a split. One
slip is not kept: ReCode's `split_lines` drops the character after each double-quoted string
of the line it splits (`return "".join(...)` becomes `return ""join(...)`), a broken program
in 7 HumanEval prompts of its release (`split_lines_edits(..., drop_after_string=True)`
reproduces them, for the agreement count); our split keeps the character. A variant must stay
the same program: where the split changes the tokens (a split inside a single-quoted string),
the transformation does not apply and says why.

Each perturbation is computed as edits (offset, end, new text) of the prompt, so the prompt's
blocks (description, examples, ...) are carried over edit by edit. The canonical solution is the
partial problem's, which completes every one of these prompts, except for `tab_indent`: ReCode
keeps the space-indented solution after a tab-indented prompt, a program Python refuses
(`TabError`/`IndentationError`: the solution's 4 spaces match no tab level), so ReCode's own
canonical solutions fail its tab-indent prompts; ours indents the solution with tabs too.
"""

from __future__ import annotations

import ast
import random
import warnings
from collections.abc import Callable, Sequence
from typing import NamedTuple

from benchmarks.problem import Block, Problem
from perturb.blocks import block_offsets
from perturb.keywords import KeywordAnalysis
from perturb.recode.partial import docstring_quote, partial_lineage, partial_problem
from perturb.transforms import NotApplicable, Variant, Variants, transform

FAMILY = "format"
BASELINE = "partial_code"
SPLIT_MARK = " \\\n "
"""What ReCode inserts between the two halves of a split line's words."""
STRING_PLACEHOLDER = "@!string!@"


class Edit(NamedTuple):
    """Replace prompt[start:end] by `text` (an insertion where start == end)."""

    start: int
    end: int
    text: str


# --- edits and blocks ---------------------------------------------------------------------


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """`text` with the (sorted, non-overlapping) edits applied."""
    out, cursor = [], 0
    for edit in edits:
        out.append(text[cursor : edit.start] + edit.text)
        cursor = edit.end
    return "".join(out) + text[cursor:]


def _moved(offset: int, edits: Sequence[Edit]) -> int:
    """Where `offset` (a block's start) lands: edits starting at it belong to its block; an edit
    across it (none of ours makes one) moves it past its new text."""
    moved = offset
    for edit in edits:
        if edit.start >= offset:
            break
        if edit.end <= offset:
            moved += len(edit.text) - (edit.end - edit.start)
        else:
            moved += len(edit.text) - (offset - edit.start)
    return moved


def edit_blocks(
    blocks: tuple[Block, ...] | None, new_prompt: str, edits: Sequence[Edit]
) -> tuple[Block, ...] | None:
    """The blocks of the edited prompt: each block's start moved through the edits."""
    if blocks is None:
        return None
    starts = [_moved(lo, edits) for _, lo, _ in block_offsets(blocks)]
    ends = starts[1:] + [len(new_prompt)]
    moved = [
        Block(block.kind, new_prompt[start:end])
        for block, start, end in zip(blocks, starts, ends, strict=True)
    ]
    return tuple(block for block in moved if block.text)


# --- ReCode's helpers, reproduced -----------------------------------------------------------


def _blank(line: str) -> bool:
    return not line.replace(" ", "").replace("\t", "").replace("\n", "")


def _leading_space(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def indent_unit(code: str, entry_point: str) -> str:
    """ReCode's `detect_indent_type`: the indentation of the first non-blank line after the
    line that first names the entry point."""
    header_end = code.find("\n", code.find(entry_point))
    unit = ""
    for ch in code[header_end + 1 :]:
        if ch == "\n":
            continue
        if ch not in " \t":
            break
        unit += ch
    return unit


def _lines_with_offsets(code: str) -> list[tuple[int, str]]:
    """(offset, line) for `code.split("\\n")`, ReCode's way of walking lines."""
    out, offset = [], 0
    for line in code.split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


def docstring_span(code: str, entry_point: str) -> tuple[int, int] | None:
    """ReCode's docstring (quote, end after its closing quote) in the format scripts: the first
    quote after the entry point's first mention and the next quote after it."""
    quote = docstring_quote(code)
    named = code.find(entry_point)
    doc_start = code.find(quote, named)
    if doc_start == -1:
        return None
    closing = code.find(quote, doc_start + 3)
    return (doc_start, closing + 3) if closing != -1 else None


# --- the perturbations as edits ---------------------------------------------------------------


def tab_indent_edits(code: str, entry_point: str) -> list[Edit]:
    """ReCode's `tab_indent`: each line's leading indentation with the unit replaced by a tab
    (spaces -> tab; where the unit is a tab, tabs -> four spaces). Blank lines are kept."""
    unit = indent_unit(code, entry_point)
    return _unit_edits(code, unit) if unit else []


def _unit_edits(code: str, unit: str) -> list[Edit]:
    new_unit = "    " if "\t" in unit else "\t"
    return [
        Edit(offset, offset + len(lead), lead.replace(unit, new_unit))
        for offset, line in _lines_with_offsets(code)
        if not _blank(line) and unit in (lead := _leading_space(line))
    ]


def _split_candidate(line: str) -> tuple[str, str, str]:
    """A non-blank line as ReCode splits it: (indent, the words part, trailing spaces). ReCode's
    trailing-space loop leaves its index where it stopped (or where the indent loop stopped, on
    a one-character rest); the words part is cut with that index, as ReCode cuts it."""
    indent = _leading_space(line)
    rest = line[len(indent) :]
    post, last = "", len(indent)
    for last in range(1, len(rest)):
        if rest[len(rest) - last] not in " \n":
            break
        post = rest[len(rest) - last] + post
    return indent, rest[: len(rest) - last + 1], post


def split_lines_edits(
    code: str, entry_point: str, *, drop_after_string: bool = False
) -> list[Edit]:
    """ReCode's `split_lines` (its `longest_splits`): the longest line with two or more words,
    skipping blank lines, comments, docstring lines and lines naming the entry point, split in
    the middle of its words; double-quoted strings are not split.

    `drop_after_string`: reproduce ReCode's slip that drops the character after each
    double-quoted string of the split line (`"".join` -> `""join`), which its released prompts
    show on 7 of the 8 HumanEval lines it applies to (not on HumanEval/105's). Off for variants:
    it breaks the program."""
    lines = _lines_with_offsets(code)
    longest_index, longest_length = 0, -1
    in_string = False
    for index, (_, line) in enumerate(lines):
        if _blank(line):
            continue
        if "'''" in line or '"""' in line:
            in_string = not in_string  # a one-line docstring flips it too (ReCode's rule)
            continue
        if "#" in line or in_string or entry_point in line:
            continue
        _, candidate, _ = _split_candidate(line)
        length = len(candidate.replace(" ", "").replace("\t", "").replace("\n", ""))
        if len(candidate.split(" ")) >= 2 and length > longest_length:
            longest_index, longest_length = index, length
    offset, line = lines[longest_index]
    if (
        _blank(line)
        or "'''" in line
        or '"""' in line
        or "#" in line
        or entry_point in line
        or _inside_docstring(lines, longest_index)
    ):
        return []  # ReCode leaves the line (line 0 when nothing qualified) as it is
    indent, words_part, post = _split_candidate(line)
    strings: list[str] = []
    masked = words_part
    start = masked.find('"')
    while start != -1:
        end = masked.find('"', start + 1)
        if end == -1:
            raise ValueError("a double quote without its closing quote on the line")
        strings.append(words_part[start : end + 1])
        masked = masked[:start] + STRING_PLACEHOLDER + masked[end + 1 :]
        start = masked.find('"')
    words = masked.split(" ")
    if len(words) < 2:
        return []
    words.insert(len(words) // 2, SPLIT_MARK)
    new_line = indent + " ".join(words) + post
    start = new_line.find(STRING_PLACEHOLDER)
    while start != -1:
        after = start + len(STRING_PLACEHOLDER) + (1 if drop_after_string else 0)
        new_line = new_line[:start] + strings.pop(0) + new_line[after:]
        start = new_line.find(STRING_PLACEHOLDER)
    return [Edit(offset, offset + len(line), new_line)]


def _inside_docstring(lines: list[tuple[int, str]], target: int) -> bool:
    """ReCode's docstring state (flipped by each line with triple quotes) at line `target`."""
    in_string = False
    for _, line in lines[:target]:
        if not _blank(line) and ("'''" in line or '"""' in line):
            in_string = not in_string
    return in_string


def doc_to_comments_edits(code: str, entry_point: str) -> list[Edit]:
    """ReCode's `doc2comments`: lines holding only the quotes go; the quotes go from the others;
    each line gets `# ` after the docstring's indentation."""
    quote = docstring_quote(code)
    doc_start = code.find(quote, code.find(entry_point))
    if doc_start == -1:
        raise ValueError("no docstring after the signature")
    line_start = doc_start
    while line_start > 0 and code[line_start - 1] in " \t":
        line_start -= 1
    indent = code[line_start:doc_start]
    if line_start > 0 and code[line_start - 1] != "\n":
        raise ValueError("the docstring's quotes do not open their line (a prefix such as r?)")
    closing = code.find(quote, doc_start + 3)
    if closing == -1:
        raise ValueError("the docstring is not closed")
    line_end = closing + 3  # ReCode's trailing-space loop starts on the quote: it never moves
    if line_end >= len(code) or code[line_end] != "\n":
        raise ValueError("the docstring's closing quotes do not end their line")
    edits = []
    offset = line_start
    for line in code[line_start:line_end].split("\n"):
        end = offset + len(line) + 1  # with its newline
        if line.replace(" ", "").replace("\t", "").replace("\n", "") == quote:
            edits.append(Edit(offset, end, ""))
        else:
            text = line.replace(f"{quote} ", "").replace(quote, "") if quote in line else line
            lead = _leading_space(line)
            if indent in lead:
                # ReCode cuts the original line's indent off the quote-free text: with the
                # quotes at the line's start, the indentation and the quotes share its length.
                body = text[len(lead) if lead != line else len(line) - 1 :]
                text = lead[: len(indent)] + "# " + lead[len(indent) :] + body
            edits.append(Edit(offset, end, text + "\n"))
        offset = end
    return edits


def new_lines_edits(code: str, entry_point: str, ratio: float, rng: random.Random) -> list[Edit]:
    """ReCode's `new_lines`: after each newline following the docstring, another with
    probability `ratio`."""
    span = docstring_span(code, entry_point)
    start = span[1] if span else len(code)
    return [
        Edit(i + 1, i + 1, "\n")
        for i in range(start, len(code))
        if code[i] == "\n" and rng.random() < ratio
    ]


def new_line_after_doc_edits(code: str, entry_point: str) -> list[Edit]:
    """ReCode's `new_line_afterdoc`: a newline right after the docstring's closing quotes."""
    span = docstring_span(code, entry_point)
    if span is None:
        raise ValueError("no docstring after the signature")
    return [Edit(span[1], span[1], "\n")]


# --- the registered transformations ----------------------------------------------------------


def _program_shape(source: str) -> str | None:
    """The program's AST with docstrings blanked (a split inside a docstring changes its text,
    not the program); None if it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body[0].value.value = ""
    return ast.dump(tree)


def _base(problem: Problem) -> tuple[Problem, dict[str, object]] | NotApplicable:
    """The partial problem, or the whole one where ReCode keeps it whole (one-line solutions)."""
    if problem.entry_point is None:
        return NotApplicable("stdin/stdout problems have no function prompt to format")
    partial = partial_problem(problem)
    if isinstance(partial, Problem):
        return partial, {"partial": partial_lineage(problem, partial)}
    if problem.canonical_solution and "one line" in partial.reason:
        return problem, {"partial": {"whole": partial.reason}}
    return partial


def _partial_edits(
    problem: Problem, edits_of: Callable[[str, str], list[Edit]], failure: str
) -> tuple[Problem, list[Edit], dict[str, object]] | NotApplicable:
    """The partial problem (`_base`), the edits `edits_of(prompt, entry_point)` makes to its
    prompt, and its lineage: what `_variant` takes. `edits_of` raises ValueError where ReCode's
    edit does not apply; that is NotApplicable, `failure` formatted with the error as `{err}`."""
    base = _base(problem)
    if isinstance(base, NotApplicable):
        return base
    partial, lineage = base
    assert partial.entry_point is not None  # _base refuses stdio problems
    try:
        edits = edits_of(partial.prompt, partial.entry_point)
    except ValueError as err:
        return NotApplicable(failure.format(err=err))
    return partial, edits, lineage


def _variant(
    problem: Problem,
    edits: list[Edit],
    lineage: dict[str, object],
    solution: str | None = None,
    what: str = "the edit",
) -> Variants:
    """The variant with `edits` applied to the prompt (and `solution`, when given)."""
    if not edits:
        return NotApplicable(f"{what} leaves the prompt unchanged")
    prompt = apply_edits(problem.prompt, edits)
    new_solution = problem.canonical_solution if solution is None else solution
    changes = {
        **lineage,
        "edits": [[e.start, e.end, problem.prompt[e.start : e.end], e.text] for e in edits],
    }
    variant = problem.replace(
        prompt=prompt,
        canonical_solution=new_solution,
        blocks=edit_blocks(problem.blocks, prompt, edits),
    )
    return [Variant(variant, changes)]


@transform("format_tab_indent", "1", family=FAMILY, recode="tab_indent", baseline=BASELINE)
def format_tab_indent(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode tab_indent: the partial code's indentation unit becomes a tab (the canonical
    solution's too, so prompt and solution still form one program)."""
    found = _partial_edits(problem, tab_indent_edits, "{err}")
    if isinstance(found, NotApplicable):
        return found
    partial, edits, lineage = found
    if not edits:
        return NotApplicable("the prompt has no indentation after the signature")
    assert partial.entry_point is not None  # _base refuses stdio problems
    unit = indent_unit(partial.prompt, partial.entry_point)
    solution = partial.canonical_solution or ""
    # The solution's lines are indented with the prompt's unit: same rule, same unit.
    new_solution = apply_edits(solution, _unit_edits(solution, unit))
    if _program_shape(apply_edits(partial.prompt, edits) + new_solution) is None:
        # Sub-unit indents (HumanEval/80's 2-space blocks: 6 spaces -> tab + 2, 8 -> 2 tabs)
        # order differently at tab sizes 1 and 8, which Python refuses as ambiguous.
        return NotApplicable(
            "with tabs for the indentation unit, the solution's indentation is ambiguous "
            "(a block indented by less than the unit: Python's TabError)"
        )
    return _variant(partial, edits, lineage, new_solution)


@transform("format_split_lines", "1", family=FAMILY, recode="split_lines", baseline=BASELINE)
def format_split_lines(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode split_lines: the longest code line of the prompt split in the middle of its words
    with a backslash continuation."""
    found = _partial_edits(problem, split_lines_edits, "ReCode's line split fails here ({err})")
    if isinstance(found, NotApplicable):
        return found
    partial, edits, lineage = found
    if not edits:
        return NotApplicable("no code line with two or more words to split")
    solution = partial.canonical_solution or ""
    before = _program_shape(partial.prompt + solution)
    after = _program_shape(apply_edits(partial.prompt, edits) + solution)
    if before is not None and after != before:
        line = partial.prompt[edits[0].start : edits[0].end].strip()
        return NotApplicable(
            f"ReCode's split of the longest line ({line!r}) would change the program "
            "(it falls inside a string literal)"
        )
    return _variant(partial, edits, lineage)


@transform("format_doc_to_comments", "1", family=FAMILY, recode="doc2comments", baseline=BASELINE)
def format_doc_to_comments(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode doc2comments: the docstring becomes `#` comment lines."""
    found = _partial_edits(
        problem, doc_to_comments_edits, "the docstring cannot become comments ({err})"
    )
    if isinstance(found, NotApplicable):
        return found
    return _variant(*found)


@transform("format_new_lines", "1", family=FAMILY, recode="new_lines", baseline=BASELINE)
def format_new_lines(
    problem: Problem,
    keywords: KeywordAnalysis | None,
    *,
    ratio: float = 0.5,
    rng: random.Random,
) -> Variants:
    """ReCode new_lines: after each line of the partial code (from the docstring's closing
    quotes on), a blank line with probability `ratio`."""
    if not 0.0 <= ratio <= 1.0:
        return NotApplicable(f"ratio {ratio} is not a probability between 0 and 1")
    found = _partial_edits(
        problem, lambda prompt, entry: new_lines_edits(prompt, entry, ratio, rng), "{err}"
    )
    if isinstance(found, NotApplicable):
        return found
    return _variant(*found, what="no blank line was drawn; the draw")


@transform(
    "format_new_line_after_code", "1", family=FAMILY, recode="new_line_aftercode", baseline=BASELINE
)
def format_new_line_after_code(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode new_line_aftercode: a blank line after the partial code."""
    base = _base(problem)
    if isinstance(base, NotApplicable):
        return base
    partial, lineage = base
    return _variant(partial, [Edit(len(partial.prompt), len(partial.prompt), "\n")], lineage)


@transform(
    "format_new_line_after_doc", "1", family=FAMILY, recode="new_line_afterdoc", baseline=BASELINE
)
def format_new_line_after_doc(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode new_line_afterdoc: a blank line after the docstring's closing quotes."""
    found = _partial_edits(problem, new_line_after_doc_edits, "{err}")
    if isinstance(found, NotApplicable):
        return found
    return _variant(*found)
