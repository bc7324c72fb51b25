"""The `boi` command line: parses arguments and calls library functions, nothing more.

Each subcommand lives in `boi/commands/<name>.py` with `add_arguments(parser)`,
`run(args) -> int` and `EXAMPLES` (command lines shown at the end of its `--help`, each under
the command or action it starts with); flags for a config dataclass are generated from it
(`benchmarks.common.config.add_dataclass_arguments`). Command modules import their stages at
the top like any module; `boi --help` stays fast because the stages import their heavy
libraries (torch, transformers, vLLM, matplotlib, datasets) only where they are used.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import os
import re
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from benchmarks.common.errors import UserError, require_text
from benchmarks.common.outputs import check_declared_outputs, os_error_sentence
from benchmarks.common.provenance import git_revision
from benchmarks.common.registry import Registry
from benchmarks.common.rundir import boi_version

# name -> (module, one-line help), imported when the parser is built. Add a line here to add a
# subcommand.
COMMANDS: Registry[ModuleType] = Registry(
    "command",
    {
        "blocks": (
            "boi.commands.blocks",
            "split a dataset into Blocks of Influence and print coverage",
        ),
        "perturb": (
            "boi.commands.perturb",
            "apply the transformation catalogue; write the perturbed dataset",
        ),
        "keywords": (
            "boi.commands.keywords",
            "droppable keywords per problem; fine-tune the KeyBERT embedder",
        ),
        "run": ("boi.commands.run", "pass@k under each transformation, end to end (resumable)"),
        "merge": (
            "boi.commands.merge",
            "the shards of one run (any study, --shard I/N) as one run + report",
        ),
        "rank": (
            "boi.commands.rank",
            "which transformation hurts most: severity ranking across runs (models)",
        ),
        "models": ("boi.commands.models", "prepare the embedded causal LM (boi models prepare)"),
        "critic": (
            "boi.commands.critic",
            "LM critic: log-prob similarity of variants (FILE or table2)",
        ),
        "execute": (
            "boi.commands.execute",
            "run samples in a sandbox; results + pass@k (resumable)",
        ),
        "finetune": ("boi.commands.finetune", "augmented fine-tuning: build-data, train, compare"),
        "report": (
            "boi.commands.report",
            "Table 3 (md/csv/json) + static HTML report from results",
        ),
        "analyze": (
            "boi.commands.analyze",
            "why did it fail: copy search, attention per block, hint audit, minimal flipping perturbation",
        ),
        "bias": (
            "boi.commands.bias",
            "social bias in generated code: judgmental-modifier prompts (run: CBS/UFS/SD), "
            "executable fairness tests (test, experiment)",
        ),
        "data": (
            "boi.commands.data",
            "fetch the datasets boi does not ship (pinned, sha256-checked); list what is present",
        ),
    },
    base=ModuleType,
)


def version_text() -> str:
    """`boi --version`: the installed version, and the checkout's commit where there is one."""
    revision = git_revision()
    if not revision["commit"]:
        return f"boi {boi_version()}"
    dirty = ", uncommitted changes" if revision["dirty"] else ""
    return f"boi {boi_version()} (git {revision['commit'][:12]}{dirty})"


class _Version(argparse.Action):
    """`--version`, computed only when asked for (git runs then, not on every parse)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(version_text())
        parser.exit()


def _add_examples(parser: argparse.ArgumentParser, path: str, examples: Sequence[str]) -> None:
    """Show the `examples` that start with `path` (`boi bias test`) at the end of the parser's
    help, and do the same for each of its actions (subparsers), however deep."""
    mine = [e for e in examples if e == path or e.startswith(path + " ")]
    if mine:
        parser.epilog = "examples:\n" + "\n".join(f"  {e}" for e in mine)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                _add_examples(child, f"{path} {name}", examples)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boi",
        description="Blocks of Influence: adversarial prompt perturbation for code-generation models.",
        epilog="examples:\n  boi run --config demo --out runs/demo\n  boi COMMAND --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action=_Version, help="print boi's version (and git commit) and exit"
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an error, print the traceback as well as the one-line message (accepted "
        "anywhere on the command line)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module, help_text = COMMANDS[name], COMMANDS.help(name)
        command = sub.add_parser(
            name, help=help_text, description=(module.__doc__ or help_text).strip()
        )
        module.add_arguments(command)
        command.set_defaults(_module=module)
        _add_examples(command, f"boi {name}", getattr(module, "EXAMPLES", ()))
    return parser


def _swallowed(parser: argparse.ArgumentParser, words: Sequence[str]) -> str | None:
    """What to say if a positional argument is found missing, when a flag of the command that
    takes many values (`--transforms A B`) took words up to the next flag: it then read the
    positionals too (`--transforms original anonymize humaneval --out X` makes humaneval a
    transformation and leaves DATASET out). None when the command takes no positional or no
    such flag took a word (values ended by `--` are not counted: the user said where they end)."""
    leaf, start = parser, 0
    while start < len(words):
        subs = [a for a in leaf._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or words[start] not in subs[0].choices:
            break
        leaf, start = subs[0].choices[words[start]], start + 1
    positionals = [
        a
        for a in leaf._actions
        if not a.option_strings and not isinstance(a, argparse._SubParsersAction)
    ]
    if not positionals:
        return None
    many = {s for a in leaf._actions if a.nargs in ("+", "*") for s in a.option_strings}
    line = list(words[start : words.index("--") if "--" in words else len(words)])
    flag, values = "", []
    for at, word in enumerate(line):
        if word in many:
            taken = list(itertools.takewhile(lambda w: not _is_flag(w), line[at + 1 :]))
            if taken:
                flag, values = word, taken
    if not flag:
        return None
    names = " and ".join(
        a.metavar if isinstance(a.metavar, str) else a.dest.upper() for a in positionals
    )
    return (
        f"{flag} reads every word after it up to the next flag, so it took "
        f"{' '.join(values)!r} and left {names} out; put {names} before {flag}."
    )


def _is_flag(word: str) -> bool:
    """Whether argparse reads `word` as an option (a negative number is a value)."""
    return word.startswith("-") and not re.fullmatch(r"-\d[\d.e+-]*", word)


def _unset_positional(parser: argparse.ArgumentParser, args: argparse.Namespace) -> bool:
    """Whether an optional positional argument (`[DATASET]`) of the command `args` was parsed
    for is left out."""
    leaf = parser
    while True:
        subs = [a for a in leaf._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs and subs[0].dest else None
        if not subs or name not in subs[0].choices:
            break
        leaf = subs[0].choices[name]
    return any(
        getattr(args, a.dest, None) in (None, [])
        for a in leaf._actions
        if not a.option_strings and a.nargs in ("?", "*")
    )


def _one_line(err: BaseException) -> str:
    """An exception's message as one line (torch and friends write several)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every error the user can meet ends as one sentence on stderr.

    Exit codes: 0 done; 2 the input is wrong (`UserError`, a refused flag, an output path the
    contract refuses, an `OSError`: a path, a permission, a full disk: the user's machine, not
    boi's logic); 1 a `ValueError` or `RuntimeError` that no check turned into a `UserError`:
    usually bad input that reached a library (a tokenizer, torch), but possibly a bug in boi, so
    the sentence says so and `--debug` shows the traceback. Any other exception (`KeyError`,
    `TypeError`, ...) is a bug and keeps its traceback.
    """
    # Our own model loads must never wait on a hub the machine cannot reach; a user with hub
    # access can set HF_HUB_OFFLINE=0 explicitly.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    words = list(sys.argv[1:] if argv is None else argv)
    # `--debug` anywhere (before a `--`): the user adds it to the command that just failed.
    end = words.index("--") if "--" in words else len(words)
    debug = "--debug" in words[:end]
    words = [w for i, w in enumerate(words) if not (i < end and w == "--debug")]
    parser = make_parser()
    command = " ".join(["boi", *(w for w in words[:1] if w in COMMANDS)])
    # A many-valued flag last on the line may have read the positionals too: said as such,
    # never taken silently (an unset [DATASET]) nor as argparse's bare "required" line.
    swallowed = _swallowed(parser, words)
    caught = io.StringIO()
    try:
        for before, word in zip(["", *words], words, strict=False):
            # Every argument may end up in a record or a report, as text.
            require_text(word, before if before.startswith("-") else "the argument")
        with contextlib.redirect_stderr(caught) if swallowed else contextlib.nullcontext():
            args = parser.parse_args(words)
    except UserError as err:  # a flag refused while parsing (`--transforms a,b`)
        print(f"{command}: error: {err}", file=sys.stderr)
        return 2
    except SystemExit:
        if swallowed and "the following arguments are required" in caught.getvalue():
            print(f"{command}: error: {swallowed}", file=sys.stderr)
            return 2
        sys.stderr.write(caught.getvalue())
        raise
    sys.stderr.write(caught.getvalue())
    if swallowed and _unset_positional(parser, args):
        print(f"{command}: error: {swallowed}", file=sys.stderr)
        return 2
    name = f"boi {args.command}"

    def fail(message: str, code: int) -> int:
        if debug:
            traceback.print_exc()
        print(f"{name}: error: {message}", file=sys.stderr)
        return code

    try:
        # The output contract, for every flag a command declared as an output: before the
        # command reads, loads or writes anything.
        check_declared_outputs(parser, args)
        return int(args._module.run(args) or 0)
    except UserError as err:
        return fail(str(err), 2)
    except BrokenPipeError:
        # The reader went away (`boi blocks ... | head`): not an error worth a traceback.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(
            f"{name}: interrupted; finished work is kept, rerun the same command to resume.",
            file=sys.stderr,
        )
        return 130
    except OSError as err:
        return fail(os_error_sentence(err), 2)
    except (ValueError, RuntimeError) as err:
        return fail(
            f"{type(err).__name__}: {_one_line(err)} (if your input is right, this is a bug in "
            "boi: rerun with --debug and report the traceback)",
            1,
        )


if __name__ == "__main__":
    sys.exit(main())
