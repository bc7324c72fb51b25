"""How the sandbox builds and runs a program of a compiled or interpreted language other than
Python: the `Toolchain` a `Language` carries, and the `Build` it assembles for one sample.

A toolchain is data plus one function. The harness (`benchmarks.execution._run`) asks it for a
`Build` (the source files, the compile steps, the run step, the marker that says the tests ran
to their end) and sends that to a sandbox worker as a job of mode "build"
(`benchmarks/execution/_builder.py` runs it, confined: Landlock grants this toolchain's
`read_paths` to these jobs only). Nothing here runs generated code.

Why an end marker: in these languages the tests and the candidate share one process (as in
HumanEval-X and MultiPL-E), so an exit status of 0 proves nothing (`exit(0)` from the candidate
before the first assert is not a pass) and neither does printed text ("all tests passed"). The
assembled program prints a random marker, chosen per sample by the harness and never the
sandbox's own verdict token, as the last thing it does after the tests; the builder passes a
run only when stdout ends with it and the program exited cleanly. What a program crafted
against boi can still forge in a shared process is said in docs/explanation/sandbox.md.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.problem import Problem


@dataclass(frozen=True)
class Build:
    """What the sandbox does for one sample: write `files` into the sample's scratch directory,
    run each of `compile` in order (argv lists; a failure is a compile error), then `run`, under
    `env` added to the sandbox's own (PATH, HOME and TMPDIR in scratch, LANG)."""

    files: Mapping[str, str]
    compile: tuple[tuple[str, ...], ...]
    run: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Toolchain:
    """A language's compiler and runtime, as the sandbox uses them.

    `programs`: the executables it needs (looked up on PATH; a missing one is one sentence with
    `install`, the way to get it). `read_paths`: what Landlock lets these jobs read and execute
    beyond the sandbox's default set (the system's libraries and program directories, which
    already hold /usr/lib/gcc, /usr/lib/jvm, /usr/bin/node): headers, configuration. Granted to
    this language's jobs only, never to Python samples. `compile_timeout` and `run_timeout`:
    base seconds for all the compile steps together and for the run, scaled by the machine's
    speed as every timeout is (the run's is a floor under `ExecutionConfig.timeout`: a JVM
    starts slower than CPython). `assert_failure`: text a failed assert leaves on stderr where
    it ends the program (C++'s `assert`, Java's AssertionError), read as a wrong answer; where
    the tests go on after a failed assert (JavaScript's `console.assert`, Go's testify), the
    program prints its marker with " wrong" instead. `assemble(problem, completion, marker)`:
    the `Build` of one sample. `probe`: a known-good (prompt, completion, test) of a function
    `add` returning the sum of two integers, which every sandbox worker must pass before it
    judges this language (a toolchain that cannot run there is refused, not scored zero).
    `prepare()`: makes ready, outside the sandbox and before a pool starts, what these jobs
    read that is built on this machine from trusted data (Go's compiled vendor layer), and
    returns those folders, granted like `read_paths`; a UserError says what is missing.
    `unready()`: what this machine lacks beyond `programs`, with how to get it (None when
    nothing), for the line that says which languages can be judged here."""

    programs: tuple[str, ...]
    install: str
    assemble: Callable[[Problem, str, str], Build]
    probe: tuple[str, str, str]
    read_paths: tuple[str, ...] = ()
    compile_timeout: float = 20.0
    run_timeout: float = 3.0
    assert_failure: str | None = None
    prepare: Callable[[], tuple[str, ...]] | None = None
    unready: Callable[[], str | None] | None = None

    def missing(self) -> list[str]:
        """The programs of `programs` not found on PATH."""
        return [name for name in self.programs if shutil.which(name) is None]
