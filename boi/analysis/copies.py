"""Copy search (paper appendix 10.9): for each failing completion of a `boi run`, the code of a
training corpus it was heavily inspired by, and whether the anonymized variants' completions
still match where the original's did (does anonymization reduce copying?).

The corpus (--corpus, repeatable): a folder of source files, a .jsonl or .parquet file with a
code field, `stdlib` (this Python's standard library), `site-packages` (the installed packages'
sources), or a Hugging Face dataset name (needs the hub: HF_HUB_OFFLINE=0). Its function bodies
and short files are indexed once with MinHash LSH (datasketch; the index lives in --index,
default ~/.cache/boi/copy-index/<corpus hash>, and is rebuilt only when the corpus or the index
parameters change); binary, undecodable and oversized files are skipped and counted. Each
completion (the completion alone, not its prompt) is looked up, and the LSH candidates are
verified exactly: Jaccard similarity of token shingles (5 tokens by default), the share of the
completion's shingles found (containment), and the longest common run of tokens. A completion has a close
match when its best unit reaches --close-jaccard or --close-run.

Writes RUN_DIR/analysis/copies/: matches.jsonl (one record per completion searched, appended as
each is done; a rerun skips completions already searched and searches each distinct completion
once), summary.json (per transformation the share of completions with a close match, the
original-versus-anonymized comparison per problem, the index and the search speed, provenance),
and the report section.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.config import add_dataclass_arguments, from_mapping, overrides_from_args
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import JsonlAppender
from benchmarks.common.progress import progress_bar, stage
from benchmarks.common.provenance import config_hash, run_record
from benchmarks.copy_index import (
    CopyIndex,
    Corpus,
    IndexConfig,
    SearchResult,
    default_index_dir,
    ensure_index,
    resolve_corpus,
)
from benchmarks.report import bar_chart, esc, figure_html
from benchmarks.report.sections import analysis_dir, write_section
from boi.reporting import rebuild_run_report
from boi.run_reader import Run, open_run
from perturb.transforms import TRANSFORMS, transform_labels

NAME = "copies"
# Bump when a record's meaning changes: it is part of every record's search key, so a rerun
# searches again instead of mixing old and new numbers.
FORMAT = 1
ORIGINAL = "original"
ANONYMIZE = "anonymize"


@dataclass(frozen=True)
class CopiesConfig:
    """`boi analyze copies`: which run, which corpus, what counts as a copy."""

    run_dir: str = field(default="", metadata={"help": "the boi run directory"})
    corpus: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "the training corpus: a folder, a .jsonl/.parquet file with a code field, "
            "'stdlib', 'site-packages', or a Hugging Face dataset name (needs the hub)"
        },
    )
    index: str = field(
        default="",
        metadata={
            "help": "the index folder (empty: ~/.cache/boi/copy-index/<corpus hash>); built once, "
            "reused while the corpus and the index parameters are unchanged"
        },
    )
    all: bool = field(
        default=False, metadata={"help": "search the passing completions too, not only failures"}
    )
    top: int = field(default=5, metadata={"help": "corpus matches kept per completion"})
    max_candidates: int = field(
        default=50,
        metadata={
            "help": "LSH candidates verified exactly per completion (those with the highest "
            "estimated Jaccard)"
        },
    )
    close_jaccard: float = field(
        default=0.5,
        metadata={"help": "a close match shares at least this Jaccard of shingles ..."},
    )
    close_run: int = field(
        default=30, metadata={"help": "... or a run of at least this many identical tokens"}
    )
    workers: int = field(
        default=0, metadata={"help": "processes that read the corpus (0: min(8, CPUs))"}
    )
    report_limit: int = field(
        default=25,
        metadata={"help": "distinct completions shown with their matches in the report"},
    )
    indexing: IndexConfig = field(default_factory=IndexConfig)

    def __post_init__(self) -> None:
        if not self.corpus:
            raise UserError(
                "copy search needs a corpus; pass --corpus FOLDER, a .jsonl/.parquet file, "
                "'stdlib', 'site-packages' or a dataset name."
            )
        if self.top < 1 or self.max_candidates < 1:
            raise UserError("--top and --max-candidates must be at least 1.")
        if not 0.0 < self.close_jaccard <= 1.0 or self.close_run < 1:
            raise UserError("--close-jaccard must be in (0, 1] and --close-run at least 1 token.")


@dataclass(frozen=True)
class CopiesOutcome:
    summary: dict[str, Any]
    searched: int  # distinct completions searched now
    reused: int  # completion records already there, or sharing a searched completion
    index_built: bool
    path: Path


def _workers(config: CopiesConfig) -> int:
    return config.workers if config.workers > 0 else min(8, os.cpu_count() or 1)


def _anonymizing(transform: str) -> bool:
    """A transformation that renames the function: anonymize itself or a chain ending in it."""
    factory = TRANSFORMS.get(transform)
    return transform == ANONYMIZE or (
        factory is not None and ANONYMIZE in getattr(factory, "steps", ())
    )


def _completion_rows(run: Run) -> list[dict[str, Any]]:
    """Every executed completion of the run, with what the analysis needs; one sentence when the
    results are missing or were written by an incompatible version."""
    run_dir, problems = run.path, run.problems_by_id()
    by_file = run.results_by_file()
    if not by_file:
        raise UserError(
            f"{run_dir} has no results yet (results/<model>/<setting>.jsonl); let `boi run` "
            "finish first."
        )
    rows = []
    for path, results in by_file.items():
        for position, row in enumerate(results):
            missing = [name for name in ("model", "setting") if name not in row]
            if missing:
                raise UserError(
                    f"{path} has result rows without {missing[0]!r}, so it was written by an "
                    "incompatible boi version; rerun `boi run` into a new directory."
                )
            problem = problems.get(row["task_id"])
            if problem is None:
                raise UserError(
                    f"{path} has results for {row['task_id']!r}, which {run_dir}/problems.jsonl "
                    "does not hold; the run directory is inconsistent, rerun `boi run`."
                )
            sample = row.get("sample_index", position)
            rows.append(
                {
                    "key": f"{row['model']}\0{row['setting']}\0{row['task_id']}\0{sample}",
                    "task_id": row["task_id"],
                    "source_task_id": problem.source_task_id,
                    "transform": problem.transform,
                    "model": row["model"],
                    "setting": row["setting"],
                    "sample_index": sample,
                    "passed": bool(row["passed"]),
                    "completion": row["completion"] or "",
                }
            )
    return rows


def _search_key(config: CopiesConfig, index: CopyIndex) -> str:
    manifest = index.manifest
    return config_hash(
        {
            "format": FORMAT,
            "index": [manifest["corpus"]["fingerprint"], manifest["params"]],
            "top": config.top,
            "max_candidates": config.max_candidates,
            "close_jaccard": config.close_jaccard,
            "close_run": config.close_run,
        }
    )


def _is_close(result: SearchResult, config: CopiesConfig) -> bool:
    return any(
        m.jaccard >= config.close_jaccard or m.longest_run >= config.close_run
        for m in result.matches
    )


def _record(
    row: Mapping[str, Any], digest: str, found: Mapping[str, Any], search: str
) -> dict[str, Any]:
    record = {k: v for k, v in row.items() if k not in ("completion", "key")}
    return {"key": row["key"], **record, "completion_sha256": digest, **found, "search": search}


def _found(result: SearchResult, config: CopiesConfig, min_tokens: int) -> dict[str, Any]:
    """The search fields of a record (shared by every record of the same completion)."""
    return {
        "status": "too_short" if result.tokens < min_tokens else "searched",
        "tokens": result.tokens,
        "candidates": result.candidates,
        "verified": result.verified,
        "close": _is_close(result, config),
        "best_jaccard": result.matches[0].jaccard if result.matches else 0.0,
        "best_run": max((m.longest_run for m in result.matches), default=0),
        "matches": [m.to_json() for m in result.matches],
    }


def search_completions(
    config: CopiesConfig,
    index: CopyIndex,
    rows: Sequence[Mapping[str, Any]],
    path: Path,
) -> tuple[list[dict[str, Any]], int, int, float]:
    """Search `rows`' completions, appending a record per row to `path` (resumable: rows already
    there with the same search key are kept; a completion is searched once however many rows
    share it). Returns (the records of `rows`, searched now, reused, seconds searching)."""
    search = _search_key(config, index)
    min_tokens = index.config.min_tokens
    with JsonlAppender(path, keep=lambda r: r.get("search") == search) as log_file:
        done = {r["key"]: r for r in log_file.existing}
        known: dict[str, dict[str, Any]] = {}
        for record in log_file.existing:
            known.setdefault(record["completion_sha256"], _search_fields(record))
        todo = [row for row in rows if row["key"] not in done]
        bar = progress_bar(len(todo), "copy search", unit="completion") if todo else None
        searched, seconds = 0, 0.0
        for number, row in enumerate(todo, 1):
            text = row["completion"]
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            found = known.get(digest)
            if found is None:
                started = time.perf_counter()
                result = index.search(text, top=config.top, max_candidates=config.max_candidates)
                seconds += time.perf_counter() - started
                searched += 1
                found = _found(result, config, min_tokens)
                known[digest] = found
            record = _record(row, digest, found, search)
            log_file.append(record)
            done[row["key"]] = record
            if bar is not None:
                bar(number, len(todo))
    reused = len(rows) - searched
    return [done[row["key"]] for row in rows], searched, reused, seconds


SEARCH_FIELDS = (
    "status",
    "tokens",
    "candidates",
    "verified",
    "close",
    "best_jaccard",
    "best_run",
    "matches",
)


def _search_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in SEARCH_FIELDS if k in record}


# ---------------------------------------------------------------------------------------------
# Summary


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _ordered_transforms(names: Iterable[str]) -> list[str]:
    order = list(transform_labels()) + list(TRANSFORMS)
    present = set(names)
    ranked = [t for t in dict.fromkeys(order) if t in present]
    return ranked + sorted(present - set(ranked))


def per_transform(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per transformation: completions searched, too short to search, with a close match, the
    share, the median best Jaccard, and the same counts for failing and passing completions."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        groups[record["transform"]].append(record)
    table = {}
    for transform in _ordered_transforms(groups):
        rows = groups[transform]
        searched = [r for r in rows if r["status"] == "searched"]
        close = sum(bool(r["close"]) for r in searched)
        entry: dict[str, Any] = {
            "completions": len(rows),
            "searched": len(searched),
            "too_short": len(rows) - len(searched),
            "close": close,
            "share_close": _share(close, len(searched)),
            "median_best_jaccard": round(statistics.median(r["best_jaccard"] for r in searched), 4)
            if searched
            else None,
        }
        for outcome, passed in (("failing", False), ("passing", True)):
            subset = [r for r in searched if r["passed"] is passed]
            hits = sum(bool(r["close"]) for r in subset)
            entry[outcome] = {
                "searched": len(subset),
                "close": hits,
                "share_close": _share(hits, len(subset)),
            }
        table[transform] = entry
    return table


def anonymization(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """For each anonymizing transformation: over the problems (per model and setting) whose
    original and anonymized variants both have searched completions, how many originals had a
    close match, how many of those still had one after anonymization, and how many had one only
    after it. A problem "has" a close match when any of its searched completions does."""
    close: dict[tuple[str, str, str, str], bool] = {}
    for record in records:
        if record["status"] != "searched":
            continue
        key = (record["model"], record["setting"], record["source_task_id"], record["transform"])
        close[key] = close.get(key, False) or bool(record["close"])
    out = {}
    transforms = {key[3] for key in close if _anonymizing(key[3])}
    for transform in _ordered_transforms(transforms):
        pairs = [
            (copied, close[(model, setting, source, transform)])
            for (model, setting, source, name), copied in close.items()
            if name == ORIGINAL and (model, setting, source, transform) in close
        ]
        originals = sum(copied for copied, _ in pairs)
        still = sum(copied and after for copied, after in pairs)
        out[transform] = {
            "problems": len(pairs),
            "original_close": originals,
            "still_close": still,
            "share_still_close": _share(still, originals),
            "close_only_after": sum(after and not copied for copied, after in pairs),
        }
    return out


# ---------------------------------------------------------------------------------------------
# Report section


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _skipped_text(counts: Mapping[str, int], examples: Mapping[str, Sequence[str]]) -> str:
    parts = []
    for reason in ("binary", "undecodable", "large", "malformed", "unreadable"):
        if counts.get(reason):
            shown = ", ".join(examples.get(reason, [])[:3])
            parts.append(f"{counts[reason]} {reason}" + (f" (e.g. {shown})" if shown else ""))
    return "; skipped " + "; ".join(parts) if parts else "; nothing skipped"


def section_html(
    summary: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    completions: Mapping[str, str],
    config: CopiesConfig,
) -> str:
    """The report section: the index and the definition of a close match, a table (and a bar
    chart) per transformation, the anonymization comparison, and the top matches."""
    index = summary["index"]
    counts = index["counts"]
    labels = transform_labels()
    params = index["params"]
    speed = summary.get("throughput") or {}
    parts = [
        "<h2>Copies: near-duplicates in a training corpus</h2>",
        '<p class="note">'
        + esc(
            f"Corpus {', '.join(summary['corpus'])}: {counts['indexed']} documents indexed as "
            f"{counts['units']} units (function bodies, and whole files of at most "
            f"{params['max_doc_tokens']} tokens){_skipped_text(counts, index.get('skipped_examples', {}))}. "
            f"Index {index['folder']} ({index['size_bytes'] / 1e6:.1f} MB): MinHashLSH over "
            f"{params['shingle']}-token shingles, {params['num_perm']} permutations, threshold "
            f"{params['threshold']} ({index['lsh']['b']} bands of {index['lsh']['r']}), built in "
            f"{index['build_seconds']} s. Searched {summary['selection']}"
            + (
                f", {speed['per_second']:.1f} completions per second."
                if speed.get("per_second")
                else "."
            )
        )
        + "</p>",
        '<p class="note">'
        + esc(
            f"A completion has a close match when a corpus unit shares at least "
            f"{config.close_jaccard:g} Jaccard similarity of its shingles, or a run of at least "
            f"{config.close_run} identical tokens, with it. Completions of fewer than "
            f"{params['min_tokens']} tokens are not searched (too short). Only the completion is "
            "compared, never its prompt."
        )
        + "</p>",
    ]
    table = summary["per_transform"]
    both = summary["selection"].startswith("all")
    head = (
        "<tr><th>Transformation</th><th>completions</th><th>too short</th><th>searched</th>"
        "<th>close match</th><th>share</th><th>median best Jaccard</th>"
        + ("<th>share (failing)</th><th>share (passing)</th>" if both else "")
        + "</tr>"
    )
    body = []
    for transform, entry in table.items():
        median = entry["median_best_jaccard"]
        body.append(
            f"<tr><td>{esc(labels.get(transform, transform))}</td><td>{entry['completions']}</td>"
            f"<td>{entry['too_short']}</td><td>{entry['searched']}</td><td>{entry['close']}</td>"
            f"<td>{_percent(entry['share_close'])}</td>"
            f"<td>{'-' if median is None else f'{median:.2f}'}</td>"
            + (
                f"<td>{_percent(entry['failing']['share_close'])}</td>"
                f"<td>{_percent(entry['passing']['share_close'])}</td>"
                if both
                else ""
            )
            + "</tr>"
        )
    parts.append(f"<h3>Close matches per transformation</h3><table>{head}{''.join(body)}</table>")
    drawn = [t for t, e in table.items() if e["share_close"] is not None]
    # A chart of zeros says nothing the table does not.
    if len(drawn) > 1 and any(table[t]["share_close"] for t in drawn):
        series: list[tuple[str, list[float | None], list[tuple[float | None, float | None]]]]
        if both:
            series = [
                (
                    outcome,
                    [_points(table[t][outcome]["share_close"]) for t in drawn],
                    [(None, None)] * len(drawn),
                )
                for outcome in ("failing", "passing")
            ]
        else:
            series = [
                (
                    "close match",
                    [_points(table[t]["share_close"]) for t in drawn],
                    [(None, None)] * len(drawn),
                )
            ]
        image = bar_chart(
            [labels.get(t, t) for t in drawn],
            series,
            "completions with a close match (%)",
            "Copy search: close corpus matches per transformation",
        )
        parts.append(
            figure_html(
                image,
                "Share of searched completions whose best corpus unit is a close match, per "
                "transformation.",
            )
        )
    parts.append(_anonymization_html(summary["anonymization"], labels, summary["selection"]))
    parts.append(_matches_html(records, completions, labels, config.report_limit))
    return "".join(parts)


def _points(share: float | None) -> float | None:
    return None if share is None else 100 * share


def _anonymization_html(
    table: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str], selection: str
) -> str:
    head = "<h3>Does anonymization reduce copying?</h3>"
    if not table:
        return head + (
            '<p class="note">No problem has searched completions for both its original and an '
            "anonymized variant"
            + ("" if selection.startswith("all") else " (only failing completions were searched; "
               "--all searches the passing ones too)")
            + ".</p>"
        )  # fmt: skip
    rows = "".join(
        f"<tr><td>{esc(labels.get(t, t))}</td><td>{e['problems']}</td>"
        f"<td>{e['original_close']}</td><td>{e['still_close']}</td>"
        f"<td>{_percent(e['share_still_close'])}</td><td>{e['close_only_after']}</td></tr>"
        for t, e in table.items()
    )
    return (
        head + '<p class="note">Per problem (and model, setting) with searched completions for '
        "both the original and the anonymized variant: whether any completion of each has a close "
        "match."
        + ("" if selection.startswith("all") else " Only failing completions were searched "
           "(--all adds the passing ones), so a problem counts only where both sides failed.")
        + "</p><table><tr><th>Anonymized by</th><th>problems compared</th>"
        "<th>original copied</th><th>still copied after</th><th>share still copied</th>"
        f"<th>copied only after</th></tr>{rows}</table>"
    )  # fmt: skip


def _matches_html(
    records: Sequence[Mapping[str, Any]],
    completions: Mapping[str, str],
    labels: Mapping[str, str],
    limit: int,
) -> str:
    head = "<h3>Top matches</h3>"
    best: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        if record.get("matches"):
            best.setdefault(record["completion_sha256"], []).append(record)
    if not best:
        return head + '<p class="note">No searched completion has a corpus candidate.</p>'
    ranked = sorted(
        best.values(),
        key=lambda rs: (-bool(rs[0]["close"]), -rs[0]["best_jaccard"], -rs[0]["best_run"]),
    )
    shown = ranked[:limit]
    out = [
        head,
        f'<p class="note">{esc(len(shown))} of {esc(len(ranked))} distinct completions with '
        "candidates, close matches first, then by best Jaccard; each lists the rows (task, "
        "transformation, model, setting, sample) that produced it.</p>",
    ]
    for rows in shown:
        first = rows[0]
        top = first["matches"][0]

        def row_text(r: Mapping[str, Any]) -> str:
            return (
                f"{r['task_id']} ({labels.get(r['transform'], r['transform'])}, {r['model']}/"
                f"{r['setting']} sample {r['sample_index']}, "
                f"{'passed' if r['passed'] else 'failed'})"
            )

        where = row_text(first) + (
            f" and {len(rows) - 1} more row{'s' if len(rows) > 2 else ''} with this completion"
            if len(rows) > 1
            else ""
        )
        also = (
            '<p class="note">The same completion in: '
            + esc("; ".join(row_text(r) for r in rows[1:21]))
            + (esc(f"; and {len(rows) - 21} more") if len(rows) > 21 else "")
            + ".</p>"
            if len(rows) > 1
            else ""
        )
        badge = '<span class="badge fail">close</span>' if first["close"] else ""
        table = "".join(
            f"<tr><td>{esc(m['path'])}:{m['lines'][0]}-{m['lines'][1]}{_copies_html(m)}</td>"
            f"<td>{esc(m['label'])}</td><td>{m['jaccard']:.2f}</td>"
            f"<td>{m['containment']:.2f}</td><td>{m['longest_run']}</td></tr>"
            for m in first["matches"]
        )
        out.append(
            f"<details><summary>{esc(where)}: best Jaccard {top['jaccard']:.2f}, longest run "
            f'{first["best_run"]} tokens{badge}</summary><div class="body">{also}'
            "<table><tr><th>corpus unit</th><th>unit</th><th>Jaccard</th><th>containment</th>"
            f"<th>longest run (tokens)</th></tr>{table}</table>"
            '<div class="sbs"><div><h4>completion</h4>'
            f"<pre>{esc(completions.get(first['completion_sha256'], ''))}</pre></div>"
            f"<div><h4>{esc(top['path'])}:{top['run_lines'][0]}-{top['run_lines'][1]} (the "
            f"longest common run)</h4><pre>{esc(top['snippet'])}</pre></div></div></div></details>"
        )
    return "".join(out)


def _copies_html(match: Mapping[str, Any]) -> str:
    """The identical copies of a matched unit elsewhere in the corpus, under its own place."""
    total = match.get("copies_total", 0)
    if not total:
        return ""
    listed = "<br>".join(esc(place) for place in match["copies"])
    more = f"<br>and {total - len(match['copies'])} more" if total > len(match["copies"]) else ""
    return (
        f'<div class="note">identical in {total} other place{"s" if total > 1 else ""}:<br>'
        f"{listed}{more}</div>"
    )


# ---------------------------------------------------------------------------------------------
# The analysis


def analyze_copies(config: CopiesConfig, log: Callable[[str], None] = print) -> CopiesOutcome:
    """Search the run's completions in the corpus, write matches.jsonl, summary.json and the
    report section, and rebuild the run's report."""
    run = open_run(config.run_dir)
    run_dir = run.path
    rows = _completion_rows(run)
    selected = [r for r in rows if config.all or not r["passed"]]
    sources = tuple(resolve_corpus(spec) for spec in config.corpus)
    out = analysis_dir(run_dir, NAME)
    timings: dict[str, float] = {}
    with stage("copy index", log, timings, "copies"):
        corpus = Corpus(sources, config.indexing)
        folder = Path(config.index).expanduser() if config.index else default_index_dir(sources)
        index, built = ensure_index(corpus, folder, workers=_workers(config), log=log)
    try:
        with stage(f"search {len(selected)} completions", log, timings, "copies"):
            records, searched, reused, seconds = search_completions(
                config, index, selected, out / "matches.jsonl"
            )
    finally:
        index.close()
    previous = _previous_summary(out / "summary.json")
    throughput = (
        {
            "searched": searched,
            "seconds": round(seconds, 3),
            "per_second": round(searched / seconds, 2) if seconds else None,
        }
        if searched
        else previous.get("throughput")
    )
    selection = (
        f"all {len(selected)} completions"
        if config.all
        else f"the {len(selected)} failing completions of {len(rows)}"
    )
    summary: dict[str, Any] = {
        "selection": selection,
        "corpus": [s.describe() for s in sources],
        "close": {"jaccard": config.close_jaccard, "longest_run": config.close_run},
        "per_transform": per_transform(records),
        "anonymization": anonymization(records),
        "index": {
            "folder": str(folder),
            "built_now": built,
            **{
                k: index.manifest[k]
                for k in ("params", "lsh", "counts", "skipped_examples", "build_seconds")
                if k in index.manifest
            },
            "size_bytes": index.manifest.get("size_bytes", 0),
            "fingerprint": index.manifest["corpus"]["fingerprint"],
        },
        "throughput": throughput,
        "run": {
            "config_hash": run.config_hash,
            "seeds": run.seeds,
            "versions": run.versions,
        },
        "provenance": run_record(
            {**asdict(config), "indexing": asdict(config.indexing)},
            inputs={"problems": run.problems_path},
        ),
        "timings_s": timings,
    }
    write_text_atomic(out / "summary.json", json.dumps(summary, indent=1, default=str) + "\n")
    completions = {
        hashlib.sha256(r["completion"].encode("utf-8", "surrogatepass")).hexdigest(): r[
            "completion"
        ]
        for r in selected
    }
    write_section(run_dir, NAME, "Copies", section_html(summary, records, completions, config))
    rebuild_run_report(run_dir)
    return CopiesOutcome(summary, searched, reused, built, out)


def _previous_summary(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a `boi run` directory")
    add_dataclass_arguments(parser, CopiesConfig, exclude=("run_dir",))
    group = parser.add_argument_group("index (IndexConfig; a change rebuilds the index)")
    add_dataclass_arguments(group, IndexConfig)


def run(args: argparse.Namespace) -> int:
    overrides = {
        **overrides_from_args(args, CopiesConfig),
        "run_dir": args.run_dir,
        "indexing": overrides_from_args(args, IndexConfig),
    }
    config = from_mapping(CopiesConfig, overrides, where="flags")
    outcome = analyze_copies(config)
    for transform, entry in outcome.summary["per_transform"].items():
        print(
            f"  {transform}: {entry['close']} of {entry['searched']} searched completions have a "
            f"close match ({_percent(entry['share_close'])}; {entry['too_short']} too short)"
        )
    counts = outcome.summary["index"]["counts"]
    skipped = sum(
        counts.get(r, 0) for r in ("binary", "undecodable", "large", "malformed", "unreadable")
    )
    print(
        f"boi analyze copies: {outcome.searched} completions searched, {outcome.reused} reused; "
        f"index {'built' if outcome.index_built else 'reused'} ({counts['units']} units of "
        f"{counts['indexed']} documents, {skipped} files skipped); {outcome.path}; report: "
        f"{Path(config.run_dir) / 'report' / 'report.html'}"
    )
    return 0
