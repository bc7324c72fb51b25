"""The output contract, by construction: every output flag of every command x every kind of bad
output path is refused in one sentence naming the flag and the path, exit 2, no traceback, with
the inputs and whatever was at the path byte-identical afterwards (issue 34).

The commands are enumerated from boi's argparse tree, so a new command or output flag is covered
without editing this file; an output flag that is not declared (`declare_output`) fails
`test_every_output_flag_is_declared`. The refusals come before any model is loaded or any input
read (`boi.cli.main` checks the declared outputs first), so every case runs in milliseconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.common.atomic import old_dir, replace_dir
from benchmarks.common.errors import UserError
from benchmarks.common.outputs import declared_output, output_dir, output_file
from boi import cli
from boi.cli import main, make_parser

GOOD = (
    '{"task_id": "X/0", "prompt": "def f(x):\\n    \\"\\"\\"Id.\\"\\"\\"\\n", "entry_point": "f", '
    '"test": "def check(candidate):\\n    assert candidate(1) == 1\\n"}\n'
)
# What an output flag looks like: --out, --hf-out, --keywords-out, --output-dir, --datasets-dir,
# --index, --summary, or a positional named out (boi merge OUT).
OUTPUT_NAME = re.compile(r"^--((.*-)?out(-.*)?|output-dir|.*-dir|index|summary)$")


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    """(command words, parser) for every command and action, however deep."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from _walk(child, (*path, name))


def _looks_like_output(action: argparse.Action) -> bool:
    if action.option_strings:
        return any(OUTPUT_NAME.match(o) for o in action.option_strings)
    return action.dest == "out"


COMMANDS = list(_walk(make_parser(), ()))
OUTPUTS = [
    (words, action)
    for words, parser in COMMANDS
    for action in parser._actions
    if declared_output(action) is not None
]


def _id(words: tuple[str, ...], action: argparse.Action) -> str:
    return " ".join(words) + " " + (max(action.option_strings, key=len, default="") or "OUT")


def test_every_output_flag_is_declared():
    undeclared = [
        _id(words, action)
        for words, parser in COMMANDS
        for action in parser._actions
        if _looks_like_output(action) and declared_output(action) is None
    ]
    assert undeclared == [], (
        "output flags the output contract does not know: declare them with "
        "benchmarks.common.outputs.declare_output"
    )
    assert len(OUTPUTS) >= 25  # the tree was walked (every command with an output is there)


# ------------------------------------------------------------------------- the property


@pytest.fixture
def place(tmp_path):
    """Inputs (a JSONL file and a folder holding one), a user's folder and file, and a hash of
    everything there, to compare after the command."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "in.jsonl").write_text(GOOD)
    (inputs / "dir").mkdir()
    (inputs / "dir" / "in.jsonl").write_text(GOOD)
    user = tmp_path / "user"
    user.mkdir()
    (user / "precious").mkdir()
    (user / "precious" / "notes.txt").write_text("mine\n")
    (user / "precious.old").mkdir()
    (user / "precious.old" / "notes.txt").write_text("older\n")
    (user / "a-file").write_text("mine too\n")
    return tmp_path


def _snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): (
            hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        )
        for p in sorted(root.rglob("*"))
    }


def _argv(words, out_action, out_value, kind, place: Path, input_is_out: bool):
    """A command line that parses: every required argument given an input, the output under
    test set to `out_value` (for the 'input itself' case, the inputs are `out_value`)."""
    parser = dict(COMMANDS)[words]
    input_value = str(place / "inputs" / ("dir" if kind == "dir" else "in.jsonl"))
    if input_is_out:
        input_value = out_value
    argv = list(words)
    given_input = False
    for action in parser._actions:
        if action is out_action or isinstance(action, argparse._HelpAction):
            continue
        if action.option_strings and not action.required:
            continue
        value = (action.choices and next(iter(action.choices))) or input_value
        if declared_output(action) is not None:  # another required output: a fresh path
            value = str(place / f"fresh-{action.dest}")
        given_input = given_input or value == input_value
        values = [value]
        if action.option_strings:
            argv += [action.option_strings[0], *values]
        else:
            argv += values
    if input_is_out and not given_input:
        data = [a for a in parser._actions if "--data" in a.option_strings]
        if not data:
            return None  # the command reads no path it is given: nothing to be the same as
        argv += ["--data", input_value]
    flag = max(out_action.option_strings, key=len, default=None)
    if flag:
        argv += [flag, out_value]
    else:  # a positional output (boi merge OUT): put it first, where the usage has it
        argv.insert(len(words), out_value)
    return argv


def _kind(words, action, argv) -> str:
    declared, _ = declared_output(action)
    if isinstance(declared, str):
        return declared
    return declared(make_parser().parse_args(argv))


BAD = ("existing-folder-not-ours", "existing-file", "under-a-file", "the-input-itself", "device")


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize(("words", "action"), OUTPUTS, ids=[_id(*o) for o in OUTPUTS])
def test_a_careless_output_path_is_refused_in_one_sentence(words, action, bad, place, capsys):
    # The kind first from the declaration (a flag whose kind depends on another flag: from a
    # command line with a harmless output).
    probe = _argv(words, action, str(place / "new"), "file", place, False)
    kind = _kind(words, action, probe)
    user = place / "user"
    out = {
        "existing-folder-not-ours": str(user / "precious"),
        "existing-file": str(user / "a-file"),
        "under-a-file": str(user / "a-file" / "sub" / "out"),
        "the-input-itself": str(place / "inputs" / ("dir" if kind == "dir" else "in.jsonl")),
        "device": "/dev/null",
    }[bad]
    if bad == "existing-file" and kind == "file":
        pytest.skip("writing a file over a file is what a file output does (atomically)")
    if bad == "device" and kind == "dir":
        pytest.skip("covered by existing-file: a device is not a folder")
    argv = _argv(words, action, out, kind, place, bad == "the-input-itself")
    if argv is None:
        pytest.skip("this command takes no input path")
    before = _snapshot(place)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    flag = max(action.option_strings, key=len, default=None) or str(action.metavar)
    assert flag in lines[0] and out in lines[0], lines[0]
    assert _snapshot(place) == before


def test_perturb_recode_refuses_a_folder_it_did_not_write(place, capsys):
    precious = place / "user" / "precious"
    before = _snapshot(place)
    code = main(
        [
            "perturb",
            str(place / "inputs" / "in.jsonl"),
            "--format",
            "recode",
            "--out",
            str(precious),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "holds no boi_recode_" in err and str(precious) in err
    assert _snapshot(place) == before


# ------------------------------------------------------------------------- the library's side


def test_output_paths_are_resolved_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    spellings = ["runs/x", "./runs/x", "runs/x/", str(tmp_path / "runs" / "x"), "runs/../runs/x"]
    assert {output_dir(s) for s in spellings} == {tmp_path / "runs" / "x"}
    assert output_file("a.jsonl", inputs=["runs"]) == tmp_path / "a.jsonl"


def test_an_unwritable_place_is_one_sentence(tmp_path, monkeypatch):
    # As root every folder is writable, so the check is shown with os.access answering no.
    import benchmarks.common.outputs as outputs

    monkeypatch.setattr(outputs.os, "access", lambda path, mode: False)
    with pytest.raises(UserError, match=r"--out .*out\.jsonl cannot be written: .* not writable"):
        output_file(tmp_path / "out.jsonl")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_read_only_folder_is_refused(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    (tmp_path / "in.jsonl").write_text(GOOD)
    locked.chmod(0o555)
    try:
        code = main(["blocks", str(tmp_path / "in.jsonl"), "--out", str(locked / "o.jsonl")])
    finally:
        locked.chmod(0o755)
    err = capsys.readouterr().err
    assert code == 2 and "cannot be written" in err and "--out" in err


def test_replace_dir_never_removes_a_users_dot_old(tmp_path):
    final, tmp = tmp_path / "clf", tmp_path / ".clf.tmp"
    final.mkdir()
    (final / "classifier.json").write_text("{}")
    (tmp_path / "clf.old").mkdir()
    (tmp_path / "clf.old" / "keep.txt").write_text("the user's")
    tmp.mkdir()
    (tmp / "classifier.json").write_text('{"new": 1}')
    replace_dir(tmp, final)
    assert (tmp_path / "clf.old" / "keep.txt").read_text() == "the user's"
    assert json.loads((final / "classifier.json").read_text()) == {"new": 1}
    assert not old_dir(final).exists() and old_dir(final).name.startswith(".")


def test_train_classifier_refuses_a_folder_holding_other_things(tmp_path):
    from bias.modifier_prompts.classifier import ClassifierConfig, train_classifier

    data = tmp_path / "data"
    data.mkdir()
    for split in ("train", "val", "test"):
        (data / f"{split}.jsonl").write_text('{"code": "x = 1", "label": 0}\n')
    before = _snapshot(tmp_path)
    # Its own training data as --out: the folder would be replaced, data and all.
    with pytest.raises(UserError, match="is also an input"):
        train_classifier(ClassifierConfig(data=str(data), out=str(data), kind="head"))
    holder = tmp_path / "holder"
    holder.mkdir()
    (holder / "thesis.tex").write_text("mine")
    before = _snapshot(tmp_path)
    with pytest.raises(UserError, match=r"holds no classifier\.json"):
        train_classifier(ClassifierConfig(data=str(data), out=str(holder), kind="head"))
    assert _snapshot(tmp_path) == before


def test_merge_into_one_of_its_shards_is_refused_before_anything_is_written(tmp_path):
    from boi.studies import merge_runs

    shard = tmp_path / "shard-0"
    shard.mkdir()
    (shard / "manifest.json").write_text('{"shard": "0/2", "config": {}}')
    before = _snapshot(tmp_path)
    with pytest.raises(UserError, match="is also an input"):
        merge_runs(shard, [shard, tmp_path / "shard-1"])
    assert _snapshot(tmp_path) == before


def test_a_run_directory_that_is_a_file_or_under_one_is_one_sentence(tmp_path):
    from benchmarks.common.rundir import claim_run_dir

    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(UserError, match="is a file"):
        claim_run_dir(afile, "h", {})
    with pytest.raises(UserError, match="which is a file"):
        claim_run_dir(afile / "run", "h", {})


def test_recode_writer_never_overwrites_a_file_it_did_not_write(tmp_path):
    from benchmarks.problem import Problem
    from perturb.recode.interop import write_recode

    # No lineage: an original, as the catalogue's "original" transformation leaves it.
    original = Problem(
        "X/0", "tiny", "def f(x):\n    pass\n", "f", test="def check(c):\n    pass\n"
    )
    folder = tmp_path / "recode"
    (folder / "nominal").mkdir(parents=True)
    theirs = folder / "nominal" / "HumanEval.jsonl"
    theirs.write_text("ReCode's own release\n")
    with pytest.raises(UserError, match="boi did not write it"):
        write_recode([original], folder, "humaneval")
    assert theirs.read_text() == "ReCode's own release\n"


# ------------------------------------------------------------------------- the CLI's top level


@pytest.mark.parametrize(
    "argv",
    [
        ["keywords", "extract", "humaneval", "--out", "k.jsonl", "--batch-size", "0"],
        ["critic", "in.jsonl", "--out", "c.jsonl", "--device", "tpu"],
        ["analyze", "attention", "run", "--device", "tpu"],
        ["bias", "train-classifier", "--device", "tpu"],
    ],
)
def test_bad_flag_values_are_refused_while_parsing(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("boi ")


def test_an_embedder_folder_that_is_not_a_model_is_one_sentence(tmp_path, capsys):
    (tmp_path / "in.jsonl").write_text(GOOD)
    (tmp_path / "emb").mkdir()
    (tmp_path / "emb" / "notes.txt").write_text("x")
    code = main(
        ["keywords", "extract", str(tmp_path / "in.jsonl"), "--embedder", str(tmp_path / "emb"),
         "--out", str(tmp_path / "k.jsonl")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "is not a model" in err and len(err.strip().splitlines()) == 1


def _failing_command(monkeypatch, error: BaseException) -> None:
    module = sys.modules["boi.commands.rank"]

    def run(args):
        raise error

    monkeypatch.setattr(module, "run", run)


def test_an_os_error_that_escapes_is_one_sentence_naming_the_path(monkeypatch, capsys):
    _failing_command(monkeypatch, PermissionError(13, "Permission denied", "/x/severity.md"))
    code = main(["rank", "r"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip() == (
        "boi rank: error: /x/severity.md: Permission denied; check the path and its permissions."
    )


def test_value_and_runtime_errors_are_one_sentence_that_points_at_debug(monkeypatch, capsys):
    _failing_command(monkeypatch, RuntimeError("CUDA out of memory.\nTried to allocate 2 GiB"))
    code = main(["rank", "r"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "RuntimeError: CUDA out of memory." in err and "--debug" in err


def test_debug_anywhere_prints_the_traceback_too(monkeypatch, capsys):
    _failing_command(monkeypatch, ValueError("bad"))
    code = main(["rank", "r", "--debug"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" in err and err.strip().endswith("report the traceback)")


def test_a_bug_keeps_its_traceback(monkeypatch):
    _failing_command(monkeypatch, KeyError("config"))
    with pytest.raises(KeyError):
        main(["rank", "r"])


USER_ERRORS = [
    ["blocks", "{inputs}/in.jsonl", "--out", "{inputs}/in.jsonl"],
    ["blocks", "{inputs}/in.jsonl", "--out", "{inputs}"],
    ["execute", "{inputs}/in.jsonl", "{inputs}/in.jsonl", "--out", "{inputs}/in.jsonl"],
    ["merge", "{inputs}/dir", "{inputs}/dir"],
    ["bias", "train-classifier", "--data", "{inputs}/dir", "--out", "{inputs}/dir"],
    ["keywords", "extract", "{inputs}/in.jsonl", "--out", "k.jsonl", "--batch-size", "0"],
    ["critic", "{inputs}/in.jsonl", "--out", "c.jsonl", "--device", "tpu"],
    ["analyze", "copies", "{inputs}/dir", "--index", "{inputs}/in.jsonl"],
]


def test_no_user_error_reaches_the_user_as_a_traceback(place):
    """The installed entry point, in a fresh process: what a user sees."""
    inputs = place / "inputs"
    for argv in USER_ERRORS:
        words = [w.format(inputs=inputs) for w in argv]
        done = subprocess.run(
            [sys.executable, "-m", "boi", *words],
            capture_output=True,
            text=True,
            cwd=place,
            timeout=120,
        )
        assert done.returncode == 2, (words, done.stderr)
        assert "Traceback" not in done.stderr, (words, done.stderr)
        assert done.stderr.strip().splitlines()[-1].startswith("boi "), (words, done.stderr)


def test_main_checks_outputs_before_running(monkeypatch, place, capsys):
    ran = []
    monkeypatch.setattr(sys.modules["boi.commands.blocks"], "run", lambda args: ran.append(1))
    inputs = place / "inputs"
    assert main(["blocks", str(inputs / "in.jsonl"), "--out", str(inputs / "in.jsonl")]) == 2
    assert ran == []
    assert cli.COMMANDS  # the tree the property walks is boi's own
