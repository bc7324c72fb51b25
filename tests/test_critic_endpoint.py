"""The OpenAI-compatible endpoint backend, against a tiny vLLM-like server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from benchmarks.common.errors import UserError
from critic.scoring import EndpointScorer, EndpointScorerConfig


def _fake_logprobs(prompt: str) -> dict:
    """vLLM's echo format: one entry per prompt token (the first has no log-prob), then the
    generated token. Tokens here are whitespace-separated words, log-prob -len(word)/10."""
    tokens, offsets, lps, position = [], [], [], 0
    for word in prompt.split(" "):
        piece = word if position == 0 else " " + word
        tokens.append(piece)
        offsets.append(position)
        lps.append(None if position == 0 else -len(piece) / 10)
        position += len(piece)
    return {
        "tokens": tokens + ["<gen>"],
        "text_offset": offsets + [len(prompt)],
        "token_logprobs": lps + [-0.5],
        "top_logprobs": None,
    }


class _Handler(BaseHTTPRequestHandler):
    mode = "ok"
    requests: list = []
    failures_left = 0  # answer this many requests with 503 first

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        if self.mode == "refuse":
            self._send(400, {"error": {"message": "prompt is too long for this model"}})
            return
        if type(self).failures_left > 0:
            type(self).failures_left -= 1
            self._send(503, {"error": {"message": "model is loading"}})
            return
        prompts = body["prompt"]
        choices = [
            {
                "index": i,
                "text": "x",
                "logprobs": None if self.mode == "no-logprobs" else _fake_logprobs(p),
            }
            for i, p in enumerate(prompts)
        ]
        self._send(200, {"choices": list(reversed(choices))})  # order must not matter

    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.mode = "ok"
    _Handler.requests = []
    _Handler.failures_left = 0
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_scores_come_from_prompt_logprobs(server, monkeypatch):
    monkeypatch.setenv("BOI_TEST_KEY", "sk-secret")
    scorer = EndpointScorer(
        EndpointScorerConfig(url=server, model="m", api_key_env="BOI_TEST_KEY", batch_size=2)
    )
    prompts = ["def add(a, b):", "return the sum", "def add(a, b):", "x y"]
    scores = scorer.score(prompts)
    assert scores[0].logprobs == pytest.approx([-0.7, -0.4])  # " add(a," and " b):"
    assert scores[0].offsets == ((3, 10), (10, 14))
    assert scores[1].total == pytest.approx(-0.4 - 0.4)
    assert scores[2] == scores[0]
    # the duplicate is sent once; 3 distinct prompts in batches of 2
    assert [len(r["body"]["prompt"]) for r in _Handler.requests] == [2, 1]
    request = _Handler.requests[0]
    assert request["path"] == "/v1/completions"
    assert request["body"]["echo"] is True and request["body"]["logprobs"] >= 1
    assert request["auth"] == "Bearer sk-secret"
    assert "sk-secret" not in json.dumps(scorer.describe())


def test_refusal_is_a_clear_error(server):
    _Handler.mode = "refuse"
    scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m"))
    with pytest.raises(UserError, match="HTTP 400.*too long"):
        scorer.score(["def f(): pass"])


def test_missing_logprobs_is_a_clear_error(server):
    _Handler.mode = "no-logprobs"
    scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m"))
    with pytest.raises(UserError, match="no prompt log-probabilities"):
        scorer.score(["def f(): pass"])


def test_unreachable_endpoint_and_bad_url():
    with pytest.raises(UserError, match="http:// or https://"):
        EndpointScorerConfig(url="127.0.0.1:1", model="m")
    scorer = EndpointScorer(
        EndpointScorerConfig(url="http://127.0.0.1:9/v1", model="m", timeout_s=5)
    )
    with pytest.raises(UserError, match="unreachable"):
        scorer.score(["def f(): pass"])


def test_503_is_retried_then_scored(server):
    _Handler.failures_left = 1
    scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m", backoff_s=0.0))
    (score,) = scorer.score(["def f(): pass"])
    assert score.logprobs == pytest.approx([-0.5, -0.5])  # " f():" and " pass"
    assert len(_Handler.requests) == 2  # the 503, then the retry


def test_503_forever_gives_up_with_a_clear_message(server):
    _Handler.failures_left = 10
    scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m", retries=2, backoff_s=0.0))
    with pytest.raises(UserError, match=r"kept failing \(HTTP 503: model is loading\) after 2"):
        scorer.score(["def f(): pass"])
    assert len(_Handler.requests) == 3
