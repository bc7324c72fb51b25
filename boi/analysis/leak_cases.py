"""Test cases as values: what a prompt's examples show and what a problem's hidden tests check.

`boi analyze leaks` compares the two by value, never by text: `f(1, 2) == 3` in an assert and
`>>> f(1,2)` + `3` in a docstring are one case. This module reads both sides into `Case`s
(positional arguments, an expected value, and how the tests compare a value with it: a
`Judge`) and says what it could not read (`Unparsed`, with the reason); nothing is guessed.

Hidden tests (`read_hidden`):

- HumanEval's shape, `def check(candidate)` with asserts: `candidate(ARGS) == V` (either
  side), `candidate(ARGS) is V`, either through built-in conversions of the result
  (`tuple(candidate(ARGS)) == tuple(V)`, `int(candidate(ARGS)) == V`: `CONVERSIONS`),
  `candidate(ARGS)` / `not candidate(ARGS)` (truthy / falsy),
  `abs(candidate(ARGS) - V) < TOL` (or `<=`, either operand order) and
  `math.isclose(candidate(ARGS), V, rel_tol=..., abs_tol=...)`. ARGS and V must be literals
  (`literal`: Python literals plus arithmetic on numbers, `float('inf')`, `set()`, ...). Any
  other call of the candidate (a loop over random inputs, a helper compared with the result, the
  candidate compared with the entry point itself, an assert of another form) is one unparsed
  case per statement, with the reason.
- HumanEval+'s (`benchmarks.loaders.humanevalplus`): the inputs and expected outputs its
  check walks (`_PLUS_DATA`, or `_PLUS_INPUTS` / `_PLUS_EXPECTED`), compared as evalplus does
  (`plus_matches`, with the problem's atol); an oracle-judged problem (`find_zero`) is unparsed.
- stdin/stdout problems (CodeContests): every `stdio_tests` entry, whatever its split,
  compared as the judge does (`Problem.output_judge`: whitespace tokens, float tolerance).

Examples (`read_examples`), inside the prompt's `examples` block (`perturb.blocks`):

- doctest: `>>> f(ARGS)` and the output lines after it (none: `None`), or `>>> f(ARGS) == V`;
- a call of the entry point followed by `==>`, `=>`, `->`, `➞`, `==`, `=`, `:`, `returns`,
  `should return`, `# returns`, ... and a literal (`true`/`false`/`none` count as Python's;
  a worked computation `... = 8` gives its last member; a note after the literal is ignored;
  a quoted word with one quote typed twice, `""abc"`, is that word; a printed defaultdict is
  its dict);
- `Input: ...` / `Output: ...` pairs (arguments positional or named, `name : value` lines);
- `For x = V, y = W the output should be Z`;
- lines assigning every argument (`arr = [1, 2]`, `grid : [[0]]`, `operator['+']`), then, in
  the same paragraph, the result (`return X`, `result = X`, `=> result = X`);
- where no example calls the entry point, calls of one other name that neither Python nor the
  prompt defines (the function to write, misnamed: HumanEval/81, 149), with a note;
- statements (stdin/stdout): the blocks under `Input` and `Output` headers, in pairs.

Named arguments are mapped to positions through the prompt's signature, and literal defaults
are filled in, so `f(x)` and `f(x, 2)` are one case when the second parameter defaults to 2.
Names given for every parameter in order, some not the parameters' own (`bucket_capacity` for
`capacity`), are taken by position. An unquoted word in an example (`is_happy(abcd)`) is the
string it spells where every hidden test passes a string in that position
(`Signature.knowing`): the tests say only how to read an example's input, never its output.
Inputs are compared with lists and tuples alike (`input_key`): evalplus feeds JSON lists where
the prompt shows tuples.
"""

from __future__ import annotations

import ast
import base64
import builtins
import dataclasses
import json
import math
import re
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.execution import same_output
from benchmarks.loaders.humanevalplus import PlusDigest, plus_matches
from benchmarks.problem import Problem
from perturb.blocks import SplitError, parse_prompt

# --------------------------------------------------------------------------- values


class NotLiteral(ValueError):
    """An expression `literal` does not evaluate (a name, a call it does not know, ...)."""


# Sizes `literal` refuses to build (a test's `'a' * 10**9` is not plain data worth comparing).
MAX_ITEMS = 1_000_000
MAX_POWER_BITS = 100_000
_LOOSE_NAMES = {"true": True, "false": False, "none": None, "null": None}
_NUMBER = (int, float, complex)


def literal(
    node: ast.AST,
    *,
    loose: bool = False,
    calls: Mapping[str, Callable[..., Any]] | None = None,
) -> Any:
    """The value of a literal expression: constants, tuples, lists, sets, dicts, unary and
    binary arithmetic on numbers, `+`/`*` on strings and sequences, and the calls
    `float(...)`, `complex(...)`, `set(...)`, `frozenset(...)`, `tuple(...)`, `list(...)`,
    `dict()`, `Counter({...})` / `OrderedDict({...})` (as their dict) on literals (plus `calls`, name -> function of literal arguments). `loose` also
    reads the names true/false/none/null (prompts write them so). Raises NotLiteral."""

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            if node.value is Ellipsis:
                raise NotLiteral("an ellipsis")
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(value(e) for e in node.elts)
        if isinstance(node, ast.List):
            return [value(e) for e in node.elts]
        if isinstance(node, ast.Set):
            return {value(e) for e in node.elts}
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise NotLiteral("a ** in a dict")
            return {value(k): value(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
        if isinstance(node, ast.Name):
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            if loose and node.id.lower() in _LOOSE_NAMES:
                return _LOOSE_NAMES[node.id.lower()]
            raise NotLiteral(f"the name {node.id}")
        if isinstance(node, ast.UnaryOp):
            operand = value(node.operand)
            if isinstance(node.op, ast.USub) and type(operand) in _NUMBER:
                return -operand
            if isinstance(node.op, ast.UAdd) and type(operand) in _NUMBER:
                return +operand
            if isinstance(node.op, ast.Not):
                return not operand
            raise NotLiteral("a unary operator on a non-number")
        if isinstance(node, ast.BinOp):
            return _binary(node.op, value(node.left), value(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            args = [value(a) for a in node.args]
            name = node.func.id
            if calls and name in calls:
                return calls[name](*args)
            return _builtin_call(name, args)
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Call):  # `copy.deepcopy(x)`, `f(x, key=...)`
            raise NotLiteral(f"a call of {_clip(ast.unparse(node.func), 60)}()")
        raise NotLiteral(f"a {type(node).__name__} expression")

    try:
        return value(node)
    except RecursionError:
        raise NotLiteral("nested too deeply") from None
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, MemoryError) as err:
        if isinstance(err, NotLiteral):
            raise
        raise NotLiteral(str(err)) from None


def _binary(op: ast.operator, left: Any, right: Any) -> Any:
    numbers = type(left) in _NUMBER and type(right) in _NUMBER
    if isinstance(op, ast.Pow) and numbers:
        if isinstance(right, int) and isinstance(left, int) and right > 0:
            if abs(left) > 1 and right * max(1, abs(left).bit_length()) > MAX_POWER_BITS:
                raise NotLiteral("a power too large")
        return left**right
    if numbers and isinstance(op, ast.Add | ast.Sub | ast.Mult | ast.Div | ast.FloorDiv | ast.Mod):
        return {
            ast.Add: lambda: left + right,
            ast.Sub: lambda: left - right,
            ast.Mult: lambda: left * right,
            ast.Div: lambda: left / right,
            ast.FloorDiv: lambda: left // right,
            ast.Mod: lambda: left % right,
        }[type(op)]()
    sequences = (str, bytes, list, tuple)
    if isinstance(op, ast.Add) and type(left) is type(right) and type(left) in sequences:
        if len(left) + len(right) > MAX_ITEMS:
            raise NotLiteral("a sequence too long")
        return left + right
    if isinstance(op, ast.Mult):
        seq, times = (left, right) if type(right) is int else (right, left)
        if type(seq) in sequences and type(times) is int:
            if len(seq) * max(times, 0) > MAX_ITEMS:
                raise NotLiteral("a sequence too long")
            return seq * times
    raise NotLiteral(f"the operator {type(op).__name__} on these values")


def _builtin_call(name: str, args: list[Any]) -> Any:
    if name == "float" and len(args) == 1 and type(args[0]) in (str, int, float):
        return float(args[0])
    if name == "complex" and len(args) in (1, 2) and all(type(a) in _NUMBER for a in args):
        return complex(*args)
    if name in ("set", "frozenset", "tuple", "list") and len(args) <= 1:
        if args and type(args[0]) not in (list, tuple, set, frozenset, str):
            raise NotLiteral(f"{name}() of a {type(args[0]).__name__}")
        return {"set": set, "frozenset": frozenset, "tuple": tuple, "list": list}[name](*args)
    if name == "dict" and not args:
        return {}
    if (
        name in ("Counter", "OrderedDict", "defaultdict")
        and len(args) == 1
        and type(args[0]) is dict
    ):
        return args[0]  # as the repr of a result shows it; equal to the dict it holds
    raise NotLiteral(f"a call of {name}()")


# The repr of a defaultdict names its factory as `<class 'list'>`, which is no expression.
_DEFAULTDICT_REPR = re.compile(r"\bdefaultdict\(\s*<(?:class|function) '[\w.<>]+'>\s*,\s*")


def parse_literal(text: str, *, loose: bool = False) -> Any:
    """`literal` of an expression's source text (comments allowed); raises NotLiteral.
    `loose` also reads a printed defaultdict, `defaultdict(<class 'list'>, {...})`, as its
    dict (what a doctest shows of one)."""
    if loose:
        text = _DEFAULTDICT_REPR.sub("defaultdict(", text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in prompts' strings
            tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError) as err:
        raise NotLiteral(f"not an expression ({type(err).__name__})") from None
    return literal(tree, loose=loose)


def input_key(value: Any) -> Any:
    """A hashable key under which equal inputs meet: lists and tuples alike (evalplus feeds
    JSON lists where a prompt shows tuples), dicts and sets by content, numbers by value.
    Self-contained: the memoriser carries this very source (`boi.analysis.leaks`)."""
    kind = type(value)
    if kind is list or kind is tuple:
        return ("seq", tuple(input_key(v) for v in value))
    if kind is dict:
        return ("map", frozenset((input_key(k), input_key(v)) for k, v in value.items()))
    if kind is set or kind is frozenset:
        return ("set", frozenset(input_key(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return value


def short(value: Any, limit: int = 160) -> str:
    """A value as a report shows it (repr, cut)."""
    try:
        text = repr(value)
    except ValueError:  # an int too long for decimal digits
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Judge:
    """How the tests compare a value with a case's expected one.

    kind: `eq` (==), `is`, `truthy` / `falsy` (bare `assert candidate(...)` / `not ...`),
    `abs` (|value - expected| < tol, `<=` when not `strict`), `isclose` (math.isclose with
    rel_tol / abs_tol), `plus` (evalplus's rule with atol), `tokens` (the contest judge).
    `convert`: the built-ins the test applies to the candidate's result before comparing,
    innermost first (`tuple(candidate(x)) == (1, 2)` is `eq` after `tuple`).
    """

    kind: str
    tol: float = 0.0
    rel_tol: float = 0.0
    strict: bool = True
    output_judge: Mapping[str, Any] = field(default_factory=dict)
    convert: tuple[str, ...] = ()

    def accepts(self, value: Any, expected: Any) -> bool:
        """Whether the tests pass `value` where they expect `expected` (never raises)."""
        try:
            for name in self.convert:
                value = CONVERSIONS[name](value)
            return bool(self._accepts(value, expected))
        except Exception:  # a comparison the value does not support fails, as in the test
            return False

    def _accepts(self, value: Any, expected: Any) -> bool:
        if self.kind == "eq":
            return bool(value == expected)
        if self.kind == "is":
            return value is expected
        if self.kind == "truthy":
            return bool(value)
        if self.kind == "falsy":
            return not value
        if self.kind == "abs":
            gap = abs(value - expected)
            return bool(gap < self.tol if self.strict else gap <= self.tol)
        if self.kind == "isclose":
            return math.isclose(value, expected, rel_tol=self.rel_tol, abs_tol=self.tol)
        if self.kind == "plus":
            return plus_matches(value, expected, self.tol)
        if self.kind == "tokens":
            return type(value) is str and same_output(value, expected, dict(self.output_judge))
        raise ValueError(f"unknown judge {self.kind!r}")

    @property
    def float_tolerance(self) -> float:
        """The tolerance this judge grants a float (0: exact)."""
        if self.kind in ("abs", "isclose", "plus"):
            return max(self.tol, self.rel_tol, 1e-6 if self.kind == "plus" else 0.0)
        if self.kind == "tokens":
            return float(self.output_judge.get("float_tolerance", 0.0))
        return 0.0

    def describe(self) -> str:
        if self.kind == "abs":
            text = f"|value - expected| {'<' if self.strict else '<='} {self.tol:g}"
        elif self.kind == "isclose":
            text = f"isclose(rel_tol={self.rel_tol:g}, abs_tol={self.tol:g})"
        elif self.kind == "plus":
            text = f"evalplus (atol {self.tol:g})"
        else:
            text = self.kind
        return f"{text} after {', '.join(f'{n}()' for n in self.convert)}" if self.convert else text


# The built-ins a test may apply to the candidate's result before comparing it: pure functions
# of one value, applied to the shown output the same way (`tuple(candidate(x)) == tuple(...)`).
CONVERSIONS: Mapping[str, Callable[[Any], Any]] = {
    "tuple": tuple,
    "list": list,
    "set": set,
    "frozenset": frozenset,
    "sorted": sorted,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "abs": abs,
    "round": round,
    "len": len,
}


EQ = Judge("eq")


@dataclass(frozen=True)
class Case:
    """One call (positional `args`) and its expected value, as the tests or the prompt state it.
    `source` is the text it was read from; `split` the stdin/stdout test's split."""

    args: tuple[Any, ...]
    expected: Any
    judge: Judge = EQ
    source: str = ""
    split: str = ""

    @property
    def key(self) -> Any:
        return input_key(self.args)


@dataclass(frozen=True)
class Unparsed:
    """A test or an example that was seen but not read, and why."""

    source: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"source": _clip(self.source), "reason": self.reason}


def _clip(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- signatures


@dataclass(frozen=True)
class Signature:
    """The entry point's parameters, to put named arguments in place and fill defaults.

    `text_positions`: the argument positions where every hidden test passes a string; an
    example's bare word there (`is_happy(abcd) => True`) is read as that string (`knowing`)."""

    params: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    varargs: bool = False
    known: bool = False
    text_positions: frozenset[int] = frozenset()

    def knowing(self, cases: Sequence[Case]) -> Signature:
        """This signature with the positions where every one of `cases` that reaches them
        passes a string (at least one does): only the hidden tests say what type an unquoted
        word of an example stands for; they never decide an example's output."""
        positions = set()
        for index in range(max((len(c.args) for c in cases), default=0)):
            values = [c.args[index] for c in cases if len(c.args) > index]
            if values and all(type(v) is str for v in values):
                positions.add(index)
        return dataclasses.replace(self, text_positions=frozenset(positions))

    @classmethod
    def of(cls, problem: Problem) -> Signature:
        """The signature of the prompt's function named `entry_point` (unknown when absent)."""
        if not problem.entry_point:
            return cls()
        try:
            module = parse_prompt(problem.prompt)
        except SplitError:
            return cls()
        found = [
            n
            for n in ast.walk(module)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and n.name == problem.entry_point
        ]
        if not found:
            return cls()
        args = found[-1].args
        names = [a.arg for a in (*args.posonlyargs, *args.args)]
        defaults: dict[str, Any] = {}
        for name, node in zip(names[len(names) - len(args.defaults) :], args.defaults, strict=True):
            try:
                defaults[name] = literal(node)
            except NotLiteral:
                pass
        return cls(tuple(names), defaults, args.vararg is not None, True)

    def place(self, call: ast.Call, *, loose: bool = False) -> tuple[Any, ...]:
        """The call's arguments as positional values, named ones placed and literal defaults
        filled in; raises NotLiteral when that cannot be done. `loose` (an example's text,
        not code): true/false/none, a bare word at a `text_positions` position as a string,
        and names given for every parameter in order that are not all the parameters' own
        (`grid : ..., bucket_capacity : 1` for `max_fill(grid, capacity)`) taken by position."""
        if any(isinstance(a, ast.Starred) for a in call.args):
            raise NotLiteral("a *argument")
        if any(k.arg is None for k in call.keywords):
            raise NotLiteral("a **argument")
        names = [str(k.arg) for k in call.keywords]
        by_position = (
            loose
            and self.known
            and not call.args
            and len(names) == len(self.params)
            and len(set(names)) == len(names)
            and any(n not in self.params for n in names)
            and all(n == p or n not in self.params for n, p in zip(names, self.params, strict=True))
        )
        if by_position:
            return tuple(self._value(k.value, i, loose) for i, k in enumerate(call.keywords))
        positional = [self._value(a, i, loose) for i, a in enumerate(call.args)]
        named: dict[str, Any] = {}
        for keyword in call.keywords:
            index = self.params.index(keyword.arg) if keyword.arg in self.params else -1
            named[str(keyword.arg)] = self._value(keyword.value, index, loose)
        return self.complete(positional, named)

    def _value(self, node: ast.expr, index: int, loose: bool) -> Any:
        if (
            loose
            and index in self.text_positions
            and isinstance(node, ast.Name)
            and node.id not in ("True", "False", "None")
        ):
            return node.id
        return literal(node, loose=loose)

    def complete(self, positional: Sequence[Any], named: Mapping[str, Any] = {}) -> tuple[Any, ...]:
        """Positional values with `named` placed and trailing literal defaults filled in."""
        values = list(positional)
        if named and not self.known:
            raise NotLiteral("named arguments of an unknown signature")
        if not self.known or (self.varargs and len(values) > len(self.params)):
            return tuple(values)
        for name in named:
            if name not in self.params or self.params.index(name) < len(values):
                raise NotLiteral(f"the argument {name!r} is not a free parameter")
        for name in self.params[len(values) :]:
            if name in named:
                values.append(named[name])
            elif name in self.defaults:
                values.append(self.defaults[name])
            else:
                break
        if len(values) < len(self.params) and any(n in named for n in self.params[len(values) :]):
            raise NotLiteral("a named argument after a missing one")
        return tuple(values)


# --------------------------------------------------------------------------- hidden tests


@dataclass
class Hidden:
    """A problem's hidden test cases, and what could not be read."""

    cases: list[Case] = field(default_factory=list)
    unparsed: list[Unparsed] = field(default_factory=list)


def read_hidden(problem: Problem, signature: Signature | None = None) -> Hidden:
    """The hidden test cases of `problem` (see the module docstring)."""
    if problem.is_stdio:
        judge = Judge("tokens", output_judge=problem.output_judge.to_json())
        return Hidden(
            [
                Case((t.input,), t.output, judge, source=t.input, split=t.split)
                for t in problem.stdio_tests
            ]
        )
    signature = signature or Signature.of(problem)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = ast.parse(problem.test)
    except (SyntaxError, ValueError) as err:
        return Hidden(unparsed=[Unparsed(problem.test[:200], f"the test does not parse ({err})")])
    plus = _plus_cases(module, problem, signature)
    if plus is not None:
        return plus
    check = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    names = {problem.entry_point or ""}
    body: list[ast.stmt] = module.body
    if check:
        body = check[-1].body
        arguments = check[-1].args.args
        if arguments:
            names.add(arguments[0].arg)
    hidden = Hidden()
    _walk_statements(body, names - {""}, signature, hidden)
    return hidden


def _is_candidate_call(node: ast.AST, names: set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def _candidate_calls(node: ast.AST, names: set[str]) -> list[ast.Call]:
    return [n for n in ast.walk(node) if _is_candidate_call(n, names)]  # type: ignore[misc]


def _walk_statements(
    body: Sequence[ast.stmt], names: set[str], signature: Signature, hidden: Hidden
) -> None:
    for statement in body:
        if isinstance(statement, ast.Assert):
            if not _candidate_calls(statement.test, names):
                continue  # `assert True, "..."`: no case
            source = ast.unparse(statement.test)
            try:
                hidden.cases.append(_assert_case(statement.test, names, signature, source))
            except NotLiteral as err:
                hidden.unparsed.append(Unparsed(source, str(err)))
            continue
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if _candidate_calls(statement, names):
                hidden.unparsed.append(
                    Unparsed(ast.unparse(statement)[:200], "a call inside a nested definition")
                )
            continue
        inner = [
            getattr(statement, part)
            for part in ("body", "orelse", "finalbody")
            if isinstance(getattr(statement, part, None), list)
        ]
        handlers = getattr(statement, "handlers", None) or []
        if inner or handlers:
            # A compound statement: its own header (a loop's iterable, a condition) and then
            # its bodies; a case inside a loop reads its loop variables and stays unparsed.
            header = [
                getattr(statement, part)
                for part in ("test", "iter", "items", "subject")
                if getattr(statement, part, None) is not None
            ]
            for part in header:
                for call in _candidate_calls(part, names) if isinstance(part, ast.AST) else ():
                    hidden.unparsed.append(Unparsed(ast.unparse(call), "a call outside an assert"))
            for block in inner:
                _walk_statements(block, names, signature, hidden)
            for handler in handlers:
                _walk_statements(handler.body, names, signature, hidden)
            continue
        hidden.unparsed += [
            Unparsed(ast.unparse(statement)[:200], "a call outside an assert")
            for _ in _candidate_calls(statement, names)
        ]


def _call_args(node: ast.AST, names: set[str], signature: Signature) -> tuple[Any, ...]:
    if not _is_candidate_call(node, names):
        raise NotLiteral("the candidate's result is not compared directly")
    assert isinstance(node, ast.Call)
    return signature.place(node)


def _unwrap(node: ast.AST, names: set[str]) -> tuple[ast.AST, tuple[str, ...]]:
    """(the candidate's call, the conversions applied to its result, innermost first) of
    `tuple(sorted(candidate(x)))`; `node` and () when it is no such chain."""
    chain: list[str] = []
    inner = node
    while (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Name)
        and inner.func.id in CONVERSIONS
        and len(inner.args) == 1
        and not inner.keywords
    ):
        chain.append(inner.func.id)
        inner = inner.args[0]
    if chain and _is_candidate_call(inner, names):
        return inner, tuple(reversed(chain))
    return node, ()


def _assert_case(test: ast.expr, names: set[str], signature: Signature, source: str) -> Case:
    """One assert as a case; raises NotLiteral when it has none of the known forms."""
    if _is_candidate_call(test, names):
        return Case(_call_args(test, names, signature), True, Judge("truthy"), source)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return Case(_call_args(test.operand, names, signature), False, Judge("falsy"), source)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right, op = test.left, test.comparators[0], test.ops[0]
        if isinstance(op, ast.Eq | ast.Is):
            if _candidate_calls(left, names) and _candidate_calls(right, names):
                # HumanEval/33's `tuple(candidate(x)) == tuple(sort_third(x))`: the entry
                # point is the function under test, so the assert holds for any answer.
                raise NotLiteral(
                    "compares the candidate's result with another call of the function under "
                    "test: no expected value"
                )
            side = left if _candidate_calls(left, names) else right
            other = right if side is left else left
            call, convert = _unwrap(side, names)
            judge = Judge("eq" if isinstance(op, ast.Eq) else "is", convert=convert)
            return Case(_call_args(call, names, signature), literal(other), judge, source)
        if isinstance(op, ast.Lt | ast.LtE) and _is_abs_of_difference(left):
            assert isinstance(left, ast.Call) and isinstance(left.args[0], ast.BinOp)
            first, second = left.args[0].left, left.args[0].right
            call, other = (first, second) if _is_candidate_call(first, names) else (second, first)
            tol = literal(right)
            if type(tol) not in (int, float):
                raise NotLiteral("a tolerance that is not a number")
            judge = Judge("abs", tol=float(tol), strict=isinstance(op, ast.Lt))
            return Case(_call_args(call, names, signature), literal(other), judge, source)
    if isinstance(test, ast.Call) and _is_isclose(test.func) and len(test.args) == 2:
        first, second = test.args
        call, other = (first, second) if _is_candidate_call(first, names) else (second, first)
        options = {k.arg: literal(k.value) for k in test.keywords}
        if set(options) - {"rel_tol", "abs_tol"}:
            raise NotLiteral("isclose with other options")
        judge = Judge(
            "isclose",
            tol=float(options.get("abs_tol", 0.0)),
            rel_tol=float(options.get("rel_tol", 1e-9)),
        )
        return Case(_call_args(call, names, signature), literal(other), judge, source)
    raise NotLiteral("an assert of another form")


def _is_abs_of_difference(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "abs"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.BinOp)
        and isinstance(node.args[0].op, ast.Sub)
    )


def _is_isclose(func: ast.AST) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "isclose"
    return isinstance(func, ast.Attribute) and func.attr == "isclose"


_PLUS_CALLS: Mapping[str, Callable[..., Any]] = {"_PlusDigest": PlusDigest}


def _plus_cases(module: ast.Module, problem: Problem, signature: Signature) -> Hidden | None:
    """HumanEval+'s tests (None when the test has another shape). The test carries its inputs
    and expected outputs as `_PLUS_DATA` (`_plus_check._plus_unpack`'s layout: zlib-compressed
    text in base64, the inputs' JSON on the first line, the outputs' source after it), or as
    `_PLUS_INPUTS` (JSON) and `_PLUS_EXPECTED` (a list); the outputs are read with `literal`,
    never evaluated."""
    assigned: dict[str, ast.expr] = {}
    for node in module.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            assigned[node.targets[0].id] = node.value
    calls = [
        n
        for n in ast.walk(module)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "_plus_check_all"
    ]
    packed = "_PLUS_DATA" in assigned
    if len(calls) != 1 or not (packed or {"_PLUS_INPUTS", "_PLUS_EXPECTED"} <= set(assigned)):
        return None
    # _plus_check_all(candidate, data, atol, base, oracle) or (candidate, inputs, expected, ...)
    positions = ("atol", "base", "oracle")
    first_option = 2 if packed else 3
    options: dict[str, ast.expr] = {
        name: node for name, node in zip(positions, calls[0].args[first_option:], strict=False)
    }
    options.update({k.arg: k.value for k in calls[0].keywords if k.arg})
    try:
        atol = float(literal(options["atol"])) if "atol" in options else 0.0
        oracle = literal(options["oracle"]) if "oracle" in options else ""
        if packed:
            inputs_json, expected_source = _unpack(literal(assigned["_PLUS_DATA"]))
            expected_node: ast.expr = ast.parse(expected_source, mode="eval").body
        else:
            inputs_json, expected_node = (
                literal(assigned["_PLUS_INPUTS"]),
                assigned["_PLUS_EXPECTED"],
            )
        inputs = json.loads(inputs_json)
        if not isinstance(expected_node, ast.List) or len(expected_node.elts) != len(inputs):
            raise NotLiteral("inputs and outputs differ in number")
    except (NotLiteral, ValueError, TypeError, SyntaxError, zlib.error) as err:
        return Hidden(unparsed=[Unparsed("_plus_check_all(...)", f"a HumanEval+ test ({err})")])
    hidden = Hidden()
    if oracle:
        hidden.unparsed += [
            Unparsed(f"{problem.entry_point}(*{short(args)})", f"judged by an oracle ({oracle})")
            for args in inputs
        ]
        return hidden
    judge = Judge("plus", tol=atol)
    for args, item in zip(inputs, expected_node.elts, strict=True):
        try:
            if not isinstance(args, list):
                raise NotLiteral("an input that is not an argument list")
            value = literal(item, calls=_PLUS_CALLS)
            hidden.cases.append(Case(signature.complete(args), value, judge))
        except NotLiteral as err:
            hidden.unparsed.append(Unparsed(f"{problem.entry_point}(*{short(args)})", str(err)))
    return hidden


# What a packed HumanEval+ test may decompress to at most (its largest is a few megabytes).
MAX_UNPACKED = 1 << 28


def _unpack(data: Any) -> tuple[str, str]:
    """(inputs' JSON, outputs' source) of a `_PLUS_DATA` string."""
    if type(data) is not str:
        raise NotLiteral("_PLUS_DATA is not a string")
    inflater = zlib.decompressobj()
    raw = inflater.decompress(base64.b64decode(data, validate=False), MAX_UNPACKED)
    if inflater.unconsumed_tail:
        raise NotLiteral("_PLUS_DATA unpacks to more than the limit")
    inputs_json, _, expected_source = raw.decode("utf-8", "surrogatepass").partition("\n")
    return inputs_json, expected_source


# --------------------------------------------------------------------------- examples


@dataclass
class Examples:
    """The cases a prompt's example block shows, and the example-like text it could not read."""

    cases: list[Case] = field(default_factory=list)
    unparsed: list[Unparsed] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_DOCTEST = re.compile(r"^[ \t]*>>>[ \t]?(.*)$")
_CONTINUATION = re.compile(r"^[ \t]*\.\.\.[ \t]?(.*)$")
# What may stand between a call and its stated result.
_SEPARATOR = re.compile(
    r"""[ \t]*(?:\#[ \t]*)?(?:
        ==>|=>|->|-->|➞|→|⇒|==|=|:
        |should\s+return|should\s+be|returns?|gives?|outputs?|is
    )(?![=>])[ \t]*(?:\#[ \t]*)?""",
    re.VERBOSE | re.IGNORECASE,
)
# A call at a line's start that is not the entry point's, but stated like an example.
_OTHER_CALL = re.compile(
    r"^[ \t]*(?:[*\-•][ \t]*|assert[ \t]+|for[ \t]+)?([A-Za-z_]\w*)[ \t]*\(", re.M
)
_INPUT_OUTPUT = re.compile(
    r"^[ \t]*Input[ \t]*:[ \t]*(?P<input>.*?)^[ \t]*Output[ \t]*:[ \t]*(?P<output>[^\n]*)",
    re.M | re.S | re.IGNORECASE,
)
_FOR_ARGS = re.compile(
    r"\bFor[ \t]+(?P<args>[A-Za-z_]\w*[ \t]*=.+?),?[ \t]+the[ \t]+(?:output|result)[ \t]+"
    r"(?:should[ \t]+be|will[ \t]+be|is)[ \t]*:?[ \t]*(?P<output>[^\n]*)",
    re.IGNORECASE,
)
_NAME_COLON = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*:[ \t]*", re.M)
# `arr = [1, 2]`, `grid : [[0, 1]]`, `operator['+', '*']` (a name, then its value).
_ASSIGNMENT = re.compile(
    r"^[ \t]*(?P<name>[A-Za-z_]\w*)[ \t]*(?:(?:=(?!=)|:)[ \t]*|(?=[\[({]))(?P<value>\S.*?)[ \t]*$"
)
_RESULT_WORDS = {"return", "returns", "result", "output", "answer", "expected"}
_RESULT_LINE = re.compile(
    r"^[ \t]*(?:(?:=+>|-+>|➞|→|⇒)[ \t]*)?(?:return|returns|result|output|answer)\b[ \t]*"
    r"(?:(?:=(?!=)|:|is|should[ \t]+be)[ \t]*)?(?P<value>\S.*)$",
    re.IGNORECASE,
)
_HEADER = re.compile(r"^[ \t]*(Input|Output)[ \t]*:?[ \t]*$", re.IGNORECASE)
_NOTE_START = re.compile(r"\A\s*(?:$|[A-Za-z(#,;]|\.\s|\.$)")


def read_examples(problem: Problem, signature: Signature | None = None) -> Examples:
    """The cases the prompt's examples block shows (see the module docstring)."""
    block = problem.block("examples")
    if block is None:
        return Examples()
    if problem.is_stdio:
        return _statement_examples(block.text, problem)
    if signature is None:
        signature = Signature.of(problem)
        signature = signature.knowing(read_hidden(problem, signature).cases)
    reader = _ExampleReader(
        block.text, problem.entry_point or "", signature, _prompt_names(problem)
    )
    found = reader.read()
    if not found.cases and not found.unparsed and block.text.strip():
        found.unparsed.append(Unparsed(block.text, "no example found in the examples block"))
    return found


def _prompt_names(problem: Problem) -> frozenset[str]:
    """The names an example may call that are not the function to write: the built-ins and
    what the prompt defines, imports or assigns (HumanEval/10's `is_palindrome`)."""
    names = set(dir(builtins))
    try:
        module = parse_prompt(problem.prompt)
    except SplitError:
        return frozenset(names)
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return frozenset(names - {problem.entry_point or ""})


class _ExampleReader:
    """Reads one function prompt's examples block; `used` marks the characters already read.
    `names`: what a call must be named to be an example (the entry point; another name when
    the examples call the function to write by a wrong name, `_renamed`); `defined`: names
    that are something else (built-ins, what the prompt defines)."""

    def __init__(
        self,
        text: str,
        entry_point: str,
        signature: Signature,
        defined: frozenset[str] = frozenset(),
    ) -> None:
        self.text = text
        self.entry = entry_point
        self.names = {entry_point}
        self.signature = signature
        self.defined = defined
        self.used = [False] * len(text)
        self.found = Examples()

    def read(self) -> Examples:
        self._doctests()
        self._input_output()
        self._for_args()
        self._assignments()
        self._inline(self.entry)
        if not self.found.cases and not self.found.unparsed:
            self._renamed()
        self._other_calls()
        return self.found

    # -- bookkeeping

    def _mark(self, start: int, end: int) -> None:
        for i in range(max(0, start), min(end, len(self.text))):
            self.used[i] = True

    def _free(self, start: int, end: int) -> bool:
        return not any(self.used[start:end])

    def _add(self, args: tuple[Any, ...], output: Any, source: str) -> None:
        self.found.cases.append(Case(args, output, EQ, " ".join(source.split())))

    def _skip(self, source: str, reason: str) -> None:
        self.found.unparsed.append(Unparsed(source, reason))

    def _call(self, source: str) -> ast.Call | None:
        """`source` as a call of the entry point, or None."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                node = ast.parse(source.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            return None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in self.names
        ):
            return node
        return None

    # -- doctest

    def _doctests(self) -> None:
        lines, starts = _lines_with_offsets(self.text)
        i = 0
        while i < len(lines):
            match = _DOCTEST.match(lines[i].rstrip("\n"))
            if not match:
                i += 1
                continue
            begin = starts[i]
            source = [match.group(1)]
            i += 1
            while i < len(lines) and (more := _CONTINUATION.match(lines[i].rstrip("\n"))):
                source.append(more.group(1))
                i += 1
            output = []
            j = i
            while j < len(lines) and lines[j].strip() and not _DOCTEST.match(lines[j]):
                output.append(lines[j].strip())
                j += 1
            # Doctest's output runs to a blank line; a prompt may go on with other examples
            # at once, so the output is the longest run of those lines that is one literal.
            used = next(
                (n for n in range(len(output), 0, -1) if _is_literal("\n".join(output[:n]))),
                min(1, len(output)),
            )
            i += used
            self._mark(begin, starts[i])
            self._doctest("\n".join(source), "\n".join(output[:used]))

    def _doctest(self, source: str, output: str) -> None:
        shown = source + (f" -> {output}" if output else "")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                node = ast.parse(source.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            # `f([1, 0]) 1`: a call and its output on one line.
            if not self._entry_at_start(source) or self._inline_at(source, 0, lone=True) is None:
                self._skip(shown, "the doctest line is not a call of the entry point")
            return
        try:
            if self._call(ast.unparse(node)) is not None:
                assert isinstance(node, ast.Call)
                args = self.signature.place(node, loose=False)
                value = _output_value(output)[0] if output else None
                self._add(args, value, shown)
                return
            if (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and isinstance(node.ops[0], ast.Eq)
                and output.strip() in ("", "True")
            ):
                left, right = node.left, node.comparators[0]
                call, other = (left, right) if self._call(ast.unparse(left)) else (right, left)
                if self._call(ast.unparse(call)) is not None:
                    assert isinstance(call, ast.Call)
                    self._add(self.signature.place(call), literal(other, loose=True), shown)
                    return
            # `f([1, 0]) [0, 1]` parses as a subscript: a call and its output on one line.
            if not self._entry_at_start(source) or self._inline_at(source, 0, lone=True) is None:
                self._skip(shown, "the example does not call the entry point directly")
        except NotLiteral as err:
            self._skip(shown, str(err))

    def _entry_at_start(self, source: str) -> bool:
        return (
            bool(self.entry) and re.match(rf"{re.escape(self.entry)}[ \t]*\(", source) is not None
        )

    # -- "Input: ... Output: ..."

    def _input_output(self) -> None:
        for match in _INPUT_OUTPUT.finditer(self.text):
            if not self._free(match.start(), match.end()):
                continue
            end = _extend_brackets(self.text, match.start("output"), match.end("output"))
            self._mark(match.start(), end)
            raw_input = match.group("input").strip()
            output = self.text[match.start("output") : end]
            shown = f"Input: {raw_input} Output: {output.strip()}"
            try:
                args = self._arguments(raw_input)
                value, _ = _output_value(output)
                self._add(args, value, shown)
            except NotLiteral as err:
                self._skip(shown, str(err))

    def _arguments(self, text: str) -> tuple[Any, ...]:
        """An argument list as written after `Input:` (positional, `a = 1, b = 2`, or
        `name : value` lines)."""
        candidates = [text]
        if _NAME_COLON.search(text):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            candidates.append(", ".join(_NAME_COLON.sub(r"\1=", line) for line in lines))
        for candidate in candidates:
            call = self._call(f"{self.entry}({' '.join(candidate.split())})")
            if call is not None:
                return self.signature.place(call, loose=True)
        raise NotLiteral("the input is not an argument list")

    # -- "For x = 1, y = 2 the output should be 3"

    def _for_args(self) -> None:
        for match in _FOR_ARGS.finditer(self.text):
            if not self._free(match.start(), match.end()):
                continue
            end = _extend_brackets(self.text, match.start("output"), match.end("output"))
            self._mark(match.start(), end)
            shown = match.group(0)
            parts = _split_top(match.group("args"), ",")
            try:
                value, _ = _output_value(self.text[match.start("output") : end])
                for count in range(len(parts), 0, -1):
                    call = self._call(f"{self.entry}({','.join(parts[:count])})")
                    if call is not None and not call.args:
                        self._add(self.signature.place(call, loose=True), value, shown)
                        break
                else:
                    raise NotLiteral("the arguments are not `name = value` pairs")
            except NotLiteral as err:
                self._skip(shown, str(err))

    # -- "arr = [1, 2]" ... "return [2, 1]": the arguments as assignments, then the result

    def _assignments(self) -> None:
        """Lines assigning every parameter (`name = value`, `name : value`, `name [...]`; in
        order, under the parameters' names or, for all of them, other names), then, in the
        same paragraph, a line stating the result (`return X`, `result = X`, `=> result = X`).
        Assignments with no result after them are prose, not examples."""
        if not self.signature.known or not self.signature.params:
            return
        lines, starts = _lines_with_offsets(self.text)
        i = 0
        while i < len(lines):
            group: list[tuple[str, str]] = []
            j = i
            while j < len(lines) and len(group) < len(self.signature.params):
                found = self._assignment(lines[j], starts[j])
                if found is None:
                    break
                group.append(found)
                j += 1
            end = None
            if len(group) == len(self.signature.params):
                end = self._assignment_result(group, lines, starts, i, j)
            i = i + 1 if end is None else end

    def _assignment_result(
        self,
        group: Sequence[tuple[str, str]],
        lines: Sequence[str],
        starts: Sequence[int],
        first: int,
        after: int,
    ) -> int | None:
        """Read the result of the assignments `lines[first:after]` (`group`); the index of
        the line after it, or None when the paragraph states none."""
        for k in range(after, len(lines)):
            line = lines[k].rstrip("\n")
            if not line.strip():
                return None
            following = self._assignment(lines[k], starts[k])
            if following is not None and following[0] == group[0][0]:
                return None  # the next example's arguments
            result = _RESULT_LINE.match(line)
            if not result or not self._free(starts[k], starts[k + 1]):
                continue
            stated = result.group("value").strip()
            shown = ", ".join(f"{n} = {v.strip()}" for n, v in group) + f" -> {stated}"
            try:
                value, _ = _output_value(stated)
            except NotLiteral:
                continue  # `return an empty array:` is prose
            self._mark(starts[first], starts[k + 1])
            call = self._call(f"{self.entry}({', '.join(f'{n}=({v})' for n, v in group)})")
            try:
                if call is None:
                    raise NotLiteral("the arguments do not parse")
                self._add(self.signature.place(call, loose=True), value, shown)
            except NotLiteral as err:
                self._skip(shown, str(err))
            return k + 1
        return None

    def _assignment(self, line: str, start: int) -> tuple[str, str] | None:
        """(name, value source) of a line assigning a literal to a name that is not a result
        word; None for any other line or one already read."""
        match = _ASSIGNMENT.match(line.rstrip("\n"))
        if (
            not match
            or match.group("name").lower() in _RESULT_WORDS
            or not self._free(start, start + len(line))
            or not _is_literal(match.group("value"))
        ):
            return None
        return match.group("name"), match.group("value")

    # -- calls of the entry point anywhere in the text

    def _inline(self, name: str) -> None:
        if not name:
            return
        pattern = re.compile(rf"(?<![\w.]){re.escape(name)}[ \t]*\(")
        position = 0
        while match := pattern.search(self.text, position):
            position = match.end()
            if not self._free(match.start(), match.end()):
                continue
            end = self._inline_at(self.text, match.start())
            if end is not None:
                position = max(position, end)

    def _inline_at(self, text: str, start: int, *, lone: bool = False) -> int | None:
        """Read the example whose call starts at `text[start]`; the end of what was read, or
        None when nothing (no closing parenthesis; with `lone`, no result on the line)."""
        opening = text.index("(", start)
        closing = _closing(text, opening)
        if closing is None:
            return None
        call_text = text[start : closing + 1]
        rest_start = closing + 1
        separator = _SEPARATOR.match(text, rest_start)
        line_end = text.find("\n", rest_start)
        line_end = len(text) if line_end < 0 else line_end
        if separator:
            output_start = separator.end()
            line_end = text.find("\n", output_start)
            line_end = len(text) if line_end < 0 else line_end
            # `should\n return 15`: a separator may not end the line; the result may follow it.
            if not text[output_start:line_end].strip() and not lone:
                following = text.find("\n", line_end + 1)
                output_start, line_end = line_end + 1, len(text) if following < 0 else following
        elif text[rest_start:line_end].strip():
            output_start = rest_start  # `f(x) [1, 2]`: the result right after the call
        elif lone:
            return None
        else:
            # The call alone on its line: a result on the next line only if it is a literal.
            following = text.find("\n", line_end + 1)
            output_start, line_end = line_end + 1, len(text) if following < 0 else following
            try:
                parse_literal(text[output_start:line_end], loose=True)
            except NotLiteral:
                if text is self.text:
                    self._mark(start, closing + 1)
                return closing + 1
        end = _extend_brackets(text, output_start, line_end)
        output = text[output_start:end]
        shown = f"{call_text} {text[rest_start:end].strip()}"
        call = self._call(call_text)
        read_end = end
        if call is None:
            if not lone:
                self._skip(shown, "the call does not parse")
        else:
            try:
                args = self.signature.place(call, loose=True)
                value, used = _output_value(output, allow_note=separator is not None)
                read_end = output_start + used
                self._add(args, value, f"{call_text} {text[rest_start:read_end].strip()}")
            except NotLiteral as err:
                if lone:
                    return None
                self._skip(shown, str(err))
        if text is self.text:
            self._mark(start, read_end)
        return read_end

    # -- the function to write, called by another name

    def _renamed(self) -> None:
        """Where no example calls the entry point, examples that all call one other name,
        which neither Python nor the prompt defines (HumanEval/81 shows `grade_equation`
        for `numerical_letter_grade`), are read as calls of the entry point, with a note."""
        if not self.entry:
            return
        called = set()
        for match in _OTHER_CALL.finditer(self.text):
            closing = _closing(self.text, match.end() - 1)
            if closing is not None and _SEPARATOR.match(self.text, closing + 1):
                called.add(match.group(1))
        if len(called) != 1 or called & (self.defined | {self.entry}):
            return
        (name,) = called
        self.names.add(name)
        before = len(self.found.cases)
        self._inline(name)
        if len(self.found.cases) > before:
            self.found.notes.append(
                f"the examples call {name}(), read as the entry point {self.entry}() (no "
                "example calls it by its name)"
            )

    # -- example-like calls of another function

    def _other_calls(self) -> None:
        for match in _OTHER_CALL.finditer(self.text):
            name = match.group(1)
            if name == self.entry or not self._free(match.start(1), match.end()):
                continue
            closing = _closing(self.text, match.end() - 1)
            if closing is None or not _SEPARATOR.match(self.text, closing + 1):
                continue
            line_end = self.text.find("\n", closing)
            line_end = len(self.text) if line_end < 0 else line_end
            self._mark(match.start(1), line_end)
            self._skip(
                self.text[match.start(1) : line_end],
                f"calls {name}(), not the entry point {self.entry}()",
            )


def _is_literal(text: str) -> bool:
    try:
        parse_literal(text, loose=True)
    except NotLiteral:
        return False
    return True


def _closing(text: str, opening: int) -> int | None:
    """The index of the bracket closing `text[opening]`, skipping strings; None if unclosed."""
    depth = 0
    quote = ""
    i = opening
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            if char == "\n" and len(quote) == 1:
                return None  # a string left open at the line's end: prose, not code
        elif char in "\"'":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else char
            i += len(quote)
            continue
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _extend_brackets(text: str, start: int, end: int) -> int:
    """`end`, moved past following lines while the brackets opened in text[start:end] are not
    closed (a result written over several lines)."""
    depth = 0
    for char in text[start:end]:
        depth += char in "([{"
        depth -= char in ")]}"
    while depth > 0 and end < len(text):
        following = text.find("\n", end + 1)
        following = len(text) if following < 0 else following
        for char in text[end:following]:
            depth += char in "([{"
            depth -= char in ")]}"
        end = following
    return end


def _split_top(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside brackets and strings."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


_WORKED = re.compile(r"(?<![=!<>])=(?!=)")
# A quoted word with one of its quotes typed twice (HumanEval/158's `""aaaaaaa"`).
_DOUBLED_QUOTE = re.compile(r"""\A(["'])(?:\1([^"'\\\n]*)\1|([^"'\\\n]*)\1\1)\Z""")


def _output_value(text: str, *, allow_note: bool = True) -> tuple[Any, int]:
    """A stated result and how many characters of `text` it took: the whole text as a literal
    (comments ignored, a closing full stop dropped), else the last member of a worked
    computation (`19 - 5 - 6 = 8`), else (with `allow_note`) the longest literal prefix that
    a note follows (`15 and ...`, `'No' (the name ...)`). Raises NotLiteral."""
    stripped = text.rstrip()
    # A closing full stop ends the sentence: `should return 16.` states 16, not 16.0.
    for candidate in (stripped[:-1] if stripped.endswith(".") else None, stripped):
        if candidate and candidate.strip():
            try:
                return parse_literal(candidate, loose=True), len(candidate)
            except NotLiteral:
                pass
    members = _WORKED.split(stripped)
    if len(members) > 1:
        last = members[-1].rstrip(" .")
        try:
            return parse_literal(last, loose=True), len(stripped)
        except NotLiteral:
            pass
    requoted = _DOUBLED_QUOTE.match(stripped)
    if requoted:
        word = requoted.group(2) if requoted.group(2) is not None else requoted.group(3)
        return word, len(stripped)
    if allow_note:
        cuts = [i for i, char in enumerate(stripped) if char in " \t(#,;"]
        for cut in reversed(cuts):
            head = stripped[:cut].rstrip()
            if not head.strip() or not _NOTE_START.match(stripped[cut:]):
                continue
            try:
                return parse_literal(head, loose=True), len(head)
            except NotLiteral:
                continue
    raise NotLiteral(f"the stated result {_clip(stripped, 60)!r} is not a literal")


def _statement_examples(text: str, problem: Problem) -> Examples:
    """Input / Output sections of a contest statement's examples block, in pairs."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            sections.append((header.group(1).lower(), []))
        elif sections:
            sections[-1][1].append(line)
    found = Examples()
    pending: str | None = None
    for kind, lines in sections:
        body = "\n".join(lines).strip("\n")
        if kind == "input":
            if pending is not None:
                found.unparsed.append(Unparsed(pending, "an input without an output"))
            pending = body
        elif pending is None:
            found.unparsed.append(Unparsed(body, "an output without an input"))
        else:
            found.cases.append(Case((pending + "\n",), body + "\n", EQ, source=pending))
            pending = None
    if pending is not None:
        found.unparsed.append(Unparsed(pending, "an input without an output"))
    if not sections and text.strip():
        found.unparsed.append(Unparsed(text, "no Input / Output sections in the examples block"))
    return found


def stdio_key(text: str) -> tuple[str, ...]:
    """A stdin text as its whitespace-separated tokens (how inputs of a contest meet)."""
    return tuple(text.split())


def _lines_with_offsets(text: str) -> tuple[list[str], list[int]]:
    """The text's lines (with their ends) and the offset each starts at, plus the text's end."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return lines, starts
