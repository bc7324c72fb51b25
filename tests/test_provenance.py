"""Provenance has one shape (issue 35): a run directory's manifest and the sidecars of boi
perturb, boi critic FILE and boi finetune build-data (`OUT.manifest.json`) are all
`provenance_record`, written by the library functions, so the Python API records what the CLI
does."""

from __future__ import annotations

import json

import pytest

from benchmarks.common.provenance import (
    MANIFEST_FORMAT,
    output_manifest_path,
    provenance_record,
    write_output_manifest,
)
from benchmarks.common.rundir import MANIFEST, RunDir
from benchmarks.loaders import load_benchmark
from benchmarks.problem import write_problems
from boi.cli import main
from critic.annotate import annotate_file
from critic.similarity import PlausibilityGate
from finetune.build import build_data
from perturb.catalogue import PerturbConfig, run_catalogue, write_catalogue
from tests.critic_helpers import tiny_scorer

SHARED = set(provenance_record({}))
"""The top-level keys every output's provenance carries."""
TRANSFORMS = ("original", "anonymize")


def _read(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _assert_shared(manifest, config_key=None):
    assert set(manifest) >= SHARED, SHARED - set(manifest)
    assert manifest["format_version"] == MANIFEST_FORMAT and manifest["boi_version"]
    assert manifest["versions"]["python"] and "commit" in manifest["git"]
    if config_key is not None:
        assert config_key in manifest["config"]


@pytest.fixture(scope="module")
def dataset(humaneval, tmp_path_factory):
    path = tmp_path_factory.mktemp("provenance") / "five.jsonl"
    write_problems(path, humaneval.problems[:5])
    return path


def test_the_shared_record_and_its_sidecar(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("x")
    out = tmp_path / "out.jsonl"
    written = write_output_manifest(
        out, {"a": 1}, inputs={"data": data, "missing": None, "name": "humaneval"}, record={"n": 2}
    )
    assert written == output_manifest_path(out) == tmp_path / "out.jsonl.manifest.json"
    manifest = _read(written)
    _assert_shared(manifest, "a")
    # Files are hashed; names that are no file (and None) are left out; own fields come last.
    assert list(manifest["inputs"]) == ["data"] and manifest["inputs"]["data"]["sha256"]
    assert list(manifest)[-1] == "n" and manifest["n"] == 2


def test_every_output_shares_the_run_directory_manifest_shape(dataset, tmp_path):
    run = RunDir.claim(tmp_path / "run", {"model": "tiny"}, inputs={"data": dataset})
    keys = {}
    keys["run directory"] = set(_read(run.path / MANIFEST))
    for marker in ("run_config.json", "experiment-manifest.json"):  # finetune train, ablations
        marked = RunDir.claim(tmp_path / marker, {"model": "tiny"}, marker=marker)
        keys[marker] = set(_read(marked.path / marker))

    # boi perturb through the Python API (the library function the command calls) ...
    config = PerturbConfig(transforms=TRANSFORMS)
    result = run_catalogue(load_benchmark(str(dataset)).problems, config)
    api_out = tmp_path / "api.jsonl"
    manifest_path = write_catalogue(result, api_out, config, inputs={"dataset": dataset})
    assert manifest_path == tmp_path / "api.jsonl.manifest.json" and api_out.is_file()
    perturbed = _read(manifest_path)
    _assert_shared(perturbed, "transforms")
    # recorded portably: a file outside the working directory by its name (issue 44, item 6)
    assert perturbed["inputs"]["dataset"]["path"] == dataset.name and perturbed["summary"]
    keys["perturb (API)"] = set(perturbed)
    # ... and through the CLI: the same shape, no `.meta.json` any more.
    cli_out = tmp_path / "cli.jsonl"
    argv = ["perturb", str(dataset), "--transforms", *TRANSFORMS, "--out", str(cli_out)]
    assert main(argv) == 0
    assert not (tmp_path / "cli.jsonl.meta.json").exists()
    from_cli = _read(tmp_path / "cli.jsonl.manifest.json")
    assert (
        from_cli["config"] == perturbed["config"]
        and from_cli["config_hash"] == (perturbed["config_hash"])
    )
    keys["perturb (CLI)"] = set(from_cli)

    # boi critic FILE through annotate_file, the function the command calls.
    scored = tmp_path / "scored.jsonl"
    annotate_file(api_out, scored, tiny_scorer(), PlausibilityGate(), log=lambda _: None)
    critic = _read(tmp_path / "scored.jsonl.manifest.json")
    _assert_shared(critic, "scorer")
    assert critic["inputs"]["input"]["path"] == api_out.name and critic["stats"]["scored"] == 10
    keys["critic"] = set(critic)

    # boi finetune build-data.
    examples = tmp_path / "train.jsonl"
    build_data([str(dataset)], flavour="NA", out=str(examples), eval_benchmark=None)
    built = _read(tmp_path / "train.jsonl.manifest.json")
    _assert_shared(built, "flavour")
    assert built["inputs"][str(dataset)]["sha256"] and built["counts"]
    keys["finetune build"] = set(built)

    for where, present in keys.items():
        assert present >= SHARED, (where, SHARED - present)
