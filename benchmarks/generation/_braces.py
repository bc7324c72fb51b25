"""Reading a model's output for a prompt in a brace language (C++, Java, JavaScript, Go) into
the completion to test: the rest of the prompt's function, up to and including the braces the
prompt left open. Pure text work: the code is scanned, never compiled or run.

A prompt in these languages ends inside one or more open braces (a C++ function's, a Java
method's and its class's). The reader scans with the language's lexical rules (`benchmarks.languages.source`:
strings, characters, comments: a brace inside them is not a brace) and:

- continuation (`chat=False`): the output continues the prompt. Where the braces the prompt
  opened close, the completion ends (what the model wrote after, a `main` or a second
  function, is dropped, as Python's stop sequences drop it). Where the output ends first with
  its own braces balanced, the language's stop sequence (`Language.stop`, the closing brace at
  the function's indentation) cut it: the closers go back, at the indentation of the lines
  that opened them. Where it ends inside a brace it opened itself, the token limit cut it:
  "truncated", never code.
- chat (`chat=True`): the reply is searched (in its fenced blocks tagged with one of the
  language's `fence_tags` or untagged, else the whole text) for a definition of the prompt's
  function by name; the last complete one wins, and its body followed by the closers is the
  completion. Helper functions the reply defines beside it are not carried over: a C++ or Go
  helper would have to come before the prompt's function, which a completion cannot do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchmarks.languages import Language
from benchmarks.languages.source import code_only, definitions, segments

# A fenced block: its tag and its text (the closing fence may be missing: a reply cut off).
_FENCE = re.compile(r"^```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^```|\Z)", re.S | re.M)


@dataclass(frozen=True)
class Scan:
    """Where a scan of code stopped: `closed_at` is the index just after the brace that closed
    the outermost level (None: never closed), `depth` the open braces left at the end (relative
    to the start), `in_literal` whether the text ended inside a string or comment, `openers`
    the indentation of the line of each brace still open, outermost first."""

    closed_at: int | None
    depth: int
    in_literal: bool
    openers: tuple[str, ...]


def scan(code: str, language: Language, start_depth: int = 0) -> Scan:
    """Scan `code` from `start_depth` open braces; stop where the depth first falls below 1
    after starting above 0 (the braces the caller's prefix opened are closed). Only code is
    counted: comments and string literals are `source.segments`'s, by the language's facts."""
    depth = start_depth
    openers: list[str] = []
    for segment in segments(code, language):
        if segment.kind != "code":
            if not segment.closed and segment.end == len(code):  # cut off inside it
                return Scan(None, depth, True, tuple(openers))
            continue
        for i in range(segment.start, segment.end):
            char = code[i]
            if char == "{":
                depth += 1
                line = code[code.rfind("\n", 0, i) + 1 : i]
                openers.append(line[: len(line) - len(line.lstrip())])
            elif char == "}":
                depth -= 1
                if openers:
                    openers.pop()
                if depth == 0 and start_depth > 0:
                    return Scan(i + 1, 0, False, ())
    return Scan(None, depth, False, tuple(openers))


def prompt_openers(prompt: str, language: Language) -> tuple[str, ...]:
    """The indentation of each brace the prompt leaves open, outermost first."""
    return scan(prompt, language).openers


def closers(openers: tuple[str, ...]) -> str:
    """The closing braces of `openers`, innermost first, each on its own line."""
    return "".join(f"\n{indent}}}" for indent in reversed(openers)) + "\n"


def prompt_function_name(prompt: str, language: Language) -> str | None:
    """The name of the function whose body the prompt opens: the last it defines (the
    language's `function_definition`), where the prompt leaves a brace open."""
    found = definitions(prompt, language)
    return found[-1][0] if found and scan(prompt, language).openers else None


@dataclass(frozen=True)
class BraceReading:
    """What `read_continuation` or `read_chat` found: a status as `ReplyReading`'s."""

    status: str  # "extracted" | "truncated" | "no_code"
    completion: str
    shape: str
    reason: str = ""


def read_continuation(text: str, prompt: str, language: Language) -> BraceReading:
    """A continuation of `prompt` (see the module docstring)."""
    openers = prompt_openers(prompt, language)
    if not openers:
        return BraceReading("extracted", text, "continuation")
    for end in ("\n```",):  # an instruct model closes its code with a fence, then talks
        if end in text:
            text = text[: text.index(end)]
    result = scan(text, language, len(openers))
    if result.closed_at is not None:
        return BraceReading("extracted", text[: result.closed_at] + "\n", "continuation")
    if result.in_literal:
        return BraceReading(
            "truncated", "", "continuation", "it ends inside a string or comment (cut off)"
        )
    own = result.depth - len(openers)
    if own > 0:
        return BraceReading(
            "truncated", "", "continuation", "it ends inside a block it opened (cut off)"
        )
    # The stop sequence (the function's closing brace) ended it: put back what it took.
    left = openers[: result.depth]
    return BraceReading(
        "extracted", text.rstrip() + closers(left), "continuation; closed at the stop"
    )


def _without_restated_comment(body: str, prompt: str, language: Language) -> str:
    """`body` less the leading comments the prompt already holds (a prompt whose description
    sits inside the function's body, restated by the reply): the completion continues after
    them."""
    flat_prompt = " ".join(prompt.split())
    cut = 0
    for segment in segments(body, language):
        piece = body[segment.start : segment.end]
        if segment.kind == "code" and not piece.strip():
            continue
        if segment.kind not in ("line_comment", "block_comment"):
            break
        if " ".join(piece.split()) not in flat_prompt:
            break
        cut = segment.end
    return body[cut:]


def _body_start(code: str, after_name: int) -> int | None:
    """The index after the `{` that opens a function's body, in code with comments and strings
    blanked, from just after the function's name: the parameter list is skipped with its
    parentheses balanced (an arrow function's without them is not), then empty brace pairs of
    the result type (Go's `interface{}`); a `;` first means a declaration, not a definition."""
    paren, brace = code.find("(", after_name), code.find("{", after_name)
    if paren < 0 or 0 <= brace < paren:
        return None if brace < 0 else brace + 1
    depth, i = 1, paren + 1
    while i < len(code) and depth:
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        i += 1
    while i < len(code):
        if code[i] == ";":
            return None
        if code[i] == "{":
            if code[i + 1 : i + 2] == "}":
                i += 2
                continue
            return i + 1
        i += 1
    return None


def read_chat(reply: str, prompt: str, language: Language) -> BraceReading:
    """The prompt's function in a chat reply (see the module docstring)."""
    if not reply.strip():
        return BraceReading("no_code", "", "empty", "the reply is empty")
    name = prompt_function_name(prompt, language)
    openers = prompt_openers(prompt, language)
    blocks = [
        body
        for tag, body in _FENCE.findall(reply.replace("\r\n", "\n"))
        if not tag or tag.lower() in language.fence_tags
    ]
    if not blocks:
        blocks = [reply.replace("\r\n", "\n")]
    if name is None or not openers:
        return BraceReading("no_code", "", "chat", "the prompt opens no function to complete")
    found: BraceReading | None = None
    for block in blocks:
        # Definitions as the language declares them, in code only: a call in an `if
        # (name(x)) {` or a `>>> name(x)` example in a comment is never taken for one.
        code = code_only(block, language)
        for defined, line_start in definitions(block, language):
            if defined != name:
                continue
            body_start = _body_start(code, code.index(name, line_start) + len(name))
            if body_start is None:
                continue
            result = scan(block[body_start:], language, 1)
            if result.closed_at is None:
                found = found or BraceReading(
                    "truncated", "", "chat", f"the definition of {name} is cut off"
                )
                continue
            body = _without_restated_comment(
                block[body_start : body_start + result.closed_at - 1], prompt, language
            )
            found = BraceReading(
                "extracted", body.removeprefix("\n").rstrip() + closers(openers), "chat"
            )
    if found is not None:
        return found
    # No definition by name: a reply that continues the prompt, as a base model would.
    # Only one that closes the prompt's function itself: prose balances its braces too.
    continued = read_continuation(blocks[-1], prompt, language)
    if continued.shape == "continuation" and continued.status == "extracted":
        return BraceReading("extracted", continued.completion, "chat; continues the prompt")
    return BraceReading("no_code", "", "chat", f"the reply defines no function {name}")
