from __future__ import annotations

import os
from pathlib import Path

import pytest

# The upstream data files: $BOI_SHARED_DATA, else ../shared/data beside the checkout (the
# maintainers' machine), else the checkout's data/, where `boi data fetch` puts them (what a
# contributor has); tests that need them skip cleanly where none holds them.
_BESIDE = Path(__file__).resolve().parents[2] / "shared" / "data"
SHARED_DATA = Path(
    os.environ.get(
        "BOI_SHARED_DATA",
        _BESIDE if _BESIDE.is_dir() else Path(__file__).resolve().parents[1] / "data",
    )
)
MBPP_JSONL = SHARED_DATA / "mbpp" / "mbpp.jsonl"
CODE_CONTESTS_JSONL = SHARED_DATA / "code_contests" / "code_contests_sample_train_short.jsonl"

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def mbpp_path() -> Path:
    if not MBPP_JSONL.exists():
        pytest.skip(f"{MBPP_JSONL} not present")
    return MBPP_JSONL


@pytest.fixture(scope="session")
def code_contests_path() -> Path:
    if not CODE_CONTESTS_JSONL.exists():
        pytest.skip(f"{CODE_CONTESTS_JSONL} not present")
    return CODE_CONTESTS_JSONL


@pytest.fixture(scope="session")
def humaneval():
    from benchmarks.loaders import load_benchmark

    return load_benchmark("humaneval")


@pytest.fixture(scope="session")
def mbpp(mbpp_path):
    from benchmarks.loaders import load_benchmark

    return load_benchmark("mbpp", mbpp_path)


# The sweeps that judge every variant of a family with its reference solution take every
# SWEEP_STRIDE-th MBPP problem (a fixed, spread-out quarter: 244 of 974) unless
# BOI_FULL_SWEEP=1 asks for all of them: the five sweeps judged tens of thousands of variants,
# 12 of CI's 20 minutes, most of them MBPP's. HumanEval's 164 are always swept whole.
SWEEP_STRIDE = 4


@pytest.fixture(scope="session")
def mbpp_sweep(mbpp):
    import dataclasses

    if os.environ.get("BOI_FULL_SWEEP") == "1":
        return mbpp
    return dataclasses.replace(mbpp, problems=mbpp.problems[::SWEEP_STRIDE])


@pytest.fixture(scope="session")
def code_contests(code_contests_path):
    from benchmarks.loaders import load_benchmark

    return load_benchmark("code_contests", code_contests_path)


@pytest.fixture(scope="session")
def tiny_bias_classifier(tmp_path_factory) -> Path:
    """A code bias classifier folder trained in seconds on a tiny in-process BERT."""
    from bias.modifier_prompts.classifier import ClassifierConfig, train_classifier
    from tests.bias_helpers import annotated_data, tiny_encoder

    root = tmp_path_factory.mktemp("bias-classifier")
    config = ClassifierConfig(
        data=str(annotated_data(root / "data")),
        base_model=str(tiny_encoder(root / "encoder")),
        out=str(root / "classifier"),
        epochs=2,
        batch_size=8,
        max_length=64,
        learning_rate=1e-3,
    )
    folder, _ = train_classifier(config, log=lambda _: None)
    return folder
