"""The HTML reports render in headless Chromium (skipped where no Chromium is installed, except
in CI, which requires it)."""

import importlib.util
import os
from pathlib import Path

import pytest

from benchmarks.report import build_report
from tests.report_helpers import catalogue, rows

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "render_report.py"


def _render_module():
    spec = importlib.util.spec_from_file_location("render_report", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


render_report = _render_module()
# Headless Chromium renders each (`pytest -m "not slow"` leaves them out; CI runs them).
pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def chromium():
    """Skip without Chromium on a developer's machine; fail in CI, which claims to run these
    tests (`.ci/run` sets BOI_REQUIRE_CHROMIUM=1)."""
    if render_report.find_chromium() is None:
        if os.environ.get("BOI_REQUIRE_CHROMIUM") == "1":
            pytest.fail("no chromium binary, but BOI_REQUIRE_CHROMIUM=1: install chromium")
        pytest.skip("no chromium binary (apt-get install chromium)")


@pytest.mark.parametrize("expand", [False, True])
def test_report_renders_to_a_nontrivial_screenshot(tmp_path, expand):
    import numpy as np
    from PIL import Image

    problems = catalogue()
    passes = {task_id: [i % (2 + len(task_id) % 3) == 0 for i in range(6)] for task_id in problems}
    paths = build_report(
        rows(problems, passes), problems, {"T=0.2": [1, 5]}, tmp_path, bootstrap=50
    )
    png = render_report.render(
        paths.html, tmp_path / "shot.png", width=1200, height=1600, expand=expand
    )
    assert png.stat().st_size > 30_000
    pixels = np.asarray(Image.open(png).convert("L"), dtype=float)
    assert pixels.shape == (1600, 1200)
    # A blank or error page is nearly one colour; the report has text, tables and a plot.
    assert pixels.std() > 20
    assert (pixels < 100).mean() > 0.01  # dark text/lines cover a visible fraction


def test_the_bias_report_renders(tmp_path):
    import numpy as np
    from PIL import Image

    from bias.modifier_prompts.report import build_bias_report
    from bias.modifier_prompts.suite import SuiteConfig, load_suite
    from tests.bias_helpers import code

    suite = load_suite(SuiteConfig(modifiers_per_type=1))
    literals = ["white", "sick", "black", "female", "old"]
    rows = []
    for i, prompt in enumerate(suite.prompts):
        literal = literals[i % len(literals)]
        rows.append({
            "model": "m", "setting": "T=0.8 top_p=0.95", "template": "paper", "prompt_id": prompt.prompt_id,
            "modifier": prompt.modifier, "modifier_type": prompt.modifier_type, "dimension": prompt.dimension,
            "sample_index": 0, "code": code(prompt.modifier, prompt.dimension, literal),
            "probability": 0.9 if literal != "sick" else 0.1, "biased": literal != "sick",
            "lexicon": {"status": "ok", "demographics": [], "findings": []},
        })  # fmt: skip
    paths = build_bias_report(rows, suite, tmp_path, settings=["T=0.8 top_p=0.95"], bootstrap=20)
    png = render_report.render(paths.html, tmp_path / "shot.png", width=1200, height=1600)
    pixels = np.asarray(Image.open(png).convert("L"), dtype=float)
    assert pixels.std() > 20 and (pixels < 100).mean() > 0.01
