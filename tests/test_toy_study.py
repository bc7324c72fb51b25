"""Adding a study is one module and one registry line: a newcomer's toy study
(tests/toy_study.py) gets shards and their merge, the estimate, completions made elsewhere and
resume from the driver, with nothing of its own for any of them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import boi
from benchmarks.common.config import to_dict
from benchmarks.common.errors import UserError
from benchmarks.generation import BACKENDS
from benchmarks.study import Shard, estimate_study, run_study
from boi.studies import STUDIES, merge_runs
from tests.toy_study import ToyConfig, ToyStudy


def quiet(message: str) -> None:
    pass


@pytest.fixture
def registered() -> Iterator[None]:
    STUDIES.register("boi toy", "tests.toy_study:ToyStudy")  # the one line a study adds
    BACKENDS.register("echo", "tests.toy_study:EchoBackend")
    try:
        yield
    finally:
        STUDIES.unregister("boi toy")
        BACKENDS.unregister("echo")


def config(out: Path, **changes: object) -> ToyConfig:
    mapping = {
        "out_dir": str(out),
        "models": [{"kind": "echo", "model": "a"}, {"kind": "echo", "model": "b"}],
        "seeds": [0, 1],
        **changes,
    }
    return ToyStudy.from_config(mapping).config


def split_files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.glob("said/*/*.jsonl"))}


@pytest.mark.usefixtures("registered")
def test_a_toy_study_gets_the_driver_for_free(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    # --dry-run: counted from the same cells, nothing written.
    estimate = estimate_study(ToyStudy(config(whole)), quiet)
    assert not whole.exists()
    outcome = run_study(ToyStudy(config(whole)), log=quiet)
    rows = [json.loads(line) for data in split_files(whole).values() for line in data.splitlines()]
    # 3 words x n=2 x 2 seeds, for each of 2 models; the echo says the word on seed 0's even
    # samples only.
    assert estimate.requested_samples == len(rows) == outcome.generation["requested_samples"] == 24
    assert json.loads((whole / "report" / "said.json").read_text()) == {
        "echo-a": 0.25,
        "echo-b": 0.25,
    }
    # Every study's directory opens with boi.open_run; a `boi run` reading refuses it by name.
    opened = boi.open_run(whole)
    assert opened.study == "boi toy" and len(opened.rows("said/*/*.jsonl")) == 24
    with pytest.raises(UserError, match="is a `boi toy` directory, not a `boi run` one"):
        opened.problems()
    # Resume: nothing generated again, the same rows.
    before = split_files(whole)
    again = run_study(ToyStudy(config(whole)), log=quiet)
    assert again.generation["generated"] == 0 and split_files(whole) == before
    # Shards, each owning its words, merged by `boi merge` into the unsharded run's files.
    shards = []
    for index in range(2):
        out = tmp_path / f"shard{index}"
        # --shard I/N --dry-run: the shard's own counts.
        part = estimate_study(ToyStudy(config(out)), quiet, shard=Shard(index, 2))
        run_study(ToyStudy(config(out)), shard=Shard(index, 2), log=quiet)
        assert part.requested_samples == len(
            [line for data in split_files(out).values() for line in data.splitlines()]
        )
        assert part.notes[0].startswith(f"shard {index}/2: {2 - index} of 3 units")
        shards.append(out)
    assert split_files(shards[0]) != before
    merged = merge_runs(tmp_path / "merged", shards, quiet)
    assert split_files(merged.out_dir) == before
    assert (merged.out_dir / "report" / "said.json").read_bytes() == (
        whole / "report" / "said.json"
    ).read_bytes()
    # A shard of an older boi (rows without their ordinal) is refused, naming file and line.
    older = next(shards[1].glob("said/*/*.jsonl"))
    lines = [json.loads(line) for line in older.read_text().splitlines()]
    older.write_text(
        "".join(
            json.dumps({k: v for k, v in row.items() if k != "ordinal"}) + "\n" for row in lines
        )
    )
    with pytest.raises(
        UserError, match=r"line 1 has no ordinal: the shard was written by an older boi"
    ):
        merge_runs(tmp_path / "merged-again", shards, quiet)


@pytest.mark.usefixtures("registered")
def test_a_toy_study_judges_completions_made_elsewhere(tmp_path: Path) -> None:
    given = tmp_path / "given.jsonl"
    lines = [
        {"prompt": f"Say {w}:", "completion": w if w != "plum" else "no"}
        for w in ("apple", "pear", "plum")
    ]
    given.write_text("".join(json.dumps(line) + "\n" for line in lines))
    toy = ToyStudy(
        config(
            tmp_path / "run", models=[{"kind": "completions", "model": str(given)}], seeds=[0], n=1
        )
    )
    assert to_dict(toy.config)["models"][0]["kind"] == "completions"
    run_study(toy, log=quiet)
    said = json.loads((tmp_path / "run" / "report" / "said.json").read_text())
    assert list(said.values()) == [pytest.approx(2 / 3)]
