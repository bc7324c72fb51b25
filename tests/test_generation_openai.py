"""The OpenAI-compatible backend against a small server on 127.0.0.1 started by the test."""

from __future__ import annotations

import socket
import threading
from http.server import ThreadingHTTPServer

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import BackendSpec, DecodingConfig, generate_samples, load_backend
from benchmarks.generation._decoding import prompt_sha256, sample_seed
from tests.http_fakes import InFlight, JsonHandler

PROMPT = 'def add(a, b):\n    """Add two numbers."""\n'
SECRET = "sk-test-secret-value"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = "ok"
        self.failures_left = 0
        self.requests: list[dict] = []
        self.in_flight = InFlight()
        self.lock = threading.Lock()
        self.overlap = 0  # hold each request until this many are in flight at once
        # A "slow" failure is answered only once the test ends: later than any client timeout.
        self.released = threading.Event()


class _Handler(JsonHandler):
    server: _Server

    def do_POST(self):
        server = self.server
        body = self.read_json()
        with server.lock:
            server.requests.append(
                {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
            )
        with server.in_flight.counted():
            server.in_flight.overlap(server.overlap)
            with server.lock:
                failing = server.mode == "500" or server.failures_left > 0
                if server.failures_left > 0:
                    server.failures_left -= 1
            if failing and server.mode == "slow":
                server.released.wait()
        if server.mode == "refuse":
            self.send_json(400, {"error": {"message": "This model's maximum context length is 8"}})
        elif server.mode == "html":
            self.send_json(200, b"<html>not an API</html>")
        elif failing and server.mode == "drop":
            self.close_connection = True  # hang up without an answer
        elif failing and server.mode == "slow":
            self.send_json(200, self._answer(body))
        elif failing:
            status = 429 if server.mode == "429" else 500
            self.send_json(status, {"error": {"message": "busy"}}, {"Retry-After": "0"})
        else:
            self.send_json(200, self._answer(body))

    def _answer(self, body):
        choices = []
        for i in range(body["n"]):
            text = f"    return a + b  # seed {body['seed']} child {i}\n\ndef more():\n"
            if self.path.endswith("/chat/completions"):
                content = (
                    f"Sure.\n```python\ndef add(a, b):\n    return a + b  # {body['seed'] + i}\n```"
                )
                choices.append({"index": i, "message": {"role": "assistant", "content": content}})
            else:
                choices.append({"index": i, "text": text})
        return {"choices": list(reversed(choices))}  # order must not matter


@pytest.fixture
def server():
    httpd = _Server()
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.released.set()
    httpd.shutdown()
    httpd.server_close()


def _backend(server, monkeypatch, **overrides):
    monkeypatch.setenv("BOI_TEST_KEY", SECRET)
    spec = BackendSpec(
        kind="openai",
        model="served-model",
        base_url=f"http://127.0.0.1:{server.server_port}/v1",
        api_key_env="BOI_TEST_KEY",
        backoff_s=0.0,
        **overrides,
    )
    backend = load_backend(spec)
    backend.sleep = lambda seconds: None
    return backend


def test_completions_with_seeds_stops_and_key(server, monkeypatch, tmp_path):
    backend = _backend(server, monkeypatch, samples_per_request=4)
    decoding = DecodingConfig(temperature=0.8, top_p=0.9, n=6, max_new_tokens=50, seed=2)
    outcome = generate_samples(
        backend, {"a": PROMPT, "b": PROMPT}, decoding, tmp_path / "c.jsonl", progress=False
    )
    assert len(server.requests) == 2  # one prompt, samples 0-3 and 4-5
    base = sample_seed(2, prompt_sha256(PROMPT), 0)
    bodies = sorted((r["body"] for r in server.requests), key=lambda b: b["seed"])
    assert [(b["n"], b["seed"]) for b in bodies] == [(4, base), (2, base + 4)]
    first = bodies[0]
    assert server.requests[0]["path"] == "/v1/completions"
    assert first["model"] == "served-model" and first["prompt"] == PROMPT
    assert first["temperature"] == 0.8 and first["top_p"] == 0.9 and first["max_tokens"] == 50
    assert "\ndef " in first["stop"]
    assert all(r["auth"] == f"Bearer {SECRET}" for r in server.requests)
    assert outcome.completions["a"] == [
        f"    return a + b  # seed {base + (j // 4) * 4} child {j % 4}\n" for j in range(6)
    ]
    assert SECRET not in backend.identity
    assert SECRET not in (tmp_path / "c.jsonl").read_text()


def test_chat_endpoint_and_greedy_asks_once(server, monkeypatch, tmp_path):
    backend = _backend(server, monkeypatch)
    decoding = DecodingConfig(temperature=0, n=3, chat=True)
    outcome = generate_samples(
        backend, {"a": PROMPT}, decoding, tmp_path / "c.jsonl", progress=False
    )
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions" and request["body"]["n"] == 1
    assert "top_p" not in request["body"] and "stop" not in request["body"]
    message = request["body"]["messages"][0]
    assert message["role"] == "user" and PROMPT.rstrip() in message["content"]
    assert len(set(outcome.completions["a"])) == 1
    assert outcome.completions["a"][0].startswith("    return a + b  # ")


def test_429_then_success_is_retried(server, monkeypatch):
    server.mode, server.failures_left = "429", 2
    backend = _backend(server, monkeypatch, retries=3)
    delays = []
    backend.sleep = delays.append
    texts = backend.complete(PROMPT, DecodingConfig(temperature=0.8, n=2), [0, 1])
    assert len(texts) == 2 and len(server.requests) == 3
    assert delays == [0.0, 0.0]  # backoff_s=0 and Retry-After: 0


def test_backoff_doubles(server, monkeypatch):
    server.mode, server.failures_left = "429", 3
    backend = _backend(server, monkeypatch, retries=3)
    backend.spec = BackendSpec(**{**backend.spec.describe(), "backoff_s": 0.5})
    delays = []
    backend.sleep = delays.append
    backend.complete(PROMPT, DecodingConfig(temperature=0.8), [0])
    assert delays == [0.5, 1.0, 2.0]


def test_500_forever_gives_up_with_a_clear_message(server, monkeypatch, tmp_path):
    server.mode = "500"
    backend = _backend(server, monkeypatch, retries=2)
    with pytest.raises(UserError, match=r"kept failing \(HTTP 500: busy\) after 2 retries") as err:
        generate_samples(
            backend, {"a": PROMPT}, DecodingConfig(n=1), tmp_path / "c.jsonl", progress=False
        )
    assert len(server.requests) == 3
    assert SECRET not in str(err.value)


def test_refusal_is_not_retried(server, monkeypatch):
    server.mode = "refuse"
    backend = _backend(server, monkeypatch)
    with pytest.raises(
        UserError, match=r"refused the request \(HTTP 400: This model's maximum context"
    ):
        backend.complete(PROMPT, DecodingConfig(), [0])
    assert len(server.requests) == 1


@pytest.mark.parametrize("mode", ["drop", "slow"])
def test_dropped_connections_and_timeouts_are_retried(server, monkeypatch, mode):
    """A slow failure is never answered while the client waits, so it times out whatever the
    timeout; the retry is answered at once, and the timeout is long enough for that answer on
    a loaded machine (0.3 s could run out there, leaving no retry)."""
    server.mode, server.failures_left = mode, 1
    backend = _backend(server, monkeypatch, retries=1, timeout_s=2.0)
    assert len(backend.complete(PROMPT, DecodingConfig(temperature=0.8), [0])) == 1
    assert len(server.requests) == 2


def test_an_answer_that_is_not_json_is_a_clear_error(server, monkeypatch):
    server.mode = "html"
    backend = _backend(server, monkeypatch)
    with pytest.raises(UserError, match="did not return JSON") as err:
        backend.complete(PROMPT, DecodingConfig(), [0])
    assert SECRET not in str(err.value)


def test_unreachable_server():
    # The port stays bound, not listening, until the end: refused, and no other process can
    # take it in between.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        backend = load_backend(
            BackendSpec(kind="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1")
        )
        with pytest.raises(UserError, match="unreachable"):
            backend.complete(PROMPT, DecodingConfig(), [0])


def test_concurrency_is_limited(server, monkeypatch, tmp_path):
    # The first requests wait for each other: three in flight at once however the scheduler
    # starts the client's threads (a delay let a slow start give one or two).
    server.overlap = 3
    backend = _backend(server, monkeypatch, max_concurrency=3)
    prompts = {f"p{i}": PROMPT + f"# {i}\n" for i in range(12)}
    outcome = generate_samples(
        backend, prompts, DecodingConfig(n=1), tmp_path / "c.jsonl", progress=False
    )
    assert outcome.generated == 12
    assert server.in_flight.most == 3
