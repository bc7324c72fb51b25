"""What ReCode's families need from the house: several seeds of a stochastic transformation,
drops measured against a baseline other than the original, and a dataset of variants made
elsewhere taken as it is by `boi run`."""

from __future__ import annotations

import json
import random

import pytest

from benchmarks.common.errors import UserError
from benchmarks.problem import Block, Problem
from benchmarks.report import summarize_results
from boi.cli import main
from boi.runner import RunConfig, run_hash, run_identity
from perturb.blocks import split_blocks
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.transforms import (
    FAMILIES,
    TRANSFORMS,
    NotApplicable,
    Variant,
    Variants,
    transform,
    transform_baselines,
    transforms_of_family,
    unregister,
)

PROBLEM = Problem(
    "T/0",
    "tiny",
    'def add_one(x: int) -> int:\n    """Return x plus one.\n    >>> add_one(1)\n    2\n    """\n',
    "add_one",
    test="def check(candidate):\n    assert candidate(1) == 2\n",
    canonical_solution="    return x + 1\n",
)


@pytest.fixture
def registered():
    """A stochastic transformation and one measured against another baseline, for one test."""

    @transform("test_noise", "1", family="docstring", recode="TestNoise")
    def noise(problem: Problem, keywords: object, *, rng: random.Random) -> Variants:
        """Prefix the prompt with a random comment."""
        line = f"# {rng.randrange(10**9)}\n"
        blocks = (Block("prefix", line), *(problem.blocks or ()))
        return [Variant(problem.replace(prompt=line + problem.prompt, blocks=blocks), {})]

    @transform("test_base", "1")
    def base(problem: Problem, keywords: object) -> Variants:
        """A baseline variant: the prompt with a blank line before it."""
        blocks = (Block("prefix", "\n"), *(problem.blocks or ()))
        return [Variant(problem.replace(prompt="\n" + problem.prompt, blocks=blocks), {})]

    @transform("test_on_base", "1", baseline="test_base")
    def on_base(problem: Problem, keywords: object) -> Variants:
        """Measured against test_base."""
        return (
            NotApplicable("never applies") if problem.task_id == "none" else [Variant(problem, {})]
        )

    yield
    for name in ("test_noise", "test_base", "test_on_base"):
        unregister(name)


def test_registry_knows_each_transformations_family_recode_name_and_baseline(registered):
    factory = TRANSFORMS["test_noise"]
    assert (factory.family, factory.recode_name, factory.stochastic) == (
        "docstring",
        "TestNoise",
        True,
    )
    assert not TRANSFORMS["anonymize"].stochastic and TRANSFORMS["anonymize"].family == "blocks"
    assert "test_noise" in transforms_of_family("docstring")
    assert transform_baselines()["test_on_base"] == "test_base"
    assert set(FAMILIES) >= {"blocks", "docstring", "function_name", "syntax", "format"}
    with pytest.raises(UserError, match="Unknown family 'doc'"):
        transforms_of_family("doc")
    with pytest.raises(ValueError, match="family"):
        transform("bad", "1", family="nope")


def test_random_seeds_make_one_tagged_variant_per_seed_of_stochastic_transformations(registered):
    config = PerturbConfig(transforms=("original", "test_noise", "test_base"), random_seeds=3)
    variants = run_catalogue([PROBLEM], config).variants
    ids = [v.task_id for v in variants]
    assert ids == [
        "T/0",
        "T/0::test_noise@s0",
        "T/0::test_noise@s1",
        "T/0::test_noise@s2",
        "T/0::test_base",
    ]
    noisy = [v for v in variants if v.transform == "test_noise"]
    assert [v.lineage[-1].seed for v in noisy] == [0, 1, 2]
    assert len({v.prompt for v in noisy}) == 3  # each seed draws its own
    # Same seeds, same variants; one seed keeps the untagged id of earlier runs.
    assert run_catalogue([PROBLEM], config).variants == variants
    single = run_catalogue([PROBLEM], PerturbConfig(transforms=("test_noise",))).variants
    assert [v.task_id for v in single] == ["T/0::test_noise"]
    assert single[0].prompt == noisy[0].prompt
    with pytest.raises(UserError, match="random_seeds 0 is below 1"):
        PerturbConfig(random_seeds=0)


def _rows(outcomes: dict[str, list[bool]]) -> list[dict[str, object]]:
    return [
        {
            "dataset": "tiny",
            "model": "m",
            "setting": "s",
            "task_id": task_id,
            "source_task_id": task_id.split("::")[0],
            "transform": task_id.split("::")[1] if "::" in task_id else "original",
            "sample_index": index,
            "completion": "",
            "passed": passed,
        }
        for task_id, passes in outcomes.items()
        for index, passed in enumerate(passes)
    ]


def test_drops_are_measured_against_the_declared_baseline(registered):
    sources = [PROBLEM.replace(task_id=f"T/{i}", source_task_id=f"T/{i}") for i in range(2)]
    problems = {}
    for source in sources:
        problems[source.task_id] = source
        for name in ("test_base", "test_on_base"):
            problems[f"{source.task_id}::{name}"] = TRANSFORMS[name]()(split_blocks(source))[0]
    # Original solves both; the baseline solves one; the variant solves the same one.
    outcomes = {
        "T/0": [True, True],
        "T/1": [True, True],
        "T/0::test_base": [True, True],
        "T/1::test_base": [False, False],
        "T/0::test_on_base": [True, True],
        "T/1::test_on_base": [False, False],
    }
    table = summarize_results(
        _rows(outcomes), problems, {"s": [1]}, bootstrap=0, baselines=transform_baselines()
    )
    rows = {row["transform"]: row for row in table["rows"]}
    on_base = rows["test_on_base"]
    assert on_base["label"] == "test_on_base (vs test_base)"
    assert on_base["cells"][0]["original_same_problems"] == 0.5  # the baseline's pass@1
    assert on_base["cells"][0]["relative_drop"] == 0.0
    assert rows["test_base"]["cells"][0]["relative_drop"] == 0.5  # against the original
    assert table["flips"][0]["transforms"]["test_on_base"]["lost"] == []
    # Without the baseline's samples the table refuses instead of comparing with the original.
    missing = {k: v for k, v in outcomes.items() if "test_base" not in k}
    with pytest.raises(UserError, match="test_on_base is measured against test_base"):
        summarize_results(
            _rows(missing), problems, {"s": [1]}, bootstrap=0, baselines=transform_baselines()
        )


def test_random_seeds_enter_the_run_identity_only_when_set():
    plain = RunConfig()
    assert "random_seeds" not in run_identity(plain)  # old run directories keep their hash
    seeded = RunConfig(perturb=PerturbConfig(random_seeds=10))
    assert run_identity(seeded)["random_seeds"] == 10
    assert run_hash(plain) != run_hash(seeded)


def test_boi_run_takes_a_dataset_of_variants_as_it_is(tmp_path, capsys):
    """Variants written by `boi perturb` (or read from ReCode's files) carry their lineage:
    `boi run` generates them without perturbing again, and measures drops against their
    originals."""
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps(PROBLEM.to_json()) + "\n")
    variants = tmp_path / "variants.jsonl"
    argv = ["perturb", str(source), "--transforms", "original", "anonymize"]
    assert main([*argv, "--out", str(variants)]) == 0
    written = [json.loads(line) for line in variants.read_text().splitlines()]
    assert [w["task_id"] for w in written] == ["T/0", "T/0::anonymize"]
    out = tmp_path / "run"
    run = ["run", "--model", "reference", "--dataset", str(variants), "--out", str(out)]
    assert main([*run, "--seeds", "0", "--no-name-only-probe"]) == 0
    printed = capsys.readouterr().out
    assert "2 variants as given (not perturbed again); original 1, anonymize 1" in printed
    problems = [json.loads(line) for line in (out / "problems.jsonl").read_text().splitlines()]
    assert [p["task_id"] for p in problems] == ["T/0", "T/0::anonymize"]
    assert problems[1]["lineage"] == written[1]["lineage"]
    table = json.loads((out / "report" / "table.json").read_text())
    assert {row["transform"] for row in table["rows"]} == {"original", "anonymize"}
    assert all(cell["pass_at_k"] == 1.0 for row in table["rows"] for cell in row["cells"])


def test_a_dataset_of_variants_without_originals_is_one_sentence(tmp_path, capsys):
    variant = TRANSFORMS["anonymize"]()(split_blocks(PROBLEM))[0]
    path = tmp_path / "only_variants.jsonl"
    path.write_text(json.dumps(variant.to_json()) + "\n")
    argv = ["run", "--model", "reference", "--dataset", str(path), "--out", str(tmp_path / "r")]
    assert main([*argv, "--seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert "holds variants but no original problems" in err
    assert "Traceback" not in err


def test_the_recode_config_holds_every_recode_transformation():
    """The bundled `recode` config is ReCode's whole catalogue: when a family gains a
    transformation, the config must list it too."""
    from boi.runner import load_run_config, resolve_config_path

    config = load_run_config(resolve_config_path("recode"), {})
    recode = {
        name
        for family in ("docstring", "function_name", "syntax", "format")
        for name in transforms_of_family(family)
        if name != "partial_code"
    }
    assert recode <= set(config.perturb.transforms)
    assert {"original", "partial_code"} <= set(config.perturb.transforms)
    assert all(TRANSFORMS[name].recode_name for name in recode)
    assert config.perturb.random_seeds >= 2


def test_the_recode_catalogue_runs_to_a_report_with_baselines_and_ranking(tmp_path, capsys):
    """Every ReCode family through `boi run` with each variant's own solution: every row passes,
    the partial-code families are measured against partial_code, and the report ranks them.
    (The paraphrase needs a model; its own tests cover it.)"""
    from benchmarks.common.config import load_yaml
    from boi.runner import BUNDLED_CONFIGS

    config = load_yaml(BUNDLED_CONFIGS / "recode.yaml")
    perturb = config["perturb"]
    perturb["transforms"] = [t for t in perturb["transforms"] if t != "doc_paraphrase"]
    config["models"] = [{"kind": "reference"}]
    config["datasets"] = [{"name": "humaneval", "task_ids": ["HumanEval/13", "HumanEval/53"]}]
    config["critic"] = {"enabled": False}
    config["out_dir"] = str(tmp_path / "run")
    path = tmp_path / "recode.yaml"
    path.write_text(json.dumps(config))
    assert main(["run", "--config", str(path)]) == 0
    table = json.loads((tmp_path / "run" / "report" / "table.json").read_text())
    rows = {row["transform"]: row for row in table["rows"]}
    assert rows["code_for_while"]["label"] == "code_for_while (vs partial_code)"
    assert rows["func_synonym"]["label"] == "func_synonym"
    for row in table["rows"]:
        for cell in row["cells"]:
            assert cell is None or cell["pass_at_k"] == 1.0, row["transform"]
    report = (tmp_path / "run" / "report" / "table.md").read_text()
    assert "## Severity ranking" in report and "format_tab_indent" in report
