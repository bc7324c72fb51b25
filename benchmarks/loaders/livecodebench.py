"""LiveCodeBench's code-generation problems (`code_generation_lite`, every release), read safely.

A release file is JSONL, one problem a line: `question_title`, `question_content` (the
statement), `platform` (leetcode, atcoder, codeforces), `question_id`, `contest_id`,
`contest_date` (ISO date and time), `starter_code` (LeetCode's `class Solution` stub, empty for
stdin/stdout problems), `difficulty`, `public_test_cases` (a JSON text: a list of `{input,
output, testtype}`, testtype `stdin` or `functional`), `private_test_cases` (the same list, as a
JSON text or as base64 of zlib of a *pickle* of that JSON text) and `metadata` (a JSON text;
`func_name` names a functional problem's method). The hub's release `release_vN` is the files
`test.jsonl` .. `testN.jsonl`; `vN` alone is `testN.jsonl` (`test.jsonl` for v1). A download
whose sha256 is not the published one (`PUBLISHED_SHA256`) is refused, a local file's is
reported; every problem records its file's sha256 (`release_sha256`).

The private tests are never unpickled: `pickled_text` walks the pickle's opcodes
(`pickletools.genops`, which parses and runs nothing) and accepts exactly the shape upstream
writes, one string and the opcodes that frame and memoize it; anything else (a global, a call,
a second object) is refused before any object is built. The decompressed size, the number of
tests and each test's size are capped, each refusal one sentence naming file, line and field.

A stdin/stdout problem is CodeContests' kind (`statement_prompt`, `stdio_tests`, the statement's
`OutputJudge`). A functional problem's prompt is the statement, then the starter code, after the
names LeetCode's judge has in scope (`FUNCTIONAL_HEADER`); its entry point is `Solution.METHOD`,
which the sandbox calls on a new `Solution()` each time (`Problem.entry_call`), and its `test`
compares each call's result with the expected JSON value. LiveCodeBench ships no reference
solutions: judge a model, or completions made elsewhere (`--completions`).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import pickletools
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.common.provenance import file_sha256
from benchmarks.loaders.code_contests import output_judge, statement_prompt
from benchmarks.loaders.result import LoadIssue, LoadResult
from benchmarks.problem import Problem, StdioTest

HUB_REPO = "livecodebench/code_generation_lite"
FIELDS = (
    "question_title",
    "question_content",
    "platform",
    "question_id",
    "contest_date",
    "starter_code",
    "public_test_cases",
    "private_test_cases",
    "metadata",
)
METADATA_FIELDS = ("question_title", "platform", "contest_id", "difficulty")
RELEASES = 6
"""The releases the hub holds: `release_v1` .. `release_v6` (and each `vN` alone)."""
RELEASE_NAME = re.compile(r"(?:release_)?v\d+")
# The sha256 of upstream's release files, as the hub's LFS pointers publish them: test6.jsonl
# on its own blob page (revision 524c37b0ab3f1c76760d7922a04cd3fb3850d92c), test2..test5 as
# the repository's duplicates on the hub hold them (an LFS pointer names the content, so a
# duplicate holds the same). test.jsonl's digest is not known here: it is recorded, unchecked.
PUBLISHED_SHA256 = {
    "test2.jsonl": "095df7c5daf15f882c51a9deb84085cff1e073495a5dbcf95015a564d485f3a3",
    "test3.jsonl": "28ed26cc83363ce3f1fe2d5fad9f8393077beb1907b167a31bd3b32f80801b79",
    "test4.jsonl": "d711138ddaebfcf5f8ec6a4283ee677298c0f5c5d374a235af92aaf0584510da",
    "test5.jsonl": "7f77571c2a6df0c2a72a3277650309f67e01e0008e18117e624633df53f81214",
    "test6.jsonl": "bb4c364f71921c4495a6ad15abe1a927350b720009f4933e2e71f8af0f6fd1f5",
}

# Caps on what one problem's private tests may unpack to. Upstream's largest problems carry
# tens of megabytes of tests; the caps are far above that and far below what would exhaust
# this machine, so a zlib bomb or a test list padded out is refused before it costs memory.
MAX_DECOMPRESSED_BYTES = 512 << 20
MAX_TESTS = 1000
MAX_TEST_BYTES = 64 << 20

# The pickle opcodes upstream's private tests are made of (`pickle.dumps(json_text)` under
# protocols 0 to 5): a protocol mark, frames, one string, its memo entry, the stop. No opcode
# here imports, calls or builds anything but the string.
_STRING_OPCODES = frozenset({"UNICODE", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8"})
_FRAMING_OPCODES = frozenset({"PROTO", "FRAME", "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"})

# LeetCode's judge runs a solution with these names in scope (its typing names in the starter
# code's annotations, the containers and helpers solutions use without importing them); the
# header gives a functional prompt the same, so a solution that passes there runs here.
FUNCTIONAL_HEADER = (
    "from typing import *\n"
    "from collections import Counter, defaultdict, deque, OrderedDict\n"
    "from functools import cache, lru_cache, reduce\n"
    "from heapq import heapify, heappop, heappush, heappushpop, nlargest, nsmallest\n"
    "from bisect import bisect, bisect_left, bisect_right, insort\n"
    "from itertools import accumulate, combinations, count, pairwise, permutations, product\n"
    "from math import ceil, comb, floor, gcd, inf, isqrt, lcm, log2, sqrt\n"
    "import bisect, collections, functools, heapq, itertools, math, operator, re, string\n"
    "\n"
)


@dataclass(frozen=True)
class Where:
    """A field of a release file's line, named in every refusal."""

    path: Path
    lineno: int
    field: str

    def refuse(self, what: str) -> UserError:
        return UserError(
            f"{self.path} line {self.lineno}: field {self.field!r} {what}; this is not a "
            "LiveCodeBench release file as upstream writes it, so nothing of it is used."
        )


def pickled_text(data: bytes, where: Where) -> str:
    """The one string a pickle of upstream's shape holds, read from its opcodes alone: nothing
    is unpickled, imported or called. Any other opcode is refused where it stands."""
    text: str | None = None
    try:
        for opcode, arg, position in pickletools.genops(data):
            if opcode.name in _STRING_OPCODES and text is None:
                text = str(arg)
            elif opcode.name == "STOP":
                break
            elif opcode.name not in _FRAMING_OPCODES:
                raise where.refuse(
                    f"holds a pickle with opcode {opcode.name} at byte {position} (a pickle of "
                    "anything but one string could import or run code, and is never loaded)"
                )
    except (ValueError, EOFError) as err:  # what genops says of a torn or garbled pickle
        raise where.refuse(f"holds a pickle that does not parse ({err})") from None
    if text is None:
        raise where.refuse("holds a pickle of no string")
    return text


def _inflate(data: bytes, where: Where, limit: int) -> bytes:
    """zlib-decompressed `data`, refused once it would pass `limit` bytes (never more is held)."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as err:
        raise where.refuse(f"is not zlib data after its base64 ({err})") from None
    if len(out) > limit:
        raise where.refuse(
            f"decompresses to more than {limit:,} bytes (a zlib bomb, or tests far beyond any "
            "release's)"
        )
    if not inflater.eof:
        raise where.refuse("holds zlib data that ends before its stream does (a truncated file)")
    return out


def decode_tests_text(value: object, where: Where, limit: int = MAX_DECOMPRESSED_BYTES) -> str:
    """The JSON text of a test-case field: as it is when it is JSON, else unpacked from
    base64(zlib(pickle(json text))) without unpickling."""
    if not isinstance(value, str):
        raise where.refuse(f"is a {type(value).__name__}, not a string")
    if value.lstrip().startswith("["):
        return value
    try:
        packed = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise where.refuse("is neither a JSON list nor base64") from None
    return pickled_text(_inflate(packed, where, limit), where)


def _test_cases(value: object, where: Where) -> list[dict[str, str]]:
    text = decode_tests_text(value, where)
    try:
        cases = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise where.refuse(f"is not a JSON list of tests ({err})") from None
    if not isinstance(cases, list):
        raise where.refuse(f"is a JSON {type(cases).__name__}, not a list of tests")
    if len(cases) > MAX_TESTS:
        raise where.refuse(f"holds {len(cases):,} tests, more than the {MAX_TESTS:,} allowed")
    for index, case in enumerate(cases):
        if (
            not isinstance(case, dict)
            or not isinstance(case.get("input"), str)
            or not isinstance(case.get("output"), str)
            or case.get("testtype") not in ("stdin", "functional")
        ):
            raise where.refuse(
                f"test {index} is not an object with string 'input' and 'output' and a "
                "'testtype' of stdin or functional"
            )
        size = len(case["input"]) + len(case["output"])
        if size > MAX_TEST_BYTES:
            raise where.refuse(
                f"test {index} is {size:,} characters, more than the {MAX_TEST_BYTES:,} allowed"
            )
    return cases


def release_date(value: object, where: Where) -> date:
    """A problem's contest date (upstream writes `2023-08-21T00:00:00`)."""
    try:
        return datetime.fromisoformat(str(value)).date()
    except ValueError:
        raise where.refuse(f"is {value!r}, not an ISO date such as 2023-08-21T00:00:00") from None


def _functional_test(cases: list[dict[str, str]], where: Where) -> str:
    """A `check(candidate)` calling the method with each case's arguments (one JSON value a
    line) and comparing with its JSON output; tuples read as lists, as upstream's judge does."""
    calls = []
    for index, case in enumerate(cases):
        try:
            args = [json.loads(line) for line in case["input"].split("\n") if line.strip()]
            expected = json.loads(case["output"])
        except ValueError as err:
            raise where.refuse(f"test {index} is not JSON values, one a line ({err})") from None
        calls.append([args, expected])
    # A JSON text in a Python string literal: json.dumps writes no escape Python reads otherwise.
    return (
        "import json\n\n\n"
        "def _plain(value):\n"
        "    if isinstance(value, (list, tuple)):\n"
        "        return [_plain(v) for v in value]\n"
        "    if isinstance(value, dict):\n"
        "        return {k: _plain(v) for k, v in value.items()}\n"
        "    return value\n\n\n"
        f"CASES = json.loads({json.dumps(json.dumps(calls))})\n\n\n"
        "def check(candidate):\n"
        "    for args, expected in CASES:\n"
        "        assert _plain(candidate(*args)) == expected\n"
    )


def _problem(path: Path, lineno: int, record: dict[str, Any], release: str, digest: str) -> Problem:
    require_fields(path, lineno, record, FIELDS)
    content = record["question_content"]
    if not isinstance(content, str) or not content.strip():
        raise Where(path, lineno, "question_content").refuse("is empty")
    cases = _test_cases(record["public_test_cases"], Where(path, lineno, "public_test_cases"))
    private = _test_cases(record["private_test_cases"], Where(path, lineno, "private_test_cases"))
    try:
        metadata = json.loads(record["metadata"] or "{}")
    except (TypeError, ValueError):
        raise Where(path, lineno, "metadata").refuse("is not a JSON text") from None
    when = release_date(record["contest_date"], Where(path, lineno, "contest_date"))
    common = {
        **{k: record[k] for k in METADATA_FIELDS if k in record},
        "contest_date": when.isoformat(),
        "release": release,
        # The file the problem and its tests came from, by content: what a run read, recorded
        # in its problems.jsonl (the prompts' digest does not cover the tests).
        "release_file": path.name,
        "release_sha256": digest,
    }
    task_id = f"LiveCodeBench/{record['question_id']}"
    starter = record["starter_code"] or ""
    kinds = {c["testtype"] for c in cases + private}
    if not starter.strip():
        if kinds - {"stdin"}:
            raise Where(path, lineno, "starter_code").refuse(
                "is empty but the tests are functional (a functional problem needs its stub)"
            )
        return Problem(
            task_id=task_id,
            benchmark="livecodebench",
            prompt=statement_prompt(content),
            entry_point=None,
            stdio_tests=tuple(StdioTest(c["input"], c["output"], "public") for c in cases)
            + tuple(StdioTest(c["input"], c["output"], "private") for c in private),
            metadata={**common, "output_judge": output_judge(content).to_json()},
        )
    method = metadata.get("func_name") if isinstance(metadata, dict) else None
    if not isinstance(method, str) or not method.isidentifier():
        raise Where(path, lineno, "metadata").refuse(
            "has no 'func_name' naming the starter code's method"
        )
    if kinds - {"functional"}:
        raise Where(path, lineno, "public_test_cases").refuse(
            "mixes stdin tests into a problem with starter code"
        )
    test = _functional_test(cases + private, Where(path, lineno, "private_test_cases"))
    prompt = FUNCTIONAL_HEADER + statement_prompt(content) + starter.rstrip() + "\n"
    return Problem(
        task_id=task_id,
        benchmark="livecodebench",
        prompt=prompt,
        entry_point=f"Solution.{method}",
        test=test,
        metadata={**common, "func_name": method, "public_tests": len(cases)},
    )


def release_files(version: str) -> list[str]:
    """The hub files of a release: `release_vN` is test.jsonl .. testN.jsonl, `vN` one file."""
    name = version.lower()
    number = name.removeprefix("release_v").removeprefix("v")
    if not number.isdigit() or not 1 <= int(number) <= RELEASES:
        raise UserError(
            f"LiveCodeBench has no release {version!r}; use release_v1 .. release_v{RELEASES} "
            f"(cumulative) or v1 .. v{RELEASES} (one release's new problems), or a path to a "
            "release file."
        )
    files = [f"test{'' if n == 1 else n}.jsonl" for n in range(1, int(number) + 1)]
    return files if name.startswith("release_") else files[-1:]


def _from_hub(version: str) -> list[Path]:
    files = release_files(version)
    try:
        from huggingface_hub import hf_hub_download  # only a download needs it

        paths = [
            Path(hf_hub_download(HUB_REPO, f, repo_type="dataset", revision="main")) for f in files
        ]
    except Exception as err:
        raise UserError(
            f"LiveCodeBench's {version} could not be fetched from the hub ({HUB_REPO}: "
            f"{type(err).__name__}); download {', '.join(files)} from "
            f"https://huggingface.co/datasets/{HUB_REPO} and pass --data PATH (a release "
            "file, or a folder of them)."
        ) from None
    for name, path in zip(files, paths, strict=True):
        published = PUBLISHED_SHA256.get(name)
        if published is not None and file_sha256(path) != published:
            raise UserError(
                f"the hub's {name} ({path}) is not the published release (sha256 "
                f"{file_sha256(path)[:12]}..., published {published[:12]}...): upstream changed "
                "it; to use it anyway, pass that path with --data."
            )
    return paths


def _rows(paths: list[Path]) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    for path in paths:
        for lineno, record in iter_jsonl(path):
            yield path, lineno, record


def _paths(data: str | os.PathLike[str] | None) -> tuple[list[Path], str]:
    if data is None:
        return _from_hub(f"release_v{RELEASES}"), f"release_v{RELEASES}"
    text = str(data)
    path = Path(text)
    if not path.exists() and RELEASE_NAME.fullmatch(text.lower()):
        return _from_hub(text), text
    if path.is_dir():
        files = sorted(path.glob("test*.jsonl"), key=lambda p: (len(p.name), p.name))
        if not files:
            raise UserError(
                f"{path} holds no LiveCodeBench release file (test.jsonl, test2.jsonl, ...); "
                "pass the folder they are in, or one file."
            )
        return files, path.name
    if not path.is_file():
        raise UserError(
            f"{path} does not exist; pass a LiveCodeBench release file (test.jsonl), a folder "
            f"of them, or a release name (release_v1 .. release_v{RELEASES}) to fetch."
        )
    return [path], path.name


def load_livecodebench(data: str | os.PathLike[str] | None = None) -> LoadResult:
    """LiveCodeBench problems from a release file, a folder of them, or the hub (a release
    name, or None for the newest); a problem repeated by a later file is kept once."""
    paths, release = _paths(data)
    problems: dict[str, Problem] = {}
    issues = []
    digests = {path: file_sha256(path) for path in paths}
    for path, digest in digests.items():
        published = PUBLISHED_SHA256.get(path.name)
        if published is not None and digest != published:
            issues.append(
                LoadIssue(
                    str(path),
                    f"not upstream's published {path.name} (sha256 {digest[:12]}..., published "
                    f"{published[:12]}...); loaded as given",
                )
            )
    for path, lineno, record in _rows(paths):
        problem = _problem(path, lineno, record, release, digests[path])
        if problem.task_id in problems:
            issues.append(LoadIssue(problem.task_id, f"repeated at {path} line {lineno}"))
            continue
        problems[problem.task_id] = problem
        if problem.is_stdio and problem.output_judge.several_answers:
            issues.append(
                LoadIssue(
                    problem.task_id,
                    f"accepts several answers ({problem.output_judge.several_answers!r}); judged "
                    "against the expected output only, so a different correct answer fails",
                )
            )
    if not problems:
        raise UserError(f"{paths[0]} is empty; expected one LiveCodeBench problem per line.")
    return LoadResult(list(problems.values()), issues)
