"""Atomic file writes (`benchmarks.common.atomic.atomic_path`, behind `write_bytes_atomic`,
`write_jsonl` and `boi data fetch`): a reader sees the old file or the new one, a failed write
leaves no temporary file, and the new file gets the mode any new file gets."""

from __future__ import annotations

import os

import pytest

from benchmarks.common.atomic import atomic_path, write_text_atomic
from benchmarks.common.jsonl import write_jsonl


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing_beside_it(tmp_path):
    target = tmp_path / "new" / "rows.jsonl"
    assert write_jsonl(target, [{"a": 1}, {"b": "é"}]) == 2
    assert target.read_bytes() == '{"a": 1}\n{"b": "é"}\n'.encode()
    assert target.stat().st_mode & 0o777 == _umask_mode()

    def killed():
        yield {"a": 2}
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError, match="killed"):
        write_jsonl(target, killed())
    assert target.read_bytes() == '{"a": 1}\n{"b": "é"}\n'.encode()
    with pytest.raises(ValueError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise ValueError("refused after writing")
    assert target.read_bytes() == '{"a": 1}\n{"b": "é"}\n'.encode()
    assert [p.name for p in target.parent.iterdir()] == ["rows.jsonl"]


def test_the_new_file_replaces_the_old_one_whole(tmp_path):
    target = tmp_path / "report.md"
    write_text_atomic(target, "old\n")
    with atomic_path(target, suffix=".part") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".report.md.")
        assert tmp.name.endswith(".part") and tmp.read_bytes() == b""
        tmp.write_text("new\n")
        assert target.read_text() == "old\n"  # not yet: the rename comes at the end
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]
