"""C++ (HumanEval-X's C++ prompts: a `/* */` description before the includes and signature)."""

from __future__ import annotations

from benchmarks.languages import Language

_RESERVED = """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t
char32_t class compl const constexpr const_cast continue decltype default delete do double
dynamic_cast else enum explicit export extern false float for friend goto if inline int long
mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using
virtual void volatile wchar_t while xor xor_eq include define std vector string map set main"""

LANGUAGE = Language(
    name="cpp",
    display_name="C++",
    extension=".cpp",
    line_comment="//",
    block_comment=("/*", "*/"),
    naming="snake_case",
    reserved_words=frozenset(_RESERVED.split()),
    # A definition: a return type, the name, its parameters and the opening brace.
    function_definition=(
        r"^[ \t]*(?:template[ \t]*<[^>\n]*>[ \t]*)?[A-Za-z_][\w:<>,*& \t]*[ \t*&>]"
        r"(?P<name>[A-Za-z_]\w*)[ \t]*\([^;{}]*\)[ \t]*(?:const[ \t]*)?\s*\{"
    ),
    stop=("\n}", "\n```"),
    chat_instruction=(
        "Complete the following C++ function. Reply with the whole function, including "
        "its signature, in one ```cpp code block."
    ),
    fence_tags=frozenset({"cpp", "c++", "cc", "cxx", "c"}),
)
