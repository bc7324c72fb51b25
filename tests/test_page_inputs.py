"""Issue 48: every input a page uses is shipped (and loads with the code's own loaders), the
Dockerfile the container pages build, and the small ones (each a user's minute lost)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from benchmarks.common.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.mark.parametrize("name", ["hints-demo", "attention-demo", "finetune-toy-compare"])
def test_the_pages_run_configs_are_bundled_and_load(name):
    from boi.runner import load_run_config, resolve_config_path

    config = load_run_config(resolve_config_path(name), {})
    assert config.datasets and config.models and config.settings


def test_the_pages_name_the_bundled_configs_not_unshipped_ones():
    pages = {p: p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md")}
    text = "\n".join(pages.values())
    for gone in ("/tmp/hm-demo", "not shipped", "toy/compare.yaml", "cfg.yaml", "your-registry"):
        assert gone not in text, gone
    assert "--config hints-demo" in pages[DOCS / "how-to/audit-hints.md"]
    assert "--config attention-demo" in pages[DOCS / "how-to/why-did-it-fail.md"]
    tutorial = pages[DOCS / "tutorials/augmented-finetuning.md"]
    assert "--config finetune-toy-compare" in tutorial
    assert "--config finetune/configs/train.yaml" in tutorial


def test_the_launcher_training_config_loads():
    from finetune.config import load_train_config

    config = load_train_config(str(ROOT / "finetune/configs/train.yaml"), {})
    assert config.data == "data/mbpp_NA.jsonl" and config.batch_size == 64


def test_the_dockerfile_parses_and_installs_as_documented():
    dockerfile_parse = pytest.importorskip("dockerfile_parse")
    parser = dockerfile_parse.DockerfileParser(
        fileobj=io.BytesIO((ROOT / "Dockerfile").read_bytes())
    )
    steps = [
        (i["instruction"], i["value"]) for i in parser.structure if i["instruction"] != "COMMENT"
    ]
    assert steps[0][0] == "FROM" and re.match(r"python:3\.1[0-9]", parser.baseimage)
    runs = [value for kind, value in steps if kind == "RUN"]
    # The install is the documented one (make install's script), nothing besides system packages.
    assert [r for r in runs if "install.sh" in r] == ["scripts/install.sh /opt/boi/.venv"]
    assert all(r.startswith("apt-get") for r in runs if "install.sh" not in r)
    assert ("COPY", ". /opt/boi") in steps
    assert "/opt/boi/.venv/bin" in parser.envs["PATH"]
    # The pages build the tag they run.
    for page in ("how-to/container.md", "how-to/scale-out.md"):
        text = (DOCS / page).read_text(encoding="utf-8")
        assert "docker build -t boi:latest ." in text and "boi:latest" in text


def test_extend_page_does_not_send_contributors_to_shared():
    assert "../shared" not in (DOCS / "how-to/extend.md").read_text(encoding="utf-8")
    assert "../shared" not in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def test_keyword_label_notes_name_no_machine_path():
    for path in (ROOT / "tests/data/keyword_labels").glob("*.md"):
        assert "/work/" not in path.read_text(encoding="utf-8"), path


# --------------------------------------------------------------------------- the small ones


def test_perturb_list_aligns_names_and_keeps_whole_descriptions():
    from boi.commands.perturb import catalogue_listing
    from perturb.catalogue import available_transforms
    from perturb.transforms import transform_parameters

    descriptions = available_transforms()
    listing = catalogue_listing(descriptions, transform_parameters, width=100)
    column = max(map(len, descriptions)) + 2
    for line in listing.splitlines():
        assert len(line) <= 100 or " " not in line[column:].strip()
        name = line[:column].strip()
        assert not name or name in descriptions
        assert line[column - 2 : column] == "  "
    # A description that wraps in its docstring is whole, not cut at the first line's end.
    assert descriptions["name_only"].endswith("from the function name alone.")
    assert descriptions["doc_tense_past"].rstrip(".").count("(") == descriptions[
        "doc_tense_past"
    ].count(")")


def test_mbpp_without_a_path_reads_where_data_fetch_put_it(tmp_path, monkeypatch, mbpp_path):
    from benchmarks.loaders import load_benchmark

    target = tmp_path / "data" / "mbpp" / "mbpp.jsonl"
    target.parent.mkdir(parents=True)
    target.write_bytes(mbpp_path.read_bytes())
    monkeypatch.chdir(tmp_path)
    import benchmarks.loaders.mbpp as mbpp

    def no_download():
        raise AssertionError("downloaded instead of reading data/mbpp/mbpp.jsonl")

    monkeypatch.setattr(mbpp, "_download_mbpp", no_download)
    assert len(load_benchmark("mbpp").problems) == 974


def test_a_failed_fetch_names_the_base_url_flag(tmp_path):
    from benchmarks.upstream import fetch

    def unreachable(url, out):
        raise UserError(f"{url} is unreachable (refused); check the internet connection.")

    with pytest.raises(UserError) as caught:
        fetch(["mbpp"], tmp_path, get=unreachable)
    assert "--base-url" in str(caught.value) and str(caught.value).count("\n") == 0


def test_the_missing_classifier_refusal_names_the_data_fetch(tmp_path, monkeypatch):
    from bias.modifier_prompts import classifier

    monkeypatch.setattr(classifier, "default_classifier_dir", lambda: tmp_path / "none")
    with pytest.raises(UserError, match="boi data fetch code_bias_classifier"):
        classifier.load_classifier()


def test_the_flag_value_error_says_what_the_help_says(capsys):
    from boi.cli import main

    with pytest.raises(SystemExit):
        main(["execute", "--k", "1", "10", "problems.jsonl", "samples.jsonl", "--out", "r.jsonl"])
    err = capsys.readouterr().err
    assert "separated by spaces or commas" in err and "positional arguments before it" in err


def test_boi_help_names_bias_test(capsys):
    from boi.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "executable fairness tests (test, experiment)" in out


def _table(tmp_path, values):
    rows = [{"transform": t, "cells": [{"pass_at_k": v}]} for t, v in values.items()]
    table = {"columns": [{"k": 1, "dataset": "d", "model": "m", "setting": "s"}], "rows": rows}
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table))
    return path


def test_the_summary_line_names_no_worst_when_all_tie(tmp_path):
    from boi.runner.report import summary_line

    gen = {"generated": 0, "cache_hits": 0}
    tie = summary_line(
        tmp_path, _table(tmp_path, {"original": 1.0, "drop_one": 0.5, "anonymize": 0.5}), [], gen
    )
    assert "every transformation 50.0" in tie and "worst" not in tie
    two = _table(tmp_path, {"original": 1.0, "drop_one": 0.5, "anonymize": 0.5, "drop_all": 0.75})
    assert "worst drop_one, anonymize 50.0" in summary_line(tmp_path, two, [], gen)


def test_one_run_is_not_runs():
    import inspect

    from benchmarks.report import _html

    assert "{len(runs)} runs (" not in inspect.getsource(_html)
