"""The commands do what their help and the docs say (issue 38, "A stranger can follow every
page"): `boi perturb --list` needs no dataset, `--transforms` says which default it applies,
`boi report RUN_DIR` reproduces the run's own report, `boi --version` exists, every command's
help ends with examples that parse and says each default once, and no install line names a
package that is not published."""

from __future__ import annotations

import json
import re
import shlex
import socket
from pathlib import Path

import pytest

import boi
from boi.cli import COMMANDS, main, make_parser
from perturb.transforms import CATALOGUE
from scripts.docs_reference import commands

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def parser():
    return make_parser()


def test_perturb_list_needs_no_dataset(capsys) -> None:
    assert main(["perturb", "--list"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert set(CATALOGUE) <= set(names) and len(names) > len(CATALOGUE)


def test_perturb_without_a_dataset_says_what_to_pass(tmp_path, capsys) -> None:
    assert main(["perturb", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "needs a DATASET" in capsys.readouterr().err


def test_transforms_help_names_the_default_it_applies(parser) -> None:
    perturb = next(c.parser for c in commands(parser) if c.path == "boi perturb")
    [action] = [a for a in perturb._actions if "--transforms" in a.option_strings]
    assert "default: all" not in action.help
    assert f"the paper's {len(CATALOGUE)}" in action.help and ", ".join(CATALOGUE) in action.help


def test_version_prints_the_package_version(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    printed = capsys.readouterr().out.strip()
    assert re.fullmatch(r"boi \S+( \(git [0-9a-f]{12}(, uncommitted changes)?\))?", printed)


def test_every_command_help_ends_with_examples_that_parse(parser) -> None:
    checked = 0
    for command in list(commands(parser))[1:]:
        epilog = command.parser.epilog or ""
        assert epilog.startswith("examples:\n"), f"{command.path} --help shows no example"
        assert "examples:" in command.parser.format_help()
        for line in epilog.splitlines()[1:]:
            words = shlex.split(line)
            assert " ".join(words[: len(command.path.split())]) == command.path, line
            make_parser().parse_args(words[1:])  # SystemExit here: the example does not parse
            checked += 1
    assert checked >= len(COMMANDS)


def test_no_help_says_its_default_twice(parser) -> None:
    for command in commands(parser):
        for action in command.parser._actions:
            text = (action.help or "").lower()
            assert text.count("default:") <= 1, f"{command.path} {action.option_strings}: {text}"


def test_install_lines_name_a_package_that_exists() -> None:
    """No package named boi is published: an extra is installed from the checkout."""
    packages = ("boi", "benchmarks", "perturb", "critic", "finetune", "bias")
    files = [*(f for p in packages for f in ROOT.glob(f"{p}/**/*.py")), *ROOT.glob("docs/**/*.md")]
    files.append(ROOT / "README.md")
    offenders = [
        str(path.relative_to(ROOT))
        for path in files
        if re.search(r"pip install\s+['\"]?boi\[", path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


# A dataset whose test passes the original and fails the anonymized variant on half the
# problems (it checks the function's name): intervals that depend on bootstrap and seed.
def problem(i: int) -> dict:
    name = f"add_{i}"
    check = f"    assert candidate.__name__ == {name!r}\n" if i % 2 else ""
    return {
        "task_id": f"Toy/{i}",
        "prompt": f'def {name}(a, b):\n    """Add two numbers.\n    >>> {name}(1, 2)\n    3\n    """\n',
        "entry_point": name,
        "canonical_solution": "    return a + b\n",
        "test": f"def check(candidate):\n{check}    assert candidate(1, 2) == 3\n",
    }


def test_boi_report_of_a_run_dir_reproduces_the_runs_own_table(tmp_path, capsys) -> None:
    data = tmp_path / "toy.jsonl"
    data.write_text("".join(json.dumps(problem(i)) + "\n" for i in range(12)))
    out = tmp_path / "run"
    boi.run(
        "reference",
        out_dir=str(out),
        datasets=[{"name": str(data)}],
        transforms=["original", "anonymize"],
        bootstrap=40,
        perturb_seed=7,
        log=None,
    )
    table = out / "report" / "table.md"
    built = table.read_bytes()
    assert (
        "| Anon | 50.0 (-50.0% [" in built.decode() and "(40 resamples, seed 7)" in built.decode()
    )
    html = (out / "report" / "report.html").read_text(encoding="utf-8")

    assert main(["report", str(out)]) == 0
    assert table.read_bytes() == built
    assert (out / "report" / "report.html").read_text(encoding="utf-8") == html

    # The flags still override it, and the test is sensitive to them.
    assert main(["report", str(out), "--bootstrap", "1000", "--seed", "0"]) == 0
    assert table.read_bytes() != built


# A wrong model fails before any work: before the perturbation, the critic and the claim of
# the run directory (the demo spent 240 s on those before it found out).
@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("/path/to/checkpoint", "model path /path/to/checkpoint does not exist"),
        ("no-such-org/no-such-model-38", "neither a local folder nor in the Hugging Face cache"),
    ],
)
def test_boi_run_refuses_a_model_it_cannot_load_before_any_work(
    model, says, tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "run"
    argv = ["run", "--config", "demo", "--model", model, "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and "--model" in err and "perturb" not in err
    assert not (out / "manifest.json").exists()


def test_a_model_folder_without_config_json_is_refused(tmp_path) -> None:
    from benchmarks.common.errors import UserError
    from benchmarks.common.models import check_local_model

    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(UserError, match=r"has no config\.json"):
        check_local_model(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    check_local_model(str(tmp_path))
    check_local_model("embedded")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_openai_server_that_does_not_answer_is_refused_before_the_run(tmp_path) -> None:
    from benchmarks.common.errors import UserError

    url = f"http://127.0.0.1:{closed_port()}/v1"
    out = tmp_path / "run"
    with pytest.raises(UserError, match=f"nothing answers at {re.escape(url)}"):
        boi.run(
            "reference",
            out_dir=str(out),
            models=[{"kind": "openai", "model": "m", "base_url": url}],
            log=None,
        )
    assert not (out / "manifest.json").exists()


def test_a_listening_server_and_a_pool_with_one_up_pass_the_check() -> None:
    from benchmarks.common.models import check_backends
    from benchmarks.generation import BackendSpec

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        up = f"http://127.0.0.1:{listening.getsockname()[1]}/v1"
        down = f"http://127.0.0.1:{closed_port()}/v1"
        check_backends([BackendSpec(kind="openai", model="m", base_url=up)])
        check_backends([BackendSpec(kind="openai", model="m", base_url=[down, up])])
        check_backends([BackendSpec(kind="reference")])


def test_boi_bias_run_refuses_a_placeholder_model_before_the_claim(tmp_path, capsys) -> None:
    out = tmp_path / "bias"
    argv = ["bias", "run", "--config", "demo", "--model", "/path/to/model", "--out", str(out)]
    assert main(argv) == 2
    assert "/path/to/model does not exist" in capsys.readouterr().err
    assert not (out / "manifest.json").exists()


def test_the_cli_reference_shows_each_commands_examples(parser) -> None:
    from scripts.docs_reference import cli_page

    page = cli_page(parser)
    assert (
        "boi perturb --list\n" in page
        and "boi bias human-agreement runs/bias-demo sheet.csv" in page
    )
