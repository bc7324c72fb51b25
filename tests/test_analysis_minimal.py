"""`boi analyze minimal`: on a hand-made run with a scripted model that fails only when two
planted keywords are both gone (and a fake critic), the search finds exactly that pair and
nothing smaller; it is deterministic, resumes after an interruption without generating twice,
and refuses a budget of 0 in one sentence without touching the run."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest

from benchmarks.generation import BACKENDS, BackendBase, DecodingConfig, Request
from boi.analysis.minimal import MinimalConfig, minimal_search
from boi.cli import main
from critic.scoring import SCORERS, PromptScore
from tests.analysis_helpers import SOLUTION, run_config, toy_problem, variants, write_run

MODEL = "scripted_minimal-embedded"
PLANTED = "drop 'integers', 'positive'"


class ScriptedModel(BackendBase):
    """Solves the problem while its docstring still says `positive` or `integers`; a variant
    without both gets a wrong body. Counts the samples it generates."""

    calls = 0
    samples = 0
    fail_after: int | None = None

    def __init__(self, spec) -> None:
        super().__init__(spec)
        self.identity = "scripted-minimal"

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        for position, request in enumerate(requests):
            if (
                ScriptedModel.fail_after is not None
                and ScriptedModel.calls >= ScriptedModel.fail_after
            ):
                raise KeyboardInterrupt("simulated interruption")
            ScriptedModel.calls += 1
            ScriptedModel.samples += len(request.indices)
            docstring = request.prompt.split('"""')[1]
            hinted = re.search(r"\b(positive|integers)\b", docstring)
            body = SOLUTION if hinted else "    return 0\n"
            yield position, [body for _ in request.indices]


@dataclass(frozen=True)
class FakeScorerConfig:
    """No settings."""


class FakeScorer:
    """Log-probability -(1 + len/10) per whitespace-separated token: longer cuts lower the
    similarity, so candidates are ordered by how much text they remove."""

    Config = FakeScorerConfig
    scored = 0

    def __init__(self, config: FakeScorerConfig | None = None) -> None:
        self.config = config

    def describe(self) -> dict:
        return {"backend": "fake"}

    def score(self, prompts: Sequence[str]) -> list[PromptScore]:
        FakeScorer.scored += len(prompts)
        out = []
        for prompt in prompts:
            tokens = [(m.start(), m.end()) for m in re.finditer(r"\S+", prompt)]
            out.append(PromptScore(tuple(-(1 + (e - s) / 10) for s, e in tokens), tuple(tokens)))
        return out


@pytest.fixture
def fakes():
    BACKENDS.register("scripted_minimal", f"{__name__}:ScriptedModel")
    SCORERS.register("fake_minimal", f"{__name__}:FakeScorer")
    ScriptedModel.calls = ScriptedModel.samples = 0
    ScriptedModel.fail_after = None
    FakeScorer.scored = 0
    yield
    BACKENDS.unregister("scripted_minimal")
    SCORERS.unregister("fake_minimal")


DESCRIPTION = "Return the sum of the strictly positive integers found in the given list."


@pytest.fixture
def run_dir(tmp_path, fakes):
    """Toy/1: the planted pair; Toy/2: nothing flips it (one keyword only); Toy/3: unsolved."""
    problems = (
        variants(toy_problem(1, DESCRIPTION), ["strictly", "positive", "integers"])
        + variants(toy_problem(2, DESCRIPTION), ["strictly"])
        + variants(toy_problem(3, DESCRIPTION), ["strictly"])
    )
    passed = {(MODEL, "Toy/1"): [True, True], (MODEL, "Toy/2"): [True, True]}
    passed[(MODEL, "Toy/3")] = [False, False]
    config = run_config(
        models=[{"kind": "scripted_minimal"}],
        critic={"enabled": False, "kind": "fake_minimal", "scorer": {}, "min_similarity": 0},
        execution={"calibrate": False, "reference_timing": False, "workers": 2},
    )
    return write_run(tmp_path / "run", problems, passed, config)


def _search(run_dir, **options):
    records, summary, _ = minimal_search(run_dir, MinimalConfig(**options), log=lambda m: None)
    return {r["source_task_id"]: r for r in records}, summary


def test_finds_the_planted_minimal_flip_and_nothing_smaller(run_dir):
    records, summary = _search(run_dir, budget=40)
    toy1 = records["Toy/1"]
    assert toy1["outcome"] == "flipped"
    assert toy1["flip"]["key"] == PLANTED and toy1["flip"]["size"] == 2
    assert toy1["flip"]["passed"] == 0 and toy1["flip"]["samples"] == 2
    assert not re.search(r"\b(positive|integers)\b", toy1["flip"]["prompt"])
    tested = toy1["tested"]
    # Every single removal was tried first (and kept the problem solved) ...
    assert [t["size"] for t in tested[:5]] == [1] * 5 and all(t["passed"] == 2 for t in tested[:5])
    assert {t["key"] for t in tested[:5]} == {
        "drop 'integers'", "drop 'positive'", "drop 'strictly'", "anonymize", "drop examples",
    }  # fmt: skip
    # ... then pairs, most similar first, up to the planted one.
    pairs = tested[5:]
    assert all(t["size"] == 2 for t in pairs) and pairs[-1]["key"] == PLANTED
    assert [t["similarity"] for t in pairs] == sorted(
        (t["similarity"] for t in pairs), reverse=True
    )
    assert toy1["generations"] == 2 * len(tested)
    # Toy/2: five candidates (drop, anonymize, drop examples, and the two with the name), none flips.
    assert records["Toy/2"]["outcome"] == "exhausted" and len(records["Toy/2"]["tested"]) == 5
    assert "Toy/3" not in records  # unsolved on the original: nothing to flip
    assert summary["searched"] == 2 and summary["flipped"] == 1 and summary["flip_rate"] == 0.5


def test_budget_stops_the_search_and_is_counted_in_generations(run_dir):
    records, summary = _search(run_dir, budget=7)  # 3 candidates of 2 samples each
    assert records["Toy/1"]["outcome"] == "budget" and records["Toy/1"]["generations"] == 6
    assert summary["flipped"] == 0 and summary["outcomes"]["budget"] == 2


def test_critic_gate_keeps_dissimilar_candidates_untested(run_dir):
    # The fake critic puts Drop Ex (79.9 %) and Anon + Drop Ex (77.8 %) below 90 %, the rest
    # of Toy/1 above.
    records, _ = _search(run_dir, budget=40, min_similarity=90.0)
    toy1 = records["Toy/1"]
    assert toy1["candidates_rejected_by_critic"] == 2
    assert "drop examples" not in {t["key"] for t in toy1["tested"]}
    assert toy1["flip"]["key"] == PLANTED and len(toy1["tested"]) == 8


def test_same_run_same_result_and_a_rerun_costs_nothing(run_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    first, _ = _search(run_dir, budget=40)
    generated, scored = ScriptedModel.samples, FakeScorer.scored
    second, _ = _search(copy, budget=40)
    assert first == second
    again, _ = _search(run_dir, budget=40)
    assert again == first
    assert ScriptedModel.samples == 2 * generated and FakeScorer.scored == 2 * scored


def test_interrupted_search_resumes_without_generating_twice(run_dir, tmp_path):
    reference = tmp_path / "reference"
    shutil.copytree(run_dir, reference)
    expected, _ = _search(reference, budget=40)
    needed = ScriptedModel.samples
    ScriptedModel.samples = ScriptedModel.calls = 0
    ScriptedModel.fail_after = 4
    with pytest.raises(KeyboardInterrupt):
        _search(run_dir, budget=40)
    ScriptedModel.fail_after = None
    resumed, _ = _search(run_dir, budget=40)
    assert resumed == expected
    assert ScriptedModel.samples == needed  # the interrupted part was not generated again
    tested = [json.loads(line) for line in (run_dir / "analysis/minimal/tested.jsonl").open()]
    assert len({t["test_key"] for t in tested}) == len(tested)


def test_command_adds_the_section_and_budget_zero_is_refused(run_dir, capsys):
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    assert main(["analyze", "minimal", str(run_dir), "--budget", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--budget is 0" in err and err.count("\n") == 0
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before

    assert main(["analyze", "minimal", str(run_dir), "--budget", "40"]) == 0
    assert "1 of 2 solved problems flip" in capsys.readouterr().out
    html = (run_dir / "report" / "report.html").read_text()
    assert 'id="analysis-minimal"' in html and "Minimal hint search" in html
    assert "drop &#x27;integers&#x27;, &#x27;positive&#x27;" in html
    summary = json.loads((run_dir / "analysis/minimal/summary.json").read_text())
    assert summary["flip_rate"] == 0.5 and summary["samples_per_candidate"] == 2


def test_budget_below_one_candidate_is_refused(run_dir, capsys):
    assert main(["analyze", "minimal", str(run_dir), "--budget", "1"]) == 2
    assert "below one candidate's cost of 2 samples" in capsys.readouterr().err


def test_run_from_an_incompatible_version_is_one_sentence(run_dir, capsys):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["config"]["retired_option"] = True
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    assert main(["analyze", "minimal", str(run_dir), "--budget", "10"]) == 2
    err = capsys.readouterr().err.strip()
    assert "incompatible boi version" in err and err.count("\n") == 0
    assert not (run_dir / "analysis").exists()
