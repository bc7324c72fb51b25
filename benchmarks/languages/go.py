"""Go (HumanEval-X's Go prompts: `//` lines before a `func`, in `package main`)."""

from __future__ import annotations

from benchmarks.languages import Language

_RESERVED = """break case chan const continue default defer else fallthrough for func go goto if
import interface map package range return select struct switch type var true false nil iota
append cap close complex copy delete imag len make new panic print println real recover
string int int64 float64 bool byte rune error main fmt math sort strings strconv"""

LANGUAGE = Language(
    name="go",
    display_name="Go",
    extension=".go",
    line_comment="//",
    block_comment=("/*", "*/"),
    naming="PascalCase",
    reserved_words=frozenset(_RESERVED.split()),
    string_quotes="\"'`",
    # `func Name(` (a method's receiver before the name allowed).
    function_definition=r"^func[ \t]+(?:\([^)\n]*\)[ \t]*)?(?P<name>[A-Za-z_]\w*)[ \t]*[\[(]",
    parameter_name="first",
    stop=("\n}", "\n```"),
    chat_instruction=(
        "Complete the following Go function. Reply with the whole function, including "
        "its signature, in one ```go code block."
    ),
    fence_tags=frozenset({"go", "golang"}),
)
