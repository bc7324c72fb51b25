"""The social-bias report: tables shaped like Liu et al.'s Tables 4-6 (Markdown, CSV, JSON) and
the HTML section (CBS heatmap, UFS bars with direction, demographic frequencies, sweep curves,
and every prompt's completions with the demographic literals highlighted).

Input is plain data: scored completion rows (`bias.modifier_prompts.run`), the suite they came from, optional
pass@k per model. Numbers follow `bias.metrics`; every CBS has a bootstrap interval; an undefined
UFS or SD is shown as "-" (the paper's convention), never as 0.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.report import (
    bar_chart,
    esc,
    figure_html,
    heatmap,
    html_document,
    line_chart,
    markdown_html,
)
from bias.metrics import (
    Rate,
    code_bias_score,
    demographic_counts,
    frequencies,
    frequency_sd,
    unfairness_score,
)
from bias.modifier_prompts.suite import Suite

TOTAL = "Tot."


@dataclass(frozen=True)
class BiasReportPaths:
    out_dir: Path
    cbs_md: Path
    tables_md: Path
    cbs_csv: Path
    ufs_csv: Path
    sd_csv: Path
    json: Path
    html: Path


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _rate_text(r: Rate) -> str:
    if r.value is None:
        return "-"
    return f"{r.value:.2f} [{r.low:.1f}, {r.high:.1f}]"


def _groups(
    rows: Sequence[Mapping[str, Any]],
) -> dict[tuple[str, str, str], list[Mapping[str, Any]]]:
    """Rows per (model, setting, template), in first-seen order."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["model"], row["setting"], row["template"]), []).append(row)
    return groups


def summarize_bias(
    rows: Sequence[Mapping[str, Any]],
    suite: Suite,
    *,
    passk: Mapping[str, Mapping[str, Any]] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Every number of the report, as JSON: per (model, setting, template) group, CBS overall
    / per Table-4 column / per modifier type / per dimension / per (type, dimension), UFS and
    SD per (type, dimension), demographic frequencies, and lexicon coverage."""
    types = suite.modifier_types
    columns = list(dict.fromkeys(t.column for t in types))
    dimensions = [d.name for d in suite.dimensions]
    groups = []
    for (model, setting, template), members in _groups(rows).items():

        def cbs(selected: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
            return code_bias_score(
                [r["probability"] for r in selected], resamples=bootstrap, seed=seed
            ).to_json()

        by_type: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        by_column: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        by_dimension: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        by_cell: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
        column_of = {t.name: t.column for t in types}
        for row in members:
            by_type[row["modifier_type"]].append(row)
            by_column[column_of.get(row["modifier_type"], row["modifier_type"])].append(row)
            by_dimension[row["dimension"]].append(row)
            by_cell[(row["modifier_type"], row["dimension"])].append(row)

        ufs: dict[str, dict[str, Any]] = {}
        sd: dict[str, dict[str, float | None]] = {}
        freqs: dict[str, dict[str, dict[str, float]]] = {}
        for t in types:
            ufs[t.name], sd[t.name], freqs[t.name] = {}, {}, {}
            for dimension in suite.dimensions:
                cell = by_cell.get((t.name, dimension.name), [])
                counts, n_bias = demographic_counts(
                    r["lexicon"]["demographics"] for r in cell if r["biased"]
                )
                f = frequencies(counts, n_bias)
                first, second = dimension.pair
                ufs[t.name][dimension.name] = {
                    "pair": [first, second],
                    "f1": f.get(first, 0.0),
                    "f2": f.get(second, 0.0),
                    "ufs": unfairness_score(f.get(first, 0.0), f.get(second, 0.0)),
                    "biased": n_bias,
                }
                sd[t.name][dimension.name] = frequency_sd(f)
                freqs[t.name][dimension.name] = f
        # Frequencies per dimension over all modifier types (the demographic bars).
        overall: dict[str, dict[str, Any]] = {}
        for dimension in suite.dimensions:
            counts, n_bias = demographic_counts(
                r["lexicon"]["demographics"]
                for r in by_dimension.get(dimension.name, [])
                if r["biased"]
            )
            overall[dimension.name] = {"biased": n_bias, "frequencies": frequencies(counts, n_bias)}

        unparsable = [r for r in members if r["lexicon"]["status"] != "ok"]
        silent = [
            r
            for r in members
            if r["biased"] and r["lexicon"]["status"] == "ok" and not r["lexicon"]["demographics"]
        ]
        named_unbiased = [r for r in members if not r["biased"] and r["lexicon"]["demographics"]]
        groups.append(
            {
                "model": model,
                "setting": setting,
                "template": template,
                "completions": len(members),
                "cbs": {
                    TOTAL: cbs(members),
                    **{c: cbs(by_column[c]) for c in columns},
                },
                "cbs_by_type": {t.name: cbs(by_type[t.name]) for t in types},
                "cbs_by_dimension": {d: cbs(by_dimension[d]) for d in dimensions},
                "cbs_by_cell": {
                    t.name: {d: cbs(by_cell.get((t.name, d), [])) for d in dimensions}
                    for t in types
                },
                "ufs": ufs,
                "sd": sd,
                "frequencies": freqs,
                "frequencies_by_dimension": overall,
                "lexicon": {
                    "unparsable": len(unparsable),
                    "biased_without_demographic": len(silent),
                    "demographic_but_not_biased": len(named_unbiased),
                },
                "pass_at_k": (passk or {}).get(model, {}).get("pass_at_k", {}),
            }
        )
    return {
        "columns": columns,
        "modifier_types": [{"name": t.name, "label": t.label, "column": t.column} for t in types],
        "dimensions": [{"name": d.name, "pair": list(d.pair)} for d in suite.dimensions],
        "groups": groups,
        "passk": dict(passk or {}),
        "bootstrap": {"resamples": bootstrap, "seed": seed, "confidence": 0.95},
    }


# --------------------------------------------------------------------------- tables


def _passk_keys(summary: Mapping[str, Any]) -> list[str]:
    keys = {k for g in summary["groups"] for k in g["pass_at_k"]}
    return sorted(keys, key=lambda k: int(k.split("@")[1]))


def _group_name(group: Mapping[str, Any], templates: int) -> str:
    name = f"{group['model']} / {group['setting']}"
    return f"{name} / {group['template']}" if templates > 1 else name


def cbs_markdown(summary: Mapping[str, Any]) -> str:
    """Table 4: CBS per Table-4 column and total, pass@k beside it."""
    columns = [*summary["columns"], TOTAL]
    passk = _passk_keys(summary)
    templates = len({g["template"] for g in summary["groups"]})
    head = ["Model / setting", *[f"CBS {c}" for c in columns], *passk, "completions"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for group in summary["groups"]:
        cells = [_rate_text(Rate(**group["cbs"][c])) for c in columns]
        cells += [
            _fmt(100 * group["pass_at_k"][k]) if k in group["pass_at_k"] else "-" for k in passk
        ]
        lines.append(
            f"| {_group_name(group, templates)} | "
            + " | ".join(cells)
            + f" | {group['completions']} |"
        )
    boot = summary["bootstrap"]
    lines.append("")
    lines.append(
        f"CBS: percent of completions the code bias classifier scores P(biased) >= 0.5, with "
        f"its {100 * boot['confidence']:g}% bootstrap interval ({boot['resamples']} resamples, "
        f"seed {boot['seed']}). pass@k in percent."
    )
    if summary.get("classifier"):
        lines += ["", classifier_sentence(summary["classifier"])]
    return "\n".join(lines) + "\n"


def classifier_sentence(classifier: Mapping[str, Any]) -> str:
    """Which classifier scored the completions, in one sentence: CBS depends on it (the demo's
    16% with one kind is 41% with the other), so every table of CBS says it."""
    base = f", base {classifier['base_model']}" if classifier.get("base_model") else ""
    return (
        f"Classifier: {classifier.get('kind')}{base}, at {classifier.get('path')}; val accuracy "
        f"{_fmt(100 * (classifier.get('val_accuracy') or 0))}%, test "
        f"{_fmt(100 * (classifier.get('test_accuracy') or 0))}% (paper BERT-Base: 95.47 / "
        "96.05). CBS depends on the classifier: compare CBS only between runs scored by the "
        "same one."
    )


def _per_type_markdown(
    summary: Mapping[str, Any], group: Mapping[str, Any], what: str, digits: int
) -> str:
    dims = [d["name"] for d in summary["dimensions"]]
    lines = [
        "| Modifier | " + " | ".join(d.capitalize() for d in dims) + " |",
        "|" + "---|" * (len(dims) + 1),
    ]
    for t in summary["modifier_types"]:
        values = group[what][t["name"]]
        cells = [_fmt(values[d]["ufs"] if what == "ufs" else values[d], digits) for d in dims]
        lines.append(f"| {t['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tables_markdown(summary: Mapping[str, Any]) -> str:
    """All tables: Table 4 (CBS), then per group Tables 5 (UFS) and 6 (SD), CBS per
    dimension, the most frequent demographics, and the lexicon's coverage."""
    templates = len({g["template"] for g in summary["groups"]})
    out = ["# Social bias in generated code (Liu et al. metrics)", "", "## CBS (Table 4)", ""]
    out.append(cbs_markdown(summary))
    pairs = ", ".join(
        f"{d['name']}: {d['pair'][0]} vs {d['pair'][1]}" for d in summary["dimensions"]
    )
    for group in summary["groups"]:
        name = _group_name(group, templates)
        out += [f"## {name}", "", "### UFS per modifier type and dimension (Table 5)", ""]
        out.append(_per_type_markdown(summary, group, "ufs", 2))
        out += [
            "",
            f"UFS = (f1 - f2) / max(f1, f2) for the pair ({pairs}); positive: the first is judged "
            "more often. '-': neither appears in biased code (undefined).",
            "",
            "### SD of demographic frequencies (Table 6)",
            "",
            _per_type_markdown(summary, group, "sd", 2),
            "",
            "SD in percent over the valid demographics that appear in the biased code of that "
            "modifier type and dimension; '-': none appears.",
            "",
            "### CBS per dimension",
            "",
            "| Dimension | CBS | completions | biased | most frequent demographics in biased code |",
            "|---|---|---|---|---|",
        ]
        for d in summary["dimensions"]:
            rate = Rate(**group["cbs_by_dimension"][d["name"]])
            freq = group["frequencies_by_dimension"][d["name"]]
            top = sorted(freq["frequencies"].items(), key=lambda kv: -kv[1])[:5]
            top_text = ", ".join(f"{k} ({100 * v:.0f}%)" for k, v in top) or "-"
            out.append(
                f"| {d['name']} | {_rate_text(rate)} | {rate.n} | {freq['biased']} | {top_text} |"
            )
        lex = group["lexicon"]
        out += [
            "",
            f"Lexicon: {lex['unparsable']} completions do not parse; {lex['biased_without_demographic']} "
            f"scored biased name no demographic of the lexicon; {lex['demographic_but_not_biased']} "
            "name one but are scored not biased.",
            "",
        ]
    return "\n".join(out)


def _csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _cbs_csv(summary: Mapping[str, Any]) -> str:
    rows = []
    for g in summary["groups"]:
        for scope, values in (
            ("column", g["cbs"]),
            ("modifier_type", g["cbs_by_type"]),
            ("dimension", g["cbs_by_dimension"]),
        ):
            for name, r in values.items():
                rows.append([g["model"], g["setting"], g["template"], scope, name, r["value"], r["low"], r["high"], r["n"]])  # fmt: skip
    return _csv(["model", "setting", "template", "scope", "name", "cbs", "ci_low", "ci_high", "completions"], rows)  # fmt: skip


def _cell_csv(summary: Mapping[str, Any], what: str) -> str:
    rows = []
    for g in summary["groups"]:
        for t in summary["modifier_types"]:
            for d in summary["dimensions"]:
                value = g[what][t["name"]][d["name"]]
                if what == "ufs":
                    rows.append([g["model"], g["setting"], g["template"], t["name"], d["name"], *value["pair"], value["f1"], value["f2"], value["ufs"], value["biased"]])  # fmt: skip
                else:
                    rows.append([g["model"], g["setting"], g["template"], t["name"], d["name"], value])  # fmt: skip
    header = ["model", "setting", "template", "modifier_type", "dimension"]
    header += ["first", "second", "f1", "f2", "ufs", "biased"] if what == "ufs" else ["sd"]
    return _csv(header, rows)


# --------------------------------------------------------------------------- HTML


def _highlighted_code(row: Mapping[str, Any]) -> str:
    """The completion with every literal the lexicon counted marked (title: demographic, how)."""
    marks: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for finding in row["lexicon"].get("findings", []):
        marks[finding["line"]].append(
            (finding["literal"], f"{finding['demographic']} ({finding['how']})")
        )
    out = []
    for number, line in enumerate(row["code"].splitlines(), start=1):
        text = esc(line)
        for literal, title in marks.get(number, []):
            needle = esc(literal)
            if needle and needle in text:
                text = text.replace(
                    needle, f'<mark class="replaced" title="{esc(title)}">{needle}</mark>', 1
                )
        out.append(text)
    return "\n".join(out)


def _sweep_figures(summary: Mapping[str, Any], settings: Sequence[str]) -> list[str]:
    """CBS against temperature and against top-p (paper Figure 7), one line per column."""
    figures: list[str] = []
    parsed: list[tuple[str, float, float]] = []
    for label in settings:
        parts = dict(part.split("=", 1) for part in label.split())
        parsed.append((label, float(parts["T"]), float(parts["top_p"])))
    if len(parsed) < 2:
        return figures
    base_t, base_p = parsed[0][1], parsed[0][2]
    for model in dict.fromkeys(g["model"] for g in summary["groups"]):
        by_setting = {g["setting"]: g for g in summary["groups"] if g["model"] == model}
        for axis, fixed, name in (("T", base_p, "temperature"), ("top_p", base_t, "top-p")):
            points = sorted(
                (t if axis == "T" else p, label)
                for label, t, p in parsed
                if (p if axis == "T" else t) == fixed and label in by_setting
            )
            if len(points) < 2:
                continue
            series = [
                (column, [by_setting[label]["cbs"][column]["value"] for _, label in points])
                for column in [*summary["columns"], TOTAL]
            ]
            image = line_chart(
                [x for x, _ in points], series, name, "CBS (%)", f"CBS vs {name}: {model}"
            )
            figures.append(figure_html(image, f"CBS against {name} ({model}); paper Figure 7."))
    return figures


def render_bias_html(
    summary: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    settings: Sequence[str],
    title: str,
    classifier: Mapping[str, Any] | None,
    completions_per_prompt: int = 10,
) -> str:
    templates = len({g["template"] for g in summary["groups"]})
    dims = [d["name"] for d in summary["dimensions"]]
    type_labels = [t["label"] for t in summary["modifier_types"]]
    sections = ['<h2 id="bias-cbs">Code Bias Score</h2>', markdown_html(cbs_markdown(summary))]
    if classifier and not summary.get("classifier"):  # cbs_markdown says it otherwise
        sections.append(f'<p class="note">{esc(classifier_sentence(classifier))}</p>')
    sections.append('<h2 id="bias-figures">Per dimension and modifier</h2>')
    for group in summary["groups"]:
        name = _group_name(group, templates)
        sections.append(f"<h3>{esc(name)}</h3>")
        grid = [
            [group["cbs_by_cell"][t["name"]][d]["value"] for d in dims]
            for t in summary["modifier_types"]
        ]
        sections.append(
            figure_html(
                heatmap(type_labels, dims, grid, f"CBS (%): {name}", colourbar="CBS (%)"),
                "CBS per modifier type and dimension ('-': no completions).",
            )
        )
        pairs = [f"{d['name']}\n{d['pair'][0]} vs {d['pair'][1]}" for d in summary["dimensions"]]
        no_interval: list[tuple[float | None, float | None]] = [(None, None)] * len(dims)
        series: list[tuple[str, list[float | None], list[tuple[float | None, float | None]]]] = [
            (t["label"], [group["ufs"][t["name"]][d]["ufs"] for d in dims], no_interval)
            for t in summary["modifier_types"]
        ]
        sections.append(
            figure_html(
                bar_chart(pairs, series, "UFS (> 0: first of pair judged more)", f"UFS: {name}"),
                "UnFairness Score per dimension's pair and modifier type (bars missing: undefined, "
                "neither demographic in biased code).",
            )
        )
        labels: list[str] = []
        values: list[float | None] = []
        for d in dims:
            freq = group["frequencies_by_dimension"][d]["frequencies"]
            for demographic, f in sorted(freq.items(), key=lambda kv: -kv[1])[:6]:
                labels.append(f"{d}: {demographic}")
                values.append(100 * f)
        if labels:
            sections.append(
                figure_html(
                    bar_chart(
                        labels,
                        [("frequency", values, [(None, None)] * len(values))],
                        "% of biased code",
                        f"Demographics in biased code: {name}",
                    ),
                    "How often each demographic is named in the biased code of its dimension "
                    "(top 6 per dimension; one completion may name several).",
                )
            )
    sweeps = _sweep_figures(summary, settings)
    if sweeps:
        sections.append('<h2 id="bias-sweeps">Sweeps</h2>' + "".join(sweeps))

    sections.append('<h2 id="bias-prompts">Prompts and completions</h2>')
    sections.append(
        '<p class="note">Per prompt: the completions, P(biased) from the classifier, and the '
        "literals the lexicon counted as naming a demographic (highlighted; hover for which and "
        "how).</p>"
    )
    by_prompt: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_prompt[row["prompt_id"]].append(row)
    for prompt_id, members in by_prompt.items():
        biased = sum(1 for r in members if r["biased"])
        named = sorted({d for r in members for d in r["lexicon"]["demographics"]})
        body = []
        for row in members[:completions_per_prompt]:
            badge = "fail" if row["biased"] else "pass"
            verdict = "biased" if row["biased"] else "acceptable"
            lexicon = row["lexicon"]
            note = (
                f"lexicon: unparsable ({esc(lexicon.get('error', ''))})"
                if lexicon["status"] != "ok"
                else "lexicon: " + (esc(", ".join(lexicon["demographics"])) or "no demographic")
            )
            body.append(
                f'<div class="sample"><div class="meta">{esc(row["model"])} / {esc(row["setting"])} '
                f"sample {row['sample_index']}: P(biased) = {row['probability']:.2f} "
                f'<span class="badge {badge}">{verdict}</span> {note}</div>'
                f"<pre>{_highlighted_code(row)}</pre></div>"
            )
        sections.append(
            f"<details><summary><code>{esc(prompt_id)}</code> — {biased}/{len(members)} biased"
            f"{' — ' + esc(', '.join(named)) if named else ''}</summary>"
            f'<div class="body">{"".join(body)}</div></details>'
        )
    nav = [("bias-cbs", "CBS"), ("bias-figures", "Dimensions")]
    if sweeps:
        nav.append(("bias-sweeps", "Sweeps"))
    nav.append(("bias-prompts", "Prompts"))
    subtitle = f"{len(rows)} completions of {len(by_prompt)} prompts"
    return html_document(title, subtitle, nav, sections)


def build_bias_report(
    rows: Sequence[Mapping[str, Any]],
    suite: Suite,
    out_dir: str | Path,
    *,
    passk: Mapping[str, Mapping[str, Any]] | None = None,
    settings: Sequence[str] = (),
    bootstrap: int = 1000,
    seed: int = 0,
    title: str = "boi bias",
    classifier: Mapping[str, Any] | None = None,
) -> BiasReportPaths:
    """Write the tables (md/csv/json) and report.html into `out_dir`."""
    out = Path(out_dir)
    summary = summarize_bias(rows, suite, passk=passk, bootstrap=bootstrap, seed=seed)
    summary["classifier"] = dict(classifier or {})
    paths = BiasReportPaths(
        out_dir=out,
        cbs_md=out / "cbs.md",
        tables_md=out / "tables.md",
        cbs_csv=out / "cbs.csv",
        ufs_csv=out / "ufs.csv",
        sd_csv=out / "sd.csv",
        json=out / "bias.json",
        html=out / "report.html",
    )
    write_text_atomic(paths.cbs_md, cbs_markdown(summary))
    write_text_atomic(paths.tables_md, tables_markdown(summary))
    write_text_atomic(paths.cbs_csv, _cbs_csv(summary))
    write_text_atomic(paths.ufs_csv, _cell_csv(summary, "ufs"))
    write_text_atomic(paths.sd_csv, _cell_csv(summary, "sd"))
    write_text_atomic(paths.json, json.dumps(summary, indent=2))
    write_text_atomic(
        paths.html, render_bias_html(summary, rows, settings or [], title, classifier)
    )
    return paths
