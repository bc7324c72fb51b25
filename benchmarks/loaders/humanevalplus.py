"""HumanEval+ (evalplus v0.1.10): HumanEval's problems with evalplus's many more test inputs.

The dataset file ships in the package (`data/HumanEvalPlus-v0.1.10.jsonl.gz`, Apache-2.0; see
`data/HumanEvalPlus-SOURCE.md`) and is checked against its sha256 on every load. Problems keep
HumanEval's task ids, prompts (HumanEval/115's differs: evalplus moved its `import math` out
of the function) and entry points, so everything that splits or perturbs HumanEval does the
same here; `benchmark` is "humanevalplus".

The file holds test inputs only. As evalplus does, the expected outputs are those of its
`canonical_solution` (prompt + solution, the lines marked `# $_CONTRACT_$` removed: input
checks that evalplus's judging never runs), run here on every base and plus input in a child
process under resource limits (`_reference_runner`: trusted dataset code, never generated
code), twice with different hash seeds. They are cached in the machine cache by the file's
sha256, so this happens once per machine (minutes for all 164, with a progress bar), and only
for the problems a run selects (`task_ids`, `limit`): a run of two problems computes two, and a
later selection adds its own to the cache. A problem whose outputs cannot be computed, or
differ between the two runs, is left out and reported.

Each problem's `test` is HumanEval's shape, `def check(candidate)`, judged by
`benchmarks.execution` like any other: it carries evalplus's comparison (`_plus_check`, copied
in) and, packed (`pack_data`; `read_test_data` reads them back), the inputs (JSON, as evalplus
feeds them: lists stay lists) and the expected outputs (Python literals, or digests for outputs
too large to embed), and calls the candidate on every input in turn, each call crossing the
sandbox's plain-data wire in separated judging.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import inspect
import json
import os
import sys
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.cache import cache_dir
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.common.progress import progress_bar
from benchmarks.loaders import _plus_check
from benchmarks.loaders._reference_runner import run_jobs
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.problem import Problem

VERSION = "v0.1.10"
DATA_FILE = Path(__file__).resolve().parent / "data" / f"HumanEvalPlus-{VERSION}.jsonl.gz"
SHA256 = "272720b90ac375502c8ed23cd791c2a93dfb22a911641a494da74a426c09f101"
UPSTREAM = (
    "https://github.com/evalplus/humanevalplus_release/releases/download/"
    f"{VERSION}/HumanEvalPlus.jsonl.gz"
)
FIELDS = ("task_id", "prompt", "entry_point", "canonical_solution", "base_input", "plus_input")
CONTRACT_MARK = "# $_CONTRACT_$"
# An expected output whose Python literal is longer than this goes into the test as digests.
EMBED_LIMIT = 1000
# Wall-clock seconds one problem's reference solution may take on all its inputs (the slowest,
# HumanEval/139, needs a few seconds), and the CPU and memory each child process may use.
JOB_SECONDS = 300.0
CHILD_CPU_SECONDS = 3600
CHILD_MEMORY_BYTES = 8 << 30
# Bump when the job or the cache's layout changes, so stale caches are not reused (the code of
# the encoder and of the digests is part of the cache key too: `_cache_path`).
CACHE_VERSION = "1"
_ENCODER = f"{__name__}:encode_expected"
_CHECK_SOURCE = Path(_plus_check.__file__).read_text(encoding="utf-8")

# The comparison the tests carry and the digest of an expected output too large to embed, by
# public names for what replays them on the trusted side (`boi analyze leaks`): inside
# `_plus_check` every name keeps its `_plus_` prefix, as its code is pasted into each test
# beside the candidate's names.
plus_matches = _plus_check._plus_matches
PlusDigest = _plus_check._PlusDigest


# ---------------------------------------------------------------- expected outputs (child side)


def python_literal(value: Any) -> str:
    """Python source that evaluates to `value`, for plain data (None, bool, int, float,
    complex, str, bytes; list, tuple, set, frozenset, dict of them). Integers of 2**64 and more
    are written in hex (no limit on their length); nan and infinities as float('...')."""
    kind = type(value)
    if value is None or kind in (bool, str, bytes):
        return repr(value)
    if kind is int:
        return repr(value) if -(2**64) < value < 2**64 else hex(value)
    if kind is float:
        if value != value:
            return "float('nan')"
        if value in (float("inf"), float("-inf")):
            return "float('inf')" if value > 0 else "-float('inf')"
        return repr(value)
    if kind is complex:
        return f"complex({python_literal(value.real)}, {python_literal(value.imag)})"
    if kind is list:
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if kind is tuple:
        inner = ", ".join(python_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if kind is set:
        return "{" + ", ".join(python_literal(v) for v in value) + "}" if value else "set()"
    if kind is frozenset:
        return "frozenset([" + ", ".join(python_literal(v) for v in value) + "])"
    if kind is dict:
        items = (f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"an output of type {kind.__name__} is not plain data")


def encode_expected(value: Any, job: dict[str, Any]) -> dict[str, Any]:
    """One expected output as the test will hold it: {"literal": source}, or {"digest": [fast,
    key]} (`_plus_check._PlusDigest`) when the literal is longer than EMBED_LIMIT and the
    comparison is exact `==` (no tolerance, no oracle)."""
    exact = not job["oracle"] and job["atol"] == 0 and not _plus_check._plus_is_floats(value)
    if exact and _literal_floor(value) > EMBED_LIMIT and (digest := _digest(value)):
        return digest  # without writing out the literal (HumanEval/15's are 100 MB in all)
    literal = python_literal(value)
    if exact and len(literal) > EMBED_LIMIT and (digest := _digest(value)):
        return digest
    return {"literal": literal}


def _digest(value: Any) -> dict[str, Any] | None:
    try:
        key = _plus_check._plus_key(value)
    except (_plus_check._PlusNoKey, RecursionError):
        return None  # a dict, a set, a nan...: only `==` can judge it
    fast = _plus_check._plus_fast_text(value)
    return {"digest": [None if fast is None else _plus_check._plus_sha(fast), key]}


def _literal_floor(value: Any) -> int:
    """A lower bound of `len(python_literal(value))`, cheap to compute."""
    if type(value) in (str, bytes):
        return len(value)
    if type(value) in (list, tuple, set, frozenset, dict):
        return 2 * len(value)  # an element and its ", " take at least 3 characters
    if type(value) is int:
        return value.bit_length() // 4  # its hex digits (its decimal digits are more)
    return 0


# ------------------------------------------------------------------------------- the loader


def strip_contract(solution: str) -> str:
    """`solution` without the lines evalplus marks as contract (input-validity asserts)."""
    return "".join(line for line in solution.splitlines(keepends=True) if CONTRACT_MARK not in line)


def _check_file(path: Path) -> str:
    if not path.is_file():
        state = "is a folder" if path.is_dir() else "does not exist"
        raise UserError(f"{path} {state}; pass the HumanEval+ {VERSION} .jsonl.gz file.")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256:
        raise UserError(
            f"{path} has sha256 {digest}, not the {SHA256} of HumanEval+ {VERSION}; pass the "
            f"upstream file ({UPSTREAM}) or leave --data out to use the copy boi ships."
        )
    return digest


def _records(path: Path) -> list[dict[str, Any]]:
    rows = []
    for lineno, obj in iter_jsonl(path):
        require_fields(path, lineno, obj, FIELDS)
        rows.append(obj)
    return rows


def _job(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "task_id": record["task_id"],
        "code": record["prompt"] + strip_contract(record["canonical_solution"]),
        "entry_point": record["entry_point"],
        "inputs": list(record["base_input"]) + list(record["plus_input"]),
        "atol": record.get("atol") or 0,
        # evalplus's one special case for HumanEval, chosen by entry point as it does.
        "oracle": "find_zero" if record["entry_point"] == "find_zero" else "",
        "encode": _ENCODER,
    }


def _run_all(
    jobs: list[dict[str, Any]],
    hash_seed: str,
    workers: int,
    done: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Every job once, spread over `workers` child processes (`done` called after each)."""
    chunks = [jobs[i::workers] for i in range(workers)]
    results: dict[str, Any] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(
            lambda chunk: run_jobs(
                chunk,
                hash_seed,
                seconds=JOB_SECONDS,
                memory_bytes=CHILD_MEMORY_BYTES,
                cpu_seconds=CHILD_CPU_SECONDS,
                done=done,
            ),
            [c for c in chunks if c],
        ):
            results.update(part)
    return results


def _cache_path(digest: str) -> Path:
    """The cache file for the data file `digest`: its name also hashes the code that makes the
    cached values (the encoder and the digest functions), so a change there recomputes them."""
    makers = (
        python_literal,
        encode_expected,
        _plus_check._plus_sha,
        _plus_check._plus_fast_text,
        _plus_check._plus_feed,
        _plus_check._plus_key,
        _plus_check._plus_is_floats,
        _plus_check._plus_numbers,
        _digest,
    )
    code = "".join(inspect.getsource(f) for f in makers)
    version = hashlib.sha256(f"{CACHE_VERSION}\n{EMBED_LIMIT}\n{code}".encode()).hexdigest()
    return cache_dir("humanevalplus") / f"{digest[:16]}-{version[:12]}.json"


def expected_outputs(
    digest: str, jobs: list[dict[str, Any]], workers: int | None = None
) -> dict[str, Any]:
    """The encoded expected outputs by task id ({"values", "seconds"} or {"error"}) of `jobs`
    (and of any other problem the cache holds): from the machine cache, or computed (twice,
    hash seeds 0 and 1) for the jobs it lacks and added to it."""
    cache = _cache_path(digest)
    cached: dict[str, Any] = {}
    previous_seconds = 0.0
    if cache.exists():
        try:
            payload = json.loads(cache.read_text(encoding="utf-8"))
            cached = dict(payload["problems"])
            previous_seconds = float(payload.get("computed_seconds") or 0)
        except (OSError, ValueError, KeyError, TypeError):
            cached = {}  # a damaged cache is recomputed
    missing = [j for j in jobs if j["task_id"] not in cached]
    if not missing:
        return cached
    if workers is None:  # child processes per hash seed: half the cores, at most 4
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        workers = max(1, min(8, cores or 1) // 2)
    # Minutes for the whole dataset on a small machine: said, and shown as it goes.
    count = len(missing)
    print(
        f"HumanEval+ {VERSION}: computing the expected outputs of {count} "
        f"problem{'s' if count != 1 else ''} (each canonical solution run twice on every "
        f"input; kept in {cache}, so once per machine)",
        file=sys.stderr,
    )
    update = progress_bar(2 * count, "HumanEval+ expected outputs", unit="run")
    lock = threading.Lock()
    finished = 0

    def one_done() -> None:
        nonlocal finished
        with lock:  # both hash seeds' threads report
            finished += 1
            update(finished, 2 * count)

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        first, second = pool.map(
            lambda seed: _run_all(missing, seed, workers, one_done), ["0", "1"]
        )
    merged: dict[str, Any] = dict(cached)
    for job in missing:
        task_id = job["task_id"]
        result = first.get(task_id, {"error": "not run"})
        other = second.get(task_id, {"error": "not run"})
        if "error" not in result and "error" in other:
            result = other
        elif "error" not in result and result["values"] != other["values"]:
            changed = next(
                i
                for i, (a, b) in enumerate(zip(result["values"], other["values"], strict=True))
                if a != b
            )
            result = {
                "error": f"the output on input {changed + 1} differs between two runs "
                "(it depends on the hash seed)"
            }
        merged[task_id] = {k: v for k, v in result.items() if k != "task_id"}
    payload = {
        "dataset": f"HumanEval+ {VERSION}",
        "sha256": digest,
        "computed_seconds": round(previous_seconds + time.monotonic() - started, 1),
        "problems": merged,
    }
    write_text_atomic(cache, json.dumps(payload))
    return merged


def _expected_source(values: list[dict[str, Any]]) -> str:
    items = []
    for value in values:
        if "digest" in value:
            fast, key = value["digest"]
            items.append(f"_PlusDigest({fast!r}, {key!r})")
        else:
            items.append(value["literal"])
    return "[" + ",\n".join(items) + "]"


def pack_data(inputs: list[Any], values: list[dict[str, Any]]) -> str:
    """What a test carries (`_plus_check._plus_unpack` reads it back): the inputs' JSON and the
    expected outputs' source (`encode_expected`'s values), compressed, in base64."""
    if len(inputs) != len(values):
        raise ValueError(f"{len(values)} expected outputs for {len(inputs)} inputs")
    text = json.dumps(inputs) + "\n" + _expected_source(values)
    raw = zlib.compress(text.encode("utf-8", "surrogatepass"), 9)
    return base64.b64encode(raw).decode("ascii")


def read_test_data(test: str) -> tuple[list[Any], list[Any]]:
    """The inputs and the expected outputs a `humanevalplus` test carries (digests as
    `_plus_check._PlusDigest`)."""
    for node in ast.parse(test).body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["_PLUS_DATA"]
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            inputs_json, expected = _plus_check._plus_unpack(node.value.value)
            return json.loads(inputs_json), expected
    raise ValueError("not a HumanEval+ test (no _PLUS_DATA)")


def _embedded_check_source() -> str:
    """`_plus_check`'s code without its module docstring, as the tests carry it."""
    body = ast.parse(_CHECK_SOURCE).body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        lines = _CHECK_SOURCE.splitlines(keepends=True)[first.end_lineno or 0 :]
        return "".join(lines).lstrip("\n")
    return _CHECK_SOURCE


def build_test(record: dict[str, Any], values: list[dict[str, Any]]) -> str:
    """The problem's `check(candidate)`: evalplus's comparison (`_plus_check`), and the inputs
    and expected outputs packed (`pack_data`)."""
    job = _job(record)
    base, plus = len(record["base_input"]), len(record["plus_input"])
    data = pack_data(job["inputs"], values)
    chunks = "".join(f'    "{data[i : i + 96]}"\n' for i in range(0, len(data), 96))
    oracle = f", oracle={job['oracle']!r}" if job["oracle"] else ""
    return (
        f"# HumanEval+ {VERSION} (evalplus) tests of {record['task_id']}: {base} base and {plus} "
        "plus inputs, expected outputs\n# from evalplus's canonical solution, compared as "
        "evalplus does (benchmarks/loaders/_plus_check.py;\n# _plus_unpack(_PLUS_DATA) gives "
        "the inputs' JSON and the expected outputs).\n"
        f"{_embedded_check_source()}\n\n"
        f"_PLUS_DATA = (\n{chunks})\n\n\n"
        "def check(candidate):\n"
        f"    _plus_check_all(candidate, _PLUS_DATA, atol={job['atol']!r}, base={base}{oracle})\n"
    )


def _selected(
    digest: str, records: list[dict[str, Any]], task_ids: Sequence[str], limit: int | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The records a selection needs, in the file's order, and their expected outputs: those of
    `task_ids` (all of them: the caller refuses an id it does not find), else the first `limit`
    whose outputs compute (one that cannot is dropped, so the next is taken, as when the whole
    dataset is loaded and cut), else all."""
    if task_ids:
        wanted = set(task_ids)
        chosen = [r for r in records if r["task_id"] in wanted]
        return chosen, expected_outputs(digest, [_job(r) for r in chosen])
    if not limit:
        return records, expected_outputs(digest, [_job(r) for r in records])
    taken = 0
    outputs: dict[str, Any] = {}
    while taken < len(records):
        good = sum("error" not in outputs.get(r["task_id"], {"error": ""}) for r in records[:taken])
        if good >= limit:
            break
        batch = records[taken : taken + limit - good]
        outputs.update(expected_outputs(digest, [_job(r) for r in batch]))
        taken += len(batch)
    return records[:taken], outputs


def load_humanevalplus(
    data: str | os.PathLike[str] | None = None,
    *,
    task_ids: Sequence[str] = (),
    limit: int | None = None,
) -> LoadResult:
    """The 164 HumanEval+ problems from the shipped file (or `data`, which must be the same
    file), with tests over every base and plus input; with `task_ids` or `limit` (a run's
    selection), only the problems it selects (`prompts` then lists all 164)."""
    path = Path(data) if data is not None else DATA_FILE
    digest = _check_file(path)
    records = _records(path)
    chosen, outputs = _selected(digest, records, task_ids, limit)
    problems: list[Problem] = []
    issues: list[LoadIssue] = []
    for record in chosen:
        task_id = record["task_id"]
        result = outputs.get(task_id, {"error": "not run"})
        if "error" in result:
            reason = f"expected outputs could not be computed: {result['error']}"
            issues.append(LoadIssue(task_id, reason, dropped=True))
            continue
        problems.append(
            Problem(
                task_id=task_id,
                benchmark="humanevalplus",
                prompt=record["prompt"],
                entry_point=record["entry_point"],
                test=build_test(record, result["values"]),
                canonical_solution=strip_contract(record["canonical_solution"]),
                metadata={
                    "source": f"HumanEval+ {VERSION} (evalplus)",
                    "atol": record.get("atol") or 0,
                    "base_inputs": len(record["base_input"]),
                    "plus_inputs": len(record["plus_input"]),
                },
            )
        )
    selection = len(chosen) < len(records)
    prompts = [(r["task_id"], r["prompt"]) for r in records] if selection else None
    return LoadResult(problems, issues, prompts)
