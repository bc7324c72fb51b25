"""Java (HumanEval-X's Java prompts: a Javadoc before a method of `class Solution`)."""

from __future__ import annotations

from benchmarks.languages import Language

_RESERVED = """abstract assert boolean break byte case catch char class const continue default do
double else enum extends final finally float for goto if implements import instanceof int
interface long native new package private protected public return short static strictfp super
switch synchronized this throw throws transient try void volatile while true false null var
record String List Map Set Arrays Collections Optional Integer Solution Main"""

LANGUAGE = Language(
    name="java",
    display_name="Java",
    extension=".java",
    line_comment="//",
    block_comment=("/*", "*/"),
    naming="camelCase",
    reserved_words=frozenset(_RESERVED.split()),
    # A method: modifiers and a return type, the name, its parameters and the opening brace.
    function_definition=(
        r"^[ \t]*[A-Za-z_][\w<>,.?& \t\[\]]*[ \t>\]](?P<name>[A-Za-z_]\w*)[ \t]*"
        r"\([^;{}]*\)[ \t]*(?:throws[ \t]+[\w., \t]+)?\s*\{"
    ),
    stop=("\n    }\n", "\n```"),
    chat_instruction=(
        "Complete the following Java function. Reply with the whole function, including "
        "its signature, in one ```java code block."
    ),
    fence_tags=frozenset({"java"}),
)
