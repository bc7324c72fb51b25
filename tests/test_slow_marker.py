"""The `slow` marker (issue 47): registered, and on the ZeRO-3 / DeepSpeed, Ray, virtualenv and
browser tests, so `pytest -m "not slow"` leaves those out while CI (`make test`) runs them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOW = {
    "test_finetune_zero3.py": ["test_zero3_two_cpu_ranks_partition_shard_train_and_export"],
    "test_ray.py": ["*"],
    "test_report_render.py": ["*"],
    "test_docs_site.py": [
        "test_the_site_shows_code_in_tables_whole_and_no_source_syntax",
        "test_the_check_sees_a_broken_code_span_and_an_escape",
    ],
    "test_sandbox_oracles.py": [
        "test_a_later_invocation_sees_the_same_counters_with_the_virtualenv_under_tmp"
    ],
    "test_sandbox_tiers.py": ["test_tmp_is_hidden_even_when_the_virtualenv_lives_there"],
}


def _is_slow(node: ast.expr) -> bool:
    return ast.unparse(node) == "pytest.mark.slow"


def test_slow_is_registered_and_ci_runs_it(pytestconfig) -> None:
    assert any(m.startswith("slow:") for m in pytestconfig.getini("markers"))
    assert "slow" not in " ".join(pytestconfig.getini("addopts"))
    for runner in ("Makefile", ".ci/run", "README.md"):
        assert "not slow" not in (ROOT / runner).read_text(encoding="utf-8"), runner


def test_the_heavy_tests_are_marked_slow() -> None:
    for name, tests in SLOW.items():
        module = ast.parse((ROOT / "tests" / name).read_text(encoding="utf-8"))
        whole = any(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)
            and _is_slow(n.value)
            for n in module.body
        )
        functions = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
        if tests == ["*"]:
            assert whole, f"{name}: every test is slow (pytestmark = pytest.mark.slow)"
            continue
        for test in tests:
            assert whole or any(map(_is_slow, functions[test].decorator_list)), f"{name}::{test}"
