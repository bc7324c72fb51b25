"""ReCode's code-syntax perturbations ("natgen") of the partial code, as registered transformations.

ReCode perturbs the *partial code* (`perturb.recode.partial`: the prompt plus the first half of
the canonical solution) with transformations from NatGen (Chakraborty et al., FSE 2022), and
measures them against its nominal partial prompts (`partial_code`). Each one here builds the
partial problem, changes only its partial code (never the signature, the docstring or the
function's name) and keeps the rest of the canonical solution, so prompt + solution is still
the reference program:

- `code_dead_code` (ReCode `DeadCodeInserter`, stochastic): before a random statement of the
  partial code, a copy of a random statement of the partial code inside a block that never runs,
  NatGen's shapes: `for _i_3 in range(0):`, `while False:`, `_i_3 = 0` + `while _i_3 < _i_3:`
  (or `>`), `if False:`, `_i_3 = 0` + `if _i_3 > _i_3:` (or `<`).
- `code_dead_code_last` (`DeadCodeInserterLast`, in ReCode's release though not its config):
  the same, before the last statement of the partial code (the one nearest the cut).
- `code_for_while` (`ForWhileTransformer`): the first `for` loop of the partial code (breadth
  first, as NatGen's first-half mode) as a `while` loop: `for i in range(a, b, s)` becomes
  `i = a` / `while i < b:` / body / `i += s`; `for x in xs` becomes `_x_i = 0` /
  `while _x_i < len(xs):` / `x = xs[_x_i]` / body / `_x_i += 1`.
- `code_operand_swap` (`OperandSwap`): the first comparison with one operator (`<`, `>`, `<=`,
  `>=`, `==`, `!=`) of the partial code, operands swapped and the operator mirrored (`a < b`
  becomes `b > a`).
- `code_rename_cb`, `code_rename_naive`, `code_rename_rn` (`VarRenamerCB`, `VarRenamerNaive`,
  `VarRenamerRN`): the partial code's most frequent local variable renamed wherever the
  function uses it (so in the rest of the solution too). Naive: `VAR_0`. RN: random letters
  and digits of the old name's length (stochastic). CB: ReCode masks the variable and takes
  CodeBERT's (`microsoft/codebert-base-mlm`) best-scoring valid identifier; we use no model and
  substitute what such a model tends to fill in, a conventional name for the variable's role
  (`i` for a range index, `item` for a loop element, `result` for a list, `count` for a number,
  `s` for a string, ...), the first one the function does not use; when all are used, one with
  `2` appended, ReCode's rule for a prediction that collides (its release shows `result2`, `s2`).

Where NatGen (tree-sitter) rebuilds the code from tokens and ReCode runs `black` over it, we
edit the syntax tree with libcst: it installs from PyPI as a wheel (tree-sitter needs a grammar
compiled into a shared library, ReCode ships a prebuilt `languages.so`), it prints the tree back
to the source byte for byte, so everything not perturbed keeps its formatting and ReCode's
black normalisation does not leak into the comparison with the nominal prompt, and Python is
the only language we perturb. What differs from ReCode, on purpose:

- ReCode's renamers may pick a parameter and rename it in the signature but not in the
  docstring; ours rename local variables only (the signature is never touched).
- ReCode's transformations may change the second half of the solution (the dead code's copied
  statement comes from anywhere, a loop or comparison after the cut may be the one chosen); ours
  choose only in the partial code, so the prompt never shows the solution's second half, and a
  loop is converted only when the whole loop is in the partial code.
- Transformations that would change what the program does are refused with the reason: a loop
  with `continue` (its `while` would skip the increment), a loop variable used after the loop,
  a bound re-evaluated by `while` that the body may change, a `for x in xs` over something that
  may not be indexable (a set, a dict, an iterator).
"""

from __future__ import annotations

import builtins
import keyword
import random
import re
import string
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from benchmarks.problem import Problem
from perturb.keywords import KeywordAnalysis
from perturb.recode.partial import extend_suffix, partial_lineage, partial_problem
from perturb.transforms import NotApplicable, Variant, Variants, transform

FAMILY = "syntax"
BASELINE = "partial_code"
COMPARISON_MIRROR: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.GreaterThan,
    cst.GreaterThan: cst.LessThan,
    cst.LessThanEqual: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThanEqual,
    cst.Equal: cst.Equal,
    cst.NotEqual: cst.NotEqual,
}
SAFE_BOUND_CALLS = {"len", "abs", "min", "max", "int", "round", "float"}
"""Calls a `while` may re-evaluate in its bound each iteration (pure, on unchanged names)."""
NOT_INDEXABLE = {
    "set",
    "dict",
    "frozenset",
    "zip",
    "map",
    "filter",
    "enumerate",
    "reversed",
    "iter",
}
NOT_INDEXABLE_HINTS = re.compile(
    r"\b(set|dict|Set|Dict|FrozenSet|Iterable|Iterator|Generator|Mapping)\b"
)
INTROSPECTION = {"locals", "vars", "eval", "exec", "globals"}
ROLE_NAMES = {
    "index": ("i", "j", "k", "idx", "index"),
    "element": ("item", "x", "elem", "value", "e"),
    "list": ("result", "res", "lst", "values", "items"),
    "dict": ("d", "mapping", "counts", "table"),
    "string": ("s", "text", "string", "res"),
    "number": ("count", "total", "n", "num", "res"),
    "flag": ("flag", "found", "ok"),
    "other": ("value", "tmp", "res", "x"),
}
"""Conventional names by role: what code models tend to predict for a masked variable."""


# --- the partial code as a syntax tree ------------------------------------------------------


@dataclass(frozen=True)
class PartialCode:
    """The partial problem's program parsed, and where its partial code lies."""

    original: Problem
    partial: Problem
    module: cst.Module
    positions: dict[cst.CSTNode, CodeRange]
    function: cst.FunctionDef
    first_line: int
    """First line of the partial code (1-based, in prompt + solution)."""
    last_line: int
    """Last line of the partial code."""
    body_nodes: tuple[tuple[int, cst.CSTNode, bool], ...]
    """(depth, node, inside a nested function, class or lambda) under the function's body,
    breadth first: walked once, as libcst computes children on each access."""

    def inside(self, node: cst.CSTNode) -> bool:
        """Whether `node` lies wholly in the partial code."""
        where = self.positions.get(node)
        return (
            where is not None
            and self.first_line <= where.start.line
            and where.end.line <= self.last_line
        )

    def starts_inside(self, node: cst.CSTNode) -> bool:
        where = self.positions.get(node)
        return where is not None and self.first_line <= where.start.line <= self.last_line

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions[node]
        return where.start.line, where.start.column


@dataclass(frozen=True)
class _Parsed:
    module: cst.Module
    positions: dict[cst.CSTNode, CodeRange]
    function: cst.FunctionDef
    body_nodes: tuple[tuple[int, cst.CSTNode, bool], ...]


@lru_cache(maxsize=4)
def _parse(whole: str, entry_point: str, first_line: int) -> _Parsed | str:
    """The program parsed (the function under test: the one named `entry_point` around
    `first_line`), or why not. Memoised: a run applies every syntax transformation, and each
    seed, to one problem after another, and libcst trees are immutable."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(whole), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as err:
        return f"the program does not parse ({err.message})"
    positions = dict(wrapper.resolve(PositionProvider))
    function = next(
        (
            node
            for node, where in positions.items()
            if isinstance(node, cst.FunctionDef)
            and node.name.value == entry_point
            and where.start.line < first_line <= where.end.line
        ),
        None,
    )
    if function is None:
        return f"the partial code is not inside the function {entry_point}"
    return _Parsed(wrapper.module, positions, function, tuple(_walk_marked(function.body)))


def parse_partial(problem: Problem) -> PartialCode | NotApplicable:
    """The partial problem of `problem` with its program parsed, or why not."""
    partial = partial_problem(problem)
    if isinstance(partial, NotApplicable):
        return partial
    whole = partial.prompt + (partial.canonical_solution or "")
    first_line = problem.prompt.count("\n") + 1
    parsed = _parse(whole, problem.entry_point or "", first_line)
    if isinstance(parsed, str):
        return NotApplicable(parsed)
    return PartialCode(
        problem,
        partial,
        parsed.module,
        parsed.positions,
        parsed.function,
        first_line,
        partial.prompt.count("\n"),
        parsed.body_nodes,
    )


def _walk(node: cst.CSTNode) -> list[tuple[int, cst.CSTNode]]:
    """(depth, node) for every node under `node`, nested functions, classes and lambdas
    included, breadth first."""
    out, queue = [], deque([(0, node)])
    while queue:
        depth, current = queue.popleft()
        out.append((depth, current))
        queue.extend((depth + 1, child) for child in current.children)
    return out


def _walk_marked(root: cst.CSTNode) -> list[tuple[int, cst.CSTNode, bool]]:
    """(depth, node, in a nested scope) for every node under `root`, breadth first."""
    out, queue = [], deque([(0, root, False)])
    while queue:
        depth, node, nested = queue.popleft()
        out.append((depth, node, nested))
        inner = nested or (
            node is not root and isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda)
        )
        queue.extend((depth + 1, child, inner) for child in node.children)
    return out


def _function_body(code: PartialCode, *, nested: bool = False) -> list[tuple[int, cst.CSTNode]]:
    """(depth, node) under the function's body; nested scopes' insides only with `nested`."""
    return [(depth, node) for depth, node, inner in code.body_nodes if nested or not inner]


def _docstring(code: PartialCode) -> cst.CSTNode | None:
    body = code.function.body
    if isinstance(body, cst.IndentedBlock) and body.body:
        first = body.body[0]
        if (
            isinstance(first, cst.SimpleStatementLine)
            and len(first.body) == 1
            and isinstance(first.body[0], cst.Expr)
            and isinstance(first.body[0].value, cst.SimpleString | cst.ConcatenatedString)
        ):
            return first
    return None


def _statements(code: PartialCode) -> list[cst.SimpleStatementLine | cst.BaseCompoundStatement]:
    """The function's statements (at any block depth, not in nested functions) in source order,
    the docstring left out."""
    doc = _docstring(code)
    found = [
        node
        for _, node in _function_body(code)
        if isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement) and node is not doc
    ]
    return sorted(found, key=code.start)


def _replace(
    code: PartialCode, replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel]
) -> str:
    """The program with the given nodes (by identity) replaced."""

    class Replacer(cst.CSTTransformer):
        def on_leave(  # type: ignore[override]  # one method for every node type
            self, original_node: cst.CSTNode, updated_node: cst.CSTNode
        ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
            return replacements.get(original_node, updated_node)

    return code.module.visit(Replacer()).code


def _variant(
    code: PartialCode, new_whole: str, changes: Mapping[str, object], solution_added: int = 0
) -> Variants:
    """Split the new program where the old one was cut: the solution keeps its lines (changed
    only by renaming) plus `solution_added` new ones, so the prompt is everything before them."""
    solution = code.partial.canonical_solution or ""
    if new_whole == code.partial.prompt + solution:
        return NotApplicable("the transformation leaves the partial code unchanged")
    tail = solution.count("\n") + (0 if solution.endswith("\n") else 1) + solution_added
    lines = new_whole.splitlines(keepends=True)
    prompt, new_solution = "".join(lines[:-tail]), "".join(lines[-tail:])
    original_prompt = code.original.prompt
    if not prompt.startswith(original_prompt) or prompt == code.partial.prompt:
        return NotApplicable("the change did not stay in the partial code")
    partial_code = prompt[len(original_prompt) :]
    new = code.partial.replace(
        prompt=prompt,
        canonical_solution=new_solution,
        blocks=extend_suffix(code.original.blocks, partial_code),
    )
    lineage = {"partial": partial_lineage(code.original, code.partial), **changes}
    return [Variant(new, lineage)]


def _source(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).strip()


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for _, n in _walk(node) if isinstance(n, cst.Name)}


def _used_names(code: PartialCode) -> set[str]:
    """Every identifier of the program (any scope), so new names clash with none."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code.module.code))


# --- operand swap ------------------------------------------------------------------------------


@transform("code_operand_swap", "1", family=FAMILY, recode="OperandSwap", baseline=BASELINE)
def code_operand_swap(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode OperandSwap: the partial code's first one-operator comparison with its operands
    swapped and its operator mirrored (`a < b` -> `b > a`)."""
    code = parse_partial(problem)
    if isinstance(code, NotApplicable):
        return code
    comparisons = [
        (depth, node)
        for depth, node in _function_body(code, nested=True)
        if isinstance(node, cst.Comparison)
        and len(node.comparisons) == 1
        and type(node.comparisons[0].operator) in COMPARISON_MIRROR
        and code.inside(node)
    ]
    if not comparisons:
        return NotApplicable("no comparison (<, >, <=, >=, ==, !=) in the partial code")
    _, chosen = min(comparisons, key=lambda pair: (pair[0], code.start(pair[1])))
    assert isinstance(chosen, cst.Comparison)
    target = chosen.comparisons[0]
    operator = target.operator
    spaced = cast(Any, operator)  # every comparison operator has its two whitespaces
    mirrored = COMPARISON_MIRROR[type(operator)](
        whitespace_before=spaced.whitespace_before,  # type: ignore[call-arg]
        whitespace_after=spaced.whitespace_after,
    )
    swapped = chosen.with_changes(
        left=target.comparator,
        comparisons=[target.with_changes(operator=mirrored, comparator=chosen.left)],
    )
    changes = {"before": _source(chosen), "after": _source(swapped), "line": code.start(chosen)[0]}
    return _variant(code, _replace(code, {chosen: swapped}), changes)


# --- for -> while ------------------------------------------------------------------------------


def _loop_continues(loop: cst.For) -> bool:
    """Whether `continue` in the body continues this loop (a `while` would skip its increment)."""
    queue: list[cst.CSTNode] = [loop.body]
    while queue:
        node = queue.pop()
        if isinstance(node, cst.Continue):
            return True
        if isinstance(node, cst.For | cst.While | cst.FunctionDef | cst.ClassDef | cst.Lambda):
            continue
        queue.extend(node.children)
    return False


def _changed_names(body: cst.CSTNode) -> set[str]:
    """Names the body may change: assigned, deleted, or a method called on them, or stored into."""
    changed = set()
    for _, node in _walk(body):
        targets: list[cst.CSTNode] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, cst.AugAssign | cst.AnnAssign | cst.For | cst.Del | cst.NamedExpr):
            targets = [node.target]
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            targets = [node.func.value]  # lst.append(x), d.pop(k): may change lst, d
        for target in targets:
            for _, inner in _walk(target):
                if isinstance(inner, cst.Name):
                    changed.add(inner.value)
    return changed


def _pure_bound(node: cst.BaseExpression) -> bool:
    """Whether a bound may be re-evaluated each iteration: no calls but to pure builtins."""
    for _, inner in _walk(node):
        if isinstance(inner, cst.Call) and not (
            isinstance(inner.func, cst.Name) and inner.func.value in SAFE_BOUND_CALLS
        ):
            return False
        if isinstance(inner, cst.Lambda | cst.Yield | cst.Await | cst.NamedExpr):
            return False
    return True


def _int_literal(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Integer):
        value = int(node.expression.value, 0)
        if isinstance(node.operator, cst.Minus):
            return -value
        if isinstance(node.operator, cst.Plus):
            return value
    return None


def _not_indexable(code: PartialCode, name: str) -> bool:
    """Whether `name` is, or may be, something `name[i]` does not index (a set, a dict, an
    iterator): by its annotation as a parameter, or by what the function assigns to it."""
    for param in [
        *code.function.params.params,
        *code.function.params.kwonly_params,
        *code.function.params.posonly_params,
    ]:
        if param.name.value == name and param.annotation is not None:
            return bool(NOT_INDEXABLE_HINTS.search(_source(param.annotation.annotation)))
    for _, node in _function_body(code):
        if isinstance(node, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets
        ):
            value = node.value
            if isinstance(
                value, cst.Set | cst.Dict | cst.SetComp | cst.DictComp | cst.GeneratorExp
            ):
                return True
            if isinstance(value, cst.Call):
                func = value.func
                if isinstance(func, cst.Name) and func.value in NOT_INDEXABLE:
                    return True
                if isinstance(func, cst.Attribute) and func.attr.value in {
                    "items",
                    "keys",
                    "values",
                }:
                    return True
    return False


def _is_range(iterator: cst.BaseExpression) -> bool:
    return (
        isinstance(iterator, cst.Call)
        and isinstance(iterator.func, cst.Name)
        and iterator.func.value == "range"
    )


def _statement(source: str) -> cst.BaseStatement:
    return cst.parse_statement(source)


def _while_from_for(
    code: PartialCode, loop: cst.For, used: set[str]
) -> list[cst.BaseStatement] | str:
    """The statements replacing `loop`, or why it cannot be converted."""
    if loop.orelse is not None or loop.asynchronous is not None:
        return "an else clause or async for"
    if not isinstance(loop.target, cst.Name):
        return "its target is not one name"
    var = loop.target.value
    if _loop_continues(loop):
        return "its body continues the loop (a while would skip the increment)"
    loop_end = code.positions[loop].end.line
    later = [
        n
        for _, n in _function_body(code, nested=True)
        if isinstance(n, cst.Name) and n.value == var and code.positions[n].start.line > loop_end
    ]
    if later:
        return f"{var} is used after the loop (a while leaves another value in it)"
    changed = _changed_names(loop.body)
    if var in changed:
        return f"the body assigns the loop variable {var}"
    body = loop.body
    statements: list[cst.BaseStatement] = (
        list(body.body)
        if isinstance(body, cst.IndentedBlock)
        else [cst.SimpleStatementLine(body=cast(cst.SimpleStatementSuite, body).body)]
    )
    header = body.header if isinstance(body, cst.IndentedBlock) else cst.TrailingWhitespace()
    indent = body.indent if isinstance(body, cst.IndentedBlock) else None
    iterator = loop.iter
    if isinstance(iterator, cst.Call) and _is_range(iterator):
        args = iterator.args
        if not 1 <= len(args) <= 3 or any(a.keyword is not None or a.star for a in args):
            return "an unusual range() call"
        values = [a.value for a in args]
        start = _source(values[0]) if len(values) > 1 else "0"
        stop = values[1] if len(values) > 1 else values[0]
        step = _int_literal(values[2]) if len(values) == 3 else 1
        if step is None or step == 0:
            return "its step is not a nonzero integer literal"
        if not _pure_bound(stop) or _names_in(stop) & changed:
            return "its bound may change in the body (a while re-evaluates it)"
        compare, update = ("<", "+=") if step > 0 else (">", "-=")
        init = _statement(f"{var} = {start}\n")
        test = cst.parse_expression(f"{var} {compare} {_source(stop)}")
        increment = _statement(f"{var} {update} {abs(step)}\n")
        new_body = [*statements, increment]
    else:
        if not isinstance(iterator, cst.Name):
            return "it iterates over an expression, not a name (it may not be indexable)"
        sequence = iterator.value
        if sequence in changed:
            return f"the body may change {sequence}"
        if _not_indexable(code, sequence):
            return f"{sequence} may not be indexable (a set, a dict or an iterator)"
        index = f"_{var}_i"
        if index in used:
            return f"the index name {index} is taken"
        init = _statement(f"{index} = 0\n")
        test = cst.parse_expression(f"{index} < len({sequence})")
        element = _statement(f"{var} = {sequence}[{index}]\n")
        new_body = [element, *statements, _statement(f"{index} += 1\n")]
    init = init.with_changes(leading_lines=loop.leading_lines)
    loop_while = cst.While(
        test=test,
        body=cst.IndentedBlock(
            body=new_body, header=header, indent=indent, footer=getattr(body, "footer", ())
        ),
    )
    return [init, loop_while]


@transform("code_for_while", "1", family=FAMILY, recode="ForWhileTransformer", baseline=BASELINE)
def code_for_while(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode ForWhileTransformer: the partial code's first convertible `for` loop (breadth
    first) as the equivalent `while` loop."""
    code = parse_partial(problem)
    if isinstance(code, NotApplicable):
        return code
    loops = sorted(
        ((depth, node) for depth, node in _function_body(code) if isinstance(node, cst.For)),
        key=lambda pair: (pair[0], code.start(pair[1])),
    )
    if not loops:
        return NotApplicable("no for loop in the partial code")
    used, reasons = _used_names(code), []
    for _, loop in loops:
        assert isinstance(loop, cst.For)
        if not code.starts_inside(loop):
            continue
        converted = _while_from_for(code, loop, used)
        if isinstance(converted, str):
            reasons.append(f"line {code.start(loop)[0]}: {converted}")
            continue
        new_whole = _replace(code, {loop: cst.FlattenSentinel(converted)})
        added = new_whole.count("\n") - code.module.code.count("\n")
        # A loop may continue past the cut: what lands after it (the element assignment of
        # `for x in xs` when the body starts there, the increment when the loop ends there)
        # joins the solution, as ReCode's conversion changes the whole function.
        if code.inside(loop):
            prompt_added = added
        else:
            body_start = code.positions[loop.body].start.line + (
                1 if isinstance(loop.body, cst.IndentedBlock) else 0
            )
            element = 0 if _is_range(loop.iter) else 1
            prompt_added = 1 + (element if body_start <= code.last_line else 0)
        changes = {
            "line": code.start(loop)[0],
            "loop": _source(loop).splitlines()[0],
            "continues_past_the_cut": not code.inside(loop),
        }
        return _variant(code, new_whole, changes, added - prompt_added)
    return NotApplicable("no for loop of the partial code converts: " + "; ".join(reasons))


# --- dead code ---------------------------------------------------------------------------------


def _copyable(node: cst.BaseStatement) -> bool:
    """A statement that can run inside a dead block anywhere in the function unchanged."""
    banned = (
        cst.Break, cst.Continue, cst.Yield, cst.Await, cst.Global, cst.Nonlocal,
        cst.FunctionDef, cst.ClassDef, cst.Pass,
    )  # fmt: skip
    return not any(isinstance(n, banned) for _, n in _walk(node))


def _dead_block(
    body: cst.SimpleStatementLine | cst.BaseCompoundStatement,
    counter: str,
    rng: random.Random,
    leading_lines: Sequence[cst.EmptyLine],
) -> tuple[list[cst.BaseStatement], str]:
    """NatGen's dead-code shapes around `body`: (statements, shape). `leading_lines` (the blank
    lines and comments above the statement it goes before) move above it."""
    kind = rng.choice(["for", "while", "if"])
    draw = rng.random() if kind != "for" else 0.0
    block = cst.IndentedBlock(body=[body.with_changes(leading_lines=())])
    if kind == "for":
        loop = cst.For(
            target=cst.Name(counter),
            iter=cst.parse_expression("range(0)"),
            body=block,
            leading_lines=leading_lines,
        )
        return [loop], f"for {counter} in range(0)"
    setup: list[cst.BaseStatement] = []
    if draw < 0.33:
        test = cst.parse_expression("False")
    else:
        operator = "<" if draw < 0.66 else ">"
        test = cst.parse_expression(f"{counter} {operator} {counter}")
        setup = [
            cst.SimpleStatementLine(
                body=[
                    cst.Assign(
                        targets=[cst.AssignTarget(cst.Name(counter))], value=cst.Integer("0")
                    )
                ],
                leading_lines=leading_lines,
            )
        ]
    outer = () if setup else leading_lines
    compound: cst.BaseStatement = (
        cst.While(test=test, body=block, leading_lines=outer)
        if kind == "while"
        else cst.If(test=test, body=block, leading_lines=outer)
    )
    return [*setup, compound], f"{kind} {_source(test)}"


def _insert_dead_code(problem: Problem, rng: random.Random, last: bool) -> Variants:
    code = parse_partial(problem)
    if isinstance(code, NotApplicable):
        return code
    statements = _statements(code)
    targets = [s for s in statements if code.starts_inside(s) and _in_block(code, s)]
    bodies = [
        s
        for s in statements
        if code.inside(s)
        and _copyable(s)
        and code.positions[s].end.line - code.positions[s].start.line < 8
    ]
    if not targets:
        return NotApplicable("no statement in the partial code to insert dead code before")
    if not bodies:
        return NotApplicable("no statement in the partial code to copy into dead code")
    used = _used_names(code)
    free = [f"_i_{d}" for d in range(10) if f"_i_{d}" not in used]
    if not free:
        return NotApplicable("every dead-code counter name _i_0.._i_9 is taken")
    before = targets[-1] if last else rng.choice(targets)
    body = rng.choice(bodies)
    dead, shape = _dead_block(body, rng.choice(free), rng, before.leading_lines)
    moved = before.with_changes(leading_lines=())
    changes = {"line": code.start(before)[0], "shape": shape, "copied": _source(body)}
    return _variant(code, _replace(code, {before: cst.FlattenSentinel([*dead, moved])}), changes)


def _in_block(code: PartialCode, statement: cst.BaseStatement) -> bool:
    """Whether `statement` sits in an indented block of the function (a one-line suite does not
    take a statement before it)."""
    for _, node in _function_body(code):
        if isinstance(node, cst.IndentedBlock) and any(s is statement for s in node.body):
            return True
    return False


@transform("code_dead_code", "1", family=FAMILY, recode="DeadCodeInserter", baseline=BASELINE)
def code_dead_code(
    problem: Problem, keywords: KeywordAnalysis | None, *, rng: random.Random
) -> Variants:
    """ReCode DeadCodeInserter: before a random statement of the partial code, a copy of one of
    its statements in a block that never runs (`for _i_3 in range(0):`, `while False:`, ...)."""
    return _insert_dead_code(problem, rng, last=False)


@transform(
    "code_dead_code_last", "1", family=FAMILY, recode="DeadCodeInserterLast", baseline=BASELINE
)
def code_dead_code_last(
    problem: Problem, keywords: KeywordAnalysis | None, *, rng: random.Random
) -> Variants:
    """ReCode DeadCodeInserterLast: dead code (a copied statement in a block that never runs)
    before the partial code's last statement, the one nearest the cut."""
    return _insert_dead_code(problem, rng, last=True)


# --- variable renaming -------------------------------------------------------------------------


def _bound_names(code: PartialCode) -> dict[str, str]:
    """Local variables the function binds (not parameters, imports, functions or classes), each
    with its role for conventional naming."""
    roles: dict[str, str] = {}
    excluded = _names_in(code.function.params) | {
        n.value for d in code.function.decorators for n in [d.decorator] if isinstance(n, cst.Name)
    }
    if code.function.returns is not None:
        excluded |= _names_in(code.function.returns)
    for _, node in _function_body(code):
        if isinstance(node, cst.Global | cst.Nonlocal):
            excluded |= {item.name.value for item in node.names}
        elif isinstance(node, cst.Import | cst.ImportFrom) and not isinstance(
            node.names, cst.ImportStar
        ):
            for alias in node.names:
                bound = alias.asname.name if alias.asname else alias.name
                excluded |= _names_in(bound)
        elif isinstance(node, cst.FunctionDef | cst.ClassDef):
            excluded.add(node.name.value)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                for name in _target_names(target.target):
                    roles.setdefault(
                        name, _role(node.value) if isinstance(target.target, cst.Name) else "other"
                    )
        elif isinstance(node, cst.AnnAssign | cst.AugAssign):
            for name in _target_names(node.target):
                roles.setdefault(name, _role(node.value) if node.value is not None else "other")
        elif isinstance(node, cst.For):
            is_range = isinstance(node.iter, cst.Call) and _source(node.iter.func) == "range"
            for name in _target_names(node.target):
                roles.setdefault(name, "index" if is_range else "element")
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            for name in _target_names(node.asname.name):
                roles.setdefault(name, "other")
    return {name: role for name, role in roles.items() if name not in excluded}


def _target_names(target: cst.CSTNode) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, cst.Tuple | cst.List):
        return [name for element in target.elements for name in _target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _role(value: cst.BaseExpression) -> str:
    if isinstance(value, cst.List | cst.ListComp) or (
        isinstance(value, cst.Call) and _source(value.func) in {"list", "sorted"}
    ):
        return "list"
    if isinstance(value, cst.Dict | cst.DictComp) or (
        isinstance(value, cst.Call) and _source(value.func) == "dict"
    ):
        return "dict"
    if isinstance(value, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
        return "string"
    str_call = isinstance(value, cst.Call) and _source(value.func) == "str"
    if str_call or _source(value).startswith(("''.join", '"".join')):
        return "string"
    if isinstance(value, cst.Integer | cst.Float) or _int_literal(value) is not None:
        return "number"
    if isinstance(value, cst.Name) and value.value in {"True", "False"}:
        return "flag"
    return "other"


def _rename_target(code: PartialCode) -> tuple[str, str] | NotApplicable:
    """The partial code's most frequent local variable (first seen wins a tie) and its role."""
    calls = {n.value for _, n in _function_body(code, nested=True) if isinstance(n, cst.Name)}
    if calls & INTROSPECTION:
        return NotApplicable("the function looks names up by their text (locals, eval, ...)")
    bound = _bound_names(code)
    counts: dict[str, int] = {}
    first: dict[str, tuple[int, int]] = {}
    for _, node in _function_body(code, nested=True):
        if isinstance(node, cst.Name) and node.value in bound and code.inside(node):
            counts[node.value] = counts.get(node.value, 0) + 1
            first[node.value] = min(first.get(node.value, code.start(node)), code.start(node))
    if not counts:
        return NotApplicable("no local variable in the partial code")
    name = min(counts, key=lambda n: (-counts[n], first[n]))
    return name, bound[name]


def _renamed(code: PartialCode, old: str, new: str) -> str:
    """The program with the variable `old` of the function renamed `new` in its body (all
    scopes inside it); attribute names, keyword arguments and the signature are left alone."""
    body = code.function.body

    class Renamer(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            return updated.with_changes(value=new) if original.value == old else updated

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
            return updated.with_changes(attr=original.attr)

        def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
            return updated.with_changes(keyword=original.keyword)

        def leave_ImportAlias(
            self, original: cst.ImportAlias, updated: cst.ImportAlias
        ) -> cst.ImportAlias:
            return original

    new_body = body.visit(Renamer())
    assert isinstance(new_body, cst.BaseSuite)
    return _replace(code, {body: new_body})


def _usable(name: str, used: set[str]) -> bool:
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not hasattr(builtins, name)
        and name not in used
    )


def _rename(
    problem: Problem, choose: Callable[[str, str, set[str]], str | NotApplicable], how: str
) -> Variants:
    code = parse_partial(problem)
    if isinstance(code, NotApplicable):
        return code
    target = _rename_target(code)
    if isinstance(target, NotApplicable):
        return target
    old, role = target
    used = _used_names(code)
    new = choose(old, role, used)
    if isinstance(new, NotApplicable):
        return new
    changes = {"old_name": old, "new_name": new, "how": how}
    return _variant(code, _renamed(code, old, new), changes)


def _with_suffix(name: str, used: set[str]) -> str:
    """ReCode's rule for a name that collides: append `2` (until it no longer does)."""
    while not _usable(name, used):
        name += "2"
    return name


@transform("code_rename_naive", "1", family=FAMILY, recode="VarRenamerNaive", baseline=BASELINE)
def code_rename_naive(
    problem: Problem, keywords: KeywordAnalysis | None, *, new_name: str = "VAR_0"
) -> Variants:
    """ReCode VarRenamerNaive: the partial code's most frequent local variable renamed
    `new_name` (VAR_0) wherever the function uses it."""
    if not new_name.isidentifier() or keyword.iskeyword(new_name):
        return NotApplicable(f"new_name {new_name!r} is not a Python identifier")

    def choose(old: str, role: str, used: set[str]) -> str:
        return _with_suffix(new_name, used)

    return _rename(problem, choose, "naive")


@transform("code_rename_rn", "1", family=FAMILY, recode="VarRenamerRN", baseline=BASELINE)
def code_rename_rn(
    problem: Problem, keywords: KeywordAnalysis | None, *, rng: random.Random
) -> Variants:
    """ReCode VarRenamerRN: the partial code's most frequent local variable renamed to random
    letters and digits of its length (a letter first) wherever the function uses it."""

    def choose(old: str, role: str, used: set[str]) -> str | NotApplicable:
        # ReCode's alphabet: letters, and the digits six times over (digits are frequent).
        pool = string.ascii_letters + string.digits * 6
        for _ in range(100):
            name = rng.choice(string.ascii_letters) + "".join(
                rng.choice(pool) for _ in range(len(old) - 1)
            )
            if _usable(name, used) and name != old:
                return name
        return NotApplicable(f"no unused random name of {len(old)} characters was drawn")

    return _rename(problem, choose, "random")


@transform("code_rename_cb", "1", family=FAMILY, recode="VarRenamerCB", baseline=BASELINE)
def code_rename_cb(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """ReCode VarRenamerCB without CodeBERT: the partial code's most frequent local variable
    renamed to a conventional name for its role (i, item, result, count, s, ...) that the
    function does not use, wherever the function uses it."""

    def choose(old: str, role: str, used: set[str]) -> str:
        options: Sequence[str] = [n for n in ROLE_NAMES[role] if n != old]
        return next((n for n in options if _usable(n, used)), _with_suffix(options[0], used))

    return _rename(problem, choose, "conventional name for its role")
