"""The documentation site's generated reference (scripts/docs_reference.py) covers the code: every
CLI option of every command, every config key, every registered transformation and every metric
function appears in it, and an option, key, config class or metric added without documentation
is refused, which fails `mkdocs build --strict` in `make test`."""

from __future__ import annotations

import argparse
import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import benchmarks.robustness
from benchmarks.common.config import to_dict
from benchmarks.problem import Problem
from boi.cli import make_parser
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
    files, flags, data = docs_reference._config_roots()
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
    with pytest.raises(ReferenceError, match="benchmarks.robustness.fake_drop"):
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


@pytest.mark.parametrize(
    "page",
    sorted(str(p.relative_to(ROOT)) for p in [*ROOT.glob("docs/**/*.md"), ROOT / "README.md"]),
)
def test_every_page_renders_as_written(page: str) -> None:
    assert rendering_problems((ROOT / page).read_text(encoding="utf-8")) == [], page


def test_the_generated_reference_pages_render_as_written(parser) -> None:
    assert rendering_problems(cli_page(parser)) == []
    assert rendering_problems(metrics_page()) == []
