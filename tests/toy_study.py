"""A newcomer's study, the whole of it: does a model repeat the word it is asked to say?

This module and one line in `boi.studies.STUDIES` are all a study needs
(tests/test_toy_study.py adds the line); shards, `boi merge`, `--dry-run`, completions made
elsewhere and resume come from the driver (`benchmarks.study`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.jsonl import write_jsonl
from benchmarks.common.rundir import RunDir, path_slug
from benchmarks.generation import (
    BackendBase,
    BackendSpec,
    DecodingConfig,
    PromptGroup,
    Request,
    Sample,
)
from benchmarks.study import Cell, Study, StudyOutcome, StudyRun
from benchmarks.study.reader import open_study


@dataclass(frozen=True)
class ToyConfig:
    out_dir: str = "runs/toy"
    models: list[BackendSpec] = field(default_factory=lambda: [BackendSpec(kind="echo")])
    seeds: tuple[int, ...] = (0,)
    words: tuple[str, ...] = ("apple", "pear", "plum")
    n: int = 2


class ToyStudy(Study):
    Config = ToyConfig
    command: ClassVar[str] = "boi toy"
    split_files: ClassVar[tuple[str, ...]] = ("said/*/*.jsonl",)

    def units(self) -> list[str]:
        return list(self.config.words)

    def cells(self) -> Iterator[Cell]:
        prompts = {word: f"Say {word}:" for word in self.config.words}
        decoding = DecodingConfig(n=self.config.n, max_new_tokens=8, temperature=1.0)
        for spec in self.config.models:
            yield Cell(
                spec.label,
                "plain",
                (PromptGroup(prompts, decoding),),
                self.config.seeds,
                {word: word for word in prompts},
                spec,
                executed=False,
            )

    def judge(self, cell: Cell, samples: list[Sample], run: StudyRun) -> list[dict[str, Any]]:
        rows = [
            {
                "word": s.prompt_id,
                "model": cell.model,
                "setting": cell.setting,
                "seed": s.seed,
                "sample_index": s.sample_index,
                "said": s.prompt_id in s.completion,
                "ordinal": list(s.ordinal or ()),
            }
            for s in samples
        ]
        write_jsonl(run.path / "said" / path_slug(cell.model) / f"{cell.setting}.jsonl", rows)
        return rows

    def report(
        self, run: RunDir, generation: Mapping[str, Any], log: Callable[[str], None]
    ) -> StudyOutcome:
        rows = open_study(run.path, self.command).rows(self.split_files[0])
        rate = {
            model: sum(r["said"] for r in rows if r["model"] == model)
            / sum(1 for r in rows if r["model"] == model)
            for model in dict.fromkeys(r["model"] for r in rows)
        }
        table = "\n".join(f"| {model} | {100 * value:.1f}% |" for model, value in rate.items())
        write_text_atomic(run.path / "report" / "said.json", json.dumps(rate, indent=1) + "\n")
        return StudyOutcome(run.path, table, f"{self.command}: {len(rows)} samples", {}, {})


class EchoBackend(BackendBase):
    """Says the word asked for on even samples of seed 0, something else otherwise."""

    def __init__(self, spec: Any) -> None:
        self.identity = f"echo|{spec.model}"

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        for position, request in enumerate(requests):
            word = request.prompt.removeprefix("Say ").removesuffix(":")
            yield (
                position,
                [word if i % 2 == 0 and decoding.seed == 0 else "no" for i in request.indices],
            )
