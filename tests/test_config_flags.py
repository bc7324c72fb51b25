"""Flags generated from config dataclasses parse the way the help says."""

import argparse

import pytest

from benchmarks.common.config import add_dataclass_arguments, from_mapping, overrides_from_args
from benchmarks.common.errors import UserError
from benchmarks.execution import ExecutionConfig
from boi.cli import main, make_parser
from boi.runner import RunConfig


def parse_execution(argv):
    parser = argparse.ArgumentParser()
    add_dataclass_arguments(parser, ExecutionConfig, flags={"ks": "--k"})
    return overrides_from_args(parser.parse_args(argv), ExecutionConfig)


@pytest.mark.parametrize(
    "argv, ks",
    [
        (["--k", "1,10,100"], [1, 10, 100]),
        (["--k", "1", "10"], [1, 10]),
        (["--k", "1,10", "100"], [1, 10, 100]),
        (["--k", "1", "--k", "5"], [1, 5]),
    ],
)
def test_many_valued_flags_give_one_flat_list(argv, ks):
    overrides = parse_execution(argv)
    assert overrides == {"ks": ks}
    assert from_mapping(ExecutionConfig, overrides).ks == tuple(ks)


def test_unset_flags_leave_the_defaults_and_booleans_have_a_negative_form():
    assert parse_execution([]) == {}
    assert parse_execution(["--no-calibrate", "--timeout", "2"]) == {
        "calibrate": False,
        "timeout": 2.0,
    }


def test_boi_run_flags_reach_the_run_config():
    args = make_parser().parse_args(
        ["run", "--transforms", "original", "anonymize", "--seeds", "0", "1", "--no-keep-unchanged"]
    )
    assert args.transforms == ["original", "anonymize"]
    assert args.seeds == [0, 1]
    assert args.keep_unchanged is False


# Every command that takes transformation names: the words before --transforms.
TRANSFORMS_COMMANDS = [
    ["run"],
    ["perturb", "humaneval"],
    ["finetune", "build-data", "humaneval", "--out", "x.jsonl"],
    ["analyze", "attention", "runs/demo"],
]


@pytest.mark.parametrize("command", TRANSFORMS_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_transforms_take_names_separated_by_spaces(command):
    args = make_parser().parse_args([*command, "--transforms", "original", "anonymize"])
    assert args.transforms == ["original", "anonymize"]
    assert make_parser().parse_args(command).transforms is None  # not given: the default


@pytest.mark.parametrize("command", TRANSFORMS_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize(
    "given",
    [
        ["original,anonymize"],  # comma-separated (was build-data's syntax)
        ["original,", "anonymize"],
        ["original", "anonymize,"],
    ],
)
def test_comma_separated_transforms_are_refused_with_the_new_syntax(command, given):
    with pytest.raises(UserError) as refused:
        make_parser().parse_args([*command, "--transforms", *given])
    assert str(refused.value) == (
        "--transforms takes names separated by spaces, not commas: write "
        "--transforms original anonymize."
    )


@pytest.mark.parametrize("command", TRANSFORMS_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_repeated_transforms_flag_is_refused_with_the_new_syntax(command):
    argv = [*command, "--transforms", "original", "--transforms", "anonymize", "drop_one"]
    with pytest.raises(UserError) as refused:
        make_parser().parse_args(argv)
    assert str(refused.value) == (
        "--transforms is given once with every name after it, not repeated: write "
        "--transforms original anonymize drop_one."
    )


def test_the_refusal_is_one_line_on_the_command_line(capsys):
    assert main(["run", "--transforms", "original,anonymize"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "boi run: error: --transforms takes names separated by spaces, not commas: write "
        "--transforms original anonymize.\n"
    )


def test_a_config_file_lists_transforms_one_by_one():
    with pytest.raises(
        UserError, match=r"list each name on its own: transforms: \[original, anonymize\]"
    ):
        from_mapping(RunConfig, {"perturb": {"transforms": "original,anonymize"}})
    nested = {"perturb": {"transforms": ["original", "anonymize"]}}
    assert from_mapping(RunConfig, nested).perturb.transforms == ("original", "anonymize")
    # The older flat spelling (run directories' manifests, older YAML files) reads the same.
    flat = from_mapping(RunConfig, {"transforms": ["original", "anonymize"]})
    assert flat.perturb.transforms == ("original", "anonymize")


@pytest.mark.parametrize("flag", ["--eval-dataset", "--eval-benchmark"])
def test_build_data_names_its_evaluation_dataset_by_either_flag(flag):
    argv = ["finetune", "build-data", "mbpp", "--out", "x.jsonl"]
    assert make_parser().parse_args(argv).eval_dataset == "humaneval"
    assert make_parser().parse_args([*argv, flag, "none"]).eval_dataset == "none"
