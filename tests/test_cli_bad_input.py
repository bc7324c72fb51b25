"""Bad input gets one clear sentence naming the file, line or field; no traceback; exit 2."""

import pytest

from boi.cli import main

GOOD = '{"task_id": "X/0", "prompt": "def f(x):\\n    \\"\\"\\"Id.\\"\\"\\"\\n", "entry_point": "f", "test": "def check(candidate):\\n    assert candidate(1) == 1\\n"}\n'


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (GOOD + "{not json\n", "line 2 is not valid JSON"),
        (GOOD.replace('"entry_point": "f", ', ""), "line 1: the record has no 'entry_point' field"),
        (b'{"task_id": "\xff"}\n', "line 1 is not valid UTF-8"),
        ("", "is empty"),
        ("\n\n", "is empty"),
        ("[1, 2]\n", "line 1 holds a list, not a JSON object"),
        (GOOD + GOOD, "task_id 'X/0' already appeared on line 1"),
    ],
)
def test_bad_jsonl(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, _, err = run_cli(capsys, "blocks", str(path))
    assert code == 2
    assert expected in err and str(path) in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_missing_file(tmp_path, capsys):
    code, _, err = run_cli(capsys, "blocks", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "does not exist" in err


def test_unknown_dataset_suggests(capsys):
    code, _, err = run_cli(capsys, "blocks", "humanevl")
    assert code == 2 and "did you mean 'humaneval'" in err


def test_mbpp_missing_field(tmp_path, capsys):
    path = tmp_path / "mbpp.jsonl"
    path.write_text('{"task_id": 1, "text": "t", "code": "def f():\\n    return 1"}\n')
    code, _, err = run_cli(capsys, "blocks", "mbpp", "--data", str(path))
    assert code == 2 and "line 1: the record has no 'test_list' field" in err


def test_failed_run_keeps_existing_output(tmp_path, capsys):
    good, out = tmp_path / "good.jsonl", tmp_path / "out.jsonl"
    good.write_text(GOOD)
    assert run_cli(capsys, "blocks", str(good), "--out", str(out))[0] == 0
    before = out.read_text()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(GOOD + "{oops\n")
    assert run_cli(capsys, "blocks", str(bad), "--out", str(out))[0] == 2
    assert out.read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_blocks_command_output(tmp_path, capsys):
    import json

    out = tmp_path / "he.jsonl"
    code, stdout, _ = run_cli(capsys, "blocks", "humaneval", "--out", str(out))
    assert code == 0
    assert "164 problems, 164 split exactly" in stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 164
    assert all("".join(b["text"] for b in r["blocks"]) == r["prompt"] for r in rows)
    assert rows[0]["blocks"][1]["kind"] == "name"
