"""The documentation site as a reader sees it (issue 48, "What the site shows"): the built pages,
measured in headless Chromium, break no code span in a table across lines and show no source
syntax (an escaped pipe, a dataclass signature, `<factory>`); the generated reference lists every
command from the parser, renders defaults as values and page pointers as links; and the
transformation examples, the slow part of the build, are computed once per digest of their
inputs.

The browser check reads the site `make docs` built when `BOI_DOCS_SITE` names it (`make test`
builds the site first, so CI builds it once), and otherwise builds one itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from boi.cli import make_parser
from scripts import check_docs_site, docs_reference
from scripts.docs_reference import (
    class_doc,
    commands,
    commands_table,
    config_page,
    link_pages,
    md_cell,
    reference_index_page,
)

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- the generated text


def test_a_pipe_in_code_is_not_escaped_and_one_in_prose_is() -> None:
    cell = md_cell("use `--config demo|paper` or a|b")
    assert "`--config demo|paper`" in cell and "a\\|b" in cell


def test_every_command_of_the_parser_is_in_the_commands_at_a_glance() -> None:
    parser = make_parser()
    page = reference_index_page(parser)
    for command in list(commands(parser))[1:]:
        assert f"(cli.md#{docs_reference.anchor(command.path)})" in page, command.path
    assert "[`boi rank RUN_DIR [...]`](cli.md#boi-rank)" in page
    assert "(cli.md#boi-bias-experiment)" in page
    assert "\\|" not in "".join(commands_table(parser)).replace("\\\\", "")  # nothing escaped
    assert docs_reference.COMMANDS_MARKER not in page


def test_the_config_reference_shows_no_python_repr() -> None:
    page = config_page()
    assert "<factory>" not in page and "DatasetSpec(name" not in page and "': '" not in page
    assert "| **`datasets`** | `list[DatasetSpec]` |" in page
    assert "| `datasets[].data` | `str | None`{: .wraps } | `null` |" in page
    assert "each item's keys follow" in page


def test_a_long_default_is_shown_item_by_item() -> None:
    from scripts.docs_reference import default_cell

    assert default_cell('"runs/default"') == '`"runs/default"`'
    cell = default_cell('[{"name": "humaneval", "data": null, "task_ids": [], "limit": null}]')
    wraps = "{: .wraps }"
    assert cell == (
        f'[{{`"name": "humaneval"`{wraps}, `"data": null`{wraps}, `"task_ids": []`{wraps}, '
        f'`"limit": null`{wraps}}}]'
    )
    # What a reader copies (the text without the marks) is the value itself.
    plain = cell.replace(wraps, "").replace("`", "")
    assert json.loads(plain) == [{"name": "humaneval", "data": None, "task_ids": [], "limit": None}]


def test_a_dataclass_without_a_docstring_has_no_prose() -> None:
    from dataclasses import dataclass

    @dataclass
    class Bare:
        name: str = "x"

    @dataclass
    class Said:
        """What it is."""

    assert class_doc(Bare) == "" and class_doc(Said) == "What it is."


def test_page_pointers_become_links_titled_with_the_page_heading() -> None:
    linked = link_pages("see docs/how-to/get-the-data.md for the files")
    assert linked == "see [Get the data](../how-to/get-the-data.md) for the files"
    assert link_pages("(docs/results.md)") == "([Results on a real code model](../results.md))"
    assert link_pages("[x](docs/results.md)") == "[x](docs/results.md)"  # a link already
    assert link_pages("docs/no-such-page.md") == "docs/no-such-page.md"
    # In code it stays a path, as typed.
    assert md_cell("`docs/results.md` and docs/results.md").startswith("`docs/results.md` and [")


# --------------------------------------------------------------------------- the examples' cache


@pytest.fixture
def fake_examples(monkeypatch, tmp_path):
    """transformation_examples counted (and instant), the machine cache in tmp_path, WordNet
    found nowhere (the digest then skips importing nltk)."""
    import perturb.recode.words

    calls: list[list[str]] = []

    def examples(names, embedder=None):
        calls.append(list(names))
        return {n: ("HumanEval/0", "before\n", f"after {n}\n") for n in names}

    monkeypatch.setenv("BOI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(docs_reference, "transformation_examples", examples)
    monkeypatch.setattr(perturb.recode.words, "wordnet_location", lambda: None)
    return calls


def test_the_examples_are_computed_once_per_digest(fake_examples, tmp_path) -> None:
    first = docs_reference.cached_transformation_examples(["anonymize"])
    again = docs_reference.cached_transformation_examples(["anonymize"])
    assert first == again == {"anonymize": ("HumanEval/0", "before\n", "after anonymize\n")}
    assert fake_examples == [["anonymize"]]  # the second came from the cache
    docs_reference.cached_transformation_examples(["anonymize", "drop_examples"])
    assert len(fake_examples) == 2  # other inputs, other digest: computed
    assert len(list((tmp_path / "docs").glob("transformation-examples-*.json"))) == 1


def test_a_changed_source_is_a_new_digest(monkeypatch, fake_examples, tmp_path) -> None:
    """A file of the source folders, or a module of ours one of them imports (relative imports
    included), changes the digest; a module nothing there imports does not."""
    source = tmp_path / "src"
    files = {
        "perturb/transforms.py": "from benchmarks.problem import Problem\nfrom .recode import x\n",
        "perturb/recode/__init__.py": "x = 1\n",
        "benchmarks/__init__.py": "",
        "benchmarks/problem.py": "Problem = 1\n",
        "benchmarks/execution.py": "SANDBOX = 1\n",
    }
    for name, text in files.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    monkeypatch.setattr(docs_reference, "ROOT", source)
    monkeypatch.setattr(docs_reference, "EXAMPLE_SOURCES", ("perturb",))
    assert [str(p.relative_to(source)) for p in docs_reference.example_sources()] == [
        "benchmarks/__init__.py",
        "benchmarks/problem.py",
        "perturb/recode/__init__.py",
        "perturb/transforms.py",
    ]
    digests = {docs_reference.examples_digest(["anonymize"])}
    for name in ("perturb/transforms.py", "perturb/recode/__init__.py", "benchmarks/problem.py"):
        (source / name).write_text((source / name).read_text() + "# changed\n")
        digests.add(docs_reference.examples_digest(["anonymize"]))
    assert len(digests) == 4
    (source / "benchmarks/execution.py").write_text("SANDBOX = 2\n")
    assert docs_reference.examples_digest(["anonymize"]) in digests


def test_an_unreadable_cache_entry_is_computed_again(fake_examples, tmp_path) -> None:
    key = docs_reference.examples_digest(["anonymize"])
    entry = tmp_path / "docs" / f"transformation-examples-{key}.json"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text('{"digest": "', encoding="utf-8")  # a torn write
    assert docs_reference.cached_transformation_examples(["anonymize"])["anonymize"][0]
    assert fake_examples == [["anonymize"]]


# --------------------------------------------------------------------------- the built site


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = check_docs_site.find_chromium()
    if binary is None:
        if os.environ.get("BOI_REQUIRE_CHROMIUM") == "1":
            pytest.fail("no chromium binary, but BOI_REQUIRE_CHROMIUM=1: install chromium")
        pytest.skip("no chromium binary (apt-get install chromium)")
    return binary


@pytest.fixture(scope="module")
def site(chromium, tmp_path_factory) -> Path:
    """The site `make docs` built (`BOI_DOCS_SITE`), or one built here."""
    given = os.environ.get("BOI_DOCS_SITE")
    if given:
        assert (Path(given) / "index.html").is_file(), f"BOI_DOCS_SITE={given} holds no site"
        return Path(given)
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)]
    proc = subprocess.run(mkdocs, cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.mark.slow  # headless Chromium (and mkdocs, without BOI_DOCS_SITE)
def test_the_site_shows_code_in_tables_whole_and_no_source_syntax(site, chromium) -> None:
    reports = check_docs_site.check_site(site, chromium=chromium)
    measured = {r.page: r for r in reports}
    # The pages the issue named were measured, with their tables.
    for page in (
        "reference/config/index.html",
        "reference/index.html",
        "how-to/get-the-data/index.html",
    ):
        assert measured[page].code_cells > 10, page
    problems = [line for report in reports for line in report.problems()]
    assert problems == []


@pytest.mark.slow  # headless Chromium
def test_the_check_sees_a_broken_code_span_and_an_escape(chromium, tmp_path) -> None:
    page = tmp_path / "index.html"
    page.write_text(
        "<html><body><table><tr><td style='width: 60px'><code>keep_unchanged_and_more</code>"
        "<code style='word-break: break-all'>drop_examples_and_more</code>"
        "<code class='wraps'>a sentence that may wrap at its spaces</code>"
        "<code class='wraps' style='word-break: break-all'>but_not_inside_a_word ever</code>"
        "</td></tr></table>"
        "<p>--config demo\\|paper; scorer: 'Any' = &lt;factory&gt;; DatasetSpec(name: 'str' = 1)</p>"
        "</body></html>",
        encoding="utf-8",
    )
    (report,) = check_docs_site.check_site(tmp_path, chromium=chromium)
    assert report.broken == ["drop_examples_and_more", "but_not_inside_a_word ever"]
    assert set(report.shown) == set(check_docs_site.SOURCE_SYNTAX)
