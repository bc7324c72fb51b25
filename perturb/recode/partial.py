"""ReCode's partial-code prompts: the prompt plus the first half of the reference solution.

ReCode (Wang et al., ACL 2023) measures its code-syntax and format perturbations on *partial
code*: the model sees the prompt and the first half of the canonical solution's lines and
completes the rest. Its nominal file (`dataset-release/nominal/humaneval_partial.jsonl`) is made
by `create_partial_code` in its `perturb.py`, with `sep` and `count_lines` from
`natgen/utils.py`; `recode_cut` reproduces that cut (it agrees with ReCode's file on all 164
HumanEval problems, byte for byte):

1. The program is `prompt + canonical_solution`. The docstring quote is `'''` when the program
   has `'''` and no `\"\"\"`, else `\"\"\"`.
2. The header ends at the first newline after the first occurrence of the entry point's name;
   the docstring ends at the first closing quote directly followed by a newline after it; the
   *body* is everything after that newline (after the header when there is no docstring).
3. The body has `n` lines (ReCode counts the newlines after its first character, a final line
   without one counting too). With one line, ReCode keeps the problem whole (`partial: None`).
4. Otherwise the partial prompt ends after the body's `n // 2`-th line (`// 2` rather than
   `(n + 1) // 2`: "make nominal partial a little harder", says ReCode) and the rest is the
   canonical solution. Blank lines count as lines.

The cut is textual: a partial prompt may end on a block opener (`for c in s:`), inside a
`try` with its `except` in the rest, or inside an open bracket (HumanEval/19 and /105 cut a
dict literal). ReCode keeps all of those as they are (the model continues the text), and so do
we: `changes` says `cuts_statement` where the cut falls inside a statement, and the variant
stays valid Python with its canonical solution.

The partial problem's blocks are the prompt's, with the partial code appended to the `suffix`
block (the closing quotes and what follows them), so code that reads the description or the
examples finds them where they were. The problem whose solution has one line is NotApplicable:
with `keep_unchanged` (the default) the catalogue emits it unchanged, as ReCode does.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

from benchmarks.problem import Block, Problem
from perturb.keywords import KeywordAnalysis
from perturb.transforms import NotApplicable, Variant, Variants, transform


@dataclass(frozen=True)
class Cut:
    """Where ReCode cuts `prompt + canonical_solution` into a partial prompt and the rest."""

    body_start: int
    """Offset of the code after the docstring (after the header when there is none)."""
    offset: int | None
    """Offset where the rest (the new canonical solution) begins; None: the body has one line."""
    body_lines: int
    """Lines of the body, ReCode's count."""
    kept_lines: int
    """Lines of the body kept in the partial prompt (`body_lines // 2`)."""


def docstring_quote(code: str) -> str:
    """ReCode's choice of docstring quote: `'''` only when the code has no `\"\"\"`."""
    return "'''" if "'''" in code and '"""' not in code else '"""'


def recode_cut(whole: str, entry_point: str) -> Cut:
    """ReCode's partial-code cut of a whole program (`prompt + canonical_solution`)."""
    quote = docstring_quote(whole)
    header_end = whole.find("\n", whole.find(entry_point))
    doc_begin = whole.find(quote, header_end)
    doc_end = whole.find(quote + "\n", doc_begin + 3)
    body_start = doc_end + 4 if doc_begin != -1 and doc_end != -1 else header_end + 1
    body = whole[body_start:]
    if not body:
        return Cut(body_start, None, 0, 0)
    # ReCode counts newlines from the body's second character on, a last unterminated line too.
    body_lines = (body if body.endswith("\n") else body + "\n").count("\n", 1)
    if body_lines <= 1:
        return Cut(body_start, None, body_lines, 0)
    kept = body_lines // 2
    end = -1
    for _ in range(kept):  # the kept-th newline of the body (this one counts from 0)
        end = body.find("\n", end + 1)
    return Cut(body_start, body_start + end + 1, body_lines, kept)


def _parses(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError:
        return False
    return True


def cuts_statement(prompt: str) -> bool:
    """Whether a partial prompt ends inside a statement: no indented `pass` (at the last line's
    depth or one deeper) completes it. A prompt that ends on a block opener does not count."""
    lines = [line for line in prompt.splitlines() if line.strip()]
    if not lines:
        return False
    indent = lines[-1][: len(lines[-1]) - len(lines[-1].lstrip())]
    unit = "\t" if indent.startswith("\t") else "    "
    return not any(_parses(prompt + filler + "pass\n") for filler in (indent, indent + unit, unit))


def extend_suffix(blocks: tuple[Block, ...] | None, code: str) -> tuple[Block, ...] | None:
    """The prompt's blocks with `code` appended to the suffix block (a new one if none ends it)."""
    if blocks is None:
        return None
    if blocks and blocks[-1].kind == "suffix":
        return blocks[:-1] + (Block("suffix", blocks[-1].text + code),)
    return blocks + (Block("suffix", code),)


def partial_problem(problem: Problem) -> Problem | NotApplicable:
    """ReCode's partial-code problem: the prompt plus the first half of the canonical solution's
    lines; the rest is the new canonical solution. NotApplicable (with the reason) where ReCode
    keeps the problem whole or the cut would not extend the prompt."""
    if problem.entry_point is None:
        return NotApplicable("stdin/stdout problems have no function to complete partially")
    solution = problem.canonical_solution
    if not solution or not solution.strip():
        return NotApplicable("the problem has no canonical solution to take a first half from")
    whole = problem.prompt + solution
    cut = recode_cut(whole, problem.entry_point)
    if cut.offset is None:
        return NotApplicable(
            "the canonical solution has one line; ReCode keeps such problems whole"
        )
    if cut.offset <= len(problem.prompt):
        return NotApplicable(
            "ReCode's cut falls inside the prompt (its docstring search ends early here)"
        )
    code = whole[len(problem.prompt) : cut.offset]
    return problem.replace(
        prompt=whole[: cut.offset],
        canonical_solution=whole[cut.offset :],
        blocks=extend_suffix(problem.blocks, code),
    )


def partial_lineage(problem: Problem, partial: Problem) -> dict[str, object]:
    """What `partial_problem` moved from the solution into the prompt, for `changes`."""
    cut = recode_cut(problem.prompt + (problem.canonical_solution or ""), problem.entry_point or "")
    return {
        "solution_lines": cut.body_lines,
        "cut_lines": cut.kept_lines,
        "partial_code": partial.prompt[len(problem.prompt) :],
        "cuts_statement": cuts_statement(partial.prompt),
    }


@transform("partial_code", "1", family="syntax", recode=None)
def partial_code(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode's nominal partial code: the prompt plus the first half of the solution's lines (the
    baseline its code-syntax and format perturbations are measured against)."""
    partial = partial_problem(problem)
    if isinstance(partial, NotApplicable):
        return partial
    return [Variant(partial, partial_lineage(problem, partial))]
