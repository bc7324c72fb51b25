"""`boi data fetch` and `boi data list` (issue 38: a stranger with the internet gets each dataset
with one command), against a local fake of the upstream (http.server in a thread, serving files
from tmp_path in the OWNER/REPO/COMMIT/PATH layout of raw.githubusercontent.com): a fetch puts
each file in place only after its sha256 matches, a mismatch is refused in one sentence with
nothing left behind, a second fetch skips what is there, and a server that is down is one
sentence, no traceback. The registry's pinned sha256 values are checked against the real files
where ../shared/data has them (skipped cleanly without it)."""

from __future__ import annotations

import hashlib
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

import benchmarks.upstream as upstream
import boi.commands.data as data_command
from benchmarks.loaders import load_benchmark
from benchmarks.upstream import UPSTREAM_DATA, Dataset, UpstreamFile
from bias.fairness_tests.tasks import load_fairness_tasks
from bias.modifier_prompts.classifier import read_data
from boi.cli import main
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
TRAIN = b'{"code": "def f(people): return people", "label": 0}\n'
TEST = b'{"code": "def g(people): return [p for p in people if p.age > 30]", "label": 1}\n'


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


TOY = Dataset(
    name="toy",
    title="a toy dataset of two files",
    repo="someone/toy-data",
    commit="0123456789abcdef0123456789abcdef01234567",
    licence="CC0",
    files=(
        UpstreamFile("data/split/train.jsonl", "train.jsonl", sha256(TRAIN)),
        UpstreamFile("data/split/test.jsonl", "test.jsonl", sha256(TEST)),
    ),
    reads="boi bias train-classifier --data data/toy",
)


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server(tmp_path) -> Iterator[tuple[Path, str]]:
    """(the folder it serves, its base URL)."""
    served = tmp_path / "served"
    served.mkdir()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(served)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def publish(served: Path, entry: Dataset, contents: dict[str, bytes]) -> None:
    """Put `contents` (file name -> bytes) where the fake upstream serves `entry`'s files."""
    for file in entry.files:
        if file.name in contents:
            path = served / entry.repo / entry.commit / file.upstream_path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(contents[file.name])


@pytest.fixture
def toy(monkeypatch, server) -> tuple[Path, str]:
    """The registry holds only TOY, published correctly on the fake server."""
    monkeypatch.setattr(upstream, "UPSTREAM_DATA", (TOY,))
    monkeypatch.setattr(upstream, "NAMES", ("toy",))
    monkeypatch.setattr(data_command, "UPSTREAM_DATA", (TOY,))
    monkeypatch.setattr(data_command, "NAMES", ("toy",))
    publish(server[0], TOY, {"train.jsonl": TRAIN, "test.jsonl": TEST})
    return server


def leftovers(folder: Path) -> list[str]:
    """Every file under `folder`, relative (temporary .part files included)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_fetch_puts_each_file_in_place_checked(toy, tmp_path, capsys) -> None:
    out = tmp_path / "data"
    assert main(["data", "fetch", "toy", "--dir", str(out), "--base-url", toy[1]]) == 0
    assert (out / "toy" / "train.jsonl").read_bytes() == TRAIN
    assert (out / "toy" / "test.jsonl").read_bytes() == TEST
    assert leftovers(out) == ["toy/test.jsonl", "toy/train.jsonl"]  # no .part left
    printed = capsys.readouterr().out
    assert f"train.jsonl: fetched, {len(TRAIN)} bytes, sha256 checked" in printed
    assert "2 file(s) fetched, 0 already present" in printed


def test_a_second_fetch_skips_what_is_there(toy, tmp_path, capsys) -> None:
    out = tmp_path / "data"
    args = ["data", "fetch", "--dir", str(out), "--base-url", toy[1]]  # no NAME: every dataset
    assert main(args) == 0
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*.jsonl")}
    shutil.rmtree(toy[0])  # the upstream is gone: a skip must not ask it
    capsys.readouterr()
    assert main(args) == 0
    assert "0 file(s) fetched, 2 already present" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.jsonl")} == stamps
    assert main(["data", "list", "--dir", str(out)]) == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("toy ")]
    assert row.split()[:4] == ["toy", "present", "someone/toy-data", "0123456789ab"]


def test_the_base_url_comes_from_the_environment_too(toy, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BOI_DATA_BASE_URL", toy[1])
    assert main(["data", "fetch", "all", "--dir", str(tmp_path / "data")]) == 0
    assert (tmp_path / "data" / "toy" / "test.jsonl").read_bytes() == TEST


def one_sentence_error(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert lines[0].startswith("boi data: error: ")
    return lines[0]


def test_a_checksum_mismatch_is_refused_and_nothing_stays(toy, tmp_path, capsys) -> None:
    publish(toy[0], TOY, {"test.jsonl": TEST + b"tampered\n"})
    out = tmp_path / "data"
    assert main(["data", "fetch", "--dir", str(out), "--base-url", toy[1]]) == 2
    error = one_sentence_error(capsys)
    assert "test.jsonl has sha256" in error and f"not the pinned {sha256(TEST)[:12]}" in error
    # train.jsonl came first and is complete and checked: it stays; nothing else does.
    assert leftovers(out) == ["toy/train.jsonl"]


def test_a_mismatch_into_a_new_folder_leaves_no_folder(toy, tmp_path, capsys) -> None:
    publish(toy[0], TOY, {"train.jsonl": b"not the pinned bytes\n"})
    out = tmp_path / "data"
    assert main(["data", "fetch", "--dir", str(out), "--base-url", toy[1]]) == 2
    assert "train.jsonl has sha256" in one_sentence_error(capsys)
    assert not out.exists()  # the folders this fetch made are gone with the temporary file


def test_a_server_that_is_down_is_one_sentence(toy, tmp_path, capsys) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "data"
    assert main(["data", "fetch", "--dir", str(out), "--base-url", f"http://127.0.0.1:{port}"]) == 2
    error = one_sentence_error(capsys)
    assert f"http://127.0.0.1:{port}/someone/toy-data/" in error and "unreachable" in error
    assert not out.exists()


def test_a_file_the_server_does_not_have_is_one_sentence(toy, tmp_path, capsys) -> None:
    (toy[0] / TOY.repo / TOY.commit / TOY.files[0].upstream_path).unlink()
    out = tmp_path / "data"
    assert main(["data", "fetch", "--dir", str(out), "--base-url", toy[1]]) == 2
    assert "answered HTTP 404" in one_sentence_error(capsys)
    assert not out.exists()


def test_another_file_in_the_place_is_kept_unless_forced(toy, tmp_path, capsys) -> None:
    out = tmp_path / "data"
    mine = out / "toy" / "train.jsonl"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"my own edit\n")
    args = ["data", "fetch", "--dir", str(out), "--base-url", toy[1]]
    assert main(args) == 2
    assert "exists and is not the pinned file" in one_sentence_error(capsys)
    assert mine.read_bytes() == b"my own edit\n"
    assert main(["data", "list", "--dir", str(out)]) == 0
    assert re.search(r"^toy +differs ", capsys.readouterr().out, re.M)
    assert main([*args, "--force"]) == 0
    assert mine.read_bytes() == TRAIN


def test_a_dir_holding_something_else_is_refused_by_the_output_contract(toy, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("a user's folder\n")
    assert main(["data", "fetch", "--dir", str(mine), "--base-url", toy[1]]) == 2
    assert "is not empty and holds no toy" in one_sentence_error(capsys)
    assert leftovers(mine) == ["notes.txt"]


def test_an_unknown_name_is_refused_while_parsing(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["data", "fetch", "mbp"])
    assert exit_.value.code == 2
    assert "argument NAME: invalid choice: 'mbp'" in capsys.readouterr().err


# --------------------------------------------------------------------------- the real registry


def test_registry_names_are_unique_and_pins_are_full() -> None:
    assert len({d.name for d in UPSTREAM_DATA}) == len(UPSTREAM_DATA)
    for entry in UPSTREAM_DATA:
        assert re.fullmatch(r"[0-9a-f]{40}", entry.commit), entry.name
        assert entry.reads.count(f"data/{entry.name}") == 1, entry.reads
        for file in entry.files:
            assert re.fullmatch(r"[0-9a-f]{64}", file.sha256), file


def test_the_get_the_data_page_pins_what_the_registry_pins() -> None:
    page = (ROOT / "docs" / "how-to" / "get-the-data.md").read_text(encoding="utf-8")
    assert "boi data fetch" in page
    for entry in UPSTREAM_DATA:
        assert entry.repo in page and entry.commit in page, entry.name
        for file in entry.files:
            assert file.sha256 in page and f"data/{entry.name}/{file.name}" in page, file


def shared_files() -> list[tuple[Dataset, UpstreamFile, Path]]:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} not present")
    found = [
        (entry, file, SHARED_DATA / entry.name / file.name)
        for entry in UPSTREAM_DATA
        for file in entry.files
    ]
    if not any(path.is_file() for _, _, path in found):
        pytest.skip(f"no registry file is in {SHARED_DATA}")
    return found


def test_registry_sha256_matches_the_real_files() -> None:
    """The files in ../shared/data were copied from the upstream repositories their SOURCE.md
    names: the registry's repository, commit and sha256 must be theirs."""
    checked = 0
    for entry, file, path in shared_files():
        if not path.is_file():
            continue
        assert upstream.sha256_of(path) == file.sha256, f"{entry.name}/{file.name}"
        source = path.parent / "SOURCE.md"
        if source.is_file():
            text = source.read_text(encoding="utf-8")
            # A SOURCE note may give the commit abbreviated (BigCodeBench's: a3b8985).
            named = entry.commit in text or re.search(rf"\b{entry.commit[:7]}\b", text)
            assert entry.repo in text and named, f"{source} names another upstream"
            # The file's path, or a folder it lies under (HumanEval-X's names its
            # codegeex/benchmark/humaneval-x/, above one folder per language).
            folders = [str(f) for f in PurePosixPath(file.upstream_path).parents if "/" in str(f)]
            assert (
                file.upstream_path.rpartition("/")[0] in text
                or file.upstream_path in text
                or any(folder in text for folder in folders)
            ), f"{source} names another path"
        checked += 1
    assert checked >= 1


def test_every_registry_dataset_fetches_from_a_fake_upstream(server, tmp_path, capsys) -> None:
    """The whole real table, served from ../shared/data's copies: each URL is built as the
    registry says, each pinned sha256 accepts the real bytes, and `boi data list` then reads
    every dataset as present."""
    found = shared_files()
    if not all(path.is_file() for _, _, path in found):
        pytest.skip(f"{SHARED_DATA} lacks some of the registry's files")
    served, url = server
    for entry, file, path in found:
        publish(served, entry, {file.name: path.read_bytes()})
    out = tmp_path / "data"
    assert main(["data", "fetch", "--dir", str(out), "--base-url", url]) == 0
    assert f"{len(found)} file(s) fetched" in capsys.readouterr().out
    assert main(["data", "list", "--dir", str(out)]) == 0
    printed = capsys.readouterr().out
    for entry in UPSTREAM_DATA:
        assert re.search(rf"^{entry.name} +present ", printed, re.M), entry.name
    # The loaders read what was fetched, offline, by the paths the docs give (MBPP too, but its
    # reference solutions take a while to run: tests/test_loaders.py covers it).
    sample = out / "code_contests" / "code_contests_sample_train_short.jsonl"
    assert len(load_benchmark("code_contests", sample).problems) == 30
    assert len(load_fairness_tasks("socialbias_bench", str(out / "socialbias_bench"))[0]) == 343
    assert len(load_fairness_tasks("cbs_prompts", str(out / "cbs_prompts"))[0]) == 334
    assert [len(v) for v in read_data(str(out / "code_bias_classifier")).values()] == [
        5488,
        1568,
        784,
    ]
