"""The static HTML report: one self-contained file, no script, no network.

Prompts, completions, task ids and model names are untrusted text: every piece goes through
`html.escape`, the page carries no JavaScript, and a Content-Security-Policy forbids scripts and
any load except embedded `data:` images, so even a missed escape could not run code or phone home.
Navigation is plain anchors and collapsed `<details>`, which keeps 164 problems x 8
transformations readable.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from benchmarks.problem import Problem
from benchmarks.report import _plots
from benchmarks.report._data import (
    ORIGINAL,
    Run,
    Sample,
    TransformNames,
)
from benchmarks.report._highlight import ADDED, REMOVED, REPLACED, PromptDiff, Segment, diff_prompts
from benchmarks.report._severity import SEVERITY_NOTE, severity_rows
from benchmarks.report._table import (
    ROBUST_NOTE,
    column_groups,
    column_title,
    format_cell,
    format_percent,
    problems_counted,
    robust_rows,
)
from benchmarks.robustness import solved

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#1f2d3d;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px} header p{margin:4px 0 0;color:#c8d3df;font-size:13px}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid #ddd;padding:8px 24px;z-index:2}
nav a{margin-right:16px;color:#0b5cad;text-decoration:none;font-weight:600}
main{padding:8px 24px 40px;max-width:1500px}
h2{border-bottom:2px solid #1f2d3d;padding-bottom:4px;margin-top:32px}
h3{margin:20px 0 8px}
table{border-collapse:collapse;margin:8px 0 12px;background:#fff}
th,td{border:1px solid #d5d9de;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#eef1f4} td:first-child,th:first-child{text-align:left}
.note{color:#555;font-size:12.5px;max-width:1100px}
.warn{color:#8a4b00;background:#fff3df;border:1px solid #f0c27a;padding:4px 8px;border-radius:4px}
figure{margin:8px 0 16px;display:inline-block;vertical-align:top;background:#fff;border:1px solid #e3e6ea;padding:6px}
figure img{max-width:100%;height:auto;display:block}
figcaption{font-size:12px;color:#555;max-width:720px}
details{margin:4px 0;background:#fff;border:1px solid #dde1e6;border-radius:4px}
details>summary{cursor:pointer;padding:5px 10px;list-style-position:inside}
details[open]>summary{border-bottom:1px solid #eee;background:#f5f7f9}
details .body{padding:6px 12px 10px}
details details{margin-left:6px}
.sbs{display:grid;grid-template-columns:1fr 1fr;gap:10px}
.sbs h4{margin:4px 0}
pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:8px;margin:4px 0;white-space:pre-wrap;word-break:break-word;font:12.5px/1.4 ui-monospace,Menlo,Consolas,monospace;max-height:480px;overflow:auto}
del.removed{background:#ffd7d5;color:#82071e;text-decoration:line-through}
mark.replaced{background:#ffe58f;color:inherit}
ins.added{background:#ccf2d1;text-decoration:none}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;margin-left:4px;border:1px solid transparent}
.pass{background:#dff5e1;color:#116329;border-color:#a6dcae}
.fail{background:#ffe3e0;color:#a40e26;border-color:#f3b2aa}
.runs{display:grid;grid-template-columns:repeat(auto-fill,minmax(440px,1fr));gap:4px 14px}
.run>p{margin:8px 0 2px}
.sample{margin:4px 0}
.sample .meta{font-size:12px;color:#555}
.grid td{text-align:center;padding:2px 6px;font-size:12px}
.grid th{position:sticky;top:37px;z-index:1}
.grid td:first-child{text-align:left}
.grid a{color:inherit;text-decoration:none}
.s-solved{background:#dff5e1}.s-failed{background:#eceff2;color:#777}.s-lost{background:#ffc9c2;font-weight:700}.s-gained{background:#c9e1ff;font-weight:700}.s-mixed{background:#ffe9b8}.s-na{color:#aaa}
.legend span{display:inline-block;padding:1px 8px;margin-right:6px;border:1px solid #ccc}
.ctl input[type=radio]{position:absolute;opacity:0;pointer-events:none}
.ctl label{display:inline-block;padding:1px 9px;margin:2px 4px 2px 0;border:1px solid #c8ced6;border-radius:10px;background:#fff;cursor:pointer;font-size:12.5px}
.ctl .filters,.ctl .sorts{margin:4px 0;font-size:12.5px;color:#555}
.tabs{display:flex;flex-wrap:wrap;align-items:center}
.tabs>.tab{order:1;flex-basis:100%;display:none}
.tabs>input:checked+label,.ctl>input.f0:checked~.filters label.f0{background:#1f2d3d;color:#fff}
.tabs>input:checked+label+.tab{display:block}
.tab td,.tab th{text-align:left}
"""
# CSS-only filters of `filtered_tables` (the CSP forbids scripts): radio `fN` shows the rows
# of category N (class `cN`) and hides the others, in every sorted copy of the table.
MAX_FILTERS = 12
CSS += "".join(
    f".ctl>input.f{i}:checked~.filters label.f{i}{{background:#1f2d3d;color:#fff}}"
    f".ctl>input.f{i}:checked~.tabs tr.r:not(.c{i}){{display:none}}\n"
    for i in range(1, MAX_FILTERS + 1)
)

# No scripts, no remote loads: only inline styles and data: images.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

STATE_SYMBOLS = {"solved": "✓", "failed": "·", "lost": "✗", "gained": "+"}


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def html_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """A plain table: a header row, then one row per item, every cell escaped."""
    head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table>{head}{body}</table>"


def natural_key(text: str) -> list[Any]:
    """Sort key that orders task ids as people do (HumanEval/9 before HumanEval/10)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _segments_html(segments: Sequence[Segment], titles: Mapping[str, str]) -> str:
    tags = {REMOVED: "del", REPLACED: "mark", ADDED: "ins"}
    out = []
    for segment in segments:
        if segment.mark is None:
            out.append(esc(segment.text))
        else:
            tag = tags[segment.mark]
            out.append(
                f'<{tag} class="{segment.mark}" title="{esc(titles.get(segment.mark, segment.mark))}">'
                f"{esc(segment.text)}</{tag}>"
            )
    return "".join(out)


def _change_summary(variant: Problem) -> str:
    """What the transformation says it changed, in a few words."""
    if not variant.lineage:
        return ""
    changes = variant.lineage[-1].changes
    parts = []
    for entry in changes.get("removed", ()) or ():
        if entry.get("keyword"):
            parts.append(f"removed {entry['keyword']!r}")
        elif entry.get("block"):
            parts.append(f"removed the {entry['block']} block")
    if changes.get("old_name") and changes.get("new_name"):
        parts.append(f"renamed {changes['old_name']} → {changes['new_name']}")
    return "; ".join(parts)


def _pick_samples(samples: Sequence[Sample], limit: int) -> tuple[list[tuple[Sample, int]], int]:
    """Distinct completions (with how many samples produced each), passing and failing mixed."""
    groups: Counter[tuple[str, bool, str]] = Counter(
        (s.completion, s.passed, s.result) for s in samples
    )
    first: dict[tuple[str, bool, str], Sample] = {}
    for s in samples:
        first.setdefault((s.completion, s.passed, s.result), s)
    ranked = sorted(groups, key=lambda key: (-groups[key], first[key].index))
    passing = [key for key in ranked if key[1]]
    failing = [key for key in ranked if not key[1]]
    half = (limit + 1) // 2
    chosen = passing[:half] + failing[: limit - min(half, len(passing))]
    chosen += passing[half : half + limit - len(chosen)]
    chosen.sort(key=lambda key: (-groups[key], first[key].index))
    return [(first[key], groups[key]) for key in chosen], len(groups)


def _samples_html(run: Run, task_id: str, limit: int) -> str:
    samples = run.samples.get(task_id)
    if not samples:
        return ""
    passed = sum(s.passed for s in samples)
    picked, distinct = _pick_samples(samples, limit)
    parts = [
        f'<div class="run"><p><b>{esc(run.model)}</b>, {esc(run.setting)}: {passed}/{len(samples)} passed'
        f" ({distinct} distinct"
        + (f", {len(picked)} shown" if len(picked) < distinct else "")
        + ")</p>"
    ]
    for sample, count in picked:
        verdict = "pass" if sample.passed else "fail"
        result = "" if sample.passed else f" — {esc(sample.result)}"
        parts.append(
            f'<div class="sample"><span class="badge {verdict}">{"passed" if sample.passed else "failed"}</span>'
            f'<span class="meta"> sample #{sample.index}'
            + (f" (+{count - 1} identical)" if count > 1 else "")
            + f"{result}</span><pre>{esc(sample.completion)}</pre></div>"
        )
    parts.append("</div>")
    return "".join(parts)


def _runs_html(runs: Sequence[Run], task_id: str, limit: int) -> str:
    """Each run's completions of one task, runs side by side."""
    blocks = [_samples_html(run, task_id, limit) for run in runs]
    blocks = [b for b in blocks if b]
    return f'<div class="runs">{"".join(blocks)}</div>' if blocks else ""


def _variant_states(run: Run, flips: Mapping[str, Any]) -> dict[str, str]:
    """Variant task id -> solved/failed (kept), lost or gained, from the flip tables."""
    states: dict[str, str] = {}
    for transform, table in flips.items():
        original = run.baseline(transform)
        lost, gained = set(table["lost"]), set(table["gained"])
        for source, variants in run.variants(transform).items():
            if source not in original:
                continue
            was_solved = solved(sum(map(bool, original[source])), len(original[source]))
            for variant_id in variants:
                if variant_id in lost:
                    states[variant_id] = "lost"
                elif variant_id in gained:
                    states[variant_id] = "gained"
                else:
                    states[variant_id] = "solved" if was_solved else "failed"
    return states


class _Page:
    def __init__(
        self,
        table: Mapping[str, Any],
        runs: Sequence[Run],
        problems: Mapping[str, Problem],
        critic: Mapping[str, float] | None,
        completions_per_variant: int,
    ) -> None:
        self.table = table
        self.runs = runs
        self.problems = problems
        self.critic = critic
        self.limit = completions_per_variant
        self.names = runs[0].names if runs else TransformNames()
        flips = {(f["dataset"], f["model"], f["setting"]): f["transforms"] for f in table["flips"]}
        self.flips = flips
        self.states = {run.key: _variant_states(run, flips[run.key]) for run in runs}
        self.anchors: dict[str, str] = {}

    def anchor(self, source: str) -> str:
        return self.anchors.setdefault(source, f"p{len(self.anchors)}")

    # --- sections -----------------------------------------------------------------------

    def tables(self) -> str:
        boot = self.table["bootstrap"]
        out = ['<h2 id="table">pass@k under each transformation</h2>']
        for (dataset, model), indices in column_groups(self.table):
            out.append(f"<h3>{esc(dataset)} / {esc(model)}</h3><table><tr><th>Method</th>")
            out += [f"<th>{esc(column_title(self.table['columns'][i]))}</th>" for i in indices]
            out.append("<th>problems</th></tr>")
            for row in self.table["rows"]:
                if all(row["cells"][i] is None for i in indices):
                    continue
                out.append(f"<tr><td>{esc(row['label'])}</td>")
                for i in indices:
                    cell = row["cells"][i]
                    tip = (
                        f"{cell['problems']} problems; pass@k CI {format_percent(cell['ci_low'])}"
                        f"-{format_percent(cell['ci_high'])}"
                        if cell
                        else "no data"
                    )
                    out.append(
                        f'<td title="{esc(tip)}">{esc(format_cell(cell, row["transform"]))}</td>'
                    )
                out.append(f"<td>{esc(problems_counted(row, indices))}</td></tr>")
            out.append("</table>")
            robust = robust_rows(self.table, indices)
            if robust:
                header = ["ReCode robust metrics"] + [
                    f"{column_title(self.table['columns'][i])}: pass / drop / relative"
                    for i in indices
                ]
                out.append(html_table(header, ([label, *cells] for label, cells in robust)))
                out.append(f'<p class="note">{esc(ROBUST_NOTE)}</p>')
        out.append(
            '<p class="note">pass@k in percent. A transformation\'s value is the mean over the problems '
            "where it applies of the mean over its variants (Drop One: one variant per keyword). In "
            "parentheses: the change relative to Original on the same problems, with its "
            f"{100 * boot['confidence']:g}% paired bootstrap interval ({boot['resamples']} resamples, "
            f"seed {boot['seed']}). Hover a cell for its problem count and the pass@k interval.</p>"
        )
        return "".join(out)

    def figures(self) -> str:
        out = ['<h2 id="plots">Plots</h2>']
        for (dataset, model), indices in column_groups(self.table):
            out.append(f"<h3>{esc(dataset)} / {esc(model)}</h3>")
            context = _plots.PlotContext(
                self.table, self.runs, self.critic, dataset, model, indices
            )
            for draw in _plots.PLOTS.values():
                figure = draw(context)
                if figure is None:
                    continue
                if figure.image is None:
                    out.append(f'<p class="warn">{esc(figure.caption)}</p>')
                else:
                    out.append(figure_html(figure.image, figure.caption))
        for model in dict.fromkeys(column["model"] for column in self.table["columns"]):
            side = _plots.side_by_side_figure(self.table, model)
            if side is not None and side.image is not None:
                out.append(f"<h3>Side by side: {esc(model)}</h3>")
                out.append(figure_html(side.image, side.caption))
        return "".join(out)

    def flip_section(self) -> str:
        out = [
            '<h2 id="flips">Flips: solved originally vs under each transformation</h2>',
            '<p class="note">A problem or variant counts as solved when at least one sample passed. '
            "Each variant is one pair (Drop One has one per keyword).</p>",
        ]
        for run in self.runs:
            flips = self.flips[run.key]
            if not flips:
                continue
            out.append(f"<h3>{esc(run.dataset)} / {esc(run.model)} / {esc(run.setting)}</h3>")
            out.append(
                "<table><tr><th>transformation</th><th>kept solved</th><th>kept failed</th>"
                "<th>lost</th><th>gained</th></tr>"
            )
            for transform in self.names.order(flips):
                f = flips[transform]
                out.append(
                    f"<tr><td>{esc(self.names.label(transform))}</td><td>{f['kept_solved']}</td>"
                    f"<td>{f['kept_failed']}</td><td>{len(f['lost'])}</td><td>{len(f['gained'])}</td></tr>"
                )
            out.append("</table>")
            out.append(self._grid(run))
        return "".join(out)

    def _grid(self, run: Run) -> str:
        transforms = [t for t in run.transforms() if t in self.flips[run.key]]
        states = self.states[run.key]
        original = run.original()
        out = [
            '<details><summary>Per-problem flip matrix</summary><div class="body">',
            '<p class="legend"><span class="s-solved">✓ kept solved</span><span class="s-failed">· kept failed</span>'
            '<span class="s-lost">✗ lost</span><span class="s-gained">+ gained</span>'
            '<span class="s-mixed">mixed (several variants)</span></p>',
            '<table class="grid"><tr><th>problem</th><th>original</th>',
        ]
        out += [f"<th>{esc(self.names.label(t))}</th>" for t in transforms]
        out.append("</tr>")
        for source in sorted(original, key=natural_key):
            was_solved = solved(sum(map(bool, original[source])), len(original[source]))
            out.append(
                f'<tr><td><a href="#{self.anchor(source)}">{esc(source)}</a></td>'
                f'<td class="s-{"solved" if was_solved else "failed"}">{sum(original[source])}/{len(original[source])}</td>'
            )
            for transform in transforms:
                variant_ids = run.variants(transform).get(source, {})
                counts = Counter(states[v] for v in variant_ids if v in states)
                if not counts:
                    out.append('<td class="s-na" title="does not apply">n/a</td>')
                    continue
                css = next(iter(counts)) if len(counts) == 1 else "mixed"
                text = " ".join(
                    f"{counts[s] if len(variant_ids) > 1 else ''}{STATE_SYMBOLS[s]}"
                    for s in ("lost", "gained", "solved", "failed")
                    if counts[s]
                )
                title = ", ".join(f"{counts[s]} {s}" for s in counts)
                out.append(f'<td class="s-{css}" title="{esc(title)}">{esc(text)}</td>')
            out.append("</tr>")
        out.append("</table></div></details>")
        return "".join(out)

    def name_only_section(self) -> str:
        entries = self.table["name_only"]
        if not entries:
            return ""
        out = [
            '<h2 id="name-only">Name-only probe</h2>',
            '<p class="note">Generation from the name block alone (paper appendix 10.8). A problem is '
            "solvable from its name when at least one name-only sample passed; such names carry "
            "the solution (or mislead when the original still fails).</p>",
        ]
        for entry in entries:
            out.append(
                f"<h3>{esc(entry['dataset'])} / {esc(entry['model'])} / {esc(entry['setting'])}: "
                f"{entry['solvable']} of {len(entry['problems'])} solvable from the name</h3>"
            )
            out.append(
                '<details><summary>Per problem</summary><div class="body"><table><tr><th>problem</th>'
                "<th>name-only pass@1</th><th>original pass@1</th><th>solvable</th></tr>"
            )
            for p in sorted(
                entry["problems"],
                key=lambda p: (not p["solvable"], natural_key(p["source_task_id"])),
            ):
                out.append(
                    f'<tr><td><a href="#{self.anchor(p["source_task_id"])}">{esc(p["source_task_id"])}</a></td>'
                    f"<td>{format_percent(p['pass_at_1'])}</td><td>{format_percent(p['original_pass_at_1'])}</td>"
                    f"<td>{'yes' if p['solvable'] else 'no'}</td></tr>"
                )
            out.append("</table></div></details>")
        return "".join(out)

    def problems_section(self) -> str:
        out = [
            '<h2 id="problems">Problems</h2>',
            '<p class="note">Per problem, collapsed: the original prompt and, per variant, original '
            'and perturbed side by side. <del class="removed">Removed text</del> comes from the '
            'transformation\'s recorded spans; <mark class="replaced">replaced text</mark> (a '
            'renamed function) and <ins class="added">added text</ins> from a token diff. Completions '
            f"are grouped when identical; at most {self.limit} distinct completions per variant and "
            "run are shown.</p>",
        ]
        by_dataset: dict[str, set[str]] = {}
        for run in self.runs:
            by_dataset.setdefault(run.dataset, set()).update(run.source_of.values())
        for dataset, sources in by_dataset.items():
            out.append(f"<h3>{esc(dataset)} ({len(sources)} problems)</h3>")
            runs = [r for r in self.runs if r.dataset == dataset]
            for source in sorted(sources, key=natural_key):
                out.append(self._problem(source, runs))
        return "".join(out)

    def _problem(self, source: str, runs: Sequence[Run]) -> str:
        original = self.problems.get(source)
        variant_ids: dict[str, str] = {}
        for run in runs:
            for task_id, src in run.source_of.items():
                if src == source and run.transform_of[task_id] != ORIGINAL:
                    variant_ids[task_id] = run.transform_of[task_id]
        order = {t: i for i, t in enumerate(self.names.order(variant_ids.values()))}
        ordered = sorted(variant_ids, key=lambda v: (order[variant_ids[v]], natural_key(v)))
        badges = []
        for run in runs:
            outcomes = run.original().get(source)
            if outcomes is not None:
                css = "pass" if any(outcomes) else "fail"
                badges.append(
                    f'<span class="badge {css}">{esc(run.model)} {esc(run.setting)}: {sum(outcomes)}/{len(outcomes)}</span>'
                )
            lost = sorted(
                {
                    self.names.label(variant_ids[v])
                    for v, s in self.states[run.key].items()
                    if s == "lost" and v in variant_ids
                },
            )
            if lost:
                badges.append(f'<span class="badge fail">lost under {esc(", ".join(lost))}</span>')
        name = f" · {original.entry_point}" if original is not None and original.entry_point else ""
        out = [
            f'<details id="{self.anchor(source)}"><summary><b>{esc(source)}</b>{esc(name)} {"".join(badges)}</summary><div class="body">'
        ]
        if original is not None:
            samples = _runs_html(runs, source, self.limit)
            out.append(
                f'<details><summary>Original</summary><div class="body"><pre>{esc(original.prompt)}</pre>{samples}</div></details>'
            )
        for variant_id in ordered:
            out.append(self._variant(variant_id, variant_ids[variant_id], original, runs))
        out.append("</div></details>")
        return "".join(out)

    def _variant(
        self, variant_id: str, transform: str, original: Problem | None, runs: Sequence[Run]
    ) -> str:
        variant = self.problems.get(variant_id)
        verdicts = []
        for run in runs:
            outcomes = run.samples.get(variant_id)
            if outcomes:
                state = self.states[run.key].get(variant_id)
                css = "pass" if any(s.passed for s in outcomes) else "fail"
                verdicts.append(
                    f'<span class="badge {css}">{esc(run.model)} {esc(run.setting)}: '
                    f"{sum(s.passed for s in outcomes)}/{len(outcomes)}{' ' + esc(state) if state in ('lost', 'gained') else ''}</span>"
                )
        summary = _change_summary(variant) if variant is not None else ""
        similarity = self.critic.get(variant_id) if self.critic else None
        if similarity is not None:
            summary += f"{'; ' if summary else ''}critic similarity {similarity:.1f}%"
        body = []
        if variant is not None and original is not None:
            body.append(_side_by_side(variant, diff_prompts(original.prompt, variant)))
        elif variant is not None:
            body.append(f"<h4>Prompt</h4><pre>{esc(variant.prompt)}</pre>")
        else:
            body.append('<p class="note">No problem record for this variant: prompt not shown.</p>')
        body.append(_runs_html(runs, variant_id, self.limit))
        return (
            f"<details><summary>{esc(self.names.label(transform))} <code>{esc(variant_id)}</code>"
            f"{' — ' + esc(summary) if summary else ''} {''.join(verdicts)}</summary>"
            f'<div class="body">{"".join(body)}</div></details>'
        )


def markdown_html(text: str) -> str:
    """The Markdown our table writers produce (headings, pipe tables, bullet lists, paragraphs)
    as HTML, every piece escaped: one source for the .md file and the page."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line:
            i += 1
        elif line.startswith("#"):
            level = min(6, len(line) - len(line.lstrip("#")) + 1)
            out.append(f"<h{level}>{esc(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            body = [r for r in rows[1:] if not all(set(c) <= set("-: ") for c in r)]
            out.append(html_table(rows[0], body))
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{esc(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        else:
            paragraph = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "|", "- ")):
                paragraph.append(lines[i].strip())
                i += 1
            out.append(f'<p class="note">{esc(" ".join(paragraph))}</p>')
    return "".join(out)


def figure_html(image: str, caption: str) -> str:
    """An embedded PNG (base64) with its caption."""
    return (
        f'<figure><img alt="{esc(caption)}" src="data:image/png;base64,{image}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def _side_by_side(variant: Problem, diff: PromptDiff) -> str:
    changes = variant.lineage[-1].changes if variant.lineage else {}
    renamed = (
        f"renamed from {changes['old_name']} to {changes['new_name']}"
        if changes.get("old_name")
        else "replaced"
    )
    titles = {REMOVED: "removed by the transformation", REPLACED: renamed, ADDED: "added"}
    warnings = "".join(f'<p class="warn">{esc(w)}</p>' for w in diff.warnings)
    return (
        f'{warnings}<div class="sbs"><div><h4>Original</h4><pre>{_segments_html(diff.original, titles)}</pre></div>'
        f"<div><h4>Perturbed</h4><pre>{_segments_html(diff.variant, titles)}</pre></div></div>"
    )


def render_html(
    table: Mapping[str, Any],
    runs: Sequence[Run],
    problems: Mapping[str, Problem],
    *,
    critic: Mapping[str, float] | None = None,
    completions_per_variant: int = 3,
    title: str = "boi report",
    notes: Sequence[str] = (),
    extra_sections: Sequence[tuple[str, str, str]] = (),
    severity: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The whole report as one HTML document (figures embedded as base64 PNG); `notes` are
    shown first, as warnings; `severity` (`severity_ranking`) follows the table;
    `extra_sections` (anchor, title, HTML) come last."""
    page = _Page(table, runs, problems, critic, completions_per_variant)
    samples = sum(len(s) for run in runs for s in run.samples.values())
    boot = table["bootstrap"]
    sections = [
        "".join(f'<p class="warn">{esc(note)}</p>' for note in notes),
        page.tables(),
        severity_html(severity) if severity else "",
        page.figures(),
        page.flip_section(),
        page.name_only_section(),
        page.problems_section(),
    ]
    nav = [("table", "Table")]
    nav += [("severity", "Severity")] if severity else []
    nav += [("plots", "Plots"), ("flips", "Flips")]
    if table["name_only"]:
        nav.append(("name-only", "Name only"))
    nav.append(("problems", "Problems"))
    for anchor, section_title, body in extra_sections:
        sections.append(f'<section id="{esc(anchor)}">{body}</section>')
        nav.append((anchor, section_title))
    runs_text = ", ".join(f"{r.dataset} / {r.model} / {r.setting}" for r in runs)
    subtitle = (
        f"{len(runs)} run{'' if len(runs) == 1 else 's'} ({runs_text}); {samples} samples; "
        f"bootstrap {boot['resamples']} resamples, seed {boot['seed']}"
    )
    return html_document(title, subtitle, nav, sections)


def severity_html(ranking: Sequence[Mapping[str, Any]]) -> str:
    """The severity ranking section (`benchmarks.report._severity`)."""
    table = html_table(*severity_rows(ranking))
    return f'<h2 id="severity">Severity ranking</h2>{table}<p class="note">{esc(SEVERITY_NOTE)}</p>'


def html_document(
    title: str, subtitle: str, nav: Sequence[tuple[str, str]], sections: Sequence[str]
) -> str:
    """A whole report page: header, anchor navigation (anchor, text), sections (HTML), with the
    shared style and the no-script Content-Security-Policy. Every boi report page is this."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>"
        "<nav>" + "".join(f'<a href="#{esc(a)}">{esc(t)}</a>' for a, t in nav) + "</nav>"
        "<main>" + "".join(sections) + "</main></body></html>\n"
    )


Cell = str | tuple[str, str]
"""A table cell: its text, or (text, CSS class) such as `pass` / `fail`."""


def filtered_tables(
    group: str,
    header: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    *,
    sorts: Sequence[tuple[str, Sequence[int]]],
    categories: Sequence[str] = (),
    row_categories: Sequence[Collection[str]] = (),
) -> str:
    """One table a reader can sort and filter without script (the page's CSP forbids it).

    Each sort is (tab title, row order as indices into `rows`): every order is drawn as its own
    copy of the table behind a radio tab. `categories` (at most MAX_FILTERS) become filter
    radios; `row_categories[i]` names the categories row i belongs to (several allowed), and a
    chosen filter hides the other rows of every copy. `group` must be unique on the page (it
    names the radio groups). Every text is escaped.
    """
    if len(categories) > MAX_FILTERS:
        raise ValueError(f"at most {MAX_FILTERS} filter categories, got {len(categories)}")
    if not sorts:
        raise ValueError("filtered_tables needs at least one sort order")
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", group)
    index = {name: i + 1 for i, name in enumerate(categories)}
    member = [
        " ".join(f"c{index[c]}" for c in sorted(row_categories[i], key=index.__getitem__))
        if i < len(row_categories)
        else ""
        for i in range(len(rows))
    ]
    out = ['<div class="ctl">']
    if categories:
        out += [
            f'<input type="radio" name="{slug}-f" id="{slug}-f{i}" class="f{i}"'
            + (" checked>" if i == 0 else ">")
            for i in range(len(categories) + 1)
        ]
        counts = [len(rows)] + [sum(f"c{i}" in m.split() for m in member) for i in index.values()]
        labels = ["all", *categories]
        out.append('<p class="filters">Show: ')
        out += [
            f'<label for="{slug}-f{i}" class="f{i}">{esc(name)} ({counts[i]})</label>'
            for i, name in enumerate(labels)
        ]
        out.append("</p>")
    head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"
    out.append('<div class="tabs"><span class="sorts">Sort by:&nbsp;</span>')
    for number, (title, order) in enumerate(sorts):
        out.append(
            f'<input type="radio" name="{slug}-s" id="{slug}-s{number}"'
            + (" checked>" if number == 0 else ">")
            + f'<label for="{slug}-s{number}">{esc(title)}</label><div class="tab"><table>{head}'
        )
        for i in order:
            cells = "".join(
                f'<td class="{esc(cell[1])}">{esc(cell[0])}</td>'
                if isinstance(cell, tuple)
                else f"<td>{esc(cell)}</td>"
                for cell in rows[i]
            )
            out.append(f'<tr class="{f"r {member[i]}".strip()}">{cells}</tr>')
        out.append("</table></div>")
    out.append("</div></div>")
    return "".join(out)
