"""Whole chat replies through `boi run`: an OpenAI-compatible server on 127.0.0.1 answers each
prompt with a reply of the corpus (tests/data/replies/corpus.jsonl, `kind: completion`), and
every verdict of the run must be the corpus's: helpers and constants kept, the revised
version judged, usage blocks and tests left out, cut-off and code-less replies failed without
running. The report says how the replies were read."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchmarks.loaders import load_benchmark
from boi.runner import load_run_config, run_robustness
from tests.http_fakes import JsonHandler

CORPUS = Path(__file__).parent / "data" / "replies" / "corpus.jsonl"
MARK = re.compile(r"# corpus entry: (\S+)")


def _entries() -> list[dict[str, Any]]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, filter(None, lines)) if e["kind"] == "completion"]


class _ChatServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, replies: dict[str, str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies = replies


class _Handler(JsonHandler):
    server: _ChatServer

    def do_POST(self) -> None:
        body = self.read_json()
        message = body["messages"][-1]["content"]
        entry = MARK.search(message)
        content = self.server.replies[entry.group(1)] if entry else "no such entry"
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
            for i in range(body.get("n", 1))
        ]
        self.send_json(200, {"choices": choices})


@pytest.fixture
def chat_server() -> Iterator[_ChatServer]:
    server = _ChatServer({e["id"]: e["reply"] for e in _entries()})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_boi_run_judges_every_whole_chat_reply_right(tmp_path, chat_server):
    humaneval = {p.task_id: p for p in load_benchmark("humaneval").problems}
    entries = _entries()
    # One problem per entry; a comment at the top makes each prompt distinct, so that the
    # generation cache (keyed by prompt) asks the server once per entry.
    dataset = tmp_path / "replies.jsonl"
    with dataset.open("w", encoding="utf-8") as handle:
        for entry in entries:
            problem = humaneval[entry["task"]]
            record = {
                "task_id": f"corpus/{entry['id']}",
                "prompt": f"# corpus entry: {entry['id']}\n{problem.prompt}",
                "entry_point": problem.entry_point,
                "canonical_solution": problem.canonical_solution,
                "test": problem.test,
            }
            handle.write(json.dumps(record) + "\n")
    port = chat_server.server_address[1]
    config = load_run_config(
        None,
        {
            "out_dir": str(tmp_path / "run"),
            "datasets": [{"name": str(dataset)}],
            "transforms": ["original"],
            "models": [
                {"kind": "openai", "model": "corpus", "base_url": f"http://127.0.0.1:{port}/v1"}
            ],
            "settings": [
                {"label": "chat", "ks": [1], "decoding": {"temperature": 0.0, "n": 1, "chat": True}}
            ],
            "seeds": [0],
            "name_only_probe": False,
            "critic": {"enabled": False},
            "bootstrap": 20,
        },
    )
    logged: list[str] = []
    outcome = run_robustness(config, log=logged.append)
    rows = {
        json.loads(line)["task_id"]: json.loads(line)
        for path in (outcome.out_dir / "results").rglob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    wrong = []
    for entry in entries:
        row = rows[f"corpus/{entry['id']}"]
        expected = (entry["expected_status"], bool(entry.get("expected_passed")))
        if (row["reply_status"], row["passed"]) != expected:
            wrong.append((entry["id"], expected, row["reply_status"], row["result"]))
    assert not wrong, wrong
    unread = sum(e["expected_status"] != "extracted" for e in entries)
    assert any(f"{unread} of {len(entries)} chat replies" in line for line in logged), logged
    table = (outcome.out_dir / "report" / "table.md").read_text(encoding="utf-8")
    assert "## How replies were read" in table
    counts = json.loads((outcome.out_dir / "report" / "table.json").read_text())["reply_reading"]
    (only,) = counts
    assert only["replies"] == len(entries) and only["no_code"] + only["truncated"] == unread
    assert only["helpers kept"] >= 5 and only["several candidates"] >= 1
    html = (outcome.out_dir / "report" / "report.html").read_text(encoding="utf-8")
    assert "How replies were read" in html
