"""`boi run --shard I/N` + `boi merge`: the merged report equals the unsharded run's, byte for
byte; shards are read from Slurm and Kubernetes array variables; a missing, duplicated,
incomplete or foreign shard is one sentence and nothing is written."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import BACKENDS, BackendBase, DecodingConfig, Request
from benchmarks.study.shards import Shard, parse_shard
from boi.cli import main
from boi.runner import load_run_config, run_robustness
from boi.studies import merge_runs
from tests.helpers import reference_run_config

REPORT_FILES = ("table.json", "table.md", "table.csv", "report.html")


class CoinModel(BackendBase):
    """Each sample is the problem's own solution or a wrong body, by a hash of (prompt, seed,
    index): a mix of passes and failures that differs per seed and sample."""

    default_model = ""
    max_samples_per_call = 64

    def __init__(self, spec: Any) -> None:
        self.identity = "coin"
        self.solutions: dict[str, str] = {}

    def prepare(self, problems: Iterable[Any]) -> list[str]:
        for problem in problems:
            self.solutions[problem.prompt] = problem.canonical_solution or ""
        return []

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        for position, request in enumerate(requests):
            texts = []
            for index in request.indices:
                digest = hashlib.sha256(f"{request.prompt}|{decoding.seed}|{index}".encode())
                good = digest.digest()[0] % 3 != 0
                texts.append(self.solutions[request.prompt] if good else "    return None\n")
            yield position, texts


@pytest.fixture
def coin(monkeypatch):
    import perturb.keywords as keywords
    from tests.keyword_helpers import tiny_embedder

    monkeypatch.setattr(keywords, "sentence_transformer_embedder", lambda *a, **k: tiny_embedder())
    BACKENDS.register("coin", f"{__name__}:CoinModel")
    yield
    BACKENDS.unregister("coin")


def config_for(out: Path, code_contests_path: Path) -> Any:
    return load_run_config(
        None,
        {
            "out_dir": str(out),
            "datasets": [
                {"name": "humaneval", "task_ids": [f"HumanEval/{i}" for i in (0, 2, 7, 12, 23)]},
                {"name": "code_contests", "data": str(code_contests_path), "limit": 2},
            ],
            "transforms": ["original", "anonymize", "drop_examples"],
            "name_only_probe": False,
            "models": [{"kind": "coin"}],
            "settings": [
                {"label": "T=0.8", "ks": [1, 2], "decoding": {"temperature": 0.8, "n": 2}},
                {"label": "greedy", "ks": [1], "decoding": {"temperature": 0, "n": 1}},
            ],
            "seeds": [0, 1],
            "bootstrap": 50,
        },
    )


def quiet(message: str) -> None:
    pass


@pytest.fixture
def whole_and_shards(coin, tmp_path, code_contests_path):
    """The unsharded run, and three shards of the same config (each in its own directory)."""
    run_robustness(config_for(tmp_path / "whole" / "run", code_contests_path), quiet)
    shard_dirs = []
    for index in range(3):
        out = tmp_path / f"shard{index}"
        run_robustness(config_for(out, code_contests_path), quiet, Shard(index, 3))
        shard_dirs.append(out)
    return tmp_path / "whole" / "run", shard_dirs


def test_merged_shards_give_the_unsharded_report_byte_for_byte(whole_and_shards, tmp_path):
    whole, shard_dirs = whole_and_shards
    executed = [
        {json.loads(line)["source_task_id"] for line in path.open()}
        for d in shard_dirs
        for path in [d / "results" / "coin" / "T=0.8.jsonl"]
    ]
    assert all(executed) and set.union(*executed) and not set.intersection(*executed)
    assert not (shard_dirs[0] / "report").exists()  # a shard has no report of its own

    outcome = merge_runs(tmp_path / "merged" / "run", shard_dirs, quiet)
    for name in REPORT_FILES:
        merged = (outcome.out_dir / "report" / name).read_bytes()
        assert merged == (whole / "report" / name).read_bytes(), name
    table = json.loads((whole / "report" / "table.json").read_text())
    cells = [c["pass_at_k"] for row in table["rows"] for c in row["cells"]]
    assert any(0 < c < 1 for c in cells)  # a mix of passes and failures: the row order mattered
    merged_manifest = json.loads((outcome.out_dir / "manifest.json").read_text())
    assert merged_manifest["completed"] and len(merged_manifest["merged_from"]) == 3
    assert "boi merge: 3 shards" in outcome.summary_line


def test_the_merge_command_and_its_refusals(whole_and_shards, tmp_path, capsys):
    _, (s0, s1, s2) = whole_and_shards
    before = {p: p.read_bytes() for d in (s0, s1, s2) for p in d.rglob("*") if p.is_file()}

    def refused(*shards: Path, out: Path | None = None) -> str:
        target = out or tmp_path / "refused"
        assert main(["merge", str(target), *map(str, shards)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "Traceback" not in err
        return err

    assert "shard 1/3 is missing" in refused(s0, s2)
    assert "are both shard 0/3" in refused(s0, s0, s1, s2)
    original = (s2 / "manifest.json").read_text()
    manifest = json.loads(original)
    (s2 / "manifest.json").write_text(json.dumps({**manifest, "completed": False}))
    assert "(shard 2/3) is not complete" in refused(s0, s1, s2)
    (s2 / "manifest.json").write_text(json.dumps({**manifest, "work_hash": "0" * 16}))
    assert "is a shard of another run" in refused(s0, s1, s2)
    (s2 / "manifest.json").write_text(original)
    assert not (tmp_path / "refused").exists()  # nothing claimed for a refused merge

    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    assert "is not empty" in refused(s0, s1, s2, out=tmp_path / "taken")
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    after = {p: p.read_bytes() for d in (s0, s1, s2) for p in d.rglob("*") if p.is_file()}
    assert after == before  # the shards are never written

    assert main(["merge", str(tmp_path / "ok"), str(s0), str(s1), str(s2)]) == 0
    assert "boi merge: 3 shards" in capsys.readouterr().out


def test_a_shard_directory_resumes_only_as_the_same_shard(coin, tmp_path, code_contests_path):
    config = config_for(tmp_path / "s", code_contests_path)
    run_robustness(config, quiet, Shard(0, 2))
    again = run_robustness(config, quiet, Shard(0, 2))
    assert "0 generated" in again.summary_line  # resumed from the cache
    with pytest.raises(UserError, match=r"holds shard 0/2 of this run, not 1/2"):
        run_robustness(config, quiet, Shard(1, 2))


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("2/4", {}, Shard(2, 4)),
        ("auto", {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "4"}, Shard(2, 4)),
        ("auto/3", {"SLURM_ARRAY_TASK_ID": "1"}, Shard(1, 3)),
        ("auto/3", {"JOB_COMPLETION_INDEX": "2"}, Shard(2, 3)),
    ],
)  # fmt: skip
def test_shards_from_the_flag_slurm_and_kubernetes(text, environ, expected):
    assert parse_shard(text, environ) == expected


@pytest.mark.parametrize(
    ("text", "environ", "message"),
    [
        ("2of4", {}, "is not I/N"),
        ("4/4", {}, "must be 0..3"),
        ("auto", {}, "neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX"),
        ("auto", {"JOB_COMPLETION_INDEX": "1"}, "needs the count"),
        ("auto", {"SLURM_ARRAY_TASK_ID": "1"}, "no SLURM_ARRAY_TASK_COUNT"),
        ("auto/2", {"SLURM_ARRAY_TASK_ID": "x"}, "not a number"),
    ],
)
def test_a_wrong_shard_is_one_sentence(text, environ, message):
    with pytest.raises(UserError, match=message):
        parse_shard(text, environ)


def test_problems_sharing_a_prompt_are_answered_as_in_the_whole_run(tmp_path):
    """Regression: the reference backend answers a prompt with the first problem's solution
    that has it; a shard that prepared only its own problems answered differently (MBPP/76 and
    MBPP/347 share their drop_examples prompt), so the merged report differed."""
    prompt = 'def f(x):\n    """Return a number."""\n'
    rows = [
        {"task_id": "Dup/0", "prompt": prompt, "entry_point": "f", "canonical_solution": "    return 1\n",
         "test": "def check(candidate):\n    assert candidate(0) == 1\n"},
        {"task_id": "Dup/1", "prompt": prompt, "entry_point": "f", "canonical_solution": "    return 2\n",
         "test": "def check(candidate):\n    assert candidate(0) == 2\n"},
    ]  # fmt: skip
    data = tmp_path / "dup.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def config(out: Path) -> Any:
        return load_run_config(
            None,
            reference_run_config(data, out_dir=str(out), bootstrap=10),
        )

    whole = run_robustness(config(tmp_path / "whole" / "run"), quiet)
    shards = [tmp_path / f"s{i}" for i in range(2)]
    for index, out in enumerate(shards):
        run_robustness(config(out), quiet, Shard(index, 2))
    merged = merge_runs(tmp_path / "merged" / "run", shards, quiet)
    for name in REPORT_FILES:
        assert (merged.out_dir / "report" / name).read_bytes() == (
            whole.out_dir / "report" / name
        ).read_bytes(), name
