"""Adding a plot to the report is one registered function: this file is the only edit."""

import pytest

from benchmarks.report import PLOTS, Figure, PlotContext, build_report, plot
from tests.report_helpers import catalogue, rows

T, F = True, False


@pytest.fixture
def problems_per_transform():
    """A registered plot for the test's duration: bars of problems counted per transformation."""

    @plot("problems_per_transform")
    def draw(context: PlotContext) -> Figure:
        counts = {
            row["label"]: row["cells"][context.indices[0]]["problems"]
            for row in context.table["rows"]
            if row["cells"][context.indices[0]]
        }
        text = ", ".join(f"{label}={n}" for label, n in counts.items())
        return Figure(None, f"problems per transformation in {context.name}: {text}")

    yield draw
    PLOTS.unregister("problems_per_transform")


def test_a_registered_plot_is_drawn_in_the_report(problems_per_transform, tmp_path):
    problems = catalogue()
    passes = {
        "T/0": [T, F],
        "T/1": [T, T],
        "T/0::drop_examples": [F, F],
        "T/1::drop_examples": [T, F],
    }
    paths = build_report(rows(problems, passes), problems, {"T=0.2": [1]}, tmp_path, bootstrap=0)
    page = paths.html.read_text()
    assert "problems per transformation in tiny / m: Original=2, drop_examples=2" in page
    # The built-in plots are still there, before it.
    assert page.index("pass@k per transformation") < page.index("problems per transformation")
