"""Java (HumanEval-X's Java prompts: a Javadoc before a method of `class Solution`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmarks.languages import Language
from benchmarks.languages.toolchain import Build, Toolchain

if TYPE_CHECKING:
    from benchmarks.problem import Problem

# The JVM's flags, so that it starts under the sandbox's address-space cap (2 GiB by default:
# without them it reserves a quarter of the machine's memory for the heap and a gigabyte for
# compressed class space) and quickly (one compiler thread, no JIT beyond C1, no perf-data
# file in /tmp, the JDK's class-data sharing archive mapped read-only).
_JVM = (
    "-Xmx256m",
    "-Xss8m",
    "-XX:ReservedCodeCacheSize=64m",
    "-XX:CompressedClassSpaceSize=64m",
    "-XX:MaxMetaspaceSize=128m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:CICompilerCount=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
)


def _assemble(problem: Problem, completion: str, marker: str) -> Build:
    """HumanEval-X's Java program: `class Solution` from prompt and completion and `public
    class Main` from the test, in one Main.java, plus a class whose `main` calls `Main.main`
    and then prints the end marker (run instead of Main: `System.exit(0)` before the tests
    end never prints it)."""
    runner = (
        "\nclass BoiEndOfTests_ {\n    public static void main(String[] args) throws Throwable {\n"
        "        Main.main(args);\n        System.out.flush();\n"
        f'        System.out.print("\\n{marker}\\n");\n        System.out.flush();\n    }}\n}}\n'
    )
    source = f"{problem.prompt}{completion}\n{problem.test}\n{runner}"
    return Build(
        files={"Main.java": source},
        compile=(
            ("javac", *(f"-J{flag}" for flag in _JVM), "-encoding", "UTF-8", "-nowarn")
            + ("-d", ".", "Main.java"),
        ),
        run=("java", *_JVM, "-cp", ".", "BoiEndOfTests_"),
    )


TOOLCHAIN = Toolchain(
    programs=("javac", "java"),
    install="apt-get install openjdk-17-jdk-headless (Debian, Ubuntu)",
    assemble=_assemble,
    probe=(
        "import java.util.*;\n\nclass Solution {\n    public int add(int a, int b) {\n",
        "        return a + b;\n    }\n}\n",
        "public class Main {\n    public static void main(String[] args) {\n"
        "        if (new Solution().add(2, 3) != 5) {\n            throw new AssertionError();\n"
        "        }\n    }\n}\n",
    ),
    # The JDK is in the default read set (/usr/lib/jvm); its conf/ files are links into
    # /etc/java-17-openjdk (Debian).
    read_paths=("/etc/java-17-openjdk",),
    compile_timeout=40.0,
    run_timeout=10.0,
    # An uncaught AssertionError (the tests' `throw new AssertionError()`).
    assert_failure="java.lang.AssertionError",
)

_RESERVED = """abstract assert boolean break byte case catch char class const continue default do
double else enum extends final finally float for goto if implements import instanceof int
interface long native new package private protected public return short static strictfp super
switch synchronized this throw throws transient try void volatile while true false null var
record String List Map Set Arrays Collections Optional Integer Solution Main"""

LANGUAGE = Language(
    name="java",
    display_name="Java",
    toolchain=TOOLCHAIN,
    extension=".java",
    naming="camelCase",
    reserved_words=frozenset(_RESERVED.split()),
    # A method: modifiers and a return type, the name, its parameters and the opening brace.
    function_definition=(
        r"^[ \t]*[A-Za-z_][\w<>,.?& \t\[\]]*[ \t>\]](?P<name>[A-Za-z_]\w*)[ \t]*"
        r"\([^;{}]*\)[ \t]*(?:throws[ \t]+[\w., \t]+)?\s*\{"
    ),
    stop=("\n    }\n", "\n```"),
    fence_tags=frozenset({"java"}),
)
