"""The version a user sees (`boi --version`, a manifest), the one a citation gives and the
changelog's say the same thing: a `.devN` build between releases, a dated release otherwise."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

import boi

ROOT = Path(__file__).resolve().parents[1]


def _citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_the_citation_gives_the_installed_version() -> None:
    assert str(_citation()["version"]) == boi.__version__


def test_the_version_says_whether_it_is_a_release() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    citation = _citation()
    release = re.fullmatch(r"\d+\.\d+\.\d+", boi.__version__)
    if release is None:
        # Between releases: a development version, nothing dated, the changelog's top
        # section still Unreleased.
        assert re.fullmatch(r"\d+\.\d+\.\d+\.dev\d+", boi.__version__), boi.__version__
        assert "date-released" not in citation
        top = re.search(r"^## \[(.+?)\]", changelog, re.M)
        assert top and top.group(1) == "Unreleased", "CHANGELOG.md's top section is not Unreleased"
    else:
        heading = re.search(
            rf"^## \[{re.escape(boi.__version__)}\] - (\d{{4}}-\d{{2}}-\d{{2}})$", changelog, re.M
        )
        assert heading, f"CHANGELOG.md has no dated heading for {boi.__version__}"
        assert str(citation.get("date-released")) == heading.group(1)


def test_the_readme_gives_bibtex_for_boi_with_the_version() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    entry = re.search(r"```bibtex\n(@software\{.*?\})\n```", readme, re.S)
    assert entry, "README.md has no BibTeX entry for boi"
    assert f"version = {{{boi.__version__}}}" in entry.group(1)
