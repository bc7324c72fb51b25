"""The output contract: where a command may write, checked once, before anything is written or run.

Every command that writes goes through here, so a careless output path costs the user one
sentence and never their data:

- an output path is resolved once (`Path.resolve`: `./runs/x`, `runs/x/` and the absolute path
  are the same output);
- it must not be an input of the same command (`--out` equal to the dataset, the samples file, a
  shard being merged): writing it would destroy what is being read;
- a folder output that exists must be ours: empty, or holding one of the marker files the
  command itself writes (a run's manifest.json, a classifier's classifier.json, ...). A folder
  holding anything else is refused, so no command replaces or mixes into a user's folder;
- a file where a folder is expected, a folder where a file is expected, a path under a file and
  an unwritable place each get one sentence naming the flag and the path.

Writes themselves are temporary file + rename (`benchmarks.common.atomic`), and nothing outside
the output is ever removed. The CLI declares which of its flags are outputs (`declare_output`)
and checks them all in one place before the command runs (`check_declared_outputs`, called by
`boi.cli.main`); library functions that pick an output themselves (a run directory from a config
file, a classifier folder, a copy index) call `output_file` / `output_dir` directly.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from benchmarks.common.errors import UserError

Kind = Literal["file", "dir"]
# A flag whose kind depends on another flag (`perturb --format recode` writes a folder) declares
# a function of the parsed arguments instead.
KindSpec = Kind | Callable[[argparse.Namespace], Kind]
# Attributes set on an argparse action by `declare_output`.
_KIND = "boi_output_kind"
_OURS = "boi_output_ours"


def _named(option: str, path: str | os.PathLike[str]) -> str:
    """'--out runs/x' (a positional's metavar, such as OUT, reads the same way)."""
    return f"{option} {os.fspath(path)}"


def resolve(path: str | os.PathLike[str]) -> Path:
    """The one spelling of a path: `~` expanded, made absolute, symlinks and `..` resolved."""
    return Path(path).expanduser().resolve()


def _check_place(path: Path, given: str | os.PathLike[str], option: str) -> None:
    """The parts every output shares: not under a file, somewhere the user may write."""
    for parent in path.parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise UserError(
                    f"{_named(option, given)} is under {parent}, which is a file, not a folder; "
                    f"pass a path in a folder."
                )
            # The nearest existing folder is where the first mkdir or rename happens. (root may
            # write anywhere, so for root this only fails on read-only mounts, at write time.)
            if not os.access(parent, os.W_OK | os.X_OK):
                raise UserError(
                    f"{_named(option, given)} cannot be written: {parent} is not writable by you; "
                    f"pass a path in a folder you can write."
                )
            return


def _check_not_input(
    path: Path,
    given: str | os.PathLike[str],
    option: str,
    inputs: Iterable[str | os.PathLike[str]],
    *,
    contains: bool,
) -> None:
    """Refuse an output that is one of `inputs` (or, for a folder that gets replaced as a
    whole, `contains`: one that holds an input)."""
    for value in inputs:
        try:
            source = resolve(value)
        except (OSError, ValueError, RuntimeError):
            continue  # not a path at all (a NUL byte, a symlink loop): nothing to destroy
        if not value or not source.exists():
            continue  # a name (`humaneval`, `embedded`) or a missing file: nothing to destroy
        same = source == path or (
            source.exists() and path.exists() and os.path.samefile(source, path)
        )
        if same or (contains and path in source.parents):
            raise UserError(
                f"{_named(option, given)} is also an input of this command ({value}); writing it "
                f"would destroy what is being read: pass another {option}."
            )


def output_file(
    path: str | os.PathLike[str],
    *,
    option: str = "--out",
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> Path:
    """`path` resolved, once it is a place a file can be written without losing anything."""
    resolved = resolve(path)
    _check_place(resolved, path, option)
    if resolved.is_dir():
        raise UserError(
            f"{_named(option, path)} is a folder; {option} takes a file path (for example "
            f"{Path(path) / 'out.jsonl'})."
        )
    if resolved.exists() and not resolved.is_file():
        # A device or a pipe: the atomic rename would replace it (as root: /dev/null itself).
        raise UserError(
            f"{_named(option, path)} is not a regular file; pass a file path for {option}."
        )
    _check_not_input(resolved, path, option, inputs, contains=False)
    return resolved


def holds_ours(folder: Path, ours: Sequence[str]) -> bool:
    """Whether the existing folder is new to us (empty) or holds one of the `ours` markers
    (names, or glob patterns such as `boi_recode_*.json`)."""
    return not any(folder.iterdir()) or any(any(folder.glob(marker)) for marker in ours)


def output_dir(
    path: str | os.PathLike[str],
    *,
    option: str = "--out",
    ours: Sequence[str] = (),
    inputs: Iterable[str | os.PathLike[str]] = (),
    replaced: bool = False,
) -> Path:
    """`path` resolved, once it is a folder this command may write into.

    An existing folder must be empty or hold one of the `ours` markers (files the command
    writes); no `ours` means it must be new or empty. `replaced`: the command swaps the whole
    folder for a new one, so it must not even hold an input.
    """
    resolved = resolve(path)
    _check_place(resolved, path, option)
    if resolved.exists() and not resolved.is_dir():
        raise UserError(
            f"{_named(option, path)} is a file; {option} takes a folder: pass a new or empty "
            f"folder path."
        )
    _check_not_input(resolved, path, option, inputs, contains=replaced)
    if resolved.is_dir() and not holds_ours(resolved, ours):
        markers = " or ".join(ours)
        holds = f"holds no {markers}" if ours else "already holds files"
        raise UserError(
            f"{_named(option, path)} is not empty and {holds}, so boi did not write it; choose a "
            f"new or empty {option} (nothing there was changed)."
        )
    return resolved


# --------------------------------------------------------------------------- the CLI's side


def declare_output(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    dest: str,
    kind: KindSpec,
    *,
    ours: Sequence[str] = (),
) -> None:
    """Mark the parser's argument `dest` as an output path of `kind` (for a folder, `ours`:
    the marker files that say the folder is this command's; see `output_dir`)."""
    for action in parser._actions:
        if action.dest == dest:
            setattr(action, _KIND, kind)
            setattr(action, _OURS, tuple(ours))
            return
    raise KeyError(f"no argument {dest!r} to declare as an output")


def declared_output(action: argparse.Action) -> tuple[KindSpec, tuple[str, ...]] | None:
    """(kind, ours) of an action `declare_output` marked; None for any other."""
    kind = getattr(action, _KIND, None)
    return (kind, getattr(action, _OURS, ())) if kind else None


def chosen_parsers(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> list[argparse.ArgumentParser]:
    """The parser and the subparsers `args` went through (`boi bias train-classifier`)."""
    chain = [parser]
    while True:
        subs = [a for a in chain[-1]._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            return chain
        name = getattr(args, subs[0].dest, None)
        if name is None or name not in subs[0].choices:
            return chain
        chain.append(subs[0].choices[name])


def _option(action: argparse.Action) -> str:
    if action.option_strings:
        return max(action.option_strings, key=len)
    return str(action.metavar or action.dest.upper())


def _strings(value: Any) -> list[str]:
    if isinstance(value, str | os.PathLike):
        return [os.fspath(value)]
    if isinstance(value, list | tuple):
        return [os.fspath(v) for v in value if isinstance(v, str | os.PathLike)]
    return []


def check_declared_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check every declared output the user gave, before the command runs.

    Every other path-like value of the same command counts as an input (dataset files, samples,
    shards, --data, --config, ...): an output equal to one of them is refused, as are two
    outputs that are the same path.
    """
    actions = [a for p in chosen_parsers(parser, args) for a in p._actions]
    outputs = [(a, declared_output(a)) for a in actions]
    given = [
        (action, spec, value)
        for action, spec in outputs
        if spec is not None
        for value in _strings(getattr(args, action.dest, None))
        if value
    ]
    inputs = [
        value
        for action in actions
        if declared_output(action) is None and action.dest not in ("help", "command")
        for value in _strings(getattr(args, action.dest, None))
        if value
    ]
    seen: dict[Path, str] = {}
    for action, (declared, ours), value in given:
        option = _option(action)
        kind = declared if isinstance(declared, str) else declared(args)
        if kind == "file":
            path = output_file(value, option=option, inputs=inputs)
        else:
            path = output_dir(value, option=option, ours=ours, inputs=inputs)
        if path in seen:
            raise UserError(
                f"{_named(option, value)} is the same path as {seen[path]}; each output needs "
                f"its own path."
            )
        seen[path] = _named(option, value)


def os_error_sentence(err: OSError) -> str:
    """An OSError as one sentence naming the path (what the CLI prints instead of a traceback)."""
    what = err.strerror or str(err) or type(err).__name__
    if err.filename is not None and err.filename2 is not None:
        return f"{err.filename} -> {err.filename2}: {what}; check both paths and their permissions."
    if err.filename is not None:
        return f"{err.filename}: {what}; check the path and its permissions."
    return (
        f"{what} (an operating-system error); check the paths you passed and the free disk space."
    )
