"""C++ (HumanEval-X's C++ prompts: a `/* */` description before the includes and signature)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmarks.languages import Language
from benchmarks.languages.toolchain import Build, Toolchain

if TYPE_CHECKING:
    from benchmarks.problem import Problem

_RESERVED = """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t
char32_t class compl const constexpr const_cast continue decltype default delete do double
dynamic_cast else enum explicit export extern false float for friend goto if inline int long
mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using
virtual void volatile wchar_t while xor xor_eq include define std vector string map set main"""

# The headers CodeGeeX's harness puts before a C++ prompt that lacks them (HumanEval-X's
# execution.py, IMPORT_HELPER["cpp"], but Boost's `any`, which Debian's g++ does not ship: the
# one task that includes it, CPP/22, says so in its own prompt), then `using namespace std;`.
_HEADERS = (
    "stdlib.h algorithm cmath math.h numeric stdio.h vector set map queue stack list deque "
    "string climits cstring iostream sstream fstream"
).split()


def _assemble(problem: Problem, completion: str, marker: str) -> Build:
    """HumanEval-X's C++ program (the missing helper headers, prompt, completion, test), with
    one call added as the last statement of the test's `main` (its last brace: every
    HumanEval-X test ends with `main`, and none returns early) that prints the end marker."""
    prompt = problem.prompt
    headers = "".join(f"#include<{h}>\n" for h in _HEADERS if f"#include<{h}>" not in prompt)
    if "using namespace std;" not in prompt:
        headers += "using namespace std;\n"
    test = problem.test.rstrip()
    if not test.endswith("}"):
        raise ValueError("its C++ test does not end with the closing brace of main")
    end = (
        "#include <cstdio>\n#include <iostream>\n"
        "static void boi_end_of_tests_() { std::cout.flush(); std::fflush(nullptr); "
        f'std::fputs("\\n{marker}\\n", stdout); std::fflush(stdout); }}\n'
    )
    source = f"{headers}{prompt}{completion}\n{end}{test[:-1]}    boi_end_of_tests_();\n}}\n"
    return Build(
        files={"main.cpp": source},
        compile=(("g++", "-std=c++17", "-pipe", "-o", "main", "main.cpp"),),
        run=("./main",),
    )


TOOLCHAIN = Toolchain(
    programs=("g++",),
    install="apt-get install g++ (Debian, Ubuntu)",
    assemble=_assemble,
    probe=(
        "#include<stdio.h>\nint add(int a, int b){\n",
        "    return a + b;\n}\n",
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (add(2, 3) == 5);\n}\n",
    ),
    # The C and C++ headers; the compiler itself (/usr/lib/gcc, /usr/bin) is in the default set.
    read_paths=("/usr/include", "/usr/local/include"),
    compile_timeout=30.0,
    run_timeout=3.0,
    # glibc's message for a failed assert(), which then aborts.
    assert_failure="Assertion `",
)

LANGUAGE = Language(
    name="cpp",
    display_name="C++",
    toolchain=TOOLCHAIN,
    extension=".cpp",
    naming="snake_case",
    reserved_words=frozenset(_RESERVED.split()),
    # A definition: a return type, the name, its parameters and the opening brace.
    function_definition=(
        r"^[ \t]*(?:template[ \t]*<[^>\n]*>[ \t]*)?[A-Za-z_][\w:<>,*& \t]*[ \t*&>]"
        r"(?P<name>[A-Za-z_]\w*)[ \t]*\([^;{}]*\)[ \t]*(?:const[ \t]*)?\s*\{"
    ),
    stop=("\n}", "\n```"),
    fence_tags=frozenset({"cpp", "c++", "cc", "cxx", "c"}),
)
