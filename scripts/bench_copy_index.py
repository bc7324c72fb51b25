"""Copy-search index on a real corpus that exists offline: this Python's standard library plus the
installed packages' sources (site-packages). Builds the index (or reuses it), prints what was
indexed and skipped, the build time and the index size, then searches:

- planted: function bodies cut verbatim from random corpus files (each must come back with its
  file's path and Jaccard >= 0.9),
- renamed: the same bodies with their most frequent identifier renamed (a near copy; recall at
  the close-match rule, Jaccard >= 0.5 or a 30-token run),
- and, with --run-dir, every completion of a `boi run` (what `boi analyze copies` searches),

and prints queries per second (the index opened once; each query tokenized, sketched, looked
up and its candidates verified exactly).

    nice -n 10 .venv/bin/python scripts/bench_copy_index.py [--rebuild] [--run-dir RUN]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import resource
import shutil
import statistics
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

from benchmarks.common.cache import cache_dir
from benchmarks.copy_index import (
    SITE_PACKAGES,
    SKIP_REASONS,
    STDLIB,
    Corpus,
    IndexConfig,
    ensure_index,
    resolve_corpus,
    tokenize_code,
)
from benchmarks.report import read_results


def function_bodies(files: list[Path], wanted: int, rng: random.Random, min_tokens: int):
    """(path, body text) of up to `wanted` function bodies of at least `min_tokens` tokens from
    random files (the body's own lines, as a model's completion of that function would be)."""
    found = []
    rng.shuffle(files)
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            continue
        functions = [
            n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        rng.shuffle(functions)
        for function in functions[:1]:
            body = function.body
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring is in the prompt, not in the completion
            if not body or body[0].lineno == function.lineno:
                continue
            lines = source.splitlines(keepends=True)[body[0].lineno - 1 : function.end_lineno]
            text = "".join(lines)
            if len(tokenize_code(text)[0]) >= min_tokens and len(text) < 20_000:
                found.append((path, text))
        if len(found) >= wanted:
            break
    return found


def rename_most_frequent(text: str) -> str:
    """The body with its most frequent non-keyword identifier renamed (a near copy)."""
    keywords = {"self", "return", "if", "else", "for", "in", "not", "None", "and", "or", "is"}
    names = Counter(t for t in tokenize_code(text)[0] if t.isidentifier() and t not in keywords)
    if not names:
        return text
    name = names.most_common(1)[0][0]
    return re.sub(rf"\b{re.escape(name)}\b", f"{name}_renamed", text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", help="index folder (default: the cache's copy-index/bench)")
    parser.add_argument("--rebuild", action="store_true", help="delete the index first")
    parser.add_argument("--workers", type=int, default=2, help="processes reading the corpus")
    parser.add_argument("--planted", type=int, default=100, help="verbatim bodies to search")
    parser.add_argument("--run-dir", help="also search every completion of this boi run")
    parser.add_argument("--all-files", action="store_true", help="index every file, not *.py")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.nice(5)  # a shared machine: the build takes minutes of every core it is given

    config = IndexConfig(include=() if args.all_files else ("*.py",))
    sources = (resolve_corpus(STDLIB), resolve_corpus(SITE_PACKAGES))
    folder = Path(args.index) if args.index else cache_dir("copy-index") / "bench"
    if args.rebuild and folder.exists():
        shutil.rmtree(folder)
    started = time.perf_counter()
    corpus = Corpus(sources, config)
    listing = time.perf_counter() - started
    print(f"corpus: {', '.join(s.location for s in sources)} ({corpus.total} files; listed and "
          f"fingerprinted in {listing:.1f} s)")  # fmt: skip
    index, built = ensure_index(corpus, folder, workers=args.workers, log=print)
    manifest = index.manifest
    counts = manifest["counts"]
    skipped = {r: counts[r] for r in SKIP_REASONS if counts[r]}
    print(f"index: {folder} ({'built now' if built else 'reused'})")
    print(f"  files seen {counts['documents']}, indexed {counts['indexed']}, without a unit "
          f"{counts['no_units']}, skipped {sum(skipped.values())} {skipped}")  # fmt: skip
    print(f"  units {counts['units']} distinct (function bodies and whole files <= "
          f"{config.max_doc_tokens} tokens) + {counts['duplicate_units']} identical copies listed "
          f"with them; LSH {manifest['lsh']['b']} bands x {manifest['lsh']['r']} rows, threshold "
          f"{config.threshold}")  # fmt: skip
    print(f"  build {manifest['build_seconds']} s with {manifest['workers']} workers; size "
          f"{manifest['size_bytes'] / 1e6:.0f} MB; peak RSS of this process "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")  # fmt: skip

    rng = random.Random(args.seed)
    files = corpus.files()
    planted = function_bodies(files, args.planted, rng, config.min_tokens)
    queries = [("planted", path, text) for path, text in planted]
    queries += [("renamed", path, rename_most_frequent(text)) for path, text in planted]
    if args.run_dir:
        completions = {row["completion"] for row in read_results(args.run_dir)}
        queries += [("run", None, text) for text in sorted(completions)]

    latencies: dict[str, list[float]] = {}
    hits: Counter[str] = Counter()
    anywhere: Counter[str] = Counter()  # found at Jaccard >= 0.9, maybe as an identical copy
    close: Counter[str] = Counter()
    candidates = []
    misses = []
    for kind, path, text in queries:
        begun = time.perf_counter()
        result = index.search(text, top=5, max_candidates=50)
        latencies.setdefault(kind, []).append(time.perf_counter() - begun)
        candidates.append(result.candidates)
        if path is not None and any(
            m.jaccard >= 0.9 and any(p.startswith(f"{path}:") for p in index.places(m.unit))
            for m in result.matches
        ):
            hits[kind] += 1
        elif kind == "planted":
            best = result.matches[0] if result.matches else None
            misses.append((str(path), result.tokens, result.candidates, best and best.path))
        if result.matches and result.matches[0].jaccard >= 0.9:
            anywhere[kind] += 1
        if any(m.jaccard >= 0.5 or m.longest_run >= 30 for m in result.matches):
            close[kind] += 1
    total = sum(sum(values) for values in latencies.values())  # searches only, not the checks
    print(f"queries: {len(queries)} in {total:.1f} s = {len(queries) / total:.1f} queries/s "
          f"(candidates per query: median {statistics.median(candidates):.0f}, max "
          f"{max(candidates)})")  # fmt: skip
    for kind, values in latencies.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        line = (
            f"  {kind}: {len(values)} queries, median {1000 * statistics.median(values):.1f} ms, "
            f"p95 {1000 * p95:.1f} ms, close match {close[kind]}/{len(values)}"
        )
        if kind == "planted":
            line += (
                f", found with their own path (as the match or one of its identical copies) at "
                f"Jaccard >= 0.9: {hits[kind]}/{len(values)} (best match at Jaccard >= 0.9: "
                f"{anywhere[kind]}/{len(values)})"
            )
        print(line)
    for miss in misses[:5]:
        print(f"  not found: {miss}")
    index.close()
    print(json.dumps({"planted_found": hits["planted"], "planted": len(planted)}))
    return 0 if hits["planted"] == len(planted) else 1


if __name__ == "__main__":
    sys.exit(main())
