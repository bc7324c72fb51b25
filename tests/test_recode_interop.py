"""ReCode's file layout both ways (perturb.recode.interop, benchmarks.loaders.recode): our variants
written for ReCode's scripts and read back with their lineage, ReCode's own released HumanEval
read as variants of our transformations and scored by boi execute + boi report against their
baselines, bad input in one sentence, and `boi perturb --format recode`."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.common.errors import UserError
from benchmarks.loaders import load_benchmark
from benchmarks.loaders.recode import SPLIT_MARKER, mark_split
from benchmarks.problem import Block, Problem, write_problems
from boi.cli import main
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.recode import RECODE_GROUPS, recode_names
from perturb.recode.interop import (
    RELEASE_VERSION,
    read_recode,
    read_recode_release,
    recode_dataset_name,
    write_recode,
)
from perturb.transforms import TRANSFORMS, NotApplicable, Variant, Variants, transform, unregister

# ReCode's released HumanEval cut to three tasks, every family's folder and every seed's file
# kept (tests/data/recode/SOURCE.md).
RELEASE = Path(__file__).parent / "data" / "recode" / "release-humaneval-0-1-3.tar.gz"
RELEASE_TASKS = ("HumanEval/0", "HumanEval/1", "HumanEval/3")
NOMINAL_PARTIAL = Path(__file__).parent / "data" / "recode" / "humaneval_partial.jsonl.gz"
HUMANEVAL_FIELDS = ["task_id", "prompt", "entry_point", "canonical_solution", "test"]


def problem(task_id: str, name: str, doc: str, body: str, check: str) -> Problem:
    return Problem(
        task_id,
        "tiny",
        f'def {name}(x: int) -> int:\n    """{doc}\n    >>> {name}(2)\n    {check.split()[-1]}\n    """\n',
        name,
        test=f"def check(candidate):\n    assert candidate(2) == {check.split()[-1]}\n",
        canonical_solution=body,
    )


SOURCES = [
    problem(
        "T/0", "add_one", "Return x plus one.", "    y = x + 1\n    z = y\n    return z\n", "3"
    ),
    problem("T/1", "double", "Return twice the number.", "    return x * 2\n", "4"),
    problem(
        "T/2",
        "square",
        "Return the number times itself.",
        "    total = 0\n    for _ in range(x):\n        total += x\n    return total\n",
        "4",
    ),
]


def _partial_stand_in(problem: Problem, keywords: object) -> Variants:
    """The prompt plus the first half of the solution's lines (the rest is the solution)."""
    lines = (problem.canonical_solution or "").splitlines(keepends=True)
    if len(lines) < 2:
        return NotApplicable("the solution has one line")
    head, tail = "".join(lines[: len(lines) // 2]), "".join(lines[len(lines) // 2 :])
    partial = problem.replace(prompt=problem.prompt + head, canonical_solution=tail, blocks=None)
    return [Variant(partial, {"split_after_line": len(lines) // 2})]


def _case_swap(problem: Problem, keywords: object, *, rng: random.Random) -> Variants:
    """Swap the case of one random letter of the description (a stochastic docstring stand-in)."""
    description = problem.block("description")
    letters = [i for i, c in enumerate(description.text if description else "") if c.isalpha()]
    if description is None or not letters:
        return NotApplicable("no description")
    at = rng.choice(letters)
    text = description.text[:at] + description.text[at].swapcase() + description.text[at + 1 :]
    blocks = tuple(Block(b.kind, text) if b is description else b for b in problem.blocks or ())
    return [
        Variant(problem.replace(prompt="".join(b.text for b in blocks), blocks=blocks), {"at": at})
    ]


def _blank_line_after_partial(problem: Problem, keywords: object) -> Variants:
    """A blank line after the partial code (a deterministic partial-code stand-in)."""
    outcome = TRANSFORMS["partial_code"]().variants(problem)
    if isinstance(outcome, NotApplicable):
        return outcome
    partial = outcome[0].problem
    return [Variant(partial.replace(prompt=partial.prompt + "\n"), {"added": "\n"})]


def _two_comments(problem: Problem, keywords: object) -> Variants:
    """Two variants: a comment line `# a` or `# b` above the prompt (a multi-variant stand-in)."""
    return [
        Variant(problem.replace(prompt=f"# {c}\n" + problem.prompt, blocks=None), {"added": c})
        for c in "ab"
    ]


@pytest.fixture(scope="module")
def stand_ins():
    """Transformations with ReCode names registered for these tests, and `partial_code` where
    the ReCode families do not provide it yet; everything restored afterwards."""
    before = dict(TRANSFORMS)
    if "partial_code" not in TRANSFORMS:
        transform("partial_code", "test", family="syntax")(_partial_stand_in)
    transform("test_case_swap", "1", family="docstring", recode="TestCaseSwap")(_case_swap)
    transform(
        "test_blank_line", "1", family="format", recode="test_blank", baseline="partial_code"
    )(_blank_line_after_partial)
    transform("test_two_comments", "1", multi_variant=True)(_two_comments)
    yield
    for name in set(TRANSFORMS) - set(before):
        unregister(name)


TRANSFORMS_WRITTEN = ("original", "partial_code", "test_case_swap", "test_blank_line", "anonymize")


def catalogue(random_seeds: int, extra: tuple[str, ...] = ()) -> list[Problem]:
    config = PerturbConfig(TRANSFORMS_WRITTEN + extra, random_seeds=random_seeds)
    return run_catalogue(SOURCES, config).variants


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_write_names_files_as_recode_and_fills_its_fields(tmp_path, stand_ins):
    variants = catalogue(3, extra=("test_two_comments",))
    written = write_recode(variants, tmp_path, "tiny")
    full = "perturbed_finalized/tiny/full"
    assert sorted(written.files) == sorted(
        [
            "nominal/tiny.jsonl",
            "nominal/tiny_partial.jsonl",
            *(f"{full}/nlaugmenter/tiny_TestCaseSwap_s{k}.jsonl" for k in range(3)),
            f"{full}/format/tiny_test_blank_s0.jsonl",  # deterministic: s0 only
            f"{full}/blocks/tiny_anonymize_s0.jsonl",  # ours, no ReCode name: under our name
        ]
    )
    assert set(written.files.values()) == {3}  # one record per source task in every file
    assert [(n.subject, "several variants" in n.reason) for n in written.notes] == [
        ("test_two_comments", True)
    ]

    nominal = read_jsonl(tmp_path / "nominal/tiny.jsonl")
    assert [list(r) for r in nominal] == [HUMANEVAL_FIELDS] * 3
    assert nominal[0] == {k: SOURCES[0].to_json()[k] for k in HUMANEVAL_FIELDS}

    partial = {r["task_id"]: r for r in read_jsonl(tmp_path / "nominal/tiny_partial.jsonl")}
    assert list(partial["T/0"]) == [*HUMANEVAL_FIELDS, "partial"]
    by_id = {v.task_id: v for v in variants}
    ours = by_id["T/0::partial_code"]
    # ReCode's `partial`: the unperturbed code, split by a marker line where the prompt ends.
    assert partial["T/0"]["partial"] == mark_split(ours.prompt, ours.canonical_solution)
    assert partial["T/0"]["partial"].replace(f"    {SPLIT_MARKER}\n", "") == (
        SOURCES[0].prompt + SOURCES[0].canonical_solution
    )
    assert partial["T/1"]["partial"] is None  # one-line body: not split, as in ReCode

    for k in range(3):
        swapped = read_jsonl(tmp_path / f"{full}/nlaugmenter/tiny_TestCaseSwap_s{k}.jsonl")
        assert [list(r) for r in swapped] == [[*HUMANEVAL_FIELDS, "seed", "perturbed"]] * 3
        assert [r["task_id"] for r in swapped] == ["T/0", "T/1", "T/2"]  # the original ids
        assert {r["seed"] for r in swapped} == {k} and all(r["perturbed"] for r in swapped)
        assert swapped[0]["prompt"] == by_id[f"T/0::test_case_swap@s{k}"].prompt
    blank = read_jsonl(tmp_path / f"{full}/format/tiny_test_blank_s0.jsonl")
    assert [list(r) for r in blank] == [[*HUMANEVAL_FIELDS, "partial"]] * 3
    assert [r["partial"] for r in blank] == [partial[t]["partial"] for t in ("T/0", "T/1", "T/2")]


def test_write_then_read_gives_back_the_variants_with_lineage(tmp_path, stand_ins):
    variants = catalogue(3)
    write_recode(variants, tmp_path, "humaneval")
    read = {p.task_id: p for p in read_recode(tmp_path)}
    assert set(read) == {v.task_id for v in variants}  # the same ids, @sK tags included
    for variant in variants:
        back = read[variant.task_id]
        for field in ("prompt", "entry_point", "test", "canonical_solution", "source_task_id"):
            assert getattr(back, field) == getattr(variant, field), (variant.task_id, field)
        assert back.transform == variant.transform
        if variant.transform == "original":
            assert back.lineage == ()
            continue
        (step,) = back.lineage
        assert step.version == RELEASE_VERSION and step.params == {}
        assert step.changes["file"].startswith(("nominal/", "perturbed_finalized/humaneval/full/"))
        seed = int(variant.task_id.rpartition("@s")[2]) if "@s" in variant.task_id else 0
        assert step.seed == (None if variant.transform == "partial_code" else seed)
    # The dataset recode_humaneval reads the same folder the same way.
    loaded = load_benchmark("recode_humaneval", tmp_path)
    assert [p.to_json() for p in loaded.problems] == [p.to_json() for p in read.values()]
    assert loaded.issues == [] and {p.benchmark for p in loaded.problems} == {"recode_humaneval"}


def test_rewriting_removes_only_the_files_an_earlier_write_made(tmp_path, stand_ins):
    write_recode(catalogue(3), tmp_path, "tiny")
    foreign = tmp_path / "perturbed_finalized/tiny/full/nlaugmenter/notes.txt"
    foreign.write_text("mine")
    written = write_recode(catalogue(1), tmp_path, "tiny")
    swaps = sorted(p.name for p in tmp_path.rglob("tiny_TestCaseSwap_s*.jsonl"))
    assert swaps == ["tiny_TestCaseSwap_s0.jsonl"] and foreign.read_text() == "mine"
    assert {p.task_id for p in read_recode(tmp_path, "tiny")} == {v.task_id for v in catalogue(1)}
    assert len(written.files) == 5


def test_missing_partial_code_is_a_note_not_a_crash(tmp_path, stand_ins):
    variants = [v for v in catalogue(1) if v.transform != "partial_code"]
    written = write_recode(variants, tmp_path, "tiny")
    assert "nominal/tiny_partial.jsonl" not in written.files
    assert [n.subject for n in written.notes] == ["test_blank_line"]
    assert "add partial_code" in written.notes[0].reason


def test_unregistered_recode_names_are_left_out_with_a_note(tmp_path, stand_ins):
    write_recode(catalogue(1), tmp_path, "tiny")
    stranger = tmp_path / "perturbed_finalized/tiny/full/natgen/tiny_NoSuchPerturbation_s0.jsonl"
    stranger.parent.mkdir(parents=True)
    shutil.copy(tmp_path / "nominal/tiny.jsonl", stranger)
    logged: list[str] = []
    problems = read_recode(tmp_path, "tiny", log=logged.append)
    assert len(problems) == len(catalogue(1))
    assert len(logged) == 1 and logged[0].startswith("NoSuchPerturbation: no registered")
    assert "natgen/tiny_NoSuchPerturbation_s0.jsonl" in logged[0]
    with pytest.warns(UserWarning, match="NoSuchPerturbation"):
        read_recode(tmp_path, "tiny")


@pytest.fixture
def small_release(tmp_path, stand_ins) -> Path:
    write_recode(catalogue(1), tmp_path, "tiny")
    return tmp_path


def test_bad_input_is_one_sentence_naming_the_file_and_line(small_release, tmp_path_factory):
    empty = tmp_path_factory.mktemp("empty")
    with pytest.raises(UserError, match=r"holds no ReCode files for humaneval: .*dataset-release"):
        read_recode(empty)
    with pytest.raises(UserError, match="is not a folder"):
        read_recode(small_release / "nominal/tiny.jsonl", "tiny")
    with pytest.raises(UserError, match="pass --data"):
        load_benchmark("recode_humaneval")

    blank = next(small_release.rglob("tiny_test_blank_s0.jsonl"))
    records = read_jsonl(blank)
    blank.write_text(json.dumps({**records[0], "task_id": "Elsewhere/7"}) + "\n")
    with pytest.raises(
        UserError,
        match=r"tiny_test_blank_s0.jsonl line 1: task_id 'Elsewhere/7' matches no problem of .*nominal/tiny.jsonl",
    ):
        read_recode(small_release, "tiny")
    blank.write_text(json.dumps(records[0]) + "\n{not json\n")
    with pytest.raises(UserError, match=r"tiny_test_blank_s0.jsonl line 2 is not valid JSON"):
        read_recode(small_release, "tiny")
    del records[1]["prompt"]
    blank.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(
        UserError, match=r"tiny_test_blank_s0.jsonl line 2: the ReCode record has no 'prompt'"
    ):
        read_recode(small_release, "tiny")
    blank.write_text(json.dumps(records[0]) + "\n" + json.dumps(records[0]) + "\n")
    with pytest.raises(UserError, match=r"line 2: task_id 'T/0' already appeared on line 1"):
        read_recode(small_release, "tiny")

    (small_release / "nominal/tiny.jsonl").unlink()
    with pytest.raises(
        UserError, match="holds ReCode's perturbed files for tiny but not the originals"
    ):
        read_recode(small_release, "tiny")
    with pytest.raises(UserError, match="cannot name ReCode files"):
        write_recode(catalogue(1), small_release, "my/data")


def test_cli_perturb_format_recode(tmp_path, stand_ins, capsys):
    data = tmp_path / "tiny.jsonl"
    write_problems(data, SOURCES)
    out = tmp_path / "recode"
    args = ["perturb", str(data), "--transforms", "original", "test_case_swap", "test_two_comments"]
    assert main([*args, "--random-seeds", "2", "--format", "recode", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "not in ReCode's layout: test_two_comments" in printed and "output_adv_path" in printed
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.jsonl")) == [
        "nominal/tiny.jsonl",
        "perturbed_finalized/tiny/full/nlaugmenter/tiny_TestCaseSwap_s0.jsonl",
        "perturbed_finalized/tiny/full/nlaugmenter/tiny_TestCaseSwap_s1.jsonl",
    ]
    # The folder's manifest for the dataset is its provenance (the shared shape) and file list.
    manifest = json.loads((out / "boi_recode_tiny.json").read_text())
    assert manifest["config"]["random_seeds"] == 2 and manifest["format_version"] >= 2
    assert manifest["inputs"]["dataset"]["path"] == data.name and len(manifest["files"]) == 3
    # The default format is still one JSONL of variants with lineage.
    assert main([*args, "--out", str(tmp_path / "variants.jsonl")]) == 0
    assert len(read_jsonl(tmp_path / "variants.jsonl")) == 3 + 3 + 3 * 2
    assert main([*args, "--format", "recode", "--out", str(data)]) == 2
    assert "is a file; --out takes a folder" in capsys.readouterr().err
    assert recode_dataset_name("humaneval") == "humaneval"
    assert recode_dataset_name("/data/HumanEval.jsonl.gz") == "humaneval"


# ReCode's released HumanEval (three of its tasks), unpacked from tests/data/recode.


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("recode")
    with tarfile.open(RELEASE) as tar:
        tar.extractall(root, filter="data")
    return root / "dataset-release"


def _released_files(root: Path) -> dict[str, list[Path]]:
    """ReCode name -> its seed files, from the release's file names."""
    files: dict[str, list[Path]] = {}
    for path in sorted((root / "perturbed_finalized/humaneval/full").rglob("*.jsonl")):
        name = path.stem.removeprefix("humaneval_").rpartition("_s")[0]
        files.setdefault(name, []).append(path)
    return files


@pytest.fixture(scope="module")
def every_recode_name(release, stand_ins):
    """A stand-in for each ReCode perturbation the families do not register (yet), in the
    family of its release folder, so every released file has a transformation to belong to."""
    before = dict(TRANSFORMS)
    for name, paths in _released_files(release).items():
        if name not in recode_names():
            family = RECODE_GROUPS[paths[0].parent.name]
            baseline = "partial_code" if family in ("syntax", "format") else "original"

            def stand_in(problem: Problem, keywords: object) -> Variants:
                return NotApplicable("a stand-in for reading ReCode's files")

            transform(f"stand_in_{name}", "0", family=family, recode=name, baseline=baseline)(
                stand_in
            )
    yield
    for name in set(TRANSFORMS) - set(before):
        unregister(name)


def test_the_released_humaneval_reads_as_variants_of_its_originals(release, every_recode_name):
    files = _released_files(release)
    # ReCode's config.json: 10 docstring, 6 function-name, 6 format and 6 syntax perturbations,
    # plus DeadCodeInserterLast, which the release holds too.
    assert Counter(paths[0].parent.name for paths in files.values()) == {
        "nlaugmenter": 10,
        "func_name": 6,
        "format": 6,
        "natgen": 7,
    }
    release_read = read_recode_release(release, "humaneval")
    assert release_read.notes == []
    problems = release_read.problems
    counts = Counter(p.transform for p in problems)
    names = recode_names()
    originals = {p.task_id: p for p in problems if p.transform == "original"}
    assert sorted(originals) == list(RELEASE_TASKS)
    assert all(not p.lineage for p in originals.values())
    assert counts["partial_code"] == len(RELEASE_TASKS)
    assert {names[r]: len(RELEASE_TASKS) * len(paths) for r, paths in files.items()} == {
        n: c for n, c in counts.items() if n not in ("original", "partial_code")
    }
    assert all(p.source_task_id in originals for p in problems)
    by_id = {p.task_id: p for p in problems}
    assert len(by_id) == len(problems)  # ids are unique: seeds tagged where there are several
    swap = by_id[f"HumanEval/0::{names['SwapCharactersPerturbation']}@s7"]
    assert swap.lineage[0].seed == 7 and swap.lineage[0].changes == {
        "file": "perturbed_finalized/humaneval/full/nlaugmenter/humaneval_SwapCharactersPerturbation_s7.jsonl"
    }
    assert f"HumanEval/0::{names['FuncRenameCamelCase']}" in by_id  # one file: no tag
    partial = by_id["HumanEval/0::partial_code"]
    assert partial.prompt.startswith(originals["HumanEval/0"].prompt)
    assert partial.prompt + partial.canonical_solution == (
        originals["HumanEval/0"].prompt + originals["HumanEval/0"].canonical_solution
    )
    # Our `partial` field is ReCode's: rebuilt from its own split for all 127 split tasks (the
    # whole nominal file, not the three-task cut).
    nominal_partial = [
        json.loads(line)
        for line in gzip.decompress(NOMINAL_PARTIAL.read_bytes()).splitlines()
        if line.strip()
    ]
    split = [r for r in nominal_partial if r["partial"] is not None]
    assert len(split) == 127
    assert all(mark_split(r["prompt"], r["canonical_solution"]) == r["partial"] for r in split)
    loaded = load_benchmark("recode_humaneval", release)
    assert [p.task_id for p in loaded.problems] == [p.task_id for p in problems]
    assert loaded.issues == []


def test_execute_and_report_measure_released_variants_against_their_baselines(
    release, every_recode_name, tmp_path, capsys
):
    """Canonical solutions as completions for three tasks: the function-name variants are
    measured against the originals, the format ones against the nominal partial code."""
    names = recode_names()
    camel, tabs = names["FuncRenameCamelCase"], names["tab_indent"]
    keep = {"original", "partial_code", camel, tabs}
    tasks = {"HumanEval/0", "HumanEval/1", "HumanEval/3"}
    problems = [
        p
        for p in read_recode(release, "humaneval")
        if p.source_task_id in tasks and p.transform in keep
    ]
    assert Counter(p.transform for p in problems) == {name: 3 for name in keep}
    wrong = "    return None\n"
    samples = []
    for p in problems:
        completion = p.canonical_solution
        if p.task_id in (f"HumanEval/0::{camel}", "HumanEval/1::partial_code"):
            completion = wrong
        if p.transform == tabs:
            completion = wrong  # ReCode's tab-indented prompts
        samples.append({"task_id": p.task_id, "completion": completion})
    problems_path, samples_path = tmp_path / "problems.jsonl", tmp_path / "samples.jsonl"
    write_problems(problems_path, problems)
    samples_path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    results = tmp_path / "results.jsonl"
    run = ["execute", str(problems_path), str(samples_path), "--out", str(results)]
    assert main([*run, "--no-calibration"]) == 0
    passed = {r["task_id"]: r["passed"] for r in read_jsonl(results)}
    assert sum(passed.values()) == 3 + 2 + 2  # originals, partial_code but one, camel but one
    assert main(["report", str(results), "--problems", str(problems_path), "--bootstrap", "0"]) == 0
    capsys.readouterr()
    table = json.loads((tmp_path / "report" / "table.json").read_text())
    cells = {row["transform"]: (row["label"], row["cells"][0]) for row in table["rows"]}
    label, cell = cells[camel]
    assert cell["original_same_problems"] == 1.0 and cell["pass_at_k"] == pytest.approx(2 / 3)
    assert "vs" not in label
    label, cell = cells[tabs]  # against partial_code (2 of 3), not the originals (3 of 3)
    assert cell["original_same_problems"] == pytest.approx(2 / 3) and cell["pass_at_k"] == 0
    assert "(vs partial_code)" in label
