"""The documentation site's generated reference (scripts/docs_reference.py) covers the code: every
CLI option of every command, every config key, every registered transformation and every metric
function appears in it, and an option, key, config class or metric added without documentation
is refused, which fails `mkdocs build --strict` in `make test`. The pages render as written (no
stray fence, lists are lists), and every `boi` command in their shell blocks parses with boi's
own parser, names no placeholder, and the cheap ones run as written (issue 38)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import benchmarks.robustness
from benchmarks.common.config import to_dict
from benchmarks.common.errors import UserError
from benchmarks.problem import Problem
from boi.cli import COMMANDS, main, make_parser
from perturb.transforms import TRANSFORMS, NotApplicable, Variant, Variants, transform, unregister
from scripts import docs_reference
from scripts.docs_reference import (
    ConfigRoot,
    ReferenceError,
    cli_page,
    code,
    commands,
    config_page,
    documented_actions,
    metrics_page,
    transformations_page,
    undocumented_config_keys,
    undocumented_options,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def parser() -> argparse.ArgumentParser:
    return make_parser()


def command_sections(page: str) -> dict[str, str]:
    """The CLI page cut at its command headings: `boi run` -> that command's section."""
    parts = re.split(r"^#{2,4} (boi[\w -]*)$", page, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def subparser(parser: argparse.ArgumentParser, path: str) -> argparse.ArgumentParser:
    return next(c.parser for c in commands(parser) if c.path == path)


def test_every_option_of_every_command_is_in_the_cli_reference(parser) -> None:
    sections = command_sections(cli_page(parser))
    checked = 0
    for command in list(commands(parser))[1:]:
        assert command.path in sections, f"{command.path} has no section in the CLI reference"
        for action in documented_actions(command.parser):
            names = action.option_strings or [action.dest]
            for name in names:
                assert code(name) in sections[command.path], f"{command.path} {name} is missing"
                checked += 1
    assert checked > 300  # every command's flags, not a handful


def test_an_option_added_without_help_is_reported_and_refused() -> None:
    parser = make_parser()  # a parser of its own: the option added here must not leak
    assert undocumented_options(parser) == []
    run = subparser(parser, "boi run")
    run.add_argument("--fake-undocumented-option", type=int)
    assert undocumented_options(parser) == ["boi run --fake-undocumented-option"]
    with pytest.raises(ReferenceError, match="boi run --fake-undocumented-option"):
        cli_page(parser)


def test_an_option_added_with_help_appears_in_its_commands_section() -> None:
    parser = make_parser()
    subparser(parser, "boi bias test").add_argument(
        "--fake-documented-option", default=3, help="how many fakes to make"
    )
    section = command_sections(cli_page(parser))["boi bias test"]
    assert (
        "| `--fake-documented-option` | `FAKE_DOCUMENTED_OPTION` | `3` | how many fakes to make |"
        in section
    )


def flat_keys(value: object, prefix: str = "") -> list[str]:
    """Every key path of a config's JSON form (to_dict), an enumeration independent of the
    generator's walk over dataclass fields."""
    keys = []
    if isinstance(value, dict):
        for key, inner in value.items():
            keys.append(prefix + key)
            keys += flat_keys(inner, f"{prefix}{key}.")
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for inner in value:
            keys += flat_keys(inner, prefix[:-1] + "[].")
    return keys


def test_every_config_key_is_in_the_config_reference() -> None:
    page = config_page()
    files, flags, _ = docs_reference._config_roots()
    checked = 0
    for root in files + flags:
        try:
            default = root.cls()
        except Exception:  # a config with required keys (ExperimentConfig's kind): no default form
            continue
        for key in flat_keys(to_dict(default)):
            if key.startswith("transform_params.") or key.startswith("params."):
                continue  # free mappings: transformation name -> its parameters
            assert code(key) in page, f"{root.cls.__name__}: {key} is not in the config reference"
            checked += 1
    assert checked > 200
    # kind-specific keys come from the registries, not from the default config
    assert "`models[].base_url`" in page and "`critic.scorer.url`" in page


@dataclass(frozen=True)
class FakeSection:
    """A nested section (documented by this docstring)."""

    depth: int = field(default=1, metadata={"help": "how deep"})
    width: int = 2


@dataclass(frozen=True)
class FakeConfig:
    name: str = field(default="x", metadata={"help": "its name"})
    section: FakeSection = field(default_factory=FakeSection)


def test_a_config_key_added_without_help_is_reported() -> None:
    assert undocumented_config_keys() == []
    missing = undocumented_config_keys([ConfigRoot(FakeConfig, "a test")])
    assert "FakeConfig: section.width (FakeSection)" in missing
    assert not any("section.depth" in m or ": name " in m for m in missing)


def test_a_config_class_no_reference_root_reaches_is_reported() -> None:
    from boi.runner import RunConfig

    missing = undocumented_config_keys([ConfigRoot(RunConfig, "boi run")])
    assert (
        "bias.modifier_prompts.run.BiasRunConfig is a config class no reference root reaches"
        in missing
    )
    assert not any("ExecutionConfig" in m for m in missing)  # reached through RunConfig.execution


def test_every_metric_function_is_in_the_metrics_reference(monkeypatch) -> None:
    page = metrics_page()
    for module_name, _ in docs_reference.METRIC_MODULES:
        module = __import__(module_name, fromlist=["_"])
        for name, function in docs_reference._public_functions(module):
            if function.__doc__:
                assert f"### {name}\n" in page, f"{module_name}.{name} is missing"

    def fake_drop(original: dict, variants: dict) -> float:
        return 0.0

    fake_drop.__module__ = "benchmarks.robustness"
    monkeypatch.setattr(benchmarks.robustness, "fake_drop", fake_drop, raising=False)
    with pytest.raises(ReferenceError, match=r"benchmarks\.robustness\.fake_drop"):
        metrics_page()


def test_a_registered_transformation_is_in_the_catalogue_page_with_an_example() -> None:
    @transform("docs_fake_note", "1", family="blocks")
    def docs_fake_note(problem: Problem, keywords: object, *, note: str = "mind it") -> Variants:
        """Put a comment above the prompt (a transformation this test registers)."""
        if not problem.prompt:
            return NotApplicable("empty prompt")
        first = problem.blocks[0]
        blocks = (dataclasses.replace(first, text=f"# {note}\n" + first.text), *problem.blocks[1:])
        return [
            Variant(
                problem.replace(prompt="".join(b.text for b in blocks), blocks=blocks),
                {"note": note},
            )
        ]

    try:
        assert "docs_fake_note" in TRANSFORMS
        page = transformations_page(names=["anonymize", "docs_fake_note"])
    finally:
        unregister("docs_fake_note")
    assert "### docs_fake_note" in page and "### anonymize" in page
    assert "| `note` | `str` | `'mind it'` |" in page
    assert "+# mind it" in page  # the example's diff, on a real HumanEval problem
    assert "-def has_close_elements(" in page and "+def func(" in page


def test_the_readme_is_a_landing_page_whose_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "make test" in readme and "make demo" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).is_file(), f"the README links to {target}, which does not exist"


# --------------------------------------------------------------------------- pages render as written

LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
FENCE = re.compile(r"^\s*(```+|~~~+)(.*)$")
# A block that starts with these is not a paragraph (a heading, a table, HTML, an admonition,
# a mkdocstrings directive with its YAML options): a list may follow it directly.
NOT_PARAGRAPH = ("#", "|", "<", "!!!", "???", "---", ">", ":::")


def rendering_problems(text: str) -> list[str]:
    """Markdown that Python-Markdown (mkdocs) renders otherwise than it reads: a code fence
    closed with text on the same line (the fence stays open and the page after it becomes
    code, the ``` shown in a paragraph), and a list right after a paragraph line with no blank
    line between (the items run together into the paragraph)."""
    found: list[str] = []
    fence: str | None = None
    block: list[str] = []  # the lines since the last blank line, outside code
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is not None:
            if match and match.group(1).startswith(fence):
                if match.group(2).strip():
                    found.append(f"line {number}: text after the closing {fence}")
                fence = None
            continue
        if match:
            fence, block = match.group(1), []
            continue
        if not line.strip():
            block = []
            continue
        starts_a_list = LIST_ITEM.match(line) and block
        if starts_a_list and not any(LIST_ITEM.match(b) for b in block):
            if not block[0].lstrip().startswith(NOT_PARAGRAPH):
                found.append(
                    f"line {number}: a list right after a paragraph line (add a blank line)"
                )
        block.append(line)
    return found


def test_the_rendering_check_catches_each_mistake() -> None:
    assert rendering_problems("Outputs go here:\n- one\n- two\n") == [
        "line 2: a list right after a paragraph line (add a blank line)"
    ]
    assert rendering_problems("Steps:\n1. one\n2. two\n") == [
        "line 2: a list right after a paragraph line (add a blank line)"
    ]
    assert rendering_problems("```bash\nboi run\n``` then read the report\n") == [
        "line 3: text after the closing ```"
    ]
    fine = (
        "Outputs go here:\n\n- one, which\n  wraps\n- two\n\n## Heading\n- a list under it\n\n"
        "```text\nsome:\n- code, not a list\n```\n\n| a |\n|---|\n"
    )
    assert rendering_problems(fine) == []


# Included into the site whole (docs/contributing.md, docs/changelog.md), so they render alike.
PROJECT_PAGES = ("CONTRIBUTING.md", "CHANGELOG.md")


@pytest.mark.parametrize(
    "page",
    sorted(
        str(p.relative_to(ROOT))
        for p in [*ROOT.glob("docs/**/*.md"), *(ROOT / n for n in ("README.md", *PROJECT_PAGES))]
    ),
)
def test_every_page_renders_as_written(page: str) -> None:
    assert rendering_problems((ROOT / page).read_text(encoding="utf-8")) == [], page


def test_the_generated_reference_pages_render_as_written(parser) -> None:
    assert rendering_problems(cli_page(parser)) == []
    assert rendering_problems(metrics_page()) == []


# --------------------------------------------------------------------------- commands run as written

PAGES = [ROOT / "README.md", *sorted(ROOT.glob("docs/**/*.md"))]
# Fenced blocks read as shell: these languages. A block without a language must not hold a boi
# command (say `bash`, or `text` for a synopsis with [optional] parts, or for output).
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
# A line that may run boi (only these are split as shell words: prose has unclosed quotes).
RUNS_BOI = re.compile(r"(^|\s|/)boi\s|-m\s+boi(\.cli)?\s")
SHELL_OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "2>", "<"}
ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
# A word that reads as a placeholder: /path/to/, or an all-caps name (RUN_DIR, ORG/MODEL,
# FILE.jsonl) that is not a shell variable ($SLURM_ARRAY_TASK_ID) and not a real value below.
PLACEHOLDER = re.compile(r"(?:^|[/=])path/to/|(?<![\w$])[A-Z][A-Z0-9_-]*[A-Z0-9](?!\w)")
REAL_UPPERCASE = {"NA"}  # `boi finetune build-data --flavour NA`: the non-augmented flavour
# Commands the docs keep as placeholders on purpose: the command as written -> why. Prefer a real,
# runnable value in the docs to an entry here.
ALLOWED_PLACEHOLDERS: dict[str, str] = {}


@dataclass(frozen=True)
class DocCommand:
    """One `boi` command line from a shell block of a page."""

    page: str
    line: int
    text: str  # as written, continuation lines joined
    argv: tuple[str, ...]  # boi's arguments, after `boi`
    env: tuple[tuple[str, str], ...]  # VAR=value words written before it

    @property
    def key(self) -> str:
        return " ".join(["boi", *self.argv])

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


def fenced_lines(text: str) -> Iterator[tuple[str, int, str]]:
    """(language, first line number, line) for each line of the page's fenced blocks, a line
    ending in a backslash joined with the next."""
    fence: str | None = None
    language = ""
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                words = match.group(2).strip().split()
                language = words[0].lower() if words else ""
            continue
        if match and match.group(1).startswith(fence) and not match.group(2).strip():
            fence, pending = None, None
            continue
        start, line = (pending[0], f"{pending[1]} {line.strip()}") if pending else (number, line)
        if line.rstrip().endswith("\\"):
            pending = (start, line.rstrip()[:-1].rstrip())
            continue
        pending = None
        yield language, start, line.strip()


def boi_words(words: list[str]) -> tuple[dict[str, str], list[str]] | None:
    """(environment, boi's arguments) when the words run boi: `boi ...`, `.venv/bin/boi ...`,
    `... -m boi.cli ...` (torchrun), each after any VAR=value words; None otherwise."""
    env = {}
    while words and ENV_ASSIGNMENT.fullmatch(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    cut = next((i for i, w in enumerate(words) if w in SHELL_OPERATORS), len(words))
    words = words[:cut]
    if words and (words[0] == "boi" or words[0].endswith("/boi")):
        return env, words[1:]
    for i, word in enumerate(words[:-1]):
        if word == "-m" and words[i + 1] in ("boi", "boi.cli"):
            return env, words[i + 2 :]
    return None


def doc_commands(text: str, page: str) -> list[DocCommand]:
    found = []
    for language, number, line in fenced_lines(text):
        line = line.removeprefix("$ ")
        if language not in SHELL_LANGUAGES or not RUNS_BOI.search(line):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as err:  # an unclosed quote: reported as a command that cannot parse
            found.append(DocCommand(page, number, line, (f"<shell: {err}>",), ()))
            continue
        run = boi_words(words)
        if run is not None:
            env, argv = run
            found.append(DocCommand(page, number, line, tuple(argv), tuple(env.items())))
    return found


DOC_COMMANDS = [
    c for p in PAGES for c in doc_commands(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))
]


def test_the_command_extraction_reads_shell_blocks_as_a_shell_would() -> None:
    page = (
        "```bash\n"
        "HF_HUB_OFFLINE=0 boi run --config demo \\\n"
        "    --out runs/x   # a comment\n"
        ".venv/bin/boi perturb --list | head\n"
        "torchrun --nproc_per_node 2 -m boi.cli finetune train --config cfg.yaml\n"
        "make demo\n"
        "```\n\n"
        "```text\nboi analyze hints RUN_DIR [--out FOLDER]\n```\n"
        "```python\nboi = 1\n```\n"
        "```\nboi --version\n```\n"
    )
    found = doc_commands(page, "p.md")
    assert [(c.line, c.argv, dict(c.env)) for c in found] == [
        (2, ("run", "--config", "demo", "--out", "runs/x"), {"HF_HUB_OFFLINE": "0"}),
        (4, ("perturb", "--list"), {}),
        (5, ("finetune", "train", "--config", "cfg.yaml"), {}),
    ]
    assert unlabelled_commands(page) == [16]
    assert PLACEHOLDER.search("ORG/MODEL") and PLACEHOLDER.search("/path/to/checkpoint")
    assert PLACEHOLDER.search("FILE.jsonl") and PLACEHOLDER.search("RUN_DIR")
    for real in ("runs/paper-shard-$SLURM_ARRAY_TASK_ID", "T=0.2:1", "Qwen2.5-Coder-1.5B", "a/b"):
        assert not PLACEHOLDER.search(real), real


def unlabelled_commands(text: str) -> list[int]:
    """The lines of blocks without a language that read as a boi command (boi, then one of its
    commands or options): a reader cannot tell them from output, and no test reads them."""
    first = {*COMMANDS, "--version", "--help", "--debug"}
    found = []
    for language, number, line in fenced_lines(text):
        words = line.removeprefix("$ ").split()
        if not language and len(words) > 1 and words[0] == "boi" and words[1] in first:
            found.append(number)
    return found


def test_no_boi_command_sits_in_a_block_without_a_language() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{number}"
        for page in PAGES
        for number in unlabelled_commands(page.read_text(encoding="utf-8"))
    ]
    assert not found, "say `bash` (a command) or `text` (a synopsis, output) at: " + ", ".join(
        found
    )


def parse_error(parser: argparse.ArgumentParser, argv: tuple[str, ...]) -> str | None:
    """Why boi's own parser refuses `argv` (a flag that does not exist, a choice that is not
    one, a required argument missing), or None when it parses."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(list(argv))
    except SystemExit as exit_:
        if exit_.code:
            return (err.getvalue().strip().splitlines() or ["exit " + str(exit_.code)])[-1]
    except UserError as refused:
        return str(refused)
    return None


def test_the_docs_have_boi_commands_on_every_page_that_shows_one() -> None:
    assert len(DOC_COMMANDS) > 50
    assert {"README.md", "docs/how-to/get-the-data.md"} <= {c.page for c in DOC_COMMANDS}


def test_every_boi_command_in_the_docs_parses(parser) -> None:
    refused = [f"{c}\n    {why}" for c in DOC_COMMANDS if (why := parse_error(parser, c.argv))]
    assert not refused, "commands in the docs that boi refuses:\n" + "\n".join(refused)


def test_no_command_in_the_docs_is_a_placeholder() -> None:
    """A stranger pastes the commands: each names real values (a hub id, a path an earlier step
    made, data/ that `boi data fetch` fills), or is allow-listed with its reason."""
    found = []
    for command in DOC_COMMANDS:
        words = [w for arg in command.argv for w in PLACEHOLDER.findall(arg)]
        words = [w for w in words if w.strip("/=") not in REAL_UPPERCASE]
        if words and command.text not in ALLOWED_PLACEHOLDERS:
            found.append(f"{command} ({', '.join(words)})")
    assert not found, "placeholders in the docs' commands:\n" + "\n".join(found)
    stale = set(ALLOWED_PLACEHOLDERS) - {c.text for c in DOC_COMMANDS}
    assert not stale, f"allowed placeholders no page shows any more: {stale}"


# The docs' commands run as written, in a fresh folder with HF_HUB_OFFLINE=1: those that need no
# network, no model, no GPU and no file that an earlier step (a run, a fetch) makes, read only
# what boi ships (HumanEval, HumanEval+, the transformation catalogue, the data registry), and
# finish in a few seconds on 2 CPU cores. Everything else is parsed only (above): a model load or
# a run takes minutes (even `boi run --config reference --dataset humaneval`, no model, takes
# about 60 s and `boi perturb humaneval` 15 s on 2 shared cores), and a download needs the network
# (`boi data fetch` runs against a local fake upstream in tests/test_data_fetch.py).
CHEAP = {
    "boi perturb --list": "the transformation catalogue, no dataset",
    "boi data list": "the data registry and the files in ./data (none in a fresh folder)",
    "boi analyze leaks --dataset humaneval": "HumanEval ships with boi; about 2 s",
}


@pytest.mark.parametrize("key", sorted(CHEAP))
def test_the_cheap_commands_in_the_docs_run_as_written(key: str, tmp_path) -> None:
    commands = [c for c in DOC_COMMANDS if c.key == key]
    assert commands, f"{key!r} is on no page any more: take it out of CHEAP"
    command = commands[0]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **dict(command.env)}
    boi = Path(sys.executable).with_name("boi")
    done = subprocess.run(
        [str(boi), *command.argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr and done.stdout.strip()


def test_the_version_and_every_commands_help_run(parser, capsys) -> None:
    boi = Path(sys.executable).with_name("boi")
    done = subprocess.run([str(boi), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("boi "), done.stderr
    for command in commands(parser):
        with pytest.raises(SystemExit) as exit_:
            main([*command.path.split()[1:], "--help"])
        assert exit_.value.code == 0, command.path
        assert capsys.readouterr().out.startswith(f"usage: {command.path}"), command.path
