"""Building and opening: an index built from a corpus into its folder (atomically, reading the
corpus in worker processes), checked against the corpus and parameters it was built with, and
rebuilt only when either changed (`ensure_index`)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common.atomic import recover_dir, replace_dir, write_text_atomic
from benchmarks.common.cache import cache_dir
from benchmarks.common.errors import UserError
from benchmarks.common.outputs import output_dir
from benchmarks.common.progress import progress_bar
from benchmarks.copy_index._config import IndexConfig
from benchmarks.copy_index._corpus import Corpus, CorpusSource, RawDocument, corpus_identity
from benchmarks.copy_index._prepare import MINHASH_SEED, Prepared, minhash_template, prepare
from benchmarks.copy_index._search import CopyIndex
from benchmarks.copy_index._storage import (
    DATABASE,
    FORMAT,
    MANIFEST,
    SIGNATURES,
    Database,
    make_lsh,
    read_manifest,
)
from benchmarks.copy_index._tokens import TOKENIZER_VERSION

SKIP_REASONS = ("binary", "undecodable", "large", "malformed", "unreadable")
SKIPPED_EXAMPLES = 10  # paths kept per skip reason in the manifest, for the report


def index_params(config: IndexConfig) -> dict[str, Any]:
    """What an index was built with; an index whose parameters differ is rebuilt."""
    return {
        **asdict(config),
        "include": list(config.include),
        "tokenizer": TOKENIZER_VERSION,
        "minhash_seed": MINHASH_SEED,
        "datasketch": importlib.metadata.version("datasketch"),
    }


def default_index_dir(sources: Sequence[CorpusSource]) -> Path:
    return cache_dir("copy-index") / corpus_identity(sources)


def _batches(items: Iterable[RawDocument], size: int) -> Iterator[list[RawDocument]]:
    batch: list[RawDocument] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _pool(workers: int) -> Any:
    """Worker processes for reading the corpus (None: read in this process). Forked where the
    platform can (a spawned worker re-imports the caller's main module, which a script read from
    stdin does not have), and before the build opens its database or progress bar, so no
    thread or connection of ours is copied into them."""
    if workers <= 1:
        return None
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method).Pool(workers)


def _prepared(
    corpus: Corpus, pool: Any, workers: int, progress: Callable[[int], None]
) -> Iterator[Prepared | tuple[str, str]]:
    work = partial(prepare, config=corpus.config)
    if pool is None:
        for done, document in enumerate(corpus.documents(), 1):
            yield work(document)
            progress(done)
        return
    done = 0
    # Bounded batches rather than one imap over the corpus: Pool.imap reads its whole input
    # ahead, which for a corpus of rows means the whole corpus in memory.
    for batch in _batches(corpus.documents(), 64 * workers):
        for result in pool.imap(work, batch, chunksize=8):
            yield result
            done += 1
            progress(done)


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build_index(
    corpus: Corpus,
    final: Path,
    *,
    workers: int = 1,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Build the index of `corpus` into the folder `final` (atomically); returns its manifest."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.building-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    config = corpus.config
    started = time.perf_counter()
    pool = _pool(workers)
    try:
        database = Database(tmp / DATABASE, write=True)
        lsh = make_lsh(config, database, None)
        sketch = minhash_template(config.num_perm).copy()
        counts: dict[str, int] = {
            "documents": 0,
            "indexed": 0,
            "units": 0,
            "duplicate_units": 0,
            "no_units": 0,
        }
        # digest -> unit id of the first copy (16 bytes + an int per distinct unit: a corpus of
        # tens of millions of units needs a few GB here)
        seen: dict[bytes, int] = {}
        counts.update({reason: 0 for reason in SKIP_REASONS})
        examples: dict[str, list[str]] = {reason: [] for reason in SKIP_REASONS}
        bar = progress_bar(corpus.total, "index corpus", unit="doc") if corpus.total else None

        def progress(done: int) -> None:
            if bar is not None:
                bar(done, corpus.total)

        unit_id = 0
        with open(tmp / SIGNATURES, "wb") as signatures:
            for result in _prepared(corpus, pool, workers, progress):
                counts["documents"] += 1
                if isinstance(result, tuple):
                    name, reason = result
                    counts[reason] += 1
                    if len(examples[reason]) < SKIPPED_EXAMPLES:
                        examples[reason].append(name)
                    continue
                if not result.units:
                    counts["no_units"] += 1
                    continue
                doc = counts["indexed"]
                counts["indexed"] += 1
                values = np.frombuffer(result.signatures, dtype=np.uint32).reshape(
                    len(result.units), config.num_perm
                )
                fresh = 0
                for unit, hashvalues in zip(result.units, values, strict=True):
                    first = seen.get(unit.digest)
                    if first is not None:
                        database.connection.execute(
                            "INSERT INTO duplicates VALUES (?, ?, ?, ?)",
                            (first, doc, unit.first_line, unit.last_line),
                        )
                        counts["duplicate_units"] += 1
                        continue
                    seen[unit.digest] = unit_id
                    database.connection.execute(
                        "INSERT INTO units VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (unit_id, doc, unit.start, unit.stop, unit.label)
                        + (unit.first_line, unit.last_line),
                    )
                    sketch.hashvalues = hashvalues  # one MinHash reused: insert reads only these
                    lsh.insert(unit_id, sketch, check_duplication=False)
                    signatures.write(hashvalues.tobytes())
                    unit_id += 1
                    fresh += 1
                # A document whose units are all copies keeps only its name (for the copies'
                # paths): nothing is ever verified against its text.
                blobs = (result.text, result.tokens, result.offsets) if fresh else (b"",) * 3
                database.connection.execute(
                    "INSERT INTO docs VALUES (?, ?, ?, ?, ?)", (doc, result.name, *blobs)
                )
        if bar is not None:
            bar(corpus.total, corpus.total)
        counts["units"] = unit_id
        database.finish()
        manifest = {
            "format": FORMAT,
            "corpus": {
                "sources": [asdict(s) for s in corpus.sources],
                "fingerprint": corpus.fingerprint,
            },
            "params": index_params(config),
            "lsh": {"b": lsh.b, "r": lsh.r},
            "counts": counts,
            "skipped_examples": {k: v for k, v in examples.items() if v},
            "build_seconds": round(time.perf_counter() - started, 2),
            "workers": workers,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        manifest["size_bytes"] = _dir_size(tmp)
        write_text_atomic(tmp / MANIFEST, json.dumps(manifest, indent=1) + "\n")
        replace_dir(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return manifest


def stale_reason(manifest: dict[str, Any] | None, corpus: Corpus) -> str | None:
    """Why an index cannot serve `corpus` (None: it can)."""
    if manifest is None:
        return "no index yet"
    if manifest.get("format") != FORMAT:
        return f"its format {manifest.get('format')} is not {FORMAT}"
    if manifest.get("params") != index_params(corpus.config):
        return "the index parameters changed"
    if manifest.get("corpus", {}).get("fingerprint") != corpus.fingerprint:
        return "the corpus changed"
    return None


def _remove_stale_builds(final: Path) -> None:
    for tmp in final.parent.glob(f".{final.name}.building-*"):
        try:
            os.kill(int(tmp.name.rsplit("-", 1)[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(tmp, ignore_errors=True)  # left by a killed build
        except (ValueError, PermissionError, OSError):
            continue


def ensure_index(
    corpus: Corpus,
    folder: Path,
    *,
    workers: int = 1,
    log: Callable[[str], None] = print,
) -> tuple[CopyIndex, bool]:
    """The index of `corpus` in `folder`, built first where missing or stale; (index, built)."""
    # Resolved once: sqlite opens the index by URI, which needs an absolute path.
    folder = output_dir(folder, option="--index", ours=(MANIFEST,))
    recover_dir(folder)
    if folder.exists() and any(folder.iterdir()) and read_manifest(folder) is None:
        raise UserError(
            f"{folder} exists and is not a boi copy index; pass --index a new or empty folder "
            "(nothing there was changed)."
        )
    _remove_stale_builds(folder)
    reason = stale_reason(read_manifest(folder), corpus)
    built = reason is not None
    if reason is not None:
        log(f"[copies] building the index in {folder} ({reason}) ...")
        manifest = build_index(corpus, folder, workers=workers, log=log)
        log(
            f"[copies] indexed {manifest['counts']['units']} units of "
            f"{manifest['counts']['indexed']} documents in {manifest['build_seconds']} s"
        )
    return CopyIndex(folder), built
