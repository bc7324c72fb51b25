"""JavaScript (HumanEval-X's JavaScript prompts: a `/* */` description before an arrow function)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmarks.languages import Language
from benchmarks.languages.toolchain import Build, Toolchain

if TYPE_CHECKING:
    from benchmarks.problem import Problem

# Node's flags: a heap well under the sandbox's address-space cap.
_NODE = ("node", "--max-old-space-size=512")


def _assemble(problem: Problem, completion: str, marker: str) -> Build:
    """HumanEval-X's JavaScript program (prompt, completion, test) between one line before it
    and one after. `console.assert` prints and does not throw, so a failed one would pass a
    sample: the line before wraps it to count failures (it still prints), and the line after
    prints the end marker, with " wrong" when an assert failed. `node --check` first, so that
    a syntax error is a compile error."""
    before = (
        "const boiEndOfTests_ = (() => { let failed = 0; const assert = console.assert; "
        "console.assert = function (condition, ...data) { if (!condition) failed += 1; "
        "return assert.call(console, condition, ...data); }; "
        f"return () => process.stdout.write(failed ? '\\n{marker} wrong\\n' : '\\n{marker}\\n'); "
        "})();\n"
    )
    source = f"{before}{problem.prompt}{completion}\n{problem.test}\nboiEndOfTests_();\n"
    return Build(
        files={"main.js": source},
        compile=(("node", "--check", "main.js"),),
        run=(*_NODE, "main.js"),
    )


TOOLCHAIN = Toolchain(
    programs=("node",),
    install="apt-get install nodejs (Debian, Ubuntu)",
    assemble=_assemble,
    probe=(
        "const add = (a, b) => {\n",
        "  return a + b;\n}\n",
        "const testAdd = () => {\n  console.assert(add(2, 3) === 5)\n}\ntestAdd()\n",
    ),
    # Node and its libraries are in the default read set (/usr/bin, /usr/lib); it reads
    # OpenSSL's configuration at start-up and refuses to start without it.
    read_paths=("/etc/ssl/openssl.cnf",),
    compile_timeout=10.0,
    run_timeout=3.0,
)

_RESERVED = """await break case catch class const continue debugger default delete do else enum
export extends false finally for function if import in instanceof let new null return super
switch this throw true try typeof var void while with yield undefined NaN Infinity console
require module Math Array Object String Number"""

LANGUAGE = Language(
    name="javascript",
    display_name="JavaScript",
    toolchain=TOOLCHAIN,
    extension=".js",
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
    fence_tags=frozenset({"javascript", "js", "node", "jsx"}),
)
