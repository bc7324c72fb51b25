"""MBPP as HumanEval-style problems, with examples generated from the reference solution.

MBPP gives a one-sentence task, a reference solution and three asserts. Following the paper, the
prompt is the solution's signature with the text as docstring and three `>>>` examples whose
outputs come from *executing the reference solution* on the asserts' inputs, so the shown output
is what the solution really returns. Solutions run in a child process under resource limits, in
a scratch directory, twice with different hash seeds; a problem whose solution fails, hangs, or
returns different outputs across runs keeps its prompt without examples and is reported.

A dataset's prompts must be the same on every machine, so what they show may not depend on how
fast or how loaded the machine is. For the upstream file (data/mbpp/SOURCE.md's sha256) the
outputs are computed once and shipped (`data/mbpp-examples.json`, checked against its own
sha256; `scripts/mbpp_examples.py` regenerates it). Any other MBPP file is computed here with a
limit on each solution's CPU time, which load does not stretch, and cached by file content; a
timeout is never cached, so the next load tries that solution again.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import warnings
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.cache import cache_dir
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.loaders._reference_runner import TIMED_OUT, run_jobs
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.problem import Problem
from benchmarks.pysource import rename_identifier
from benchmarks.upstream import DEFAULT_DIR, dataset, fetched_path

MBPP_FIELDS = ("task_id", "text", "code", "test_list")
NUM_EXAMPLES = 3
CALL_CPU_SECONDS = 120.0
"""CPU seconds a reference solution may spend on its example calls (MBPP/123's takes about 8;
wall-clock time on a loaded machine is several times that, and is not what is limited)."""
# Bump when the job format or the prompt construction changes, so stale caches are not reused
# (and regenerate the shipped outputs: scripts/mbpp_examples.py). 3: timeouts are not cached.
EXAMPLES_CACHE_VERSION = "3"
SHIPPED_EXAMPLES = Path(__file__).parent / "data" / "mbpp-examples.json"
"""The example outputs of the upstream mbpp.jsonl, computed once (`scripts/mbpp_examples.py`)."""


@dataclass(frozen=True)
class _Parsed:
    """What the prompt builder needs from one MBPP record."""

    entry_point: str
    signature: str
    prefix: str
    body: str
    trailer: str
    calls: tuple[str, ...]


def _first_call(test: str, functions: Collection[str]) -> tuple[str, ast.Call] | None:
    """The first call in `test` (in `ast.walk`'s order) of a function named in `functions`:
    the name called and the call."""
    for node in ast.walk(ast.parse(test)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in functions
        ):
            return node.func.id, node
    return None


def _parse(record: dict[str, Any]) -> _Parsed:
    """Split a solution into prompt prefix, signature, body and trailing helpers."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # upstream regexes such as '\d' warn; they still parse
        module = ast.parse(record["code"])
    functions = {n.name for n in module.body if isinstance(n, ast.FunctionDef)}
    tests = list(record["test_list"])
    entry_point = next((c[0] for t in tests if (c := _first_call(t, functions))), None)
    if entry_point is None:
        raise ValueError("no function defined by the solution is called in test_list")
    entry = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == entry_point][-1]
    test_code = [*tests, record.get("test_setup_code") or ""]
    names_in_tests = {
        n.id for t in test_code for n in ast.walk(ast.parse(t)) if isinstance(n, ast.Name)
    }
    names_in_tests.discard(entry_point)

    def defines_test_name(node: ast.stmt) -> bool:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            return node.name in names_in_tests
        if isinstance(node, ast.Assign):
            return any(isinstance(t, ast.Name) and t.id in names_in_tests for t in node.targets)
        return False

    # Imports and whatever the tests use by name (classes such as `Pair`) must be in the prompt;
    # other helpers and constants move after the function, where calls still find them.
    prefix_nodes, trailer_nodes = [], []
    for node in module.body:
        if node is entry:
            continue
        if isinstance(node, ast.Import | ast.ImportFrom) or defines_test_name(node):
            prefix_nodes.append(node)
        else:
            trailer_nodes.append(node)
    body_nodes = entry.body
    first = body_nodes[0] if body_nodes else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        body_nodes = body_nodes[1:]  # the solution's own docstring; ours replaces it
    if not body_nodes:
        raise ValueError("the solution's function has no body")
    returns = f" -> {ast.unparse(entry.returns)}" if entry.returns else ""
    signature = f"def {entry_point}({ast.unparse(entry.args)}){returns}:\n"
    body = "".join(_indent(ast.unparse(n)) for n in body_nodes)
    prefix = "".join(ast.unparse(n) + "\n" for n in prefix_nodes)
    if prefix:
        prefix += "\n\n"
    trailer = "".join("\n\n" + ast.unparse(n) + "\n" for n in trailer_nodes)
    calls = tuple(
        ast.unparse(c[1]) for t in tests[:NUM_EXAMPLES] if (c := _first_call(t, [entry_point]))
    )
    return _Parsed(entry_point, signature, prefix, body, trailer, calls)


def _indent(code: str) -> str:
    return "".join(("    " + line if line.strip() else line) + "\n" for line in code.splitlines())


def _docstring(text: str, examples: list[tuple[str, str]]) -> str:
    lines = [text.strip()]
    for call, output in examples:
        lines += [f">>> {call}", output]
    inner = "\n".join(lines[:1] + ["    " + line for line in lines[1:]])
    quote = '"""' if '"""' not in inner else "'''"
    raw = "r" if "\\" in inner else ""
    return f"    {raw}{quote}{inner}\n    {quote}\n"


def _check_function(record: dict[str, Any], entry_point: str) -> str:
    asserts = [rename_identifier(t.strip(), entry_point, "candidate") for t in record["test_list"]]
    setup = (record.get("test_setup_code") or "").replace("\r\n", "\n").strip()
    head = f"{setup}\n\n\n" if setup else ""
    if entry_point == "check":
        # Four MBPP functions are named `check`, like the harness's test function, which shadows
        # them before `check(check)` runs; a default argument captures the real one first.
        header = "def check(candidate, _function_under_test=check):\n    candidate = _function_under_test\n"
    else:
        header = "def check(candidate):\n"
    return head + header + "".join(f"    {a}\n" for a in asserts)


def _outputs_sha256(outputs: dict[str, dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(outputs, sort_keys=True).encode("utf-8")).hexdigest()


def _shipped_outputs(file_sha256: str) -> dict[str, dict[str, Any]] | None:
    """The shipped outputs when they were computed from this very file (None: another file)."""
    if not SHIPPED_EXAMPLES.is_file():
        return None
    shipped = json.loads(SHIPPED_EXAMPLES.read_text(encoding="utf-8"))
    if shipped.get("mbpp_sha256") != file_sha256:
        return None
    if shipped.get("version") != EXAMPLES_CACHE_VERSION:
        # Not a user's mistake: the prompt construction changed and the file was not rebuilt.
        raise RuntimeError(
            f"{SHIPPED_EXAMPLES} holds version {shipped.get('version')} of MBPP's examples, this "
            f"boi builds version {EXAMPLES_CACHE_VERSION}; run scripts/mbpp_examples.py."
        )
    outputs: dict[str, dict[str, Any]] = shipped["outputs"]
    if _outputs_sha256(outputs) != shipped.get("outputs_sha256"):
        raise RuntimeError(f"{SHIPPED_EXAMPLES} is damaged (its sha256 differs); reinstall boi.")
    return outputs


def compute_reference_outputs(jobs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Run the reference solutions on their example calls, twice with different hash seeds,
    each under a limit of CPU time; an output that differs between the runs or has no literal
    repr is an error. Timeouts are in the result (`_reference_runner.TIMED_OUT`)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        first, second = pool.map(
            lambda seed: run_jobs(jobs, seed, seconds=CALL_CPU_SECONDS, clock="cpu"), ["0", "1"]
        )
    merged = {}
    for task_id, result in first.items():
        other = second.get(task_id, {})
        if "error" not in result and "error" in other:
            result = other  # the second run timed out or failed: not a clean result
        elif "error" not in result and result.get("outputs") != other.get("outputs"):
            result = {
                "task_id": task_id,
                "error": "outputs differ between two runs (nondeterministic)",
            }
        elif "error" not in result and any(" object at 0x" in out for out in result["outputs"]):
            result = {
                "task_id": task_id,
                "error": "an output has no literal repr (object at an address)",
            }
        merged[task_id] = result
    return merged


def timed_out(result: dict[str, Any]) -> bool:
    return str(result.get("error", "")).startswith(TIMED_OUT)


def _reference_outputs(path: Path, jobs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Outputs of the reference solutions on the example calls: shipped for the upstream file,
    else computed and cached by file content (a timeout is never cached)."""
    file_sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    shipped = _shipped_outputs(file_sha256)
    if shipped is not None:
        return shipped
    cache = cache_dir("mbpp_examples") / f"{file_sha256[:16]}-v{EXAMPLES_CACHE_VERSION}.json"
    cached: dict[str, dict[str, Any]] = {}
    if cache.exists():
        try:
            cached = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            cached = {}  # a damaged cache is recomputed
    missing = [job for job in jobs if job["task_id"] not in cached]
    if not missing:
        return cached
    computed = compute_reference_outputs(missing)
    # A timeout says how busy this machine was, not what the solution returns: kept out of the
    # cache, so the next load runs that solution again instead of showing no examples for good.
    kept = {t: r for t, r in computed.items() if not timed_out(r)}
    write_text_atomic(cache, json.dumps({**cached, **kept}))
    return {**cached, **computed}


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for lineno, obj in iter_jsonl(path):
        require_fields(path, lineno, obj, MBPP_FIELDS)
        if not isinstance(obj["test_list"], list) or not obj["test_list"]:
            raise UserError(
                f"{path} line {lineno}: field 'test_list' must be a non-empty list of assert statements."
            )
        rows.append((lineno, obj))
    if not rows:
        raise UserError(f"{path} is empty; expected the MBPP JSONL (one problem per line).")
    return rows


def _hub_offline() -> bool:
    """Whether the Hugging Face hub is switched off (HF_HUB_OFFLINE, as huggingface_hub reads it)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "on", "yes", "true"}


def _download_mbpp() -> Path:
    """Fetch MBPP (full, all splits) with `datasets` and store it as upstream-format JSONL: the
    last resort, after the file `boi data fetch mbpp` puts in data/mbpp/ (its rows are
    re-serialised, so the shipped example outputs, pinned to the upstream file, do not apply)."""
    target = cache_dir("datasets") / "mbpp.jsonl"
    if target.exists():
        return target
    advice = "run `boi data fetch mbpp` (or pass the upstream mbpp.jsonl with --data)"
    if _hub_offline():
        raise UserError(
            f"MBPP is not in {DEFAULT_DIR}/mbpp/ and the Hugging Face hub is off "
            f"(HF_HUB_OFFLINE); {advice}."
        )
    try:
        from datasets import concatenate_datasets, load_dataset  # heavy; only a download needs it

        parts = load_dataset("google-research-datasets/mbpp", "full")
        rows = sorted(concatenate_datasets(list(parts.values())), key=lambda r: r["task_id"])
    except Exception as err:  # offline, hub error: the user needs the fetched file
        raise UserError(
            f"MBPP is not in {DEFAULT_DIR}/mbpp/ and could not be downloaded from the Hugging "
            f"Face hub ({type(err).__name__}); {advice}."
        ) from None
    write_text_atomic(target, "".join(json.dumps(dict(r)) + "\n" for r in rows))
    return target


def source_path(data: str | os.PathLike[str] | None = None) -> Path:
    """`data` (the file, or the folder `boi data fetch mbpp` fills), else the file that fetch put
    in data/mbpp/, as every fetched dataset's loader looks, and only then the hub."""
    if data is None:
        return fetched_path("mbpp") or _download_mbpp()
    path = Path(data)
    if path.is_dir():
        path = path / dataset("mbpp").files[0].name
    if not path.is_file():
        raise UserError(f"{path} does not exist; give MBPP's mbpp.jsonl or the folder with it.")
    return path


def _parsed(path: Path, rows: list[tuple[int, dict[str, Any]]]) -> dict[str, _Parsed]:
    parsed: dict[str, _Parsed] = {}
    for lineno, record in rows:
        try:
            parsed[f"MBPP/{record['task_id']}"] = _parse(record)
        except (SyntaxError, ValueError) as err:
            raise UserError(
                f"{path} line {lineno}: cannot build a prompt from the reference solution ({err})."
            ) from None
    return parsed


def _jobs(
    rows: list[tuple[int, dict[str, Any]]], parsed: dict[str, _Parsed]
) -> list[dict[str, Any]]:
    """The reference runner's jobs: each solution's example calls."""
    return [
        {
            "task_id": (task_id := f"MBPP/{record['task_id']}"),
            "setup": record.get("test_setup_code") or "",
            "code": record["code"],
            "calls": list(parsed[task_id].calls),
        }
        for _, record in rows
    ]


def example_jobs(path: Path) -> list[dict[str, Any]]:
    """The jobs whose outputs an MBPP file's prompts show (`scripts/mbpp_examples.py`)."""
    rows = _records(path)
    return _jobs(rows, _parsed(path, rows))


def shipped_examples(path: Path, outputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The shipped file's content for the MBPP file `path` and its computed `outputs`."""
    return {
        "source": "what MBPP's reference solutions return on its asserts' inputs; MBPP: Austin "
        "et al. 2021, CC-BY-4.0, google-research/google-research mbpp/mbpp.jsonl",
        "mbpp_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "version": EXAMPLES_CACHE_VERSION,
        "limit": f"{CALL_CPU_SECONDS:g} s of CPU time per solution",
        "outputs_sha256": _outputs_sha256(outputs),
        "outputs": outputs,
    }


def load_mbpp(data: str | os.PathLike[str] | None = None) -> LoadResult:
    """All MBPP problems from the upstream JSONL (`data`: the file or its folder), else the one
    `boi data fetch mbpp` put in data/mbpp/, else downloaded with `datasets`."""
    path = source_path(data)
    rows = _records(path)
    parsed = _parsed(path, rows)
    issues: list[LoadIssue] = []
    outputs = _reference_outputs(path, _jobs(rows, parsed))

    problems = []
    for lineno, record in rows:
        task_id = f"MBPP/{record['task_id']}"
        p = parsed[task_id]
        result = outputs.get(task_id, {"error": "not run"})
        if "error" in result:
            issues.append(LoadIssue(task_id, f"no examples: reference solution {result['error']}"))
            examples: list[tuple[str, str]] = []
        else:
            examples = list(zip(p.calls, result["outputs"], strict=True))
        prompt = p.prefix + p.signature + _docstring(record["text"], examples)
        problems.append(
            Problem(
                task_id=task_id,
                benchmark="mbpp",
                prompt=prompt,
                entry_point=p.entry_point,
                test=_check_function(record, p.entry_point),
                canonical_solution=p.body + p.trailer,
                metadata={
                    "text": record["text"],
                    "mbpp_task_id": record["task_id"],
                    "challenge_test_list": record.get("challenge_test_list") or [],
                    "source_file_line": lineno,
                },
            )
        )
    return LoadResult(problems, issues)
