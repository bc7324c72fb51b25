"""The programming languages `boi` reads, perturbs and judges: one module per language.

A `Language` holds everything language-specific in one place: the facts the Blocks of
Influence splitter, the keyword filter and the name anonymizer need (comment markers, naming
convention, reserved words) and the `toolchain` the sandbox uses to build and run a program.
A problem says its language in `Problem.language` (`metadata["language"]`, Python when absent).

Adding a language is one module here that defines `LANGUAGE = Language(...)`, plus one line in
`LANGUAGES` (or `LANGUAGES.register("rust", "benchmarks.languages.rust:LANGUAGE")` at run time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from benchmarks.common.registry import Registry
from benchmarks.languages.toolchain import Build, Toolchain

__all__ = ["LANGUAGES", "Build", "Language", "Naming", "Toolchain", "language_named"]

# How a language spells a function's name: what recovers words from a name and what makes an
# anonymous one must keep to it (`has_close_elements`, `hasCloseElements`, `HasCloseElements`).
Naming = Literal["snake_case", "camelCase", "PascalCase"]


@dataclass(frozen=True)
class Language:
    """One programming language: its syntax facts and how its programs are built and run."""

    name: str  # the registry key and `Problem.language`: "cpp", "java", "javascript", "go"
    display_name: str  # for people: "C++"
    extension: str  # a source file's, with the dot
    naming: Naming  # the entry points' convention in the benchmarks boi loads
    reserved_words: frozenset[str]  # never taken for a keyword or renamed
    # Comment markers (None: the language has no such comment); C's unless a language says.
    line_comment: str | None = "//"
    block_comment: tuple[str, str] | None = ("/*", "*/")
    # What `benchmarks.languages.source` reads source text with (the Blocks of Influence
    # splitter, the anonymizer, the keyword filter): the quotes that open a string literal, a
    # pattern (re.MULTILINE) whose group `name` is a function's name where it is defined, and
    # whether a parameter's name comes first (`numbers []float64`) or last (`float x`).
    string_quotes: str = "\"'"
    function_definition: str = ""
    parameter_name: Literal["first", "last"] = "last"
    # Generation: where a completion-mode continuation of a prompt ends (the function's
    # closing brace at its own indentation; the reply reader puts the closers back), the
    # instruction a chat model gets (default: the function in this language, in a code block
    # fenced with its name), and the markdown fence tags its code may carry.
    stop: tuple[str, ...] = ()
    chat_instruction: str = ""
    fence_tags: frozenset[str] = frozenset()
    # How the sandbox builds and runs a program (`benchmarks.execution`); None: judged as
    # Python is, by the Python-specific path.
    toolchain: Toolchain | None = None

    def __post_init__(self) -> None:
        # Every language asks a chat model the same way, in its own words, unless it says more.
        if not self.chat_instruction:
            instruction = (
                f"Complete the following {self.display_name} function. Reply with the whole "
                f"function, including its signature, in one ```{self.name} code block."
            )
            object.__setattr__(self, "chat_instruction", instruction)


# name -> "module:LANGUAGE", imported when first used.
LANGUAGES: Registry[Language] = Registry(
    "language",
    {
        "python": "benchmarks.languages.python:LANGUAGE",
        "cpp": "benchmarks.languages.cpp:LANGUAGE",
        "java": "benchmarks.languages.java:LANGUAGE",
        "javascript": "benchmarks.languages.javascript:LANGUAGE",
        "go": "benchmarks.languages.go:LANGUAGE",
    },
    base=Language,
)


def language_named(name: str) -> Language:
    """The registered language `name` (a UserError with the choices otherwise)."""
    language: Language = LANGUAGES.load(name)
    return language
