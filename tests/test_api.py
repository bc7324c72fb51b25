"""The Python API (`import boi`): the README's example runs and prints what the README says,
the version is the installed one, `import boi` stays light, and the entry points refuse bad
input in one sentence."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import boi
import boi.api
from benchmarks.common.errors import UserError
from boi.analysis.hints import HintsConfig, audit_runs
from boi.runner import RunConfig
from tests.keyword_helpers import tiny_embedder

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "vllm", "matplotlib", "datasets", "keybert", "numpy")


def readme_example() -> tuple[str, str]:
    """The code block of the README's "Python API" section and the output block after it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    output = re.search(r"```text\n(.*?)```", section, re.S)
    assert code and output, "the README's Python API section lost its example or its output"
    return code.group(1), output.group(1)


def python(code: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_readme_example_runs_and_prints_what_the_readme_says(tmp_path: Path) -> None:
    code, expected = readme_example()
    assert python(code, cwd=tmp_path) == expected
    manifest = json.loads((tmp_path / "runs" / "api" / "manifest.json").read_text())
    assert manifest["completed"] and manifest["config"]["models"][0]["kind"] == "reference"


def test_version_is_the_installed_one() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    version = re.search(r'^version = "(.+)"$', pyproject, re.M)
    assert version, "pyproject.toml lost its version"
    assert python("import boi; print(boi.__version__)").strip() == version.group(1)
    assert boi.__version__ == version.group(1)


def test_import_boi_imports_no_library_and_loads_the_api_on_first_use() -> None:
    code = (
        "import sys\n"
        "import boi\n"
        f"heavy = {HEAVY!r}\n"
        "print(','.join(m for m in (*heavy, 'boi.api', 'benchmarks') if m in sys.modules))\n"
        "boi.load_dataset\n"
        "print('boi.api' in sys.modules, ','.join(m for m in heavy[:-1] if m in sys.modules))\n"
    )
    assert python(code).splitlines() == ["", "True "]


def test_every_exported_name_is_documented_and_listed() -> None:
    for name in boi.__all__:
        value = getattr(boi, name)
        assert name == "__version__" or value.__doc__, name
        assert name in dir(boi)
    assert set(boi.__all__) - {"__version__"} == set(boi.api.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = boi.nope  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def problems() -> dict[str, boi.Problem]:
    return {p.task_id: p for p in boi.load_dataset("humaneval")}


def test_transform_refuses_unknown_names_and_parameters(problems: dict) -> None:
    problem = problems["HumanEval/2"]
    with pytest.raises(UserError, match="did you mean 'anonymize'"):
        boi.transform(problem, "anonymise")
    with pytest.raises(UserError, match="no parameter 'nmae'"):
        boi.transform(problem, "anonymize", nmae="XYZ")
    with pytest.raises(boi.NotApplicableError) as raised:
        boi.transform(problem, "anonymize", name="truncate_number")
    assert raised.value.task_id == "HumanEval/2" and raised.value.transform == "anonymize"
    assert "already called truncate_number" in str(raised.value)


def test_a_variant_can_be_transformed_again(problems: dict) -> None:
    [anonymous] = boi.transform(problems["HumanEval/2"], "anonymize")
    [both] = boi.transform(anonymous, "drop_examples")
    assert both.task_id == "HumanEval/2::anonymize::drop_examples"
    assert [step.transform for step in both.lineage] == ["anonymize", "drop_examples"]
    assert "func(" in both.prompt and ">>>" not in both.prompt


def test_keyword_transformations_get_one_embedder(problems: dict, monkeypatch) -> None:
    loads = []

    def embedder(name: str, batch_size: int) -> object:
        loads.append(name)
        return tiny_embedder()

    monkeypatch.setattr(boi.api, "sentence_transformer_embedder", embedder)
    boi.api._keyword_embedder.cache_clear()
    try:
        variants = boi.transform(problems["HumanEval/0"], "drop_one")
        boi.transform(problems["HumanEval/1"], "drop_all")
        boi.transform(problems["HumanEval/2"], "anonymize")
    finally:
        boi.api._keyword_embedder.cache_clear()
    assert loads == ["embedded"]
    assert variants and all(v.task_id.startswith("HumanEval/0::drop_one/") for v in variants)


def test_execute_takes_settings_and_keeps_its_results_where_asked(
    problems: dict, tmp_path: Path
) -> None:
    problem = problems["HumanEval/2"]
    sample = {"task_id": problem.task_id, "completion": problem.canonical_solution, "seed": 7}
    with pytest.raises(UserError, match="did you mean 'timeout'"):
        boi.execute([problem], [sample], timout=5)
    out = tmp_path / "results.jsonl"
    report = boi.execute([problem], [sample], out=out, workers=1, timeout=4)
    assert report.results[0]["passed"] and report.results[0]["seed"] == 7
    assert report.summary["config"]["workers"] == 1
    assert report.summary["limits"]["base_timeout"] == 4.0
    assert json.loads(out.read_text().splitlines()[0])["status"] == "passed"


def test_open_run_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is not a boi run directory"):
        boi.open_run(tmp_path)
    with pytest.raises(UserError, match="does not exist"):
        boi.open_run(tmp_path / "missing")


def test_open_run_reads_every_part_of_a_run_directory() -> None:
    """`boi.open_run` is the one reader of a run directory (boi/run_reader.py): typed config,
    settings and models, problems, results per model and setting, outcomes, generation cache,
    critic and report, here on a directory an older boi wrote (read only)."""
    old = ROOT / "tests" / "data" / "runs" / "dd66ed1"
    run = boi.open_run(old)
    assert isinstance(run, boi.Run) and boi.open_run(run) is run
    assert isinstance(run.run_config, RunConfig) and list(run.run_config.seeds) == run.seeds
    assert [s.label for s in run.settings] == [m.label for m in run.models] == ["reference"]
    problems = run.problems_by_id()
    assert len(problems) == 9 and set(run.dataset_labels().values()) == {"humaneval"}
    assert run.results_files("reference", "reference") == run.results_files()
    assert run.results("reference", "reference") == run.results() and run.results("other") == []
    outcomes = run.outcomes()
    assert set(outcomes.passed) == {("reference", "reference", t) for t in problems}
    assert all(outcomes.passed.values()) and set(outcomes.datasets.values()) == {"humaneval"}
    assert sum(1 for _ in run.generation_records()) == 9
    assert run.critic_similarities() == {} and list(run.critic_records()) == []
    assert len(run.table()) == len(run.report_table()["rows"]) == 3
    # An analysis takes the Run itself.
    assert len(audit_runs([run], HintsConfig())) == 3
