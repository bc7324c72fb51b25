"""Turning a model's raw output into a completion of the prompt (pure functions).

The same steps run for every transformation of a problem, so differences in pass@k come from the
prompts, not from post-processing: a completion is cut before the first stop sequence; a chat
reply is first reduced to the body of the prompt's function (from its code block, signature and
repeated docstring removed) and re-indented to continue the prompt.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)
_IMPORT = re.compile(r"^(?:import[ \t]+\w|from[ \t]+[\w.]+[ \t]+import[ \t])")
_DOCSTRING_START = re.compile(r"^[rRuUbB]{0,2}(\"\"\"|''')")
_CODE_LANGUAGES = {"", "python", "py", "python3", "py3"}


def truncate_at_stop(text: str, stop: Sequence[str]) -> str:
    """`text` up to (not including) the earliest occurrence of any stop sequence."""
    cut = len(text)
    for sequence in stop:
        position = text.find(sequence)
        if 0 <= position < cut:
            cut = position
    return text[:cut]


def prompt_function_name(prompt: str) -> str | None:
    """The name of the last function the prompt defines (the one to complete), if any."""
    matches = list(_DEF.finditer(prompt))
    return matches[-1].group(2) if matches else None


def prompt_body_indent(prompt: str) -> str:
    """The indentation a completion's body lines need: that of the prompt's last function body
    (its docstring), else the def's own indentation plus four spaces."""
    matches = list(_DEF.finditer(prompt))
    if not matches:
        return ""
    last = matches[-1]
    lines = prompt[last.end() :].splitlines()
    _, body = _lines_after_signature(lines, first_line_rest=True)
    for line in body:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return last.group(1) + "    "


def _lines_after_signature(
    lines: list[str], first_line_rest: bool = False
) -> tuple[str, list[str]]:
    """(code after the colon on the signature's last line, the lines after it) for a signature
    starting on lines[0]; with `first_line_rest`, lines[0] starts just after `def name(`."""
    depth = 1 if first_line_rest else 0
    for number, line in enumerate(lines):
        for position, char in enumerate(line):
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            elif char == ":" and depth == 0:
                rest = line[position + 1 :].strip()
                return ("" if rest.startswith("#") else rest), lines[number + 1 :]
    return "", []


def _code_blocks(reply: str) -> list[str]:
    blocks = [m.group(2) for m in _FENCE.finditer(reply) if m.group(1).lower() in _CODE_LANGUAGES]
    return blocks or [reply]


def _strip_docstring(body: list[str]) -> list[str]:
    """Drop a docstring the model repeated at the top of the body."""
    first = next((i for i, line in enumerate(body) if line.strip()), None)
    if first is None:
        return body
    stripped = body[first].strip()
    match = _DOCSTRING_START.match(stripped)
    if not match:
        return body
    quote = match.group(1)
    after_open = stripped[match.end() :]
    if quote in after_open:
        return body[first + 1 :]
    for number in range(first + 1, len(body)):
        if quote in body[number]:
            return body[number + 1 :]
    return body[first + 1 :]  # unterminated: the reply was cut inside its docstring


def _function_body(code: str, name: str | None) -> list[str] | None:
    """The body lines of function `name` in `code` (else of its last top-level function)."""
    lines = code.splitlines()
    defs = list(_DEF.finditer(code))
    chosen = next((d for d in defs if d.group(2) == name), None)
    if chosen is None:
        top_level = [d for d in defs if not d.group(1)]
        chosen = top_level[-1] if top_level else None
    if chosen is None:
        return None
    start = code.count("\n", 0, chosen.start())
    indent = len(chosen.group(1))
    rest = lines[start][chosen.end() - chosen.start() :]  # the match starts at its line start
    same_line, after = _lines_after_signature([rest, *lines[start + 1 :]], first_line_rest=True)
    if same_line:  # a one-line function: "def f(x): return x"
        return [same_line]
    body: list[str] = []
    for line in after:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return _strip_docstring(body)


def _dedent_body(body: Sequence[str]) -> list[str]:
    """The body without its own indentation: that of its first code line, not the least of all
    lines (a continuation line may be indented less than the body, `while \\` then `  b:`)."""
    code = [line for line in body if line.strip()[:1] not in ("", "#")]
    if not code:
        return textwrap.dedent("\n".join(body)).strip("\n").splitlines()
    base = code[0][: len(code[0]) - len(code[0].lstrip())]
    lines = [line[len(base) :] if line.startswith(base) else line.lstrip() for line in body]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _code_lines(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(position, stripped text) of the lines that are code: not blank, not a comment."""
    return [(i, line.strip()) for i, line in enumerate(lines) if line.strip()[:1] not in ("", "#")]


def _prompt_code(prompt: str, name: str) -> list[str]:
    """The code the prompt's function already has after its docstring (ReCode's partial code:
    the prompt plus the first half of the solution), stripped; empty for a plain prompt."""
    return [text for _, text in _code_lines(_function_body(prompt, name) or [])]


def _after_prompt_code(body: list[str], prompt_code: Sequence[str]) -> list[str]:
    """`body` without the lines the prompt already has: a chat model restates the whole
    function, and appending the partial code's lines again would duplicate them. Only an exact
    restatement (the same code lines, in order, first) is cut; anything else is kept."""
    if not prompt_code:
        return body
    code = _code_lines(body)
    if [text for _, text in code[: len(prompt_code)]] != list(prompt_code):
        return body
    return body[code[len(prompt_code) - 1][0] + 1 :]


def extract_function_body(reply: str, prompt: str) -> str:
    """A chat reply turned into a completion of `prompt`.

    Takes the first fenced Python block that defines the prompt's function (else the first
    block, else the whole reply), keeps that function's body without a repeated docstring,
    moves the block's top-level imports into the body (so they still run), and re-indents it
    to continue the prompt; where the prompt already holds the start of the body (partial
    code) and the reply restates it, the restated lines are left out. A reply with no function definition is taken as the body itself.
    For a prompt that defines no function (a stdin/stdout problem), the code is returned
    dedented, as a whole program.
    """
    name = prompt_function_name(prompt)
    blocks = _code_blocks(reply)
    code = next((b for b in blocks if name and re.search(rf"\bdef\s+{name}\s*\(", b)), blocks[0])
    if name is None:
        return textwrap.dedent(code).strip("\n") + "\n"
    body = _function_body(code, name)
    if body is None:
        body = code.splitlines()
        imports: list[str] = []
    else:
        imports = [line.strip() for line in code.splitlines() if _IMPORT.match(line)]
    dedented = _after_prompt_code(_dedent_body(body), _prompt_code(prompt, name))
    indent = prompt_body_indent(prompt)
    lines = [indent + line if line.strip() else "" for line in [*imports, *dedented]]
    return "\n".join(lines) + "\n" if lines else ""


def postprocess(raw: str, prompt: str, stop: Sequence[str], chat: bool) -> str:
    """The completion scored for `raw` model output (the same steps for every prompt variant)."""
    text = extract_function_body(raw, prompt) if chat else raw
    return truncate_at_stop(text, stop)
