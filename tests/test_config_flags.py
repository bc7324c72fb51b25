"""Flags generated from config dataclasses parse the way the help says."""

import argparse

import pytest

from benchmarks.common.config import add_dataclass_arguments, from_mapping, overrides_from_args
from benchmarks.execution import ExecutionConfig
from boi.cli import make_parser


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
        ["run", "--transforms", "original,anonymize", "--seeds", "0", "1", "--no-keep-unchanged"]
    )
    assert args.transforms == ["original", "anonymize"]
    assert args.seeds == [0, 1]
    assert args.keep_unchanged is False
