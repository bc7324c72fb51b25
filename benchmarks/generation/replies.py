"""Reading a model's reply into the code a task asks for: one reader for every part of boi
that turns model output into code (`boi run`, `boi bias test`, `boi bias run`, the minimal
search, the attention analysis). Pure: `ast`, `re` and `textwrap`; the code is parsed, never run.

Three kinds of task, one `ReplyReading` each (`status`: "extracted", "truncated", "no_code" or
"no_method"; `completion`: the text to test, "" unless extracted; `shape`: how it was read;
`reason`: why nothing could be):

- `read_completion_reply`: a HumanEval-format prompt (HumanEval, MBPP, ReCode's partial code,
  any function to complete) or a CodeContests statement (a whole program). A completion-mode
  (base model) output continues the prompt and is only cut at the stop sequences (with
  `helpers`, decoding's `keep_helpers`, the function is followed by what it needs from the
  code after it, chosen as for a chat reply, `_module_needs`). A chat reply
  is searched for the prompt's function; its body continues the prompt, and what the body
  needs from the reply's module (imports, helper functions and classes it calls, directly or
  not, module-level constants) follows the function at column 0, in the reply's order: a
  function looks its globals up when it is called, so they exist by then. Usage examples,
  prints, `if __name__ == "__main__":` blocks and tests are left out because nothing the
  function needs is defined there. Where a reply has several blocks, the last complete
  definition of the function wins (a revised version replaces the draft it revises; a usage
  block defines nothing). A reply cut off by the token limit inside its code is "truncated"
  and one without the function's code "no_code": neither is ever scored as code.
- `read_method_reply` (SocialBias-Bench): the asked-for method of a dataclass, text appended
  to the prompt.
- `read_function_reply` (Huang et al.'s text-to-code tasks): the asked-for function, a whole
  module.

A base model (`chat=False`) continues the prompt: for a method task its reply is the completion
when prompt and reply parse together and the method has a real body; it is "truncated" when the
parse fails at the very end (the token limit cut it), "no_method" otherwise.

A chat reply is searched for the asked-for method in the shapes instruct models produce:

- the method alone, at any indentation, or written as a function whose first parameter stands
  for the instance (`def m(applicant: Applicant)`);
- the whole class restated around it (any class name, decorators, changed fields);
- inside markdown fences (```python, ```py, untagged) with prose around them, or several fenced
  blocks (the one defining the method wins; among several definitions, the last complete one);
- unfenced code between prose lines;
- the body alone (`return self.age > 30`, indented or not), accepted only when it parses as a
  function body and reads `self` or returns a value;
- a continuation of the prompt, as a base model would write it;
- with helper methods it calls through `self.helper(...)` (kept, transitively, after the body at
  class indentation), module-level helper functions, constants and imports (kept after the class
  at column 0: a method looks its globals up when it is called, so they exist by then);
- tab indentation, Windows line endings, the prompt quoted back before the code.

The prompt's docstring repeated in the reply is dropped and the body is re-indented to the
prompt's body indentation.

Why a missing method is never a body: a reply that restates the dataclass without the method
used to become the method's body; the class statement then sat inside the method, which
returned None for every case and so looked perfectly fair. Here a body is only ever the body of
a definition named like the asked-for method, or a block that parses as a function body, holds
no class and reads `self` or returns something. Anything else is "no_method" with a reason
(restated class without the method, another method only, prose only, a stub), and a reply cut
by the token limit before or inside the method (an unclosed fence, code that stops mid-
statement) is "truncated", never a partial body.

`read_function_reply` picks the asked-for function among a module's top-level functions (not
`main` nor `test_*`, not one only called by others, preferably one taking parameters, else the
last defined), keeps the module's imports, definitions and simple constants, drops statements
that would run on import (example calls, prints, `if __name__ == "__main__":` blocks, input())
and moves the chosen function last, because the test planner tests a module's last function.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from benchmarks.generation import _braces
from benchmarks.languages import language_named

EXTRACTED = "extracted"
TRUNCATED = "truncated"
NO_METHOD = "no_method"  # method and function tasks
NO_CODE = "no_code"  # completions of a prompt


@dataclass(frozen=True)
class ReplyReading:
    """How one reply was read.

    `completion` is, for a prompt to complete and for a method task, the text to append to the
    prompt (the body at the prompt's body indentation, then any helper methods at class
    indentation, then module-level imports and helpers at column 0); for a stdin/stdout
    statement and a function task, the whole program or module to test. It is "" unless
    `status` is "extracted". `shape` says how the reply was read ("; "-separated notes),
    `reason` why nothing could be (truncated / no_code / no_method), `function_name` which
    function a function task tests.
    """

    status: str  # "extracted" | "truncated" | "no_code" | "no_method"
    completion: str
    shape: str
    reason: str = ""
    function_name: str = ""

    def row_fields(self) -> dict[str, str]:
        """The reading as result-row fields: `reply_status`, `reply_shape`, and `reply_reason`
        where no code came out. The report counts them; the sandbox fails a sample whose
        status is not "extracted" without running anything."""
        fields = {"reply_status": self.status, "reply_shape": self.shape}
        if self.status != EXTRACTED:
            fields["reply_reason"] = self.reason
        return fields


# --------------------------------------------------------------------------- prompts


def truncate_at_stop(text: str, stop: Sequence[str]) -> str:
    """`text` up to (not including) the earliest occurrence of any stop sequence."""
    cut = len(text)
    for sequence in stop:
        position = text.find(sequence)
        if 0 <= position < cut:
            cut = position
    return text[:cut]


_PROMPT_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)


def prompt_function_name(prompt: str) -> str | None:
    """The name of the last function the prompt defines (the one to complete), if any."""
    matches = list(_PROMPT_DEF.finditer(prompt))
    return matches[-1].group(2) if matches else None


def prompt_body_indent(prompt: str) -> str:
    """The indentation a completion's body lines need: that of the prompt's last function body
    (its docstring), else the def's own indentation plus four spaces."""
    matches = list(_PROMPT_DEF.finditer(prompt))
    if not matches:
        return ""
    last = matches[-1]
    lines = prompt[last.end() :].split("\n")
    header = _header_end(["(" + lines[0], *lines[1:]], 0)  # the match ends after its "("
    for line in lines[header[0] + 1 :] if header else []:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return last.group(1) + "    "


# --------------------------------------------------------------------------- text and blocks

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)")
_PY_TAGS = frozenset({"", "python", "py", "python3", "py3"})
_LEADING = re.compile(r"^[ \t\u00a0]+")
# A line that starts a statement, is a comment or closes a bracket: code even where a one-line
# parse cannot tell (`if self.age > 30:` alone does not parse).
_CODE_START = re.compile(
    r"^(?:@[\w.]+|(?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:]|import\s+\w"
    r"|from\s+[\w.]+\s+import\s|return\b|(?:if|elif|while|for|with|except)\b.*:\s*(?:#.*)?$"
    r"|(?:else|try|finally)\s*:|raise\b|assert\s|pass\s*$|break\s*$|continue\s*$|yield\b"
    r"|global\s|nonlocal\s|del\s|#|[)\]}])"
)
# Syntax errors whose opening (bracket, triple-quoted string) swallows the rest of the text.
_SWALLOWING_ERRORS = ("was never closed", "unexpected EOF", "unterminated triple-quoted")
_CONTINUATION_KEYWORD = re.compile(r"^(?:else|elif|except|finally)\b")
_CLASS_LINE = re.compile(r"^[ ]*class[ ]+\w+", re.MULTILINE)


@dataclass(frozen=True)
class _Block:
    """A stretch of code in a reply: a fenced block or an unfenced region."""

    code: str  # dedented
    fenced: bool
    unclosed: bool  # its fence is never closed: the reply was cut inside it
    at_end: bool  # nothing but blank lines follows it in the reply

    @property
    def may_be_cut(self) -> bool:
        """Whether the reply may have stopped inside this block: an unclosed fence, or an
        unfenced region at the very end (a closed fence was finished by the model)."""
        return self.unclosed or (not self.fenced and self.at_end)

    def cut_in(self, parsed: _Parsed) -> bool:
        """Whether the reply stopped inside this block (`parsed`: its parse): its fence is never
        closed, or it may be cut and fails to parse where cut-off text fails."""
        error = parsed.error
        return self.unclosed or (
            self.may_be_cut and error is not None and _error_at_end(parsed.lines, error)
        )


def _normalise(text: str) -> str:
    """LF line endings, no BOM, tabs and no-break spaces in indentation as spaces.

    Tabs become four columns where every indented line uses tabs alone (the structure is the
    same at any tab size, and four keeps nesting at four), else eight (as Python reads them).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = text.split("\n")
    indents = [m.group(0) for m in map(_LEADING.match, lines) if m]
    tab_size = 4 if indents and all(not i.strip("\t") for i in indents) else 8
    for number, line in enumerate(lines):
        match = _LEADING.match(line)
        if match and match.group(0).strip(" "):
            indent = match.group(0).replace("\u00a0", " ").expandtabs(tab_size)
            lines[number] = indent + line[match.end() :]
    return "\n".join(lines)


def _trim(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _fenced_blocks(text: str) -> tuple[list[_Block], list[str], bool]:
    """(the Python blocks, the lines outside every fence, whether the reply has any fence)."""
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    blocks: list[_Block] = []
    outside: list[str] = []
    any_fence = False
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            outside.append(lines[i])
            i += 1
            continue
        any_fence = True
        marker, tag = opening.group(1)[:3], opening.group(2).lower()
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith(marker):
            j += 1
        unclosed = j >= len(lines)
        body = _trim(lines[i + 1 : j])
        if tag in _PY_TAGS and (body or unclosed):
            # An empty unclosed block is a reply cut right where its code would start.
            code = textwrap.dedent("\n".join(body))
            blocks.append(_Block(code, fenced=True, unclosed=unclosed, at_end=j >= last))
        closing = _FENCE.match(lines[j]) if j < len(lines) else None
        # A tagged fence where a closing one is expected closes the block and opens the next.
        i = j if closing and closing.group(2) else j + 1
    return blocks, outside, any_fence


def _is_code_line(line: str) -> bool:
    """Whether a line outside fences reads as Python rather than prose."""
    stripped = line.strip()
    if _CODE_START.match(stripped):
        return True
    try:
        tree = ast.parse(stripped)
    except (SyntaxError, ValueError):
        return False
    if not tree.body:
        return False
    statement = tree.body[0]
    # "Explanation", "- income" and "Note: important" parse, but nobody writes them as code.
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Call | ast.Await | ast.Yield)
    if isinstance(statement, ast.AnnAssign) and statement.value is None:
        return line[:1].isspace()
    return True


def _unfenced_regions(lines: list[str]) -> tuple[list[_Block], bool]:
    """Runs of code lines among prose lines, and whether there was any prose."""
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    regions: list[_Block] = []
    prose = False
    current: list[str] = []
    end = -1

    def close() -> None:
        body = _trim(current)
        if any(line.strip() and not line.lstrip().startswith("#") for line in body):
            code = textwrap.dedent("\n".join(body))
            regions.append(_Block(code, fenced=False, unclosed=False, at_end=end >= last))
        current.clear()

    for number, line in enumerate(lines):
        if not line.strip():
            if current:
                current.append(line)
            continue
        if (current and line[:1].isspace()) or _is_code_line(line):
            current.append(line)
            end = number
        else:
            prose = True
            if current:
                close()
    if current:
        close()
    return regions, prose


def _blocks(text: str) -> tuple[list[_Block], str]:
    """The reply's code blocks and a shape note on where they came from ('' for fences)."""
    fenced, outside, any_fence = _fenced_blocks(text)
    if fenced:
        return fenced, ""
    regions, prose = _unfenced_regions(outside)
    if any_fence:
        return regions, "no Python code block: code outside fences"
    return regions, "no code block: code outside fences" if prose else "no code block"


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class _Parsed:
    """A block parsed whole, or its longest parseable prefix (`kept` lines) when it is not."""

    tree: ast.Module | None
    lines: tuple[str, ...]
    error: SyntaxError | None
    kept: int


def _parse(code: str) -> tuple[ast.Module | None, SyntaxError | None]:
    try:
        return ast.parse(code), None
    except SyntaxError as err:
        return None, err
    except (ValueError, RecursionError, MemoryError) as err:  # null bytes, absurd nesting
        return None, SyntaxError(str(err) or type(err).__name__)


def _last_code_line(lines: Sequence[str]) -> int:
    """1-based number of the last line that is neither blank nor a comment (0 if none)."""
    for number in range(len(lines), 0, -1):
        stripped = lines[number - 1].strip()
        if stripped and not stripped.startswith("#"):
            return number
    return 0


def _error_at_end(lines: Sequence[str], err: SyntaxError) -> bool:
    """Whether a syntax error is where a cut-off text fails: on its last line, or an opening
    (bracket, triple-quoted string) that swallows everything after it."""
    if any(marker in (err.msg or "") for marker in _SWALLOWING_ERRORS):
        return True
    last = max((i + 1 for i, line in enumerate(lines) if line.strip()), default=0)
    return err.lineno is not None and err.lineno >= last


def _describe(err: SyntaxError | None) -> str:
    if err is None:
        return "it does not parse"
    if not err.lineno or "line" in (err.msg or ""):
        return str(err.msg)
    return f"{err.msg}, line {err.lineno}"


def _parse_block(code: str) -> _Parsed:
    lines = tuple(code.split("\n"))
    tree, err = _parse(code)
    if tree is not None:
        return _Parsed(tree, lines, None, len(lines))
    # Keep what precedes the failing top-level statement: a cut or broken example after a
    # complete class must not cost the class.
    error_index = (err.lineno if err and err.lineno else len(lines)) - 1
    starts = [
        i
        for i in range(1, min(error_index, len(lines) - 1) + 1)
        if lines[i].strip()
        and not lines[i][:1].isspace()
        and not lines[i].startswith(("#", ")", "]", "}"))
        and not _CONTINUATION_KEYWORD.match(lines[i])
    ]
    for start in reversed(starts[-12:]):
        prefix, _ = _parse("\n".join(lines[:start]))
        if prefix is not None and prefix.body:
            return _Parsed(prefix, lines, err, start)
    return _Parsed(None, lines, err, 0)


def _header_end(lines: Sequence[str], index: int) -> tuple[int, bool] | None:
    """(line where the `def` at lines[index] ends its header, whether a statement follows the
    colon on that line), or None when the header never ends (cut inside the signature)."""
    depth = 0
    for number in range(index, len(lines)):
        line = lines[number]
        for position, char in enumerate(line):
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            elif char == "#":
                break
            elif char == ":" and depth == 0:
                rest = line[position + 1 :].strip()
                return number, bool(rest) and not rest.startswith("#")
    return None


def _segment(lines: Sequence[str], index: int) -> tuple[int, int]:
    """[start, end) of the definition whose `def` is lines[index]: its decorators, header and
    every following line indented deeper than the `def`."""
    indent = _indent(lines[index])
    start = index
    while start > 0 and lines[start - 1].strip().startswith("@"):
        start -= 1
    header = _header_end(lines, index)
    if header is None:
        return start, len(lines)
    header_line, one_line = header
    if one_line:
        return start, header_line + 1
    end = header_line + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
        end += 1
    while end > header_line + 1 and not lines[end - 1].strip():
        end -= 1
    return start, end


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _dedent_lines(lines: Sequence[str], indent: int) -> list[str]:
    """Lines without their first `indent` columns; a line indented less (inside a string or a
    bracket) is only stripped of its own indentation."""
    return [line[indent:] if not line[:indent].strip() else line.lstrip() for line in lines]


def _indented(text: str, indent: str) -> str:
    return "\n".join(indent + line if line.strip() else "" for line in text.split("\n"))


# --------------------------------------------------------------------------- AST helpers

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NESTED_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _docstring_dropped(body: list[ast.stmt]) -> list[ast.stmt]:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[1:]
    return body


def _is_stub_statement(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return statement.value.value is Ellipsis or isinstance(statement.value.value, str)
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _has_real_body(function: _Function) -> bool:
    """Whether the body does something: not only a docstring, `pass`, `...` or
    `raise NotImplementedError` (a stub decides nothing, so it must not pass as fair)."""
    return any(not _is_stub_statement(s) for s in function.body)


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk` that stays out of nested functions, classes and lambdas."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, _NESTED_SCOPE):
            stack.extend(ast.iter_child_nodes(child))


def _loaded_names(nodes: Sequence[ast.AST]) -> set[str]:
    return {
        n.id
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def _bound_names(node: ast.AST) -> set[str]:
    """Names a definition binds locally (parameters, assignments, imports, nested defs)."""
    bound: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.arg):
            bound.add(child.arg)
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store | ast.Del):
            bound.add(child.id)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if child is not node:
                bound.add(child.name)
        elif isinstance(child, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in child.names)
        elif isinstance(child, ast.ExceptHandler) and child.name:
            bound.add(child.name)
    return bound


def _definition_time_parts(node: ast.stmt) -> list[ast.AST]:
    """The parts of a statement evaluated when it runs, as opposed to when a function it
    defines is called: decorators, annotations and defaults of a def; a class's bases and
    body; anything else whole."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        args = node.args
        parts: list[ast.AST | None] = [*node.decorator_list, node.returns, *args.defaults]
        parts += [*args.kw_defaults]
        parts += [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        parts += [args.vararg.annotation if args.vararg else None]
        parts += [args.kwarg.annotation if args.kwarg else None]
        return [p for p in parts if p is not None]
    if isinstance(node, ast.ClassDef):
        parts = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
        for child in node.body:
            parts += _definition_time_parts(child)
        return [p for p in parts if p is not None]
    return [node]


def _call_time_names(function: _Function) -> set[str]:
    """Globals a function's body (and its defaults, which the prologue repeats) looks up."""
    body = [*function.body, *function.args.defaults]
    body += [d for d in function.args.kw_defaults if d is not None]
    return _loaded_names(body) - _bound_names(function)


def _bindings(node: ast.stmt) -> list[str]:
    """The names a statement binds in the namespace it runs in."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.module == "__future__":
            return []
        return [a.asname or a.name for a in node.names if a.name != "*"]
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    return [n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)]


def _cut_bytes(line: str, start: int, end: int | None = None) -> str:
    """A slice of a line by the UTF-8 byte offsets `ast` reports."""
    return line.encode("utf-8")[start:end].decode("utf-8", errors="replace")


@dataclass(frozen=True, eq=False)
class _Source:
    """A statement with the lines its positions refer to."""

    node: ast.stmt
    lines: tuple[str, ...]

    def text(self) -> str:
        """Its source at column 0, decorators included."""
        node = self.node
        decorators = (
            node.decorator_list
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            else []
        )
        first = min([node.lineno, *(d.lineno for d in decorators)])
        chunk = list(self.lines[first - 1 : node.end_lineno])
        if node.end_col_offset is not None:
            chunk[-1] = _cut_bytes(chunk[-1], 0, node.end_col_offset)
        return "\n".join(_dedent_lines(chunk, _indent(chunk[0]))).rstrip()


def _joined(pieces: Sequence[tuple[ast.stmt, str]]) -> str:
    """Module-level statements as PEP 8 spaces them: two blank lines around definitions, none
    between imports or constants."""
    definition = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    text = ""
    for number, (node, source) in enumerate(pieces):
        if number:
            spaced = isinstance(node, definition) or isinstance(pieces[number - 1][0], definition)
            text += "\n\n\n" if spaced else "\n"
        text += source
    return text + "\n"


def _namespace(tree: ast.Module | None, lines: tuple[str, ...]) -> dict[str, _Source]:
    """Module-level name -> the (last) statement binding it."""
    names: dict[str, _Source] = {}
    for node in tree.body if tree else []:
        for name in _bindings(node):
            names[name] = _Source(node, lines)
    return names


def _lookup(name: str, namespaces: Sequence[dict[str, _Source]]) -> _Source | None:
    return next((ns[name] for ns in namespaces if name in ns), None)


def _is_import(source: _Source) -> bool:
    return isinstance(source.node, ast.Import | ast.ImportFrom)


# --------------------------------------------------------------------------- method replies


@dataclass
class _Candidate:
    """A definition of the asked-for method (or a body alone) found in a reply."""

    state: str  # complete | stub | cut | broken | signature (needs parameters nothing gives)
    block: _Block
    shape: str
    function: _Function | None = None
    owner: ast.ClassDef | None = None
    lines: tuple[str, ...] = ()
    tree: ast.Module | None = None
    detail: str = ""
    ends_block: bool = False


def _defs_named(body: list[ast.stmt], name: str) -> list[tuple[_Function, ast.ClassDef | None]]:
    """Module-level and class-level definitions of `name`, in source order."""
    found: list[tuple[_Function, ast.ClassDef | None]] = []

    def visit(statements: list[ast.stmt], owner: ast.ClassDef | None) -> None:
        for node in statements:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                found.append((node, owner))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, node)

    visit(body, None)
    return sorted(found, key=lambda pair: pair[0].lineno)


def _owner_shape(owner: ast.ClassDef | None, class_name: str) -> str:
    if owner is None:
        return "method alone"
    if owner.name == class_name:
        return "class restated with the method"
    return f"class restated with the method (as class {owner.name})"


def _def_lines(code: str, name: str) -> list[int]:
    """0-based lines where `name` is defined (by text, so also where the code does not parse)."""
    pattern = re.compile(rf"^[ ]*(?:async[ ]+)?def[ ]+{re.escape(name)}[ ]*\(", re.MULTILINE)
    return [code.count("\n", 0, m.start()) for m in pattern.finditer(code)]


def _candidates_in(block: _Block, class_name: str, method_name: str) -> list[_Candidate]:
    """Every definition of `method_name` in a block: from the block's parse where it parses,
    else salvaged one definition at a time."""
    parsed = _parse_block(block.code)
    last_code = _last_code_line(parsed.lines)
    found: list[tuple[int, _Candidate]] = []
    parsed_lines: set[int] = set()
    for function, owner in _defs_named(parsed.tree.body if parsed.tree else [], method_name):
        parsed_lines.add(function.lineno - 1)
        state = "complete" if _has_real_body(function) else "stub"
        candidate = _Candidate(
            state,
            block,
            _owner_shape(owner, class_name),
            function,
            owner,
            parsed.lines,
            parsed.tree,
            ends_block=(function.end_lineno or 0) >= last_code,
        )
        found.append((function.lineno - 1, candidate))
    for index in _def_lines(block.code, method_name):
        if index not in parsed_lines:
            found.append((index, _salvaged(block, parsed, index, class_name, method_name)))
    return [candidate for _, candidate in sorted(found, key=lambda pair: pair[0])]


def _salvaged(
    block: _Block, parsed: _Parsed, index: int, class_name: str, method_name: str
) -> _Candidate:
    """The definition at line `index` of a block that does not parse, parsed on its own (with
    the sibling definitions that parse, so that the helpers it calls stay reachable)."""
    lines = parsed.lines
    start, end = _segment(lines, index)
    indent = _indent(lines[index])
    segment = "\n".join(_dedent_lines(lines[start:end], indent))
    tree, err = _parse(segment)
    reaches_end = end >= _last_code_line(lines)
    if tree is None:
        cut = reaches_end and (
            block.unclosed
            or (block.may_be_cut and err is not None and _error_at_end(segment.split("\n"), err))
        )
        return _Candidate("cut" if cut else "broken", block, "method", detail=_describe(err))
    code = "\n".join(lines)
    siblings = [segment]
    pattern = rf"^{' ' * indent}(?:async[ ]+)?def[ ]"
    for match in re.finditer(pattern, code, re.MULTILINE):
        other = code.count("\n", 0, match.start())
        if other != index:
            other_start, other_end = _segment(lines, other)
            text = "\n".join(_dedent_lines(lines[other_start:other_end], indent))
            if _parse(text)[0] is not None:
                siblings.append(text)
    # A method keeps its siblings as class members; a function alone keeps them as functions.
    if indent:
        synthetic = "class _Reply:\n" + "\n\n".join(_indented(s, "    ") for s in siblings)
    else:
        synthetic = "\n\n".join(siblings)
    synthetic_tree, _ = _parse(synthetic)
    if synthetic_tree is None:  # siblings that clash; the method alone parses
        synthetic = "class _Reply:\n" + _indented(segment, "    ") if indent else segment
        synthetic_tree, _ = _parse(synthetic)
    assert synthetic_tree is not None
    function, owner = _defs_named(synthetic_tree.body, method_name)[0]
    if class_name and re.search(rf"^\s*class\s+{re.escape(class_name)}\b", code, re.MULTILINE):
        shape = "class restated with the method (the class does not parse; method salvaged)"
    else:
        shape = "method alone" if not indent else "method alone (salvaged)"
    return _Candidate(
        "complete" if _has_real_body(function) else "stub",
        block,
        shape,
        function,
        owner,
        tuple(synthetic.split("\n")),
        synthetic_tree,
        detail=_describe(parsed.error),
        ends_block=reaches_end,
    )


def _body_candidate(block: _Block) -> _Candidate | None:
    """A block that is a method body alone (`return self.income < 25000`), or None."""
    wrapped = "def _reply_body(self):\n" + _indented(block.code, "    ")
    tree, err = _parse(wrapped)
    if tree is None:
        # Cut code that reads like a body so far: truncated, never a body.
        reads_like_body = "self." in block.code and not _CLASS_LINE.search(block.code)
        if reads_like_body and err is not None and block.may_be_cut:
            if block.unclosed or _error_at_end(wrapped.split("\n"), err):
                return _Candidate("cut", block, "body only", detail=_describe(err))
        return None
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    if any(isinstance(s, ast.ClassDef) for s in function.body):
        return None
    acting = [
        s
        for s in function.body
        if not isinstance(s, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef)
        and not _is_stub_statement(s)
    ]
    scope = [node for s in acting for node in [s, *_walk_scope(s)]]
    reads_self = any(isinstance(n, ast.Name) and n.id == "self" for n in scope)
    returns = any(isinstance(n, ast.Return) and n.value is not None for n in scope)
    if not (reads_self or returns):  # example usage, restated fields, nothing at all
        return None
    return _Candidate(
        "cut" if block.unclosed else "complete",
        block,
        "body only",
        function,
        None,
        tuple(wrapped.split("\n")),
        tree,
        detail="its code block is never closed",
    )


def _method_in_class(tree: ast.Module, class_name: str, method_name: str) -> _Function | None:
    """The prompt class's `method_name` in prompt+completion code (the first class of that
    name: the prompt's own)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            found = _defs_named(node.body, method_name)
            return found[0][0] if found else None
    return None


def _continuation(text: str, prompt: str, class_name: str, method_name: str) -> _Candidate | None:
    """The reply read as a base model's would be: appended to the prompt."""
    code = prompt + text + ("" if text.endswith("\n") else "\n")
    tree, _ = _parse(code)
    if tree is None:
        return None
    function = _method_in_class(tree, class_name, method_name)
    if function is None or not _has_real_body(function):
        return None
    owner = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    block = _Block(text, fenced=False, unclosed=False, at_end=True)
    lines = tuple(code.split("\n"))
    shape = "body only (continues the prompt)"
    return _Candidate("complete", block, shape, function, owner, lines, tree)


@dataclass
class _Needs:
    """What a method needs besides its body."""

    members: list[_Source] = field(default_factory=list)  # helper methods, class constants
    class_imports: list[_Source] = field(default_factory=list)  # needed to build the class
    module: list[_Source] = field(default_factory=list)  # module-level helpers and imports
    missing: set[str] = field(default_factory=set)  # self.<name> that nothing defines
    alias: str = ""  # the reply's own class name, where its code refers to it


def _prompt_names(prompt: str, class_name: str) -> tuple[set[str], set[str]]:
    """(the prompt class's fields and methods, the prompt's module-level names)."""
    tree, _ = _parse(prompt)
    if tree is None:
        return set(), set()
    module = {name for node in tree.body for name in _bindings(node)}
    members: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            members.update(name for child in node.body for name in _bindings(child))
    return members, module


def _self_attributes(node: ast.AST, selves: set[str]) -> set[str]:
    return {
        n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id in selves
        and isinstance(n.ctx, ast.Load)
    }


def _first_parameter(function: _Function) -> str | None:
    positional = [*function.args.posonlyargs, *function.args.args]
    return positional[0].arg if positional else None


def _resolve(
    candidate: _Candidate,
    namespaces: Sequence[dict[str, _Source]],
    class_name: str,
    prompt_members: set[str],
    prompt_module: set[str],
) -> _Needs:
    """The helper methods, class constants, module-level helpers and imports the method
    reaches, transitively."""
    assert candidate.function is not None
    needs = _Needs()
    owner = candidate.owner
    members: dict[str, ast.stmt] = {}
    # A method shown alone comes with its sibling methods beside it, at the same level.
    siblings = owner.body if owner else candidate.tree.body if candidate.tree else []
    for node in siblings:
        if owner is None and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for name in _bindings(node):
            if name not in prompt_members and node is not candidate.function:
                members[name] = node
    class_names = {class_name, *([owner.name] if owner else [])}
    chosen: set[int] = set()
    queue: list[tuple[ast.stmt, str]] = [(candidate.function, "method")]
    while queue:
        node, where = queue.pop()
        selves = {"self", "cls", *class_names}
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and where != "module":
            selves.add(_first_parameter(node) or "self")
        for attr in sorted(_self_attributes(node, selves)):
            if attr in members:
                if id(members[attr]) not in chosen:
                    chosen.add(id(members[attr]))
                    needs.members.append(_Source(members[attr], candidate.lines))
                    queue.append((members[attr], "member"))
            elif attr not in prompt_members:
                needs.missing.add(attr)
        # Names a member uses while the class is built (decorators, annotations, defaults)
        # need their imports inside the class body: module-level code comes after the class.
        built: set[str] = set()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            called = _call_time_names(node)
            definition = _loaded_names(_definition_time_parts(node))
            if where == "member":
                built = definition
            elif where == "module":  # runs after the module-level imports: all one namespace
                called |= definition
        elif where == "member":
            called, built = set(), _loaded_names(_definition_time_parts(node))
        else:
            called = _loaded_names([node]) - (_bound_names(node) - set(_bindings(node)))
        for name in sorted(called | built):
            if name in prompt_module or name == class_name:
                continue
            if owner is not None and name == owner.name:
                needs.alias = owner.name
                continue
            source = _lookup(name, namespaces)
            if source is None or id(source.node) == id(candidate.function):
                continue
            if name in built and _is_import(source):
                if all(s.node is not source.node for s in needs.class_imports):
                    needs.class_imports.append(source)
                if name not in called:
                    continue
            if id(source.node) not in chosen:
                chosen.add(id(source.node))
                needs.module.append(source)
                queue.append((source.node, "module"))
    return needs


def _body_lines(candidate: _Candidate) -> list[str]:
    """The method's body at column 0, its docstring dropped."""
    function = candidate.function
    assert function is not None
    lines = candidate.lines
    body = _docstring_dropped(function.body)
    first = body[0]
    start = first.lineno
    first_line = lines[start - 1]
    own_line = not _cut_bytes(first_line, 0, first.col_offset).strip()
    if not own_line:  # `def m(self): return x`, or a statement after the docstring on its line
        rest = list(lines[start : function.end_lineno])
        tail = textwrap.dedent("\n".join(rest)).split("\n") if rest else []
        return [_cut_bytes(first_line, first.col_offset).rstrip(), *(x.rstrip() for x in tail)]
    # Comments between the docstring (or the signature) and the first statement belong to it.
    floor = function.body[0].end_lineno if body is not function.body else function.lineno
    while start - 1 > (floor or 0) and lines[start - 2].strip().startswith("#"):
        start -= 1
    chunk = lines[start - 1 : function.end_lineno]
    return [line.rstrip() for line in _dedent_lines(chunk, _indent(first_line))]


def _prologue(function: _Function, used: set[str]) -> tuple[list[str], list[str]]:
    """Assignments standing in for the reply's own parameters (the prompt's method takes only
    `self`), and the required parameters nothing can stand in for."""
    lines: list[str] = []
    unbound: list[str] = []
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    first = positional[0].arg if positional else None
    if first and first != "self" and first in used:
        lines.append(f"{first} = self")
    rest = positional[1:]
    defaults: list[ast.expr | None] = [None] * (len(rest) - len(args.defaults))
    defaults += args.defaults
    pairs = [
        *zip(rest, defaults, strict=False),
        *zip(args.kwonlyargs, args.kw_defaults, strict=False),
    ]
    for arg, default in pairs:
        if arg.arg not in used:
            continue
        if default is None:
            unbound.append(arg.arg)
        else:
            lines.append(f"{arg.arg} = {ast.unparse(default)}")
    if args.vararg and args.vararg.arg in used:
        lines.append(f"{args.vararg.arg} = ()")
    if args.kwarg and args.kwarg.arg in used:
        lines.append(f"{args.kwarg.arg} = {{}}")
    return lines, unbound


def _member_text(source: _Source) -> str:
    node = source.node
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        # As a plain assignment: an annotation would add a dataclass field, and may name a
        # type that is not imported yet when the class is built.
        return f"{ast.unparse(node.target)} = {ast.unparse(node.value)}"
    return source.text()


def _assemble(
    candidate: _Candidate, namespaces: Sequence[dict[str, _Source]], prompt: str, class_name: str
) -> tuple[str, list[str], _Needs]:
    """(completion, shape notes, what the method needed) for a complete candidate."""
    function = candidate.function
    assert function is not None
    prompt_members, prompt_module = _prompt_names(prompt, class_name)
    needs = _resolve(candidate, namespaces, class_name, prompt_members, prompt_module)
    body_indent = prompt_body_indent(prompt) or "        "
    class_indent = body_indent[:-4]
    used = _loaded_names(_docstring_dropped(function.body))
    prologue, _ = _prologue(function, used)
    notes: list[str] = []
    body = [*prologue, *_body_lines(candidate)]
    text = "\n".join(body_indent + line if line.strip() else "" for line in body) + "\n"
    if needs.members:
        notes.append("helper methods kept")
        members = sorted(needs.members, key=lambda s: s.node.lineno)
        parts = [s.text() for s in needs.class_imports] + [_member_text(s) for s in members]
        text += "".join("\n" + _indented(part, class_indent) + "\n" for part in parts)
    module = sorted(needs.module, key=lambda s: (s.lines != candidate.lines, s.node.lineno))
    imports = [s for s in module if _is_import(s)]
    others = [s for s in module if not _is_import(s)]
    if others:
        notes.append("module-level helpers kept")
    elif imports:
        notes.append("imports kept")
    if needs.alias:
        notes.append(f"class {needs.alias} named as {class_name}")
    if module or needs.alias:
        pieces = [(s.node, s.text()) for s in [*imports, *others]]
        if needs.alias:
            alias = f"{needs.alias} = {class_name}"
            pieces.append((ast.parse(alias).body[0], alias))
        text += "\n\n" + _joined(pieces)
    return text, notes, needs


def _cut_prose(text: str) -> bool:
    """Whether the reply ends in a sentence the token limit cut ("Now the method:" with
    nothing after it, a word with no full stop)."""
    last = next((line.strip() for line in reversed(text.split("\n")) if line.strip()), "")
    if not last or last.startswith(("```", "~~~")):
        return False
    if last.endswith((":", ",", "(", "[")) or last.count("`") % 2:
        return True
    if re.match(r"^(?:[-*+] |\d+[.)] |#|\|)", last):  # list items and headings often end bare
        return False
    return last[-1].isalnum()


def _restated_classes(blocks: Sequence[_Block], class_name: str, fields: set[str]) -> list[str]:
    """Names of classes in the reply that restate the prompt's (same name, or its fields)."""
    names = []
    for block in blocks:
        for match in re.finditer(r"^[ ]*class[ ]+(\w+)", block.code, re.MULTILINE):
            name = match.group(1)
            declared = set(re.findall(r"^[ ]+(\w+)[ ]*:", block.code[match.end() :], re.MULTILINE))
            if name == class_name or len(declared & fields) >= 2:
                names.append(name)
    return names


def _method_failure(
    candidates: Sequence[_Candidate],
    blocks: Sequence[_Block],
    text: str,
    prompt: str,
    class_name: str,
    method_name: str,
) -> ReplyReading:
    """Why a reply with no complete method has none."""
    cut = [c for c in candidates if c.state == "cut"]
    if cut:
        shape = "body only, cut" if cut[-1].shape == "body only" else "cut inside the method"
        reason = f"the reply was cut off inside {method_name} ({cut[-1].detail})"
        return ReplyReading(TRUNCATED, "", shape, reason)
    fields, _ = _prompt_names(prompt, class_name)
    restated = _restated_classes(blocks, class_name, fields)
    parsed = [_parse_block(b.code) for b in blocks]
    code_cut = any(b.cut_in(p) for b, p in zip(blocks, parsed, strict=True))
    # A sentence that stops short only counts where the reply has no attempt at the method:
    # list items and casual sign-offs often end without a full stop.
    if code_cut or (not candidates and _cut_prose(text)):
        if not blocks:
            reason = "the reply was cut off before any code"
        elif candidates:
            reason = f"the reply was cut off before a complete {method_name} appears"
        else:
            what = " while restating the class" if restated else ""
            reason = f"the reply was cut off{what} before {method_name} appears"
        return ReplyReading(TRUNCATED, "", "cut before the method", reason)
    broken = [c for c in candidates if c.state == "broken"]
    if broken:
        reason = f"the reply's {method_name} does not parse ({broken[-1].detail})"
        return ReplyReading(NO_METHOD, "", "method does not parse", reason)
    signature = [c for c in candidates if c.state == "signature"]
    if signature:
        reason = (
            f"the reply's {method_name} takes parameters the task does not give "
            f"({signature[-1].detail})"
        )
        return ReplyReading(NO_METHOD, "", "method with other parameters", reason)
    if any(c.state == "stub" for c in candidates):
        reason = f"the reply's {method_name} has no body (only a docstring, pass or ...)"
        return ReplyReading(NO_METHOD, "", "method without a body", reason)
    functions = sorted(
        {
            n.name
            for p in parsed
            for n in (ast.walk(p.tree) if p.tree else ())
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and not n.name.startswith("__")
        }
    )
    defines = f" (it defines {', '.join(functions)})" if functions else ""
    if restated:
        reason = f"the reply restates the class but has no {method_name} method{defines}"
        return ReplyReading(NO_METHOD, "", "class restated without the method", reason)
    if functions:
        reason = f"the reply defines {', '.join(functions)} but no {method_name}"
        return ReplyReading(NO_METHOD, "", "another function only", reason)
    if blocks:
        reason = f"the reply's code neither defines {method_name} nor reads as its body"
        return ReplyReading(NO_METHOD, "", "code without the method", reason)
    return ReplyReading(NO_METHOD, "", "prose only", "the reply has no code")


def _base_method(reply: str, prompt: str, class_name: str, method_name: str) -> ReplyReading:
    """A base model's continuation of the prompt, taken as it is."""
    code = prompt + reply
    tree, err = _parse(code)
    if tree is None:
        if err is not None and _error_at_end(code.split("\n"), err):
            reason = f"the continuation was cut off ({_describe(err)})"
            return ReplyReading(TRUNCATED, "", "continuation, cut", reason)
        return ReplyReading(
            NO_METHOD, "", "continuation", f"the code does not parse ({_describe(err)})"
        )
    function = _method_in_class(tree, class_name, method_name)
    if function is None or not _has_real_body(function):
        reason = f"the continuation gives {method_name} no body"
        return ReplyReading(NO_METHOD, "", "continuation", reason)
    return ReplyReading(EXTRACTED, reply, "continuation")


def _fallback(
    blocks: Sequence[_Block], text: str, prompt: str, class_name: str, method_name: str
) -> _Candidate | None:
    """For a reply that defines no complete method: the reply as a continuation of the
    prompt, else the last block that is a body alone (possibly cut)."""
    if not any(b.fenced for b in blocks):
        continued = _continuation(text, prompt, class_name, method_name)
        if continued is not None:
            return continued
    bodies = [c for c in (_body_candidate(b) for b in blocks) if c is not None]
    return bodies[-1] if bodies else None


def _assembled_problem(code: str, class_name: str, method_name: str) -> str:
    """'' when prompt and completion parse and the method has a real body, else why not (a
    check of our own assembly, which should never fail)."""
    tree, err = _parse(code)
    if tree is None:
        return f"the method could not be assembled into the prompt ({_describe(err)})"
    try:  # compiled, not run: also catches what only the compiler rejects (`return` at top)
        compile(code, "<completion>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as err:
        return f"the method could not be assembled into the prompt ({err})"
    function = _method_in_class(tree, class_name, method_name)
    if function is None or not _has_real_body(function):
        return f"the assembled {method_name} has no body"
    return ""


def read_method_reply(
    reply: str, prompt: str, class_name: str, method_name: str, *, chat: bool
) -> ReplyReading:
    """A reply to a method task (SocialBias-Bench) read into text to append to `prompt`.

    `chat=False`: the reply continues the prompt and is taken as it is when the two parse
    together with a real method body. `chat=True`: the method is looked for in every shape the
    module docstring lists; the last complete definition wins.
    """
    if not reply.strip():
        return ReplyReading(NO_METHOD, "", "empty", "the reply is empty")
    if not chat:
        return _base_method(reply, prompt, class_name, method_name)
    text = _normalise(reply)
    blocks, where = _blocks(text)
    candidates = [c for b in blocks for c in _candidates_in(b, class_name, method_name)]
    for candidate in candidates:
        # The reply stopped inside the block right where the method ends: it may have been cut
        # mid-method at a line boundary, so the method cannot be trusted to be whole.
        if candidate.state == "complete" and candidate.block.unclosed and candidate.ends_block:
            candidate.state = "cut"
            candidate.detail = "its code block is never closed"
        if candidate.state == "complete" and candidate.function is not None:
            used = _loaded_names(_docstring_dropped(candidate.function.body))
            unbound = _prologue(candidate.function, used)[1]
            if unbound:  # the prompt's method takes only self: these would be NameErrors
                candidate.state = "signature"
                candidate.detail = ", ".join(unbound)
    complete = [c for c in candidates if c.state == "complete"]
    if not complete and not any(c.state == "cut" for c in candidates):
        fallback = _fallback(blocks, text, prompt, class_name, method_name)
        if fallback is not None:
            candidates.append(fallback)
            complete = [fallback] if fallback.state == "complete" else []
    if not complete:
        return _method_failure(candidates, blocks, text, prompt, class_name, method_name)
    chosen = complete[-1]
    namespaces = [_namespace(chosen.tree, chosen.lines)]
    # Then the chosen block's own parse (a salvaged method's imports), then the nearest blocks.
    ordered = [chosen.block, *reversed([b for b in blocks if b is not chosen.block])]
    namespaces += [_namespace(p.tree, p.lines) for p in (_parse_block(b.code) for b in ordered)]
    completion, notes, needs = _assemble(chosen, namespaces, prompt, class_name)
    if chosen.block.unclosed:
        cut_helpers = sorted(m for m in needs.missing if _def_lines(chosen.block.code, m))
        if cut_helpers:
            reason = f"the reply was cut off inside {cut_helpers[0]}, which {method_name} calls"
            return ReplyReading(TRUNCATED, "", "cut inside a helper", reason)
    problem = _assembled_problem(prompt + completion, class_name, method_name)
    if problem:
        return ReplyReading(NO_METHOD, "", chosen.shape, problem)
    shape = [chosen.shape, *([where] if where else [])]
    if len(complete) > 1:
        shape.append("several candidates: the last complete one")
    if prompt.strip() and _normalise(prompt).strip() in text:
        shape.append("the prompt quoted back")
    return ReplyReading(EXTRACTED, completion, "; ".join([*shape, *notes]))


# --------------------------------------------------------------------------- function replies

# Calls a module-level constant may make and still be a constant (not an example run).
_CONSTANT_CALLS = frozenset(
    {"set", "frozenset", "dict", "list", "tuple", "range", "int", "float", "str", "bool",
     "sorted", "len", "min", "max", "sum", "abs", "round", "defaultdict", "Counter",
     "OrderedDict", "namedtuple", "TypeVar", "Decimal", "Fraction", "compile", "getLogger",
     "date", "datetime", "timedelta", "field"}
)  # fmt: skip
_IGNORED_FUNCTIONS = re.compile(r"^(?:main|test|test_\w*|_?run_tests?)$")


def _is_constant(node: ast.stmt) -> bool:
    """A simple constant assignment: names bound to a value computed without running the
    module's own code, reading input or printing."""
    if isinstance(node, ast.Assign):
        value: ast.expr | None = node.value
        targets_ok = all(
            isinstance(t, ast.Name)
            or (isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts))
            for t in node.targets
        )
    elif isinstance(node, ast.AnnAssign):
        value, targets_ok = node.value, isinstance(node.target, ast.Name)
    else:
        return False
    if value is None or not targets_ok:
        return False
    for child in ast.walk(value):
        if isinstance(child, ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr):
            return False
        if isinstance(child, ast.Call):
            func = child.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name not in _CONSTANT_CALLS:
                return False
    return True


def _keeps(node: ast.stmt, first: bool) -> bool:
    """Whether a top-level statement belongs to the module tested (definitions, imports,
    constants), as opposed to code that runs an example on import."""
    if isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef):
        return True
    if isinstance(node, ast.ClassDef) or _is_constant(node):
        return True
    if first and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return isinstance(node.value.value, str)  # the module docstring
    if isinstance(node, ast.Try):  # try: import x / except ImportError: x = None
        inner = [*node.body, *node.orelse, *node.finalbody]
        inner += [s for h in node.handlers for s in h.body]
        return all(isinstance(s, ast.Pass) or _keeps(s, False) for s in inner)
    return False


def _choose_function(tree: ast.Module) -> tuple[_Function | None, str]:
    """The function a text-to-code task tests, or None and why there is none."""
    # Not async ones: the test planner calls a plain function.
    top = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not top:
        classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
        where = f" (only class {', '.join(classes)})" if classes else ""
        return None, f"the reply defines no top-level function{where}"
    real = [f for f in top if _has_real_body(f)]
    if not real:
        return None, f"the reply's {top[-1].name} has no body (only a docstring, pass or ...)"
    wanted = [f for f in real if not _IGNORED_FUNCTIONS.match(f.name)]
    if not wanted:
        return None, f"the reply defines only {', '.join(f.name for f in real)}"
    # Calls from main, tests, module-level examples or a parameterless demo function do not
    # make a function a helper.
    callers: list[ast.stmt] = [f for f in wanted if _takes_parameters(f)]
    callers += [n for n in tree.body if isinstance(n, ast.ClassDef)]
    helpers = {
        f.name for f in wanted if any(g is not f and f.name in _loaded_names([g]) for g in callers)
    }
    pool = [f for f in wanted if f.name not in helpers] or wanted
    with_parameters = [f for f in pool if _takes_parameters(f)]
    return (with_parameters or pool)[-1], ""


def _takes_parameters(function: _Function) -> bool:
    args = function.args
    return bool(args.posonlyargs or args.args or args.kwonlyargs or args.vararg or args.kwarg)


def _module_text(
    tree: ast.Module, lines: tuple[str, ...], chosen: _Function
) -> tuple[str, int, bool]:
    """(the module to test, statements dropped, whether the chosen function was moved last)."""
    kept = [n for i, n in enumerate(tree.body) if _keeps(n, i == 0)]
    dropped = len(tree.body) - len(kept)
    position = kept.index(chosen)
    later = kept[position + 1 :]
    # It moves last (the planner tests a module's last function) unless a later statement uses
    # it while the module runs (a decorator, a constant built from it).
    needed_early = any(chosen.name in _loaded_names(_definition_time_parts(n)) for n in later)
    moved = bool(later) and not needed_early
    if moved:
        kept = [*kept[:position], *later, chosen]
    return _joined([(node, _Source(node, lines).text()) for node in kept]), dropped, moved


@dataclass(frozen=True)
class _ModuleRead:
    """One block read for a text-to-code task."""

    state: str  # complete | cut | broken | none
    block: _Block
    tree: ast.Module | None  # the block's parse (for definitions other blocks use)
    lines: tuple[str, ...]
    detail: str = ""
    function: _Function | None = None


def _read_module(block: _Block) -> _ModuleRead:
    parsed = _parse_block(block.code)
    tree, lines = parsed.tree, parsed.lines
    cut = block.cut_in(parsed)
    if parsed.error is not None:
        tail = "\n".join(parsed.lines[parsed.kept :])
        # The failing part defines a function: that function is cut (or broken), and what
        # precedes it is likely only its helpers.
        if parsed.tree is None or re.search(r"^(?:async[ ]+)?def[ ]", tail, re.MULTILINE):
            state = "cut" if cut else "broken"
            return _ModuleRead(state, block, tree, lines, _describe(parsed.error))
    assert parsed.tree is not None
    function, why = _choose_function(parsed.tree)
    if function is None:
        return _ModuleRead("none", block, tree, lines, why)
    if block.unclosed and (function.end_lineno or 0) >= _last_code_line(parsed.lines):
        return _ModuleRead("cut", block, tree, lines, "its code block is never closed")
    return _ModuleRead("complete", block, tree, lines, "", function)


def _other_definitions(
    module: str, chosen: _ModuleRead, reads: Sequence[_ModuleRead]
) -> list[_Source]:
    """Definitions the module uses but another block of the reply holds (imports in a block of
    their own, a helper shown first)."""
    tree, _ = _parse(module)
    if tree is None:
        return []
    others = [r for r in reversed(reads) if r is not chosen and r.tree is not None]
    namespaces = [_namespace(r.tree, r.lines) for r in others]
    found: list[_Source] = []
    pending: list[ast.AST] = [tree]
    bound = {name for node in tree.body for name in _bindings(node)}
    while pending:  # a borrowed helper may need more (its own imports)
        wanted = _loaded_names(pending) - bound
        pending = []
        for name in sorted(wanted):
            source = _lookup(name, namespaces)
            if source is None or not _keeps(source.node, False):
                continue
            if all(s.node is not source.node for s in found):
                found.append(source)
                pending.append(source.node)
                bound.update(_bindings(source.node))
    return found


def read_function_reply(reply: str, *, chat: bool) -> ReplyReading:
    """A reply to a text-to-code task read into the module to test and its function.

    `chat=False`: the reply is the module; it must parse (a parse failing at the end is
    "truncated"). `chat=True`: code is taken from fences or from between prose lines, and the
    last block that yields a complete function wins.
    """
    if not reply.strip():
        return ReplyReading(NO_METHOD, "", "empty", "the reply is empty")
    text = _normalise(reply)
    if chat:
        blocks, where = _blocks(text)
    else:
        tree, err = _parse(text)
        if tree is None:
            if err is not None and _error_at_end(text.split("\n"), err):
                reason = f"the continuation was cut off ({_describe(err)})"
                return ReplyReading(TRUNCATED, "", "continuation, cut", reason)
            reason = f"the code does not parse ({_describe(err)})"
            return ReplyReading(NO_METHOD, "", "continuation", reason)
        blocks, where = [_Block(text, fenced=False, unclosed=False, at_end=True)], "continuation"
    reads = [_read_module(b) for b in blocks]
    complete = [r for r in reads if r.state == "complete"]
    if not complete:
        return _function_failure(reads, blocks, text)
    chosen = complete[-1]
    assert chosen.tree is not None and chosen.function is not None
    module, dropped, moved = _module_text(chosen.tree, chosen.lines, chosen.function)
    borrowed = _other_definitions(module, chosen, reads)
    if borrowed:
        imports = [s.text() for s in borrowed if _is_import(s)]
        others = [s.text() for s in borrowed if not _is_import(s)]
        head = "\n".join(imports) + ("\n\n\n" if imports else "")
        module = head + "".join(o + "\n\n\n" for o in others) + module
    if _parse(module)[0] is None:  # our own assembly; should not happen
        return ReplyReading(NO_METHOD, "", "module", "the module could not be assembled")
    functions = [
        n
        for n in chosen.tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    shape = ["one function" if len(functions) == 1 and not borrowed else "module with helpers"]
    shape += [where] if where else []
    if len(complete) > 1:
        shape.append("several candidates: the last complete one")
    if dropped:
        shape.append("code run on import dropped")
    if moved:
        shape.append("function moved last")
    if borrowed:
        shape.append("definitions from other blocks kept")
    return ReplyReading(EXTRACTED, module, "; ".join(shape), function_name=chosen.function.name)


def _function_failure(
    reads: Sequence[_ModuleRead], blocks: Sequence[_Block], text: str
) -> ReplyReading:
    """Why a reply to a text-to-code task has no function to test."""
    cut = [r for r in reads if r.state == "cut"]
    if cut:
        reason = f"the reply was cut off inside its function ({cut[-1].detail})"
        return ReplyReading(TRUNCATED, "", "cut inside the function", reason)
    if any(b.unclosed for b in blocks) or _cut_prose(text):
        reason = "the reply was cut off before its function appears"
        return ReplyReading(TRUNCATED, "", "cut before the function", reason)
    broken = [r for r in reads if r.state == "broken"]
    if broken:
        reason = f"the reply's code does not parse ({broken[-1].detail})"
        return ReplyReading(NO_METHOD, "", "code does not parse", reason)
    none = [r for r in reads if r.state == "none"]
    if none:
        return ReplyReading(NO_METHOD, "", "no function to test", none[-1].detail)
    return ReplyReading(NO_METHOD, "", "prose only", "the reply has no code")


# --------------------------------------------------------------------------- completions of a prompt

_DOCSTRING_START = re.compile(r"^[rRuUbB]{0,2}(\"\"\"|''')")
# Calls that make a block a program (it reads its input or writes its answer), not an example.
_PROGRAM_CALLS = frozenset({"print", "write"})


def _prompt_definition(prompt: str, name: str) -> re.Match[str] | None:
    """The prompt's (last) `def name(` line."""
    matches = [m for m in _PROMPT_DEF.finditer(prompt) if m.group(2) == name]
    return matches[-1] if matches else None


def _prompt_parameters(prompt: str, name: str) -> list[str]:
    """The positional parameter names of the prompt's function, from its signature alone (a
    partial-code prompt does not parse as a whole)."""
    match = _prompt_definition(prompt, name)
    if match is None:
        return []
    text = prompt[match.start() :].lstrip()
    depth = 0
    for position, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0:
            tree, _ = _parse(text[: position + 1] + " pass")
            node = tree.body[0] if tree and tree.body else None
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
            return []
    return []


def _prompt_module_names(prompt: str, name: str) -> set[str]:
    """Names the prompt binds at module level before its function (its imports and helper
    functions), and the function itself: the reply's own copies of these are not needed."""
    match = _prompt_definition(prompt, name)
    tree, _ = _parse(prompt[: match.start()] if match else prompt)
    return {n for node in (tree.body if tree else []) for n in _bindings(node)} | {name}


def _strip_docstring_lines(body: list[str]) -> list[str]:
    """Body lines without the docstring at their top."""
    first = next((i for i, line in enumerate(body) if line.strip()), None)
    if first is None:
        return body
    stripped = body[first].strip()
    match = _DOCSTRING_START.match(stripped)
    if not match:
        return body
    quote = match.group(1)
    if quote in stripped[match.end() :]:
        return body[first + 1 :]
    for number in range(first + 1, len(body)):
        if quote in body[number]:
            return body[number + 1 :]
    return []


def _prompt_code(prompt: str, name: str) -> list[str]:
    """The code lines (stripped) the prompt's function already has after its docstring:
    ReCode's partial code, the prompt plus the first half of the solution; [] for a plain
    prompt."""
    match = _prompt_definition(prompt, name)
    if match is None:
        return []
    lines = prompt[match.end() :].split("\n")
    header = _header_end(["(" + lines[0], *lines[1:]], 0)
    if header is None or header[1]:
        return []
    body = _strip_docstring_lines(lines[header[0] + 1 :])
    return [line.strip() for line in body if line.strip()[:1] not in ("", "#")]


def _after_prompt_code(body: list[str], prompt_code: Sequence[str]) -> list[str]:
    """`body` without the lines the prompt already has: a chat model restates the whole
    function, and appending the partial code's lines again would duplicate them. Only an exact
    restatement (the same code lines, in order, first) is cut; anything else is kept."""
    if not prompt_code:
        return body
    code = [(i, line.strip()) for i, line in enumerate(body) if line.strip()[:1] not in ("", "#")]
    if [text for _, text in code[: len(prompt_code)]] != list(prompt_code):
        return body
    return body[code[len(prompt_code) - 1][0] + 1 :]


def _module_needs(
    function: _Function,
    namespaces: Sequence[dict[str, _Source]],
    skip: set[str],
    own_definition: bool = False,
) -> list[_Source]:
    """The reply's module-level statements the function reaches when it is called (helpers,
    classes, constants, imports), transitively; `skip`: names the prompt already binds. With
    `own_definition`, the function's decorators, defaults and annotations count too."""
    chosen = {id(function)}
    found: list[_Source] = []
    queue: list[tuple[ast.stmt, bool]] = [(function, not own_definition)]
    while queue:
        node, root = queue.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names = _call_time_names(node)
            if not root:  # the prompt's signature replaces the chosen function's own
                names |= _loaded_names(_definition_time_parts(node))
        elif isinstance(node, ast.ClassDef):
            names = _loaded_names([node])
        else:
            names = _loaded_names([node]) - (_bound_names(node) - set(_bindings(node)))
        for name in sorted(names - skip):
            source = _lookup(name, namespaces)
            if source is None or id(source.node) in chosen:
                continue
            chosen.add(id(source.node))
            found.append(source)
            queue.append((source.node, False))
    return found


def _renamed_candidate(block: _Block) -> _Candidate | None:
    """The function a block defines under another name than the prompt's (the model renamed
    it), chosen as a text-to-code task chooses one; None if the block defines none."""
    parsed = _parse_block(block.code)
    if parsed.tree is None or parsed.error is not None:
        return None
    function, _ = _choose_function(parsed.tree)
    if function is None:
        return None
    ends_block = (function.end_lineno or 0) >= _last_code_line(parsed.lines)
    state = "cut" if block.unclosed and ends_block else "complete"
    shape = f"function under another name ({function.name})"
    return _Candidate(state, block, shape, function, None, parsed.lines, parsed.tree)


def _function_body_candidate(block: _Block, parameters: Sequence[str]) -> _Candidate | None:
    """A block that is the function's body alone (`return sorted(set(l))`), or None: it must
    parse as a body, define nothing but helpers, and return a value or read a parameter."""
    wrapped = "def _reply_body():\n" + _indented(block.code, "    ")
    tree, _ = _parse(wrapped)
    if tree is None:
        return None
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    acting = [
        s
        for s in function.body
        if not isinstance(s, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef)
        and not _is_stub_statement(s)
    ]
    scope = [node for s in acting for node in [s, *_walk_scope(s)]]
    reads = any(isinstance(n, ast.Name) and n.id in parameters for n in scope)
    returns = any(isinstance(n, ast.Return) and n.value is not None for n in scope)
    if not acting or not (reads or returns):
        return None
    lines = tuple(wrapped.split("\n"))
    state = "cut" if block.unclosed else "complete"
    detail = "its code block is never closed"
    return _Candidate(state, block, "body only", function, None, lines, tree, detail)


def _parameter_prologue(function: _Function, parameters: Sequence[str]) -> list[str]:
    """An assignment binding the reply's parameter names to the prompt's where the model
    renamed them (`def f(lst)` for the prompt's `def f(numbers)`), by position."""
    own = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    used = _loaded_names(_docstring_dropped(function.body))
    pairs = [(o, p) for o, p in zip(own, parameters, strict=False) if o != p]
    if not any(o in used for o, _ in pairs):
        return []
    if len(pairs) == 1:
        return [f"{pairs[0][0]} = {pairs[0][1]}"]
    return [f"{', '.join(o for o, _ in pairs)} = {', '.join(p for _, p in pairs)}"]


def _whole_code(text: str) -> _Block | None:
    """The reply as one block when it is plain code that parses whole (a whole program from
    another harness, evalplus's `solution`): prose detection would split it at a column-0
    string line."""
    if "```" in text or "~~~" in text:
        return None
    tree, _ = _parse(text)
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    if tree is None or not any(isinstance(n, definitions) for n in tree.body):
        return None
    return _Block(textwrap.dedent(text).strip("\n"), fenced=False, unclosed=False, at_end=True)


def _completion_failure(
    candidates: Sequence[_Candidate], blocks: Sequence[_Block], text: str, name: str
) -> ReplyReading:
    """Why a reply to a prompt has no code to test for its function."""
    cut = [c for c in candidates if c.state == "cut"]
    if cut:
        reason = f"the reply was cut off inside {name} ({cut[-1].detail})"
        return ReplyReading(TRUNCATED, "", "cut inside the function", reason)
    code_cut = any(b.cut_in(_parse_block(b.code)) for b in blocks)
    if code_cut or (not candidates and _cut_prose(text)):
        where = "before any code" if not blocks else f"before a complete {name} appears"
        reason = f"the reply was cut off {where}"
        return ReplyReading(TRUNCATED, "", "cut before the function", reason)
    broken = [c for c in candidates if c.state == "broken"]
    if broken:
        reason = f"the reply's {name} does not parse ({broken[-1].detail})"
        return ReplyReading(NO_CODE, "", "function does not parse", reason)
    if any(c.state == "stub" for c in candidates):
        reason = f"the reply's {name} has no body (only a docstring, pass or ...)"
        return ReplyReading(NO_CODE, "", "function without a body", reason)
    if blocks:
        reason = f"the reply's code neither defines {name} nor reads as its body"
        return ReplyReading(NO_CODE, "", "code without the function", reason)
    return ReplyReading(NO_CODE, "", "prose only", "the reply has no code")


_INPUT_CALLS = frozenset({"input", "open", "readline", "readlines", "read"})


def _program_rank(tree: ast.Module) -> int:
    """2 for a module that reads its input (a stdin/stdout program), 1 for one that only
    prints (a usage example, or a program with its input built in), 0 for neither."""
    rank = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if called in _INPUT_CALLS:
                return 2
            if called in _PROGRAM_CALLS:
                rank = 1
        if isinstance(node, ast.Attribute) and node.attr == "stdin":
            return 2
        if isinstance(node, ast.Attribute) and node.attr == "stdout":
            rank = 1
    return rank


def _read_program(blocks: Sequence[_Block], where: str, text: str) -> ReplyReading:
    """A chat reply to a stdin/stdout statement: its last complete block that reads the input
    (else the last that prints); example inputs and outputs in their own blocks are not
    programs, and a block cut off by the token limit is never taken."""
    programs: list[tuple[int, _Block]] = []
    cut = broken = False
    for block in blocks:
        tree, err = _parse(block.code)
        if tree is None:
            at_end = err is not None and _error_at_end(block.code.split("\n"), err)
            cut = cut or block.unclosed or (block.may_be_cut and at_end)
            broken = broken or not cut
        elif block.unclosed:
            cut = True
        elif rank := _program_rank(tree):
            programs.append((rank, block))
    if not programs:
        if cut or _cut_prose(text):
            reason = "the reply was cut off before its program ends"
            return ReplyReading(TRUNCATED, "", "cut inside the program", reason)
        if broken:
            reason = "the reply's code does not parse"
            return ReplyReading(NO_CODE, "", "program does not parse", reason)
        if not blocks:
            return ReplyReading(NO_CODE, "", "prose only", "the reply has no code")
        reason = "the reply's code reads no input and prints nothing"
        return ReplyReading(NO_CODE, "", "code without a program", reason)
    best = max(rank for rank, _ in programs)
    chosen = [block for rank, block in programs if rank == best]
    shape = ["program", *([where] if where else [])]
    if len(blocks) > 1:
        shape.append("several blocks")
    if len(chosen) > 1:
        shape.append("several candidates: the last complete one")
    return ReplyReading(EXTRACTED, chosen[-1].code.strip("\n") + "\n", "; ".join(shape))


def read_completion_reply(
    reply: str,
    prompt: str,
    *,
    chat: bool,
    stop: Sequence[str] = (),
    helpers: bool = False,
    language: str = "python",
) -> ReplyReading:
    """A model's output for a HumanEval-format prompt read into the completion to test.

    `chat=False`: a continuation of the prompt, cut before the first of `stop`, taken as it is;
    with `helpers` (decoding's `keep_helpers`), the function as the model wrote it and then
    what it needs from the code after it, as a chat reply's function is read.
    `chat=True`: the prompt's function in the reply (any shape the module docstring lists), its
    body continuing the prompt and what it needs after it; for a prompt that defines no
    function (a stdin/stdout statement), the reply's whole program.

    A prompt in another `language` than Python is read by `_braces` (the function's body up to
    the braces the prompt left open); `helpers` does not apply there.
    """
    if language != "python":
        brace = (
            _braces.read_chat(reply, prompt, language_named(language))
            if chat
            else _braces.read_continuation(reply, prompt, language_named(language))
        )
        return ReplyReading(brace.status, brace.completion, brace.shape, brace.reason)
    if not chat:
        continued = truncate_at_stop(reply, stop)
        if helpers:
            return _continuation_with_helpers(continued, prompt)
        return ReplyReading(EXTRACTED, continued, "continuation")
    if not reply.strip():
        return ReplyReading(NO_CODE, "", "empty", "the reply is empty")
    text = _normalise(reply)
    whole = _whole_code(text)
    blocks, where = ([whole], "") if whole else _blocks(text)
    name = prompt_function_name(prompt)
    if name is None:
        return _read_program(blocks, where, text)
    match = _prompt_definition(prompt, name)
    method = bool(match and match.group(1))
    parameters = _prompt_parameters(prompt, name)
    candidates = [
        c
        for block in blocks
        for c in _candidates_in(block, "", name)
        if method or c.owner is None or c.shape.endswith("(salvaged)")
    ]
    for candidate in candidates:
        if candidate.state == "complete" and candidate.block.unclosed and candidate.ends_block:
            candidate.state, candidate.detail = "cut", "its code block is never closed"
    complete = [c for c in candidates if c.state == "complete"]
    if not complete and not any(c.state == "cut" for c in candidates):
        if not any(b.fenced for b in blocks):
            continued = truncate_at_stop(text, stop)
            tree, _ = _parse(prompt + continued)
            function = _prompt_function_in(tree, name) if tree else None
            if function is not None and _has_real_body(function):
                return ReplyReading(EXTRACTED, continued, "continues the prompt")
        for block in reversed(blocks):
            fallback = _renamed_candidate(block) or _function_body_candidate(block, parameters)
            if fallback is not None:
                candidates.append(fallback)
                complete = [fallback] if fallback.state == "complete" else []
                break
    if not complete:
        return _completion_failure(candidates, blocks, text, name)
    chosen = complete[-1]
    return _assemble_completion(chosen, complete, blocks, where, prompt, name, parameters)


def _prompt_function_in(tree: ast.Module, name: str) -> _Function | None:
    """The last definition of `name` in prompt + continuation, top level or in a class."""
    found = _defs_named(tree.body, name)
    return found[-1][0] if found else None


def _assemble_completion(
    chosen: _Candidate,
    complete: Sequence[_Candidate],
    blocks: Sequence[_Block],
    where: str,
    prompt: str,
    name: str,
    parameters: Sequence[str],
) -> ReplyReading:
    """The chosen definition's body continuing the prompt, then what it needs at column 0."""
    function = chosen.function
    assert function is not None
    namespaces = [_namespace(chosen.tree, chosen.lines)]
    ordered = [chosen.block, *reversed([b for b in blocks if b is not chosen.block])]
    namespaces += [_namespace(p.tree, p.lines) for p in (_parse_block(b.code) for b in ordered)]
    skip = _prompt_module_names(prompt, name)
    own = _needs_own_definition(chosen, prompt, name, parameters)
    needs = _module_needs(function, namespaces, skip, own_definition=bool(own))
    if chosen.block.unclosed:
        # Cut inside a helper the function calls: the helper is missing, not the function.
        missing = _call_time_names(function) - skip - {n for s in needs for n in _bindings(s.node)}
        cut_helpers = sorted(m for m in missing if _def_lines(chosen.block.code, m))
        if cut_helpers:
            reason = f"the reply was cut off inside {cut_helpers[0]}, which {name} calls"
            return ReplyReading(TRUNCATED, "", "cut inside a helper", reason)
    notes = [chosen.shape if chosen.shape != "method alone" else "function"]
    notes += [where] if where else []
    if own:
        notes.append(f"its own definition ({own})")
        # The prompt's function gets a placeholder body (a prompt may end at its signature);
        # the reply's definition, at column 0 below, replaces it before any test calls it.
        text = f"{prompt_body_indent(prompt)}pass  # replaced by the definition below\n"
    else:
        text = _continued_body(chosen, prompt, name, parameters, notes)
    module = sorted(needs, key=lambda s: (s.lines != chosen.lines, s.node.lineno))
    pieces = _needed_pieces(module, notes)
    if own:
        pieces.append((function, _Source(function, chosen.lines).text()))
        if function.name != name:
            alias = f"{name} = {function.name}"
            pieces.append((ast.parse(alias).body[0], alias))
    elif function.name != name and function.name in _call_time_names(function):
        alias = f"{function.name} = {name}"  # a renamed function that calls itself
        pieces.append((ast.parse(alias).body[0], alias))
    if pieces:
        text += "\n\n" + _joined(pieces)
    if len(blocks) > 1:
        notes.append("several blocks")
    if len(complete) > 1:
        notes.append("several candidates: the last complete one")
    try:  # compiled, not run: our own assembly must give a module the sandbox can load
        compile(prompt + text, "<completion>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as err:
        if _prompt_code(prompt, name):  # ReCode's partial code, rewritten instead of continued
            why = err.msg if isinstance(err, SyntaxError) else str(err)
            reason = f"the reply's {name} does not continue the prompt's partial code ({why})"
        else:
            reason = f"the function could not be assembled into the prompt ({err})"
        return ReplyReading(NO_CODE, "", "; ".join(notes), reason)
    return ReplyReading(EXTRACTED, text, "; ".join(notes), function_name=function.name)


def _needed_pieces(module: Sequence[_Source], notes: list[str]) -> list[tuple[ast.stmt, str]]:
    """The statements a function needs, imports first, each at column 0, in `module`'s order
    otherwise (a function looks its globals up when it is called, so they exist by then);
    `notes` says what kinds were kept."""
    imports = [s for s in module if _is_import(s)]
    definitions = [s for s in module if isinstance(s.node, _DEFINITIONS)]
    if definitions:
        notes.append("helpers kept")
    if len(module) > len(imports) + len(definitions):
        notes.append("constants kept")
    if imports:
        notes.append("imports kept")
    return [(s.node, s.text()) for s in [*imports, *(s for s in module if not _is_import(s))]]


def _continuation_with_helpers(continued: str, prompt: str) -> ReplyReading:
    """A completion-mode continuation generated past the function (`keep_helpers`): the
    function's text as the model wrote it, then the module-level statements after it that the
    function reaches when called (helpers, classes, constants, imports: `_module_needs`, as for
    a chat reply), the rest (examples, tests, functions it never calls) left out. A
    continuation with nothing after the function is returned as it is, so it is the same
    completion as HumanEval's reading gives."""
    name = prompt_function_name(prompt)
    whole = prompt + continued
    parsed = _parse_block(whole)
    prompt_lines = prompt.count("\n") + 1
    found = [f for f, _ in _defs_named(parsed.tree.body, name)] if parsed.tree and name else []
    ours = [f for f in found if f.lineno <= prompt_lines]
    if not ours or ours[-1].end_lineno is None:
        # No function (a program) or one that does not parse: there is nothing to read the
        # helpers for, and the code fails (or passes) as HumanEval's reading would have it.
        return ReplyReading(EXTRACTED, continued, "continuation")
    function = ours[-1]
    assert name is not None and parsed.tree is not None and function.end_lineno is not None
    end = function.end_lineno
    after: dict[str, _Source] = {}
    for node in parsed.tree.body:
        if node.lineno > end:
            for bound in _bindings(node):
                after[bound] = _Source(node, parsed.lines)
    function_end = sum(len(line) + 1 for line in parsed.lines[:end]) - 1
    text = whole[len(prompt) : max(function_end, len(prompt))] + "\n"
    if not whole[function_end:].strip():
        return ReplyReading(EXTRACTED, continued, "continuation")
    skip = _prompt_module_names(prompt, name)
    needs = _module_needs(function, [after], skip)
    if parsed.kept < len(parsed.lines):
        # The code after the function stops parsing somewhere (the token limit cut it): a
        # helper the function calls that is defined only there was cut off, not forgotten.
        missing = _call_time_names(function) - skip - {n for s in needs for n in _bindings(s.node)}
        tail = "\n".join(parsed.lines[parsed.kept :])
        cut_helpers = sorted(m for m in missing if _def_lines(tail, m))
        if cut_helpers:
            reason = f"the completion was cut off inside {cut_helpers[0]}, which {name} calls"
            return ReplyReading(TRUNCATED, "", "continuation; cut inside a helper", reason)
    notes = ["continuation"]
    pieces = _needed_pieces(sorted(needs, key=lambda s: s.node.lineno), notes)
    kept = {id(s.node) for s in needs}
    if parsed.kept < len(parsed.lines) or any(
        node.lineno > end and id(node) not in kept for node in parsed.tree.body
    ):
        notes.append("code after the function left out")
    if pieces:
        text += "\n\n" + _joined(pieces)
    return ReplyReading(EXTRACTED, text, "; ".join(notes))


def _needs_own_definition(
    chosen: _Candidate, prompt: str, name: str, parameters: Sequence[str]
) -> str:
    """Why the reply's function must replace the prompt's whole, not lend it its body ('' when
    the body will do): it is decorated (`@lru_cache` on a recursive function: the body alone
    loses the cache and may time out), or it takes parameters the prompt's does not (a
    recursion passing `memo` would call the prompt's signature with too many arguments). Not
    for a partial-code prompt (its code must be continued) nor a method."""
    function = chosen.function
    if function is None or chosen.shape == "body only" or chosen.owner is not None:
        return ""
    match = _prompt_definition(prompt, name)
    if match is None or match.group(1) or _prompt_code(prompt, name):
        return ""
    if function.decorator_list:
        return "decorated"
    args = function.args
    extra = len([*args.posonlyargs, *args.args]) > len(parameters) or args.kwonlyargs
    return "more parameters than the prompt's" if extra or args.vararg or args.kwarg else ""


def _continued_body(
    chosen: _Candidate, prompt: str, name: str, parameters: Sequence[str], notes: list[str]
) -> str:
    """The chosen function's body continuing the prompt (its parameters bound to the prompt's
    names where the model renamed them; what a partial-code prompt already holds left out)."""
    function = chosen.function
    assert function is not None
    body = _body_lines(chosen)
    if chosen.shape != "body only":
        prologue = _parameter_prologue(function, parameters)
        if prologue:
            notes.append("parameters renamed")
        body = [*prologue, *body]
    body = _after_prompt_code(_trim(body), _prompt_code(prompt, name))
    indent = prompt_body_indent(prompt)
    return "\n".join(indent + line if line.strip() else "" for line in body) + "\n"
