"""`boi run` completes each prompt by its record's kind: a function body with HumanEval's stops,
a whole stdin/stdout program (CodeContests) with none, so `print(` and `if __name__` stay in
the program and a chat model is asked for a program."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import (
    BACKENDS,
    HUMANEVAL_STOP,
    PROGRAM_CHAT_INSTRUCTION,
    BackendBase,
    DecodingConfig,
    Request,
    read_completion_reply,
)
from tests.helpers import reference_run_config

PROGRAM = "n = int(input())\nprint(n * 2)\n\nif __name__ == '__main__':\n    pass\n"


class KindRecorder(BackendBase):
    """Answers a function prompt with a body and a program prompt with a whole program, and
    records the decoding each prompt was generated with."""

    seen: dict[str, DecodingConfig] = {}

    def __init__(self, spec) -> None:
        self.spec = spec
        self.identity = "kind-recorder"

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        for position, request in enumerate(requests):
            KindRecorder.seen[request.prompt] = decoding
            program = "def " not in request.prompt
            text = PROGRAM if program else "    return 0\n\ndef helper():\n    pass\n"
            yield position, [text for _ in request.indices]


@pytest.fixture
def recorder():
    BACKENDS.register("kind_recorder", f"{__name__}:KindRecorder")
    KindRecorder.seen = {}
    yield
    BACKENDS.unregister("kind_recorder")


def test_programs_and_functions_get_their_own_stops(
    recorder, code_contests_path, tmp_path, monkeypatch
):
    import perturb.keywords as keywords
    from boi.runner import load_run_config, run_robustness
    from tests.keyword_helpers import tiny_embedder

    monkeypatch.setattr(keywords, "sentence_transformer_embedder", lambda *a, **k: tiny_embedder())
    config = load_run_config(
        None,
        {
            "out_dir": str(tmp_path / "run"),
            "datasets": [
                {"name": "humaneval", "task_ids": ["HumanEval/53"]},
                {"name": "code_contests", "data": str(code_contests_path), "limit": 1},
            ],
            "transforms": ["original"],
            "name_only_probe": False,
            "models": [{"kind": "kind_recorder"}],
            "settings": [{"label": "greedy", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
            "seeds": [0],
            "bootstrap": 10,
        },
    )
    outcome = run_robustness(config, log=lambda message: None)
    decodings = list(KindRecorder.seen.items())
    function = next(d for p, d in decodings if "def " in p)
    program = next(d for p, d in decodings if "def " not in p)
    assert function.stop == HUMANEVAL_STOP and program.stop == ()
    assert program.chat_instruction == PROGRAM_CHAT_INSTRUCTION
    results = [
        json.loads(line)
        for path in sorted((outcome.out_dir / "results").rglob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    by_dataset = {r["dataset"]: r for r in results}
    assert by_dataset["code_contests"]["completion"] == PROGRAM  # not cut at "\nprint("
    assert by_dataset["humaneval"]["completion"] == "    return 0\n"  # cut at "\ndef "


def test_a_chat_reply_for_a_program_keeps_the_whole_program():
    reply = "Here it is:\n```python\nimport sys\n\ndef main():\n    print(int(input()) * 2)\n\nmain()\n```"
    prompt = '"""Read n and print 2n."""\n'
    text = read_completion_reply(reply, prompt, chat=True).completion
    assert text.startswith("import sys\n\ndef main():") and "main()" in text


def test_datasets_sharing_task_ids_are_judged_apart_on_the_same_samples(tmp_path):
    """HumanEval and HumanEval+ hold the same problems with other tests: one run over both
    keeps each dataset's variants and verdicts apart (the second under `label:ID`), and the
    identical prompts are generated once."""
    from benchmarks.loaders import load_benchmark
    from boi.runner import load_run_config, run_robustness

    problem = load_benchmark("humaneval").problems[0]
    record = {
        "task_id": problem.task_id,
        "prompt": problem.prompt,
        "entry_point": problem.entry_point,
        "canonical_solution": problem.canonical_solution,
    }
    strict = tmp_path / "strict.jsonl"  # the same problem, a test no solution passes
    strict.write_text(json.dumps({**record, "test": "def check(candidate):\n    assert False\n"}))
    lenient = tmp_path / "lenient.jsonl"
    lenient.write_text(json.dumps({**record, "test": problem.test}))
    config = load_run_config(
        None,
        reference_run_config(lenient, strict, out_dir=str(tmp_path / "run"), bootstrap=20),
    )
    logged: list[str] = []
    outcome = run_robustness(config, log=logged.append)
    assert any("taken as strict:ID" in line for line in logged)
    rows = [
        json.loads(line)
        for path in (outcome.out_dir / "results").rglob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    verdicts = {(r["dataset"], r["source_task_id"]): r["passed"] for r in rows}
    assert verdicts == {("lenient", "HumanEval/0"): True, ("strict", "strict:HumanEval/0"): False}
    assert len({r["completion"] for r in rows}) == 1
    # One sample generated for the two datasets' identical prompts.
    assert len((outcome.out_dir / "generations.jsonl").read_text().splitlines()) == 1


def test_a_run_reuses_another_runs_generations(tmp_path):
    """--reuse-generations: a second run of the same model, prompts and decoding (here a report
    setting changed, so a new run directory) takes the first run's samples instead of
    generating them."""
    from benchmarks.loaders import load_benchmark
    from boi.runner import RunConfig, load_run_config, run_robustness

    problems = load_benchmark("humaneval").problems[:2]
    data = tmp_path / "two.jsonl"
    data.write_text("".join(json.dumps(p.to_json()) + "\n" for p in problems))

    def config(out: str, bootstrap: int) -> RunConfig:
        return load_run_config(
            None,
            reference_run_config(data, out_dir=str(tmp_path / out), bootstrap=bootstrap),
        )

    first = run_robustness(config("first", 20), log=lambda m: None)
    logged: list[str] = []
    second = run_robustness(
        config("second", 30),
        log=logged.append,
        reuse_generations=[first.out_dir / "generations.jsonl"],
    )
    assert any("reused 2 samples" in line for line in logged)
    manifest = json.loads((second.out_dir / "manifest.json").read_text())
    assert manifest["generation"]["cache_hits"] == 2 and manifest["generation"]["generated"] == 0
    with pytest.raises(UserError, match="is not a file"):
        run_robustness(config("third", 20), reuse_generations=[tmp_path / "missing.jsonl"])
    with pytest.raises(UserError, match="is not a file"):
        run_robustness(config("third", 20), reuse_generations=[tmp_path])
