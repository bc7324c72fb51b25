"""A transformation registered here, with its own parameter, joins everything with no other edit:
the golden test, `boi perturb` (its --list, --transforms and --param) and `boi run`."""

import json
import random

import pytest

from benchmarks.common.errors import UserError
from benchmarks.problem import Block, Problem
from boi.cli import main
from perturb.blocks import split_blocks
from perturb.catalogue import PerturbConfig, parse_param_overrides, run_catalogue
from perturb.transforms import (
    CATALOGUE,
    TRANSFORMS,
    NotApplicable,
    Variant,
    Variants,
    bind_transforms,
    get_transform,
    register_chain,
    transform,
    transform_labels,
    transform_rng,
    unregister,
)
from tests.golden_transforms import INPUTS, expected_output, golden_output

NOTE = "Mind the edge cases."


@transform("add_note", "1")
def add_note(problem: Problem, keywords: object, *, note: str = NOTE) -> Variants:
    """Put a comment line `# note` above the prompt (a transformation the tests register)."""
    if "\n" in note:
        return NotApplicable("the note must fit on one line")
    line = f"# {note}\n"
    blocks = list(problem.blocks)
    if blocks[0].kind == "prefix":
        blocks[0] = Block("prefix", line + blocks[0].text)
    else:
        blocks.insert(0, Block("prefix", line))
    noted = problem.replace(prompt="".join(b.text for b in blocks), blocks=tuple(blocks))
    return [Variant(noted, {"added": [{"block": "prefix", "text": line}]})]


ONE_PROBLEM = {
    "task_id": "T/0",
    "prompt": 'def add_one(x: int) -> int:\n    """Return x plus one.\n    >>> add_one(1)\n    2\n    """\n',
    "entry_point": "add_one",
    "test": "def check(candidate):\n    assert candidate(1) == 2\n",
    "canonical_solution": "    return x + 1\n",
}


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_registered_and_matches_its_golden_file():
    """`python -m tests.golden_transforms` wrote tests/golden/transforms/add_note.json too."""
    assert TRANSFORMS["add_note"].parameters == {"note": NOTE}
    assert json.loads(json.dumps(golden_output("add_note"))) == expected_output("add_note")


def test_parameter_reaches_the_variant_and_its_lineage():
    problem = split_blocks(INPUTS[0])
    (variant,) = get_transform("add_note", note="Be brief.")(problem)
    assert variant.prompt.startswith("# Be brief.\n") and variant.task_id == "G/humaneval::add_note"
    assert variant.lineage[-1].params == {"note": "Be brief."}
    assert isinstance(get_transform("add_note", note="a\nb")(problem), NotApplicable)


def test_parameters_are_checked_with_suggestions():
    with pytest.raises(UserError, match="did you mean 'note'"):
        PerturbConfig(transforms=("add_note",), params={"add_note": {"nte": "x"}})
    with pytest.raises(UserError, match="did you mean 'add_note'"):
        PerturbConfig(transforms=("add_note",), params={"add_nte": {"note": "x"}})
    with pytest.raises(UserError, match="parameter note must be str"):
        get_transform("add_note", note=["a"])
    assert get_transform("add_note", note=7).params == {"note": "7"}  # YAML read a name as a number


def test_anonymous_name_is_a_shorthand_that_params_override():
    names = ("anonymize", "anon_drop_one", "add_note")
    bound = PerturbConfig(names, anonymous_name="XYZ").bound()
    assert [t.params for t in bound] == [{"name": "XYZ"}, {"name": "XYZ"}, {"note": NOTE}]
    config = PerturbConfig(names, anonymous_name="XYZ", params={"anonymize": {"name": "action"}})
    assert [t.params.get("name") for t in config.bound()] == ["action", "XYZ", None]


def test_param_flags_parse_as_yaml():
    assert parse_param_overrides(["add_note.note=Think twice.", "anonymize.name=XYZ"]) == {
        "add_note": {"note": "Think twice."},
        "anonymize": {"name": "XYZ"},
    }
    assert parse_param_overrides(["x.n=3", "x.f=0.5", "x.b=true", "x.s="]) == {
        "x": {"n": 3, "f": 0.5, "b": True, "s": ""}
    }
    with pytest.raises(UserError, match=r"TRANSFORM\.PARAM=VALUE"):
        parse_param_overrides(["add_note=3"])


def test_boi_perturb_picks_it_up(tmp_path, capsys):
    source, out = tmp_path / "one.jsonl", tmp_path / "out.jsonl"
    source.write_text(json.dumps(ONE_PROBLEM) + "\n")
    assert main(["perturb", "x", "--list"]) == 0
    # The listing wraps its descriptions under the name column: read it back as words.
    listing = " ".join(capsys.readouterr().out.split())
    assert (
        f"add_note Put a comment line `# note` above the prompt (a transformation the tests "
        f"register). [note='{NOTE}']"
    ) in listing
    argv = ["perturb", str(source), "--transforms", "original", "add_note", "anonymize"]
    argv += ["--param", "add_note.note=Think twice.", "--param", "anonymize.name=XYZ"]
    assert main([*argv, "--out", str(out)]) == 0
    rows = {r["task_id"]: r for r in read_jsonl(out)}
    assert rows["T/0::add_note"]["prompt"].startswith("# Think twice.\ndef add_one")
    assert rows["T/0::add_note"]["lineage"][0]["params"] == {"note": "Think twice."}
    assert rows["T/0::anonymize"]["entry_point"] == "XYZ"
    meta = json.loads((tmp_path / "out.jsonl.manifest.json").read_text())
    assert meta["config"]["params"]["add_note"] == {"note": "Think twice."}
    assert main([*argv, "--param", "add_note.nte=1", "--out", str(out)]) == 2
    assert "did you mean 'note'" in capsys.readouterr().err


def test_boi_run_picks_it_up(tmp_path):
    from boi.runner import load_run_config, run_robustness
    from tests.generation_helpers import tiny_run_config

    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps(ONE_PROBLEM) + "\n")
    config = tiny_run_config(
        tmp_path,
        datasets=[{"name": str(source)}],
        transforms=["original", "add_note"],
        transform_params={"add_note": {"note": "Think twice."}},
    )
    outcome = run_robustness(config, log=lambda m: None)
    problems = {p["task_id"]: p for p in read_jsonl(outcome.out_dir / "problems.jsonl")}
    assert set(problems) == {"T/0", "T/0::add_note"}
    assert problems["T/0::add_note"]["lineage"][0]["params"] == {"note": "Think twice."}
    assert "| add_note" in outcome.table_markdown
    with pytest.raises(UserError, match="did you mean 'note'"):
        load_run_config(None, {"transform_params": {"add_note": {"nte": "x"}}})


def test_a_transformation_that_asks_for_randomness_gets_its_own_generator():
    @transform("test_draw", "1")
    def draw(problem, keywords, *, rng: random.Random, scale: float = 1.0):
        """Record one draw."""
        return [Variant(problem, {"draw": rng.random() * scale})]

    try:
        assert TRANSFORMS["test_draw"].parameters == {"scale": 1.0}  # rng is not a parameter
        problem = split_blocks(INPUTS[0])
        (variant,) = get_transform("test_draw", scale=2)(problem, seed=5)
        expected = transform_rng(5, problem.task_id, "test_draw").random() * 2
        assert variant.lineage[-1].changes["draw"] == expected
        (again,) = get_transform("test_draw", scale=2)(problem, seed=6)
        assert again.lineage[-1].changes["draw"] != expected
    finally:
        unregister("test_draw")


def test_chains_compose_registered_transformations():
    register_chain("test_note_anon", "add_note", "anonymize")
    try:
        factory = TRANSFORMS["test_note_anon"]
        assert factory.parameters == {"note": NOTE, "name": "func"}
        assert factory.steps == ("add_note", "anonymize") and not factory.multi_variant
        problem = split_blocks(INPUTS[0])
        (variant,) = get_transform("test_note_anon", note="Hi.", name="f")(problem)
        assert variant.prompt.startswith("# Hi.\n") and variant.entry_point == "f"
        (step,) = variant.lineage
        assert step.transform == "test_note_anon" and step.params == {"note": "Hi.", "name": "f"}
        assert set(step.changes) == {"added", "old_name", "new_name", "renamed_in"}
        stdio = split_blocks(next(p for p in INPUTS if p.is_stdio))
        assert get_transform("test_note_anon")(stdio) == NotApplicable(
            "stdin/stdout problems have no function name"
        )
    finally:
        unregister("test_note_anon")
    with pytest.raises(ValueError, match="only the first step may need keywords"):
        register_chain("test_bad", "anonymize", "drop_one")
    with pytest.raises(ValueError, match="share the parameter 'name'"):
        register_chain("test_bad", "anonymize", "anon_drop_examples")
    with pytest.raises(ValueError, match="did you mean 'anonymize'"):
        register_chain("test_bad", "anonymise", "drop_one")
    assert "test_bad" not in TRANSFORMS


def test_builtin_chains_and_multi_variant_flags():
    assert {n: TRANSFORMS[n].steps for n in CATALOGUE if TRANSFORMS[n].steps} == {
        "anon_drop_one": ("drop_one", "anonymize"),
        "anon_drop_all": ("drop_all", "anonymize"),
        "anon_drop_examples": ("drop_examples", "anonymize"),
    }
    assert {n for n in CATALOGUE if TRANSFORMS[n].multi_variant} == {"drop_one", "anon_drop_one"}
    assert [t.name for t in bind_transforms(["drop_one"], {"anonymize": {"name": "f"}})] == [
        "drop_one"
    ]
    with pytest.raises(UserError, match="name one transformation twice"):
        bind_transforms(["drop_one", "drop_one"])


def test_report_labels_are_the_papers_table_3_rows():
    assert transform_labels() == {
        "original": "Original",
        "drop_one": "Drop One",
        "drop_all": "Drop All",
        "drop_examples": "Drop Ex",
        "drop_constraints": "Drop Constraints",
        "drop_requirements": "Drop Requirements",
        "anonymize": "Anon",
        "anon_drop_one": "Anon+Drop One",
        "anon_drop_all": "Anon+Drop All",
        "anon_drop_examples": "Anon+Drop Ex",
        "name_only": "Name only",
    }  # add_note has no label: reports name its row add_note


def test_run_catalogue_with_a_chain_and_unchanged_problems():
    """keep_unchanged (the default) gives every transformation a variant of every problem."""
    config = PerturbConfig(transforms=("add_note", "anon_drop_examples"))
    result = run_catalogue(INPUTS, config)
    ids = [v.task_id for v in result.variants]
    assert ids == [
        "G/humaneval::add_note",
        "G/humaneval::anon_drop_examples",
        "G/no_examples::add_note",
        "G/no_examples::anon_drop_examples",
        "G/partial::add_note",
        "G/partial::anon_drop_examples",
        "G/stdio::add_note",
        "G/stdio::anon_drop_examples",
    ]
    unchanged = result.variants[3]
    assert unchanged.lineage[-1].changes == {"unchanged": "the problem has no examples"}
    off = run_catalogue(INPUTS, PerturbConfig(config.transforms, keep_unchanged=False))
    assert len(off.variants) == 6 and len(off.not_applied) == 2
