"""A backend is one module plus one `BACKENDS.register` line: a toy backend defined here (with
its own option) is built from flat config keys, loaded by `load_backend` and run by `boi run`
with no other edit; and the generation package keeps its import rules."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from benchmarks.common.config import from_mapping
from benchmarks.common.errors import UserError
from benchmarks.generation import (
    BACKENDS,
    BackendBase,
    BackendSpec,
    DecodingConfig,
    Request,
    load_backend,
)


@dataclass(frozen=True)
class ToyOptions:
    """The toy backend's own option."""

    answer: str = field(default="None", metadata={"help": "what every completion returns"})

    def __post_init__(self) -> None:
        if not self.answer.strip():
            raise UserError("backend answer must not be empty.")


class ToyBackend(BackendBase):
    """Completes every prompt with `return <answer>`."""

    Options = ToyOptions

    def __init__(self, spec: BackendSpec) -> None:
        self.spec = spec
        self.identity = f"toy|{spec.model}|{spec.options.answer}"

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        for position, request in enumerate(requests):
            body = f"    return {self.spec.options.answer}  # sample {{}}\n"
            yield position, [body.format(index) for index in request.indices]


@pytest.fixture
def toy_kind():
    BACKENDS.register("toy", f"{__name__}:ToyBackend")
    yield "toy"
    BACKENDS.unregister("toy")


def test_load_backend_picks_up_a_registered_kind(toy_kind):
    spec = BackendSpec(kind="toy", model="m", answer="42")
    assert type(spec.options).__name__ == "ToyOptions" and spec.options.answer == "42"
    backend = load_backend(spec)
    assert type(backend).__name__ == "ToyBackend" and backend.identity == "toy|m|42"
    assert backend.complete("def f():\n", DecodingConfig(), [0, 1]) == [
        "    return 42  # sample 0\n",
        "    return 42  # sample 1\n",
    ]
    assert spec.describe() == {"kind": "toy", "model": "m", "answer": "42"}
    assert BackendSpec(kind="toy").options.answer == "None"  # the option's own default


def test_flat_config_keys_are_the_kinds_own(toy_kind):
    spec = BackendSpec.from_mapping({"kind": "toy", "model": "m", "answer": "1"}, "models[0]")
    assert spec == BackendSpec(kind="toy", model="m", answer="1")
    assert BackendSpec.from_mapping(spec.describe()) == spec  # describe() round-trips
    with pytest.raises(UserError, match=r"models\[0\]\.answr .*did you mean 'answer'"):
        BackendSpec.from_mapping({"kind": "toy", "answr": "1"}, "models[0]")
    with pytest.raises(UserError, match="known keys: kind, model, answer"):
        BackendSpec.from_mapping({"kind": "toy", "batch_size": 2}, "models[0]")
    with pytest.raises(UserError, match="answer must not be empty"):
        BackendSpec(kind="toy", answer=" ")
    with pytest.raises(UserError, match="did you mean 'toy'"):
        BackendSpec(kind="tyo")


def test_config_layer_reads_and_writes_flat_specs(toy_kind):
    from benchmarks.common.config import to_dict
    from boi.runner import RunConfig

    data = {
        "models": [
            {"kind": "toy", "model": "m", "answer": "1"},
            {"kind": "openai", "model": "x", "base_url": "http://127.0.0.1:8000/v1", "retries": 3},
        ]
    }
    config = from_mapping(RunConfig, data)
    toy, served = config.models
    assert toy.options.answer == "1" and served.options.retries == 3
    assert served.options.timeout_s == 300.0 and served.options.base_url.endswith("/v1")
    models = to_dict(config)["models"]
    assert models[0] == {"kind": "toy", "model": "m", "answer": "1"}
    assert models[1]["retries"] == 3 and "options" not in models[1]
    with pytest.raises(UserError, match=r"models\[1\]\.retires .*did you mean 'retries'"):
        from_mapping(
            RunConfig, {"models": [data["models"][0], {**data["models"][1], "retires": 1}]}
        )


def test_the_runner_runs_a_registered_backend(toy_kind, tmp_path, monkeypatch):
    import perturb.keywords as keywords
    from boi.runner import load_run_config, run_robustness
    from tests.keyword_helpers import tiny_embedder

    monkeypatch.setattr(keywords, "sentence_transformer_embedder", lambda *a, **k: tiny_embedder())
    config = load_run_config(
        None,
        {
            "out_dir": str(tmp_path / "run"),
            "datasets": [{"name": "humaneval", "task_ids": ["HumanEval/23"]}],
            "transforms": ["original", "anonymize"],
            "name_only_probe": False,
            "models": [{"kind": "toy", "model": "m", "answer": "len(string)"}],
            "settings": [
                {"label": "greedy", "ks": [1], "decoding": {"temperature": 0, "n": 1}},
            ],
            "seeds": [0],
            "bootstrap": 10,
        },
    )
    outcome = run_robustness(config, log=lambda message: None)
    assert outcome.generation["generated"] == 2  # two variants, one sample each
    manifest = json.loads((outcome.out_dir / "manifest.json").read_text())
    assert manifest["config"]["models"] == [{"kind": "toy", "model": "m", "answer": "len(string)"}]
    cache = [json.loads(line) for line in (outcome.out_dir / "generations.jsonl").open()]
    assert {row["backend"] for row in cache} == {"toy|m|len(string)"}
    results = [
        json.loads(line)
        for path in (outcome.out_dir / "results").rglob("*.jsonl")
        for line in path.open()
    ]
    # HumanEval/23 is strlen: the toy's answer is right, under both transformations.
    assert {r["model"] for r in results} == {"toy-m"}
    assert len(results) == 2 and all(r["passed"] for r in results)


# --------------------------------------------------------------------------- import rules

GENERATION = Path(__file__).resolve().parent.parent / "benchmarks" / "generation"
BACKEND_MODULES = {"_hf", "_vllm", "_openai"}


def test_the_shared_modules_import_no_backend():
    """Backends import the base and the spec, never the reverse (the registry names them as
    strings); cycles and imports inside functions are tests/test_architecture.py's business."""
    for path in GENERATION.glob("*.py"):
        if path.stem in BACKEND_MODULES:
            continue
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.rpartition(".")[2])
            elif isinstance(node, ast.Import):
                imported.update(alias.name.rpartition(".")[2] for alias in node.names)
        assert not imported & BACKEND_MODULES, f"{path.name} imports a backend"
