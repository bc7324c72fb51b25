"""The report's figures as base64 PNG, drawn with matplotlib's Agg backend (no display needed).

Every figure of the report's Plots section is a function registered with `@plot(name)`: it gets
a `PlotContext` (the table, the runs, critic data, one dataset / model group) and returns a
`Figure` or None (nothing to draw). The HTML report draws every registered plot for every group,
in registration order, so adding a plot is one function here.

matplotlib is imported inside the functions so `import benchmarks` stays fast. Labels come from
user data (model names, settings); math-text parsing is off so a `$` in a name is just a `$`.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.common.registry import Registry
from benchmarks.passk import pass_at_k
from benchmarks.report._data import NAME_ONLY, Run
from benchmarks.stats import is_defined

# Colour-blind-safe (Okabe-Ito), cycled per bar series / transformation.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")


@dataclass(frozen=True)
class PlotContext:
    """What a plot may draw from: the table JSON, the runs, critic similarities (or None), and
    the group being drawn (one dataset / model; `indices` are its table columns)."""

    table: Mapping[str, Any]
    runs: Sequence[Run]
    critic: Mapping[str, float] | None
    dataset: str
    model: str
    indices: Sequence[int]

    @property
    def name(self) -> str:
        return f"{self.dataset} / {self.model}"


@dataclass(frozen=True)
class Figure:
    """A drawn figure (base64 PNG) and its caption; without an image the caption is shown as a
    warning (the data was given but nothing could be drawn from it)."""

    image: str | None
    caption: str


PlotFunction = Callable[[PlotContext], Figure | None]
PLOTS: Registry[PlotFunction] = Registry("plot", base=Callable)


def plot(name: str) -> Callable[[PlotFunction], PlotFunction]:
    """Register a figure of the report's Plots section under `name` (a name already registered
    is an error naming both)."""
    return PLOTS.add(name)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> str:
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


# (legend label, bar heights, error-bar intervals); None where a value is undefined.
Series = tuple[str, list[float | None], list[tuple[float | None, float | None]]]


def bar_chart(
    labels: Sequence[str],
    series: Sequence[Series],
    ylabel: str,
    title: str,
) -> str:
    """Grouped bars (base64 PNG): one group per label, one bar per series, with interval error
    bars; None values are left out."""
    plt = _pyplot()
    with plt.rc_context({"text.parse_math": False}):
        fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(labels) + 2), 3.6))
        width = 0.8 / max(1, len(series))
        drawn = 0
        for s, (name, values, intervals) in enumerate(series):
            xs, ys, lows, highs = [], [], [], []
            for i, (value, (low, high)) in enumerate(zip(values, intervals, strict=True)):
                # is_defined() is False for None; the `is None` tests let mypy see that too.
                if value is None or not is_defined(value):
                    continue
                xs.append(i - 0.4 + width * (s + 0.5))
                ys.append(value)
                lows.append(value - low if low is not None and is_defined(low) else 0.0)
                highs.append(high - value if high is not None and is_defined(high) else 0.0)
            if not xs:
                continue  # nothing defined: no empty legend entry
            drawn += 1
            has_interval = any(high is not None for _, high in intervals)
            ax.bar(
                xs,
                ys,
                width,
                yerr=[lows, highs] if has_interval else None,
                capsize=3 if has_interval else 0,
                label=name,
                color=COLOURS[s % len(COLOURS)],
                error_kw={"elinewidth": 1},
            )
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30, ha="right")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.axhline(0, color="#444", linewidth=0.8)
        ax.grid(axis="y", alpha=0.3)
        if len(series) > 1 and drawn:
            ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return _png(fig)


def heatmap(
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float | None]],
    title: str,
    *,
    vmin: float = 0.0,
    vmax: float = 100.0,
    colourbar: str = "",
    fmt: str = "{:.0f}",
) -> str:
    """A labelled heatmap (base64 PNG) with each cell's value written in it; None cells are
    grey and marked '-' (undefined, not zero)."""
    import numpy as np

    plt = _pyplot()
    with plt.rc_context({"text.parse_math": False}):
        grid = np.array(
            [[np.nan if v is None or not is_defined(v) else v for v in row] for row in values],
            dtype=float,
        )
        fig, ax = plt.subplots(
            figsize=(max(4.0, 0.9 * len(columns) + 2.5), max(2.2, 0.45 * len(rows) + 1.4))
        )
        cmap = plt.get_cmap("viridis").with_extremes(bad="#dddddd")
        image = ax.imshow(
            np.ma.masked_invalid(grid), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto"
        )
        ax.set_xticks(range(len(columns)))
        ax.set_xticklabels(columns, rotation=30, ha="right")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows)
        for i in range(len(rows)):
            for j in range(len(columns)):
                value = grid[i, j]
                text = "-" if math.isnan(value) else fmt.format(value)
                dark = not math.isnan(value) and value < vmin + 0.6 * (vmax - vmin)
                ax.text(j, i, text, ha="center", va="center", fontsize=8,
                        color="white" if dark else "black")  # fmt: skip
        fig.colorbar(image, ax=ax, label=colourbar, fraction=0.04)
        ax.set_title(title)
        return _png(fig)


def line_chart(
    xs: Sequence[float],
    series: Sequence[tuple[str, Sequence[float | None]]],
    xlabel: str,
    ylabel: str,
    title: str,
) -> str:
    """Lines over a shared x axis (base64 PNG), one per (legend label, values); None values
    are gaps."""
    plt = _pyplot()
    with plt.rc_context({"text.parse_math": False}):
        fig, ax = plt.subplots(figsize=(6.0, 3.6))
        for s, (name, values) in enumerate(series):
            ys = [float("nan") if v is None else v for v in values]
            ax.plot(xs, ys, marker="o", label=name, color=COLOURS[s % len(COLOURS)])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        if len(series) > 1:
            ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return _png(fig)


def scatter_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    xlabel: str,
    ylabel: str,
    title: str,
) -> str:
    """Points (base64 PNG), one colour per (legend label, [(x, y), ...]) series, with a line at
    y = 0; points that coincide are drawn half transparent, so a pile shows darker."""
    plt = _pyplot()
    with plt.rc_context({"text.parse_math": False}):
        fig, ax = plt.subplots(figsize=(6.0, 3.8))
        for s, (name, points) in enumerate(series):
            if not points:
                continue
            xs, ys = zip(*points, strict=True)
            ax.scatter(xs, ys, s=16, alpha=0.55, label=name, color=COLOURS[s % len(COLOURS)])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.axhline(0, color="#444", linewidth=0.8)
        ax.grid(alpha=0.3)
        if sum(1 for _, points in series if points) > 1:
            ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return _png(fig)


def _percent_series(
    table: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    indices: Sequence[int],
    value: str,
    low: str,
    high: str,
) -> list[Series]:
    """One bar series per table column: the cells' `value` in percent with [`low`, `high`]."""
    series: list[Series] = []
    for i in indices:
        column = table["columns"][i]
        cells = [r["cells"][i] for r in rows]
        series.append(
            (
                f"pass@{column['k']} ({column['setting']})",
                [100 * c[value] if c and is_defined(c[value]) else None for c in cells],
                [
                    (100 * c[low], 100 * c[high])
                    if c and is_defined(c[low]) and is_defined(c[high])
                    else (None, None)
                    for c in cells
                ],
            )
        )
    return series


def passk_figure(table: Mapping[str, Any], indices: Sequence[int], title: str) -> str:
    """pass@k (percent) per transformation, one bar per column, bootstrap intervals."""
    rows = [r for r in table["rows"] if any(r["cells"][i] is not None for i in indices)]
    series = _percent_series(table, rows, indices, "pass_at_k", "ci_low", "ci_high")
    return bar_chart([r["label"] for r in rows], series, "pass@k (%)", title)


def _change_series(
    table: Mapping[str, Any], indices: Sequence[int]
) -> tuple[list[Mapping[str, Any]], list[Series]]:
    """The rows other than Original that some column of `indices` holds, and one bar series per
    column: the change vs Original in percent with its paired interval, in the table's sign
    convention (negative = worse)."""
    rows = [
        r
        for r in table["rows"]
        if r["transform"] != "original" and any(r["cells"][i] is not None for i in indices)
    ]
    series = [
        (name, [None if v is None else -v for v in values], [(None if h is None else -h, None if lo is None else -lo) for lo, h in intervals])
        for name, values, intervals in _percent_series(table, rows, indices, "relative_drop", "drop_ci_low", "drop_ci_high")
    ]  # fmt: skip
    return rows, series


def drop_figure(table: Mapping[str, Any], indices: Sequence[int], title: str) -> str | None:
    """Relative drop vs Original (percent, paired) per transformation, with bootstrap intervals."""
    rows, series = _change_series(table, indices)
    if not rows:
        return None
    return bar_chart([r["label"] for r in rows], series, "change vs Original (%)", title)


def side_by_side_figure(table: Mapping[str, Any], model: str) -> Figure | None:
    """The change vs Original under each transformation, one bar per dataset, for one model:
    HumanEval-X's languages (or any datasets a run holds) side by side. One column per dataset
    (its first setting's smallest k); None with fewer than two datasets."""
    chosen: dict[str, int] = {}
    for index, column in enumerate(table["columns"]):
        if column["model"] == model:
            chosen.setdefault(column["dataset"], index)
    if len(chosen) < 2:
        return None
    indices = list(chosen.values())
    rows, by_column = _change_series(table, indices)
    if not rows:
        return None
    series = [
        (dataset, values, intervals)
        for dataset, (_, values, intervals) in zip(chosen, by_column, strict=True)
    ]
    first = table["columns"][indices[0]]
    image = bar_chart(
        [r["label"] for r in rows],
        series,
        f"change vs Original (%), pass@{first['k']}",
        f"Side by side: {model}",
    )
    return Figure(
        image,
        "The same model's change of pass@k relative to Original under each transformation, one "
        "bar per dataset (HumanEval-X's languages: the same problems translated), as in the "
        "table (negative = worse); error bars: paired bootstrap interval. Each dataset's own "
        "problems and variants: a transformation that applies to fewer problems in one language "
        "is measured on those.",
    )


def critic_figure(
    panels: Sequence[tuple[str, Mapping[str, list[tuple[float, float]]]]], title: str
) -> str | None:
    """Scatter of critic similarity vs change in pass@k, one panel per setting.

    `panels`: (panel title, transformation label -> [(similarity %, change in pass@k in points)]).
    """
    panels = [(name, points) for name, points in panels if any(points.values())]
    if not panels:
        return None
    import numpy as np

    plt = _pyplot()
    with plt.rc_context({"text.parse_math": False}):
        fig, axes = plt.subplots(
            1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False, sharey=True
        )
        # One colour per transformation across panels.
        labels = list(dict.fromkeys(label for _, points in panels for label in points))
        for ax, (name, points) in zip(axes[0], panels, strict=True):
            xs_all: list[float] = []
            ys_all: list[float] = []
            for label, pairs in points.items():
                if not pairs:
                    continue
                s = labels.index(label)
                xs, ys = zip(*pairs, strict=True)
                xs_all += xs
                ys_all += ys
                ax.scatter(xs, ys, s=14, alpha=0.7, label=label, color=COLOURS[s % len(COLOURS)])
            subtitle = name
            if len(xs_all) >= 3 and np.std(xs_all) > 0 and np.std(ys_all) > 0:
                subtitle += f"  (Pearson r = {np.corrcoef(xs_all, ys_all)[0, 1]:.2f}, {len(xs_all)} variants)"
            ax.set_title(subtitle, fontsize=9)
            ax.set_xlabel("critic similarity to the original (%)")
            ax.axhline(0, color="#444", linewidth=0.8)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("pass@k change vs original (points)")
        axes[0][-1].legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.suptitle(title, fontsize=10)
        return _png(fig)


# --------------------------------------------------------------------------- registered plots


@plot("pass_at_k")
def _passk_plot(context: PlotContext) -> Figure:
    return Figure(
        passk_figure(context.table, context.indices, f"pass@k per transformation: {context.name}"),
        "pass@k per transformation; error bars: bootstrap interval of the mean over problems.",
    )


@plot("relative_drop")
def _drop_plot(context: PlotContext) -> Figure | None:
    image = drop_figure(context.table, context.indices, f"Change vs Original: {context.name}")
    if image is None:
        return None
    return Figure(
        image,
        "Change of pass@k relative to Original on the same problems, as in the table "
        "(negative = worse); error bars: paired bootstrap interval.",
    )


def _pass(outcomes: Sequence[bool], k: int) -> float:
    return pass_at_k(len(outcomes), sum(outcomes), k)


@plot("critic_similarity")
def _critic_plot(context: PlotContext) -> Figure | None:
    """One point per variant: critic similarity against the change in pass@k."""
    critic = context.critic
    if critic is None:
        return None
    columns = context.table["columns"]
    panels, missing = [], 0
    for run in context.runs:
        if (run.dataset, run.model) != (context.dataset, context.model):
            continue
        k = min(columns[i]["k"] for i in context.indices if columns[i]["setting"] == run.setting)
        points: dict[str, list[tuple[float, float]]] = {}
        for transform in run.transforms():
            if transform == NAME_ONLY:
                continue
            original = run.baseline(transform)
            for source, variants in run.variants(transform).items():
                if source not in original or len(original[source]) < k:
                    continue
                base = _pass(original[source], k)
                for variant_id, outcomes in variants.items():
                    similarity = critic.get(variant_id)
                    if similarity is None or len(outcomes) < k or math.isnan(similarity):
                        missing += 1
                        continue
                    points.setdefault(run.names.label(transform), []).append(
                        (similarity, 100 * (_pass(outcomes, k) - base))
                    )
        panels.append((f"pass@{k} ({run.setting})", points))
    image = critic_figure(panels, f"Critic similarity vs pass@k change: {context.name}")
    if image is None:
        return Figure(
            None, "Critic data was given, but none of it names a variant of these results."
        )
    caption = (
        "Each point is one variant: its critic similarity to the original against its pass@k "
        "minus the original's (percentage points)."
    )
    if missing:
        caption += f" {missing} variants have no critic similarity and are not shown."
    return Figure(image, caption)
