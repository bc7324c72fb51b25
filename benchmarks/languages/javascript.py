"""JavaScript (HumanEval-X's JavaScript prompts: a `/* */` description before an arrow function)."""

from __future__ import annotations

from benchmarks.languages import Language

_RESERVED = """await break case catch class const continue debugger default delete do else enum
export extends false finally for function if import in instanceof let new null return super
switch this throw true try typeof var void while with yield undefined NaN Infinity console
require module Math Array Object String Number"""

LANGUAGE = Language(
    name="javascript",
    display_name="JavaScript",
    extension=".js",
    line_comment="//",
    block_comment=("/*", "*/"),
    naming="camelCase",
    reserved_words=frozenset(_RESERVED.split()),
    string_quotes="\"'`",
    # `const name = (...) =>`, `const name = function`, `function name(`.
    function_definition=(
        r"^[ \t]*(?:export[ \t]+)?(?:(?:async[ \t]+)?function[ \t]*\*?[ \t]*|(?:const|let|var)[ \t]+)"
        r"(?P<name>[A-Za-z_$][\w$]*)[ \t]*(?:\(|=[ \t]*(?:async[ \t]*)?"
        r"(?:function\b|\([^()]*\)[ \t]*=>|[A-Za-z_$][\w$]*[ \t]*=>))"
    ),
    parameter_name="first",
    stop=("\n}", "\n```"),
    chat_instruction=(
        "Complete the following JavaScript function. Reply with the whole function, including "
        "its signature, in one ```javascript code block."
    ),
    fence_tags=frozenset({"javascript", "js", "node", "jsx"}),
)
