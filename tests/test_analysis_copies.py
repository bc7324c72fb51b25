"""`boi analyze copies`: a completion planted verbatim in a small corpus is found with its path;
binary and undecodable corpus files are skipped and counted; the index is built once and reused;
shares per transformation; the report section; bad input in one sentence."""

from __future__ import annotations

import io
import json
import tokenize

import pytest

from benchmarks.common.errors import UserError
from benchmarks.copy_index import (
    Corpus,
    IndexConfig,
    document_units,
    ensure_index,
    resolve_corpus,
    tokenize_code,
)
from benchmarks.problem import LineageStep, Problem
from boi.cli import main

HEADER = '''"""Checksums over a sliding window."""


def rolling_checksum(data, window):
    """Adler-like checksum of every window of `data`."""
'''
PLANTED = """    low, high = 1, 0
    sums = []
    for index, byte in enumerate(data):
        low = (low + byte) % 65521
        high = (high + low) % 65521
        if index >= window:
            low = (low - data[index - window]) % 65521
            high = (high - window * data[index - window] - 1) % 65521
        sums.append((high << 16) | low)
    return sums
"""
OTHER = """import os


class Walker:
    def __init__(self, root):
        self.root = root

    def files(self, suffix=".py"):
        for folder, _, names in os.walk(self.root):
            for name in sorted(names):
                if name.endswith(suffix):
                    yield os.path.join(folder, name)


def count_words(text):
    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
"""
UNRELATED = """    result = {}
    for key, value in pairs:
        result.setdefault(key, []).append(value)
    return sorted(result.items(), key=lambda item: len(item[1]))
"""
UNRELATED_2 = """    total = 0
    for number in numbers:
        if number % 2 == 0:
            total += number * number
    return total if total > 10 else -total
"""
SHORT = "    return x\n"


def _problem(task_id: str, anonymized: bool) -> Problem:
    source = task_id.removesuffix("/anonymize")
    return Problem(
        task_id=task_id,
        benchmark="toy",
        prompt="def f(data, window):\n",
        entry_point="f",
        test="def check(candidate):\n    pass\n",
        source_task_id=source,
        lineage=(LineageStep("anonymize", "1"),) if anonymized else (),
    )


# (task id, sample index, passed, completion)
SAMPLES = [
    ("T/0", 0, False, PLANTED),
    ("T/0", 1, True, PLANTED),
    ("T/0/anonymize", 0, False, UNRELATED),
    ("T/1", 0, False, UNRELATED_2),
    ("T/1/anonymize", 0, False, SHORT),
]


def make_corpus(root):
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "checksum.py").write_text(HEADER + PLANTED)
    (root / "pkg" / "other.py").write_text(OTHER)
    (root / "vendor").mkdir()
    (root / "vendor" / "copy.py").write_text(
        "# vendored\nimport sys\n\n\n" + HEADER.split("\n\n\n")[1] + PLANTED
    )
    (root / "notes.txt").write_text("Some notes about the corpus, not code.\n")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64)))
    (root / "latin1.py").write_bytes(b"# caf\xe9\nname = 'caf\xe9'\n")
    return root


def make_run_dir(root, samples=SAMPLES, manifest=None):
    root.mkdir(parents=True)
    config = {"settings": [{"label": "greedy", "ks": [1]}], "bootstrap": 10, "perturb_seed": 0}
    (root / "manifest.json").write_text(
        json.dumps(manifest or {"config": config, "config_hash": "abc", "seeds": [0]})
    )
    problems = {task: _problem(task, task.endswith("/anonymize")) for task, *_ in samples}
    (root / "problems.jsonl").write_text(
        "".join(json.dumps(p.to_json()) + "\n" for p in problems.values())
    )
    results = root / "results" / "toy-model" / "greedy.jsonl"
    results.parent.mkdir(parents=True)
    rows = [
        {
            "task_id": task,
            "completion": completion,
            "passed": passed,
            "result": "passed" if passed else "failed",
            "dataset": "toy",
            "model": "toy-model",
            "setting": "greedy",
            "seed": 0,
            "sample_index": index,
            "source_task_id": problems[task].source_task_id,
            "transform": problems[task].transform,
        }
        for task, index, passed, completion in samples
    ]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def analyze(capsys, run_dir, corpus, index, *extra):
    code = main(
        [
            "analyze",
            "copies",
            str(run_dir),
            "--corpus",
            str(corpus),
            "--index",
            str(index),
            "--workers",
            "1",
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def records(run_dir):
    path = run_dir / "analysis" / "copies" / "matches.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def summary(run_dir):
    return json.loads((run_dir / "analysis" / "copies" / "summary.json").read_text())


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory):
    root = tmp_path_factory.mktemp("copies")
    corpus = make_corpus(root / "corpus")
    run_dir = make_run_dir(root / "run")
    index = root / "index"
    code = main(
        ["analyze", "copies", str(run_dir), "--corpus", str(corpus), "--index", str(index)]
        + ["--workers", "1"]
    )
    assert code == 0
    return root, corpus, run_dir, index


def test_a_planted_completion_is_found_with_its_path(analyzed):
    _, corpus, run_dir, _ = analyzed
    by_task = {(r["task_id"], r["sample_index"]): r for r in records(run_dir)}
    planted = by_task[("T/0", 0)]
    best = planted["matches"][0]
    assert best["path"] == str(corpus / "pkg" / "checksum.py")
    assert best["label"] == "def rolling_checksum"
    assert best["jaccard"] >= 0.9 and best["containment"] == 1.0
    assert best["longest_run"] >= 80 and planted["close"] is True
    assert "sums.append((high << 16) | low)" in best["snippet"]
    assert best["lines"] == [5, 15]  # the body, from its docstring to its last line
    # The vendored copy is the same unit: indexed once, listed with the match.
    assert best["copies"] == [f"{corpus / 'vendor' / 'copy.py'}:6-16"]
    assert best["copies_total"] == 1
    assert not by_task[("T/0/anonymize", 0)]["close"]
    assert by_task[("T/1/anonymize", 0)]["status"] == "too_short"
    assert ("T/0", 1) not in by_task  # passing completions are searched only with --all


def test_binary_and_undecodable_files_are_skipped_and_counted(analyzed):
    _, corpus, run_dir, _ = analyzed
    counts = summary(run_dir)["index"]["counts"]
    assert counts["binary"] == 1 and counts["undecodable"] == 1
    assert counts["documents"] == 6 and counts["indexed"] == 3
    assert counts["duplicate_units"] == 1  # vendor/copy.py's function (its whole file differs)
    assert counts["no_units"] == 1  # notes.txt: fewer tokens than a unit needs
    examples = summary(run_dir)["index"]["skipped_examples"]
    assert examples["binary"] == [str(corpus / "image.png")]
    assert examples["undecodable"] == [str(corpus / "latin1.py")]
    report = (run_dir / "report" / "report.html").read_text()
    assert "1 binary" in report and "1 undecodable" in report


def test_share_per_transformation_and_the_anonymization_comparison(analyzed):
    _, _, run_dir, _ = analyzed
    table = summary(run_dir)["per_transform"]
    assert list(table) == ["original", "anonymize"]
    assert table["original"]["searched"] == 2 and table["original"]["close"] == 1
    assert table["original"]["share_close"] == 0.5
    assert table["anonymize"]["completions"] == 2 and table["anonymize"]["too_short"] == 1
    assert table["anonymize"]["share_close"] == 0.0
    anonymized = summary(run_dir)["anonymization"]["anonymize"]
    assert anonymized == {
        "problems": 1,
        "original_close": 1,
        "still_close": 0,
        "share_still_close": 0.0,
        "close_only_after": 0,
    }


def test_the_report_shows_the_section(analyzed):
    _, corpus, run_dir, _ = analyzed
    report = (run_dir / "report" / "report.html").read_text()
    assert 'id="analysis-copies"' in report
    assert "Copies: near-duplicates in a training corpus" in report
    assert str(corpus / "pkg" / "checksum.py") in report
    assert "sums.append((high &lt;&lt; 16) | low)" in report  # the snippet, escaped
    assert "identical in 1 other place" in report


def test_the_index_is_reused_and_a_rerun_searches_nothing(analyzed, capsys):
    _, corpus, run_dir, index = analyzed
    created = json.loads((index / "manifest.json").read_text())["created"]
    code, out, _ = analyze(capsys, run_dir, corpus, index)
    assert code == 0 and "0 completions searched" in out and "index reused" in out
    assert json.loads((index / "manifest.json").read_text())["created"] == created
    assert summary(run_dir)["index"]["built_now"] is False
    assert len(records(run_dir)) == 4


def test_all_searches_the_passing_completions_too(analyzed, capsys):
    _, corpus, run_dir, index = analyzed
    code, out, _ = analyze(capsys, run_dir, corpus, index, "--all")
    assert code == 0
    # The passing completion is the planted one again: found without a new search.
    assert "0 completions searched, 5 reused" in out
    table = summary(run_dir)["per_transform"]["original"]
    assert table["searched"] == 3 and table["close"] == 2
    assert table["passing"] == {"searched": 1, "close": 1, "share_close": 1.0}


def test_a_changed_corpus_rebuilds_the_index(tmp_path, capsys):
    corpus = make_corpus(tmp_path / "corpus")
    run_dir = make_run_dir(tmp_path / "run")
    index = tmp_path / "index"
    assert analyze(capsys, run_dir, corpus, index)[0] == 0
    (corpus / "pkg" / "more.py").write_text(OTHER.replace("Walker", "Runner"))
    code, out, err = analyze(capsys, run_dir, corpus, index)
    assert code == 0 and "index built" in out and "the corpus changed" in out + err


def test_an_incompatible_run_directory_is_one_sentence(tmp_path, capsys):
    corpus = make_corpus(tmp_path / "corpus")
    old = tmp_path / "old"
    old.mkdir()
    (old / "manifest.json").write_text(json.dumps({"version": "0.0.1"}))
    code, _, err = analyze(capsys, old, corpus, tmp_path / "index")
    assert code == 2 and "incompatible boi version" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_results_without_model_fields_are_one_sentence(tmp_path, capsys):
    corpus = make_corpus(tmp_path / "corpus")
    run_dir = make_run_dir(tmp_path / "run")
    results = run_dir / "results" / "toy-model" / "greedy.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    results.write_text(
        "".join(
            json.dumps({k: r[k] for k in ("task_id", "completion", "passed")}) + "\n" for r in rows
        )
    )
    code, _, err = analyze(capsys, run_dir, corpus, tmp_path / "index")
    assert code == 2 and "incompatible boi version" in err and str(results) in err
    assert len(err.strip().splitlines()) == 1


def test_a_folder_that_is_not_an_index_is_left_alone(tmp_path, capsys):
    corpus = make_corpus(tmp_path / "corpus")
    run_dir = make_run_dir(tmp_path / "run")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("do not delete")
    code, _, err = analyze(capsys, run_dir, corpus, precious)
    assert code == 2 and "holds no manifest.json, so boi did not write it" in err
    assert (precious / "thesis.tex").read_text() == "do not delete"


def test_a_dataset_name_offline_is_one_sentence(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match="HF_HUB_OFFLINE=1 forbids"):
        resolve_corpus("codeparrot/codeparrot-clean")
    with pytest.raises(UserError, match="does not exist"):
        resolve_corpus("./no/such/folder")


def test_a_jsonl_corpus_counts_bad_rows(tmp_path):
    path = tmp_path / "corpus.jsonl"
    good = json.dumps({"content": HEADER + PLANTED, "path": "repo/checksum.py"})
    path.write_bytes(
        (good + "\n{not json\n" + json.dumps({"content": 3}) + "\n").encode()
        + b'{"content": "caf\xe9"}\n'
    )
    corpus = Corpus((resolve_corpus(str(path)),), IndexConfig())
    index, built = ensure_index(corpus, tmp_path / "index", log=lambda _: None)
    counts = index.manifest["counts"]
    assert built and counts["indexed"] == 1
    assert counts["malformed"] == 2 and counts["undecodable"] == 1
    found = index.search(PLANTED).matches[0]
    assert found.path == f"{path}:1 (repo/checksum.py)" and found.jaccard >= 0.9
    index.close()


SOURCE = '''import re  # a comment

@decorator(x=1)
async def fetch(url: str, *, retries=3) -> bytes:
    """Doc string with 'quotes' and \\"escapes\\"."""
    value = rb"\\d+" + b'\\x00' + u"text" + R'raw'
    numbers = [1, 0xFF, 0o17, 0b1010, 1_000_000, 3.14, 1e-5, 2.5E+3j, .5, 7.]
    total **= 2; total //= 3; total >>= 1; ok = a != b and c <= d
    if (n := len(numbers)) > 10:
        return ...
    long = 1 + \\
        2
    return value @ matrix
'''


def test_tokens_are_pythons_tokens():
    expected = [
        t.string
        for t in tokenize.generate_tokens(io.StringIO(SOURCE).readline)
        if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
        and t.type not in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    ]
    tokens, offsets = tokenize_code(SOURCE)
    assert tokens == expected
    assert all(SOURCE.startswith(t, o) for t, o in zip(tokens, offsets, strict=True))


def test_units_are_function_bodies_and_short_files():
    source = (
        "def outer(\n    a,\n    b,\n) -> int:\n    def inner(x): return x + a + b + 1 + 2 + 3\n"
        "    total = inner(a) + inner(b)\n    return total\n\n\nVALUE = outer(1, 2)\n"
    )
    tokens, offsets = tokenize_code(source)
    units = document_units(source, tokens, offsets, IndexConfig(min_tokens=5, shingle=3))
    spans = {u.label: " ".join(tokens[u.start : u.stop]) for u in units}
    assert spans["def outer"].startswith("def inner ( x )")
    assert spans["def outer"].endswith("return total")
    assert spans["def inner"] == "return x + a + b + 1 + 2 + 3"
    assert spans["whole file"].endswith("VALUE = outer ( 1 , 2 )")
