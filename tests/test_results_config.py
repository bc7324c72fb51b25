"""The published table's config makes the published table (issue 44, item 5): its keyword picks
are pinned in a file (`keyword_file`), so `boi run --config docs/results/qwen-humaneval.yaml`
makes the variants docs/results.md states, whatever later keyword rules pick; and a keyword
file is checked line by line, one sentence naming the file and line."""

from __future__ import annotations

import json
import re
import tarfile
from collections import Counter
from pathlib import Path

import pytest

import perturb.catalogue as catalogue
from benchmarks.common.errors import UserError
from benchmarks.common.provenance import file_sha256, prompts_sha256
from benchmarks.loaders import load_benchmark
from boi.runner import load_run_config
from boi.runner.stages import _perturb
from perturb.blocks import split_dataset
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.keyword_file import pinned_keywords, prompt_sha256
from perturb.keywords import KeywordConfig
from perturb.transforms import TRANSFORMS
from tests.helpers import reference_run_config

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results.md"
CONFIG = ROOT / "docs" / "results" / "qwen-humaneval.yaml"
RUN = ROOT / "docs" / "results" / "qwen-humaneval-run.tar.gz"


def _page_counts() -> tuple[int, dict[str, int]]:
    """The variants a dataset that docs/results.md states: the total and per setting."""
    text = RESULTS.read_text(encoding="utf-8")
    found = re.search(r"\*\*Variants\*\*: ([\d,]+) a dataset: ([^(]*)\(", text)
    assert found, "docs/results.md no longer states the table's variants per setting"
    per_setting = {
        label.strip(): int(count.replace(",", ""))
        for label, count in re.findall(r"([A-Za-z+ ]+?) ([\d,]+)(?:,|$)", found.group(2).strip())
    }
    return int(found.group(1).replace(",", "")), per_setting


@pytest.fixture(scope="module")
def results_variants():
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # the config names its keyword file from the checkout, as documented
        patch.setattr(
            catalogue,
            "analyze_keywords",
            lambda *a, **k: pytest.fail("keywords were looked for, not read from the pinned file"),
        )
        config = load_run_config(str(CONFIG), {})
        variants, dataset_of = _perturb(config, None, lambda message: None)
    return config, variants, dataset_of


def test_the_results_config_makes_the_pages_variants(results_variants):
    config, variants, dataset_of = results_variants
    total, per_setting = _page_counts()
    assert sum(per_setting.values()) == total
    labels = {name: TRANSFORMS[name].label for name in config.perturb.transforms}
    for spec in config.datasets:
        counts = Counter(
            labels[v.transform] for v in variants if dataset_of[v.task_id] == spec.label
        )
        assert dict(counts) == per_setting, spec.label


def test_the_results_config_makes_the_committed_runs_prompts(results_variants):
    """Every prompt the committed run generated from is made again, so the run reuses every
    cached generation."""
    _, variants, _ = results_variants
    with tarfile.open(RUN) as archive:
        member = archive.extractfile("qwen-humaneval/problems.jsonl")
        assert member is not None
        committed = {
            record["task_id"]: record["prompt"]
            for record in map(json.loads, member.read().decode("utf-8").splitlines())
        }
    assert {v.task_id: v.prompt for v in variants} == committed


# --- the keyword file as an input -------------------------------------------------------


@pytest.fixture(scope="module")
def two_problems():
    problems = [
        p
        for p in load_benchmark("humaneval").problems
        if p.task_id in ("HumanEval/0", "HumanEval/2")
    ]
    return split_dataset(problems).problems


def _line(problem, keyword, **extra):
    start = problem.prompt.index(keyword + " ")
    text = problem.prompt[start : start + len(keyword) + 1]
    decision = {"keyword": keyword, "droppable": True, "rule": "context",
                "occurrences": [{"start": start, "end": start + len(text), "text": text}]}  # fmt: skip
    return {"task_id": problem.task_id, "skipped": None, "decisions": [decision], **extra}


def _write(path, *lines):
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def test_pinned_picks_are_dropped_as_written(two_problems, tmp_path):
    first, second = two_problems
    path = _write(
        tmp_path / "picks.jsonl",
        _line(first, "numbers", prompt_sha256=prompt_sha256(first.prompt)),
        _line(second, "integer"),
    )
    config = PerturbConfig(("original", "drop_one"), keyword_file=str(path))
    result = run_catalogue(two_problems, config)
    dropped = {v.source_task_id: v.prompt for v in result.variants if v.transform == "drop_one"}
    assert dropped["HumanEval/0"] == first.prompt.replace("numbers ", "", 1)
    assert len(dropped) == 2 and dropped["HumanEval/2"] != second.prompt


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"picks\.jsonl line 1 is not JSON"),
        ('{"skipped": null}', r"line 1 needs an object with a 'task_id'"),
        ('{"task_id": "HumanEval/0", "decisions": {}}', r"line 1: HumanEval/0 needs 'decisions'"),
        (
            '{"task_id": "HumanEval/0", "decisions": [{"keyword": "x", "droppable": "yes", '
            '"rule": "context", "occurrences": []}]}',
            r"line 1: HumanEval/0's decision 0 needs 'droppable' as a bool",
        ),
        (
            '{"task_id": "HumanEval/0", "decisions": [{"keyword": "x", "droppable": true, '
            '"rule": "context", "occurrences": [{"start": 5, "end": 2, "text": "x"}]}]}',
            r"line 1: HumanEval/0's decision 0 \('x'\) has an occurrence that is not",
        ),
    ],
)
def test_a_malformed_keyword_file_is_refused_naming_its_line(two_problems, tmp_path, line, message):
    path = _write(tmp_path / "picks.jsonl", line)
    with pytest.raises(UserError, match=message):
        pinned_keywords(path, two_problems)


def test_picks_for_another_prompt_are_refused(two_problems, tmp_path):
    first, second = two_problems
    shifted = _line(first, "numbers")  # its spans moved one character on, as in another prompt
    spot = shifted["decisions"][0]["occurrences"][0]
    spot["start"], spot["end"] = spot["start"] + 1, spot["end"] + 1
    path = _write(tmp_path / "picks.jsonl", _line(second, "integer"), shifted)
    with pytest.raises(
        UserError, match=r"picks\.jsonl line 2: HumanEval/0's 'numbers' at .* reads"
    ):
        pinned_keywords(path, two_problems)
    stale = _line(first, "numbers", prompt_sha256="0" * 64)
    path = _write(tmp_path / "picks.jsonl", _line(second, "integer"), stale)
    with pytest.raises(UserError, match=r"line 2: HumanEval/0's prompt is not the one"):
        pinned_keywords(path, two_problems)


def test_a_problem_without_picks_or_a_repeated_one_is_refused(two_problems, tmp_path):
    first = two_problems[0]
    path = _write(tmp_path / "picks.jsonl", _line(first, "numbers"))
    with pytest.raises(UserError, match=r"has no line for HumanEval/2"):
        pinned_keywords(path, two_problems)
    path = _write(tmp_path / "picks.jsonl", _line(first, "numbers"), _line(first, "numbers"))
    with pytest.raises(UserError, match=r"line 2: HumanEval/0 already has its picks on line 1"):
        pinned_keywords(path, two_problems)
    with pytest.raises(UserError, match=r"keyword_file .*missing\.jsonl does not exist"):
        pinned_keywords(tmp_path / "missing.jsonl", two_problems)


def test_a_run_records_its_picks_and_its_prompts(two_problems, tmp_path):
    """The manifest records the keyword file's sha256 and each dataset's prompts digest; other
    picks under the same path are another run, refused in the same directory."""
    from boi.runner import run_robustness

    first, second = two_problems
    data = _write(tmp_path / "two.jsonl", *(p.to_json() for p in two_problems))
    picks = _write(tmp_path / "picks.jsonl", _line(first, "numbers"), _line(second, "integer"))
    config = load_run_config(
        None,
        reference_run_config(
            data,
            out_dir=str(tmp_path / "run"),
            transforms=["original", "drop_one"],
            keyword_file=str(picks),
            bootstrap=0,
        ),
    )
    outcome = run_robustness(config, log=lambda message: None)
    manifest = json.loads((outcome.out_dir / "manifest.json").read_text())
    assert manifest["inputs"]["keyword_file"]["sha256"] == file_sha256(picks)
    problems = load_benchmark(str(data)).problems
    expected = prompts_sha256((p.task_id, p.prompt) for p in problems)
    assert manifest["prompts_sha256"] == {"two": expected}
    _write(picks, _line(first, "numbers"), _line(second, "decimal"))
    with pytest.raises(UserError, match="holds a different run"):
        run_robustness(config, log=lambda message: None)


def test_picks_written_out_and_pinned_make_the_same_variants(two_problems, tmp_path):
    """What a run found, written as `boi keywords extract` writes it (with each prompt's sha256)
    and pinned, makes the same variants without looking for keywords again."""
    from benchmarks.common.jsonl import write_jsonl
    from perturb.keyword_file import analysis_record
    from tests.keyword_helpers import tiny_embedder

    transforms = ("original", "drop_one", "drop_all", "anon_drop_all")
    config = PerturbConfig(transforms, keywords=KeywordConfig(code_threshold=0.3))
    found = run_catalogue(two_problems, config, tiny_embedder())
    assert any(a.droppable for a in found.keywords.values())
    path = tmp_path / "picks.jsonl"
    by_id = {p.task_id: p for p in two_problems}
    write_jsonl(path, (analysis_record(a, by_id[t]) for t, a in found.keywords.items()))
    pinned = run_catalogue(two_problems, PerturbConfig(transforms, keyword_file=str(path)))
    assert [v.to_json() for v in pinned.variants] == [v.to_json() for v in found.variants]
