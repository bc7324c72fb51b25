"""The Blocks-of-Influence splitter (paper section 5.1, appendix 10.7).

A function-style prompt is cut into `prefix` (imports, helpers), `name` (the signature of the
function after the *last* `def`), `description` (the docstring prose, from its opening quotes),
`examples` (from the first `>>>` line or `Example` marker, else from the first call of the
function in the docstring) and `suffix` (the closing quotes and anything after them).
A CodeContests statement is cut into `prefix` (the docstring opener), `description` (the
statement proper), `io_spec` (the Input/Output sections), `examples`, `notes` and `suffix`.

The split is exact: the blocks' texts concatenate to the prompt byte for byte. A block the
splitter looked for and did not find is named in `absent_blocks` with the reason; empty blocks
are never emitted.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.problem import BLOCK_KINDS, Block, Problem
from perturb.clike import CommentSplitError, _line_start, block_start, split_comment_prompt
from perturb.docstring_sections import section_cuts
from perturb.statement_sections import statement_cuts

CC_HEADER = re.compile(r"^(Input|Output|Examples?|Notes?|Interaction)\s*:?\s*$")


class SplitError(ValueError):
    """The prompt does not have the shape the splitter needs; the message says why."""


@dataclass(frozen=True)
class Split:
    blocks: tuple[Block, ...]
    absent: dict[str, str]


def block_offsets(blocks: Sequence[Block]) -> list[tuple[Block, int, int]]:
    """Each block with its (start, end) in the prompt the blocks join into."""
    ends = itertools.accumulate(len(block.text) for block in blocks)
    return [(block, end - len(block.text), end) for block, end in zip(blocks, ends, strict=True)]


def _char_offset(prompt: str, line_starts: list[int], lineno: int, byte_col: int) -> int:
    """Character offset of an ast (1-based line, UTF-8 byte column) position."""
    start = line_starts[lineno - 1]
    line = prompt[start : line_starts[lineno] if lineno < len(line_starts) else len(prompt)]
    return start + len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _cut(prompt: str, cuts: list[tuple[str, int]]) -> tuple[Block, ...]:
    """Blocks from (kind, start offset) pairs in order; empty ones are dropped."""
    blocks = []
    for (kind, start), (_, end) in zip(cuts, cuts[1:] + [("", len(prompt))], strict=True):
        if end > start:
            blocks.append(Block(kind, prompt[start:end]))
    if "".join(b.text for b in blocks) != prompt:  # an invariant, not user input
        raise AssertionError("blocks do not reassemble the prompt")
    return tuple(blocks)


def parse_prompt(prompt: str) -> ast.Module:
    """The prompt's syntax tree, positions as in the prompt (a SplitError when it is not
    Python): the splitter's reading, shared by the analyses that locate a prompt's parts."""
    # A HumanEval prompt ends inside the function (after its docstring); a bare signature needs a
    # body to parse, and `pass` adds one without moving any position in the prompt.
    for suffix in ("", "\n    pass\n", "    pass\n"):
        try:
            return ast.parse(prompt + suffix)
        except SyntaxError:
            continue
    raise SplitError("the prompt is not valid Python, even with a `pass` body added")


def _target_function(module: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef:
    defs = [n for n in ast.walk(module) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not defs:
        raise SplitError("the prompt defines no function")
    defs.sort(key=lambda n: (n.lineno, n.col_offset))
    return defs[-1]  # the paper's rule: the name is the token after the last `def`


def _example_start(prompt: str, start: int, end: int, name: str) -> int | None:
    """Where the examples begin inside the docstring span [start, end), or None.

    Markers count only at the start of a line (after indentation or the opening quotes): "For
    example, ..." inside a sentence, or the name in prose ("write next_smallest() that ..."),
    is still description.
    """
    doc = prompt[start:end]
    marker = re.compile(
        r"^[ \t]*(?:[rRuU]?(?:\"\"\"|'\'\'))?[ \t]*(>>>|(?:for\s+)?examples?\b)",
        re.IGNORECASE | re.MULTILINE,
    )
    call = re.compile(rf"^[ \t]*({re.escape(name)}\s*\()", re.MULTILINE)
    for pattern in (marker, call):
        match = pattern.search(doc)
        if match:
            return start + block_start(doc, match.start(1))
    return None


def split_function_prompt(prompt: str) -> Split:
    """Split a HumanEval-style prompt (a function signature and its docstring).

    The function is the last one defined, whatever the record's entry point says (the
    paper's rule, appendix 10.7).
    """
    if not prompt.strip():
        raise SplitError("the prompt is empty")
    module = parse_prompt(prompt)
    func = _target_function(module)
    line_starts = [m.start() for m in re.finditer(r"^", prompt, re.MULTILINE)]
    first = func.decorator_list[0] if func.decorator_list else func
    name_start = line_starts[first.lineno - 1]
    absent: dict[str, str] = {}
    # The first string statement, not only body[0]: HumanEval/115 imports before its docstring.
    doc_node = next(
        (
            n
            for n in func.body
            if isinstance(n, ast.Expr)
            and isinstance(n.value, ast.Constant)
            and isinstance(n.value.value, str)
        ),
        None,
    )
    if (
        doc_node is None
        or doc_node.lineno > len(line_starts)
        # ast.parse sets end_lineno and end_col_offset together; both are Optional in the stubs.
        or doc_node.end_lineno is None
        or doc_node.end_col_offset is None
    ):
        absent["description"] = "the function has no docstring"
        absent["examples"] = "the function has no docstring"
        return Split(_cut(prompt, [("prefix", 0), ("name", name_start)]), absent)

    doc_start = _char_offset(prompt, line_starts, doc_node.lineno, doc_node.col_offset)
    doc_end = _char_offset(prompt, line_starts, doc_node.end_lineno, doc_node.end_col_offset)
    if doc_end > len(prompt):
        raise SplitError("the docstring is not closed inside the prompt")
    description_start = block_start(prompt, doc_start)
    quote = (
        prompt[doc_end - 3 : doc_end]
        if prompt[doc_end - 3 : doc_end] in ('"""', "'''")
        else prompt[doc_end - 1]
    )
    closing = doc_end - len(quote)
    suffix_start = max(block_start(prompt, closing), doc_start + 1)
    examples_start = _example_start(prompt, doc_start, closing, func.name)
    if examples_start is None:
        absent["examples"] = (
            f"no '>>>' line, 'Example' marker or call of {func.name}() in the docstring"
        )
        examples_start = suffix_start
    prose = prompt[doc_start:examples_start].lstrip("rRbBuUfF").strip("\"' \t\n")
    if not prose:
        absent["description"] = "the docstring has no prose before its examples"
    cuts = [
        ("prefix", 0),
        ("name", name_start),
        ("description", description_start),
        ("examples", examples_start),
        ("suffix", suffix_start),
    ]
    return Split(_cut(prompt, cuts), absent)


def split_statement_prompt(prompt: str) -> Split:
    """Split a CodeContests statement prompt (a module docstring, see `statement_prompt`)."""
    opener = prompt.find("\n") + 1
    closing = (
        _line_start(prompt, prompt.rstrip().rfind("\n") + 1)
        if prompt.rstrip().count("\n")
        else len(prompt)
    )
    if opener <= 0 or closing <= opener:
        raise SplitError("the statement prompt is not a docstring over several lines")
    headers = [
        (header.group(1).lower(), opener + line.start())
        for line in re.finditer(r"^.*$", prompt[opener:closing], re.MULTILINE)
        if (header := CC_HEADER.match(line.group()))
    ]
    absent: dict[str, str] = {}
    examples_at = next((off for kind, off in headers if kind.startswith("example")), None)
    io_at = next(
        (
            off
            for kind, off in headers
            if kind in ("input", "interaction") and (examples_at is None or off < examples_at)
        ),
        None,
    )
    notes_at = next(
        (
            off
            for kind, off in headers
            if kind.startswith("note") and (examples_at is None or off > examples_at)
        ),
        None,
    )
    if io_at is None:
        absent["io_spec"] = "no 'Input' header before the examples"
    if examples_at is None:
        absent["examples"] = "no 'Example(s)' header"
    if notes_at is None:
        absent["notes"] = "no 'Note' header after the examples"
    cuts = [("prefix", 0), ("description", opener)]
    cuts += [
        (kind, off)
        for kind, off in (("io_spec", io_at), ("examples", examples_at), ("notes", notes_at))
        if off is not None
    ]
    cuts.append(("suffix", closing))
    return Split(_cut(prompt, cuts), absent)


def split_blocks(problem: Problem) -> Problem:
    """The problem with `blocks` and `absent_blocks` filled in; raises SplitError."""
    if problem.language != "python":  # a function its comment describes (perturb.clike)
        try:
            cuts, absent = split_comment_prompt(problem)
        except CommentSplitError as err:
            raise SplitError(str(err)) from None
        return problem.replace(blocks=_cut(problem.prompt, cuts), absent_blocks=absent)
    if problem.benchmark == "bigcodebench":  # its docstrings' sections (docstring_sections)
        split = split_function_prompt(problem.prompt)
        try:
            cuts, absent = section_cuts(problem.prompt, split.blocks, split.absent)
        except ValueError as err:
            raise SplitError(str(err)) from None
        return problem.replace(blocks=_cut(problem.prompt, cuts), absent_blocks=absent)
    if problem.benchmark == "livecodebench":  # its statements' own sections (statement_sections)
        try:
            cuts, absent = statement_cuts(problem.prompt)
        except ValueError as err:
            raise SplitError(str(err)) from None
        return problem.replace(blocks=_cut(problem.prompt, cuts), absent_blocks=absent)
    split = (
        split_statement_prompt(problem.prompt)
        if problem.is_stdio
        else split_function_prompt(problem.prompt)
    )
    return problem.replace(blocks=split.blocks, absent_blocks=split.absent)


@dataclass
class DatasetSplit:
    """Every problem (split where possible) and the ones the splitter could not handle."""

    problems: list[Problem]
    failures: dict[str, str]


def split_dataset(problems: list[Problem]) -> DatasetSplit:
    """Split every problem; failures keep their record (with `blocks=None`) and a reason."""
    out, failures = [], {}
    for problem in problems:
        try:
            out.append(split_blocks(problem))
        except SplitError as err:
            failures[problem.task_id] = str(err)
            out.append(problem)
    return DatasetSplit(out, failures)


def format_coverage(name: str, loaded: object, split: DatasetSplit) -> str:
    """The human-readable coverage summary printed by `boi blocks`."""
    from collections import Counter

    total = len(split.problems)
    # Problems with each kind (a BigCodeBench docstring may have two io_spec blocks).
    present = Counter(kind for p in split.problems for kind in {b.kind for b in p.blocks or ()})
    absent = Counter(
        (kind, reason) for p in split.problems for kind, reason in p.absent_blocks.items()
    )
    lines = [
        f"{name}: {total} problems, {total - len(split.failures)} split exactly (blocks reassemble the prompt byte for byte)"
    ]
    kinds = [k for k in BLOCK_KINDS if present[k]]
    lines += [f"  {kind:<12} {present[kind]:>5} / {total}" for kind in kinds]
    for (kind, reason), count in sorted(absent.items()):
        lines.append(
            f"  absent {kind}: {count} ({reason})"
            if count > 1
            else f"  absent {kind}: "
            + ", ".join(p.task_id for p in split.problems if p.absent_blocks.get(kind) == reason)
            + f" ({reason})"
        )
    for issue in getattr(loaded, "issues", []):
        lines.append(f"  loader: {issue.task_id}: {issue.reason}")
    for task_id, reason in split.failures.items():
        lines.append(f"  failed: {task_id}: {reason}")
    return "\n".join(lines)
