"""The `openai` backend's endpoint pool against small servers on 127.0.0.1 started by the test.

Every fake server answers a prompt with text that depends only on the prompt and the sample's
seed, as servers of one model with seeded sampling do, so a pool must give exactly what one
server gives, whichever server answered.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections import deque
from http.server import ThreadingHTTPServer

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import BackendSpec, DecodingConfig, generate_samples, load_backend
from benchmarks.generation._backend import Request
from benchmarks.generation._decoding import prompt_sha256
from benchmarks.generation._openai import OpenAIOptions, split_urls
from tests.http_fakes import JsonHandler


class _Fake(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str = "ok", delay_s: float = 0.0, ok_first: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode  # "ok", "500" (after `ok_first` good answers) or "refuse"
        self.ok_first = ok_first
        self.delay_s = delay_s
        self.prompts: list[str] = []
        self.lock = threading.Lock()
        self.failed = threading.Event()  # set with its first HTTP 500
        # Answer nothing until this is set (30 s at most): orders this server after another.
        self.hold: threading.Event | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/v1"


def completion(prompt: str, seed: int) -> str:
    return f"    return {hashlib.sha256(f'{prompt}|{seed}'.encode()).hexdigest()[:12]!r}\n"


class _Handler(JsonHandler):
    server: _Fake

    def do_POST(self):
        server = self.server
        body = self.read_json()
        with server.lock:
            server.prompts.append(body["prompt"])
            answered = len(server.prompts)
        time.sleep(server.delay_s)
        if server.hold is not None:
            server.hold.wait(30)
        if server.mode == "refuse":
            self.send_json(400, {"error": {"message": "prompt too long"}})
        elif server.mode == "500" and answered > server.ok_first:
            server.failed.set()
            self.send_json(500, {"error": {"message": "engine dead"}})
        else:
            texts = [completion(body["prompt"], body["seed"] + i) for i in range(body["n"])]
            self.send_json(200, {"choices": [{"index": i, "text": t} for i, t in enumerate(texts)]})


@pytest.fixture
def servers():
    started: list[_Fake] = []

    def start(count: int = 1, **settings) -> list[_Fake]:
        for _ in range(count):
            httpd = _Fake(**settings)
            threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
            started.append(httpd)
        return started[-count:]

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def dead_url():
    """Makes URLs on ports where nothing listens: each stays bound, not listening, until the
    test ends, so a connection is refused and no other process can take the port meanwhile."""
    bound: list[socket.socket] = []

    def make() -> str:
        probe = socket.socket()
        bound.append(probe)
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"

    yield make
    for probe in bound:
        probe.close()


def backend(urls, **options):
    spec = BackendSpec(
        kind="openai", model="served", base_url=urls, backoff_s=0.0, retries=0, **options
    )
    loaded = load_backend(spec)
    loaded.sleep = lambda seconds: None
    loaded.warnings = []
    loaded.warn = loaded.warnings.append
    return loaded


PROMPTS = {f"p{i}": f"def f{i}(x):\n    '''Problem {i}: {'text ' * 20}'''\n" for i in range(12)}
DECODING = DecodingConfig(temperature=0.8, n=4, seed=3)


def test_a_pool_gives_what_one_server_gives_and_spreads_the_load(servers, tmp_path):
    pool = servers(3, delay_s=0.02)
    single = generate_samples(
        backend(pool[0].url, samples_per_request=2),
        PROMPTS,
        DECODING,
        tmp_path / "one.jsonl",
        progress=False,
    )
    for httpd in pool:
        httpd.prompts.clear()
    spread = generate_samples(
        backend([s.url for s in pool], samples_per_request=2, max_concurrency=2),
        PROMPTS,
        DECODING,
        tmp_path / "pool.jsonl",
        progress=False,
    )
    assert spread.raw == single.raw and spread.generated == 48
    answered = [len(httpd.prompts) for httpd in pool]
    assert sum(answered) == 24 and min(answered) >= 2, answered


def test_a_problems_variants_go_to_the_server_that_holds_their_prefix(servers):
    pool = servers(2)
    shared = "def solve(items):\n    '''" + "Sort the items and return them. " * 8
    a = [shared + f"A tail {i}'''\n" for i in range(4)]
    b = [
        "def other(x):\n    '''" + "Count the things. " * 12 + f"B tail {i}'''\n" for i in range(3)
    ]
    order = [a[0], b[0], a[1], a[2], b[1], b[2]]
    loaded = backend([s.url for s in pool], max_concurrency=4)  # affinity slack 1
    requests = [Request(p, prompt_sha256(p), (0,)) for p in order]
    assert len(dict(loaded.complete_many(requests, DECODING))) == 6
    # Least loaded alone would have sent a[2] to the second server (loads 2 and 1).
    assert sorted(pool[0].prompts) == sorted(a[:3]) and sorted(pool[1].prompts) == sorted(b)

    # The prefix does not win beyond the slack: the third same-problem request, with the
    # holding server two requests ahead, goes to the idle one.
    for httpd in pool:
        httpd.prompts.clear()
    fresh = backend([s.url for s in pool], max_concurrency=4)
    requests = [Request(p, prompt_sha256(p), (0,)) for p in a[:3]]
    assert len(dict(fresh.complete_many(requests, DECODING))) == 3
    assert sorted(pool[0].prompts) == sorted(a[:2])
    assert pool[1].prompts == [a[2]]


def test_a_busy_pool_keeps_a_problems_requests_on_its_server():
    """Only the server that just finished has a free slot: it takes a request whose prefix it
    holds, else a new problem's, and the held problem waits for its own server."""
    loaded = backend(["http://a:1/v1", "http://b:1/v1"], max_concurrency=1)
    first, second = loaded.servers
    a = ["def solve(items):\n    '''" + "Sort the items. " * 10 + f"{i}'''\n" for i in range(3)]
    b = ["def other(x):\n    '''" + "Count the things. " * 10 + f"{i}'''\n" for i in range(2)]

    def pick(prompts, loads):
        queue = deque((i, (i, Request(p, prompt_sha256(p), (0,)))) for i, p in enumerate(prompts))
        picked = loaded._pick(queue, loaded.servers, loads)
        if picked is None:
            return None
        at, server = picked
        server.remember(prompts[at])
        return prompts[at], server

    assert pick(a, {0: 0, 1: 0}) == (a[0], first)
    # The second server is free and the first holds a[1] and a[2]: the second starts b.
    assert pick(a[1:] + b, {0: 1, 1: 0}) == (b[0], second)
    assert pick(a[1:] + b[1:], {0: 0, 1: 1}) == (a[1], first)
    assert pick(a[2:] + b[1:], {0: 1, 1: 0}) == (b[1], second)
    # Only the other server's problem is left: the free server takes it rather than idle.
    assert pick(a[2:], {0: 1, 1: 0}) == (a[2], second)
    assert pick(a[2:], {0: 1, 1: 1}) is None  # both full


@pytest.mark.parametrize("failure", ["unreachable", "500"])
def test_a_dead_server_is_marked_down_and_nothing_is_lost(servers, dead_url, tmp_path, failure):
    good = servers(2, delay_s=0.01)
    reference = generate_samples(
        backend(good[0].url), PROMPTS, DECODING, tmp_path / "ref.jsonl", progress=False
    )
    if failure == "unreachable":
        bad = dead_url()  # the first requests go to it and fail at once
    else:
        dying = servers(mode="500", ok_first=2)[0]
        bad = dying.url
        # The good servers answer once it has failed: it gets a third request whatever the
        # scheduler does (its two good answers free its slots while theirs are full), where
        # quicker good servers could otherwise take every request left first.
        for httpd in good:
            httpd.hold = dying.failed
    loaded = backend([bad, good[0].url, good[1].url], samples_per_request=2, max_concurrency=2)
    outcome = generate_samples(loaded, PROMPTS, DECODING, tmp_path / "c.jsonl", progress=False)
    assert outcome.raw == reference.raw and outcome.generated == 48
    (warning,) = loaded.warnings
    assert warning.startswith(f"openai server {bad} is marked down and its requests go to the")
    assert "\n" not in warning
    assert ("unreachable" if failure == "unreachable" else "HTTP 500: engine dead") in warning
    assert [s.down is not None for s in loaded.servers] == [True, False, False]


def test_when_every_server_fails_the_finished_samples_are_kept(servers, tmp_path):
    pool = servers(2, mode="500", ok_first=2)
    loaded = backend([s.url for s in pool], max_concurrency=1)
    cache = tmp_path / "c.jsonl"
    prompts = dict(list(PROMPTS.items())[:10])
    with pytest.raises(UserError) as err:
        generate_samples(loaded, prompts, DecodingConfig(n=1), cache, progress=False)
    message = str(err.value)
    assert message.startswith(
        f"every server of the openai pool is down ({pool[0].url}, {pool[1].url}); the last error:"
    )
    assert "HTTP 500: engine dead" in message and "\n" not in message
    assert len(cache.read_text().splitlines()) == 4  # each server's two good answers
    assert len(loaded.warnings) == 1  # the first down server; the last one is the error
    # A later call knows the pool is down without asking again.
    asked = sum(len(s.prompts) for s in pool)
    with pytest.raises(UserError, match="every server of the openai pool is down"):
        loaded.complete(PROMPTS["p0"], DecodingConfig(), [0])
    assert sum(len(s.prompts) for s in pool) == asked


def test_a_pool_of_unreachable_servers_is_one_sentence(dead_url, tmp_path):
    urls = [dead_url(), dead_url()]
    with pytest.raises(UserError) as err:
        generate_samples(backend(urls), PROMPTS, DECODING, tmp_path / "c.jsonl", progress=False)
    message = str(err.value)
    assert message.startswith(f"every server of the openai pool is down ({', '.join(urls)})")
    assert "unreachable" in message and "\n" not in message and message.endswith("?")


def test_a_refused_request_is_not_sent_elsewhere(servers):
    refusing, good = servers(1, mode="refuse")[0], servers(1)[0]
    loaded = backend([refusing.url, good.url])
    with pytest.raises(UserError, match=r"refused the request \(HTTP 400: prompt too long\)"):
        loaded.complete(PROMPTS["p0"], DECODING, [0])
    assert len(refusing.prompts) == 1 and good.prompts == []
    assert all(s.down is None for s in loaded.servers) and loaded.warnings == []


def test_the_identity_does_not_depend_on_the_servers(servers, tmp_path):
    pool = servers(3)
    urls = [s.url for s in pool]
    first = backend(urls[:2])
    assert first.identity == "openai|pool|served"
    assert backend(list(reversed(urls))).identity == first.identity
    # One URL keeps the identity it always had, however it is written.
    assert backend(urls[0]).identity == f"openai|{urls[0]}|served"
    assert backend([urls[0] + "/"]).identity == f"openai|{urls[0]}|served"
    cache = tmp_path / "c.jsonl"
    done = generate_samples(first, PROMPTS, DECODING, cache, progress=False)
    assert done.generated == 48
    # Another pool of the same model (a server replaced) reuses every cached sample.
    again = generate_samples(backend(urls[1:]), PROMPTS, DECODING, cache, progress=False)
    assert again.generated == 0 and again.cache_hits == 48 and again.raw == done.raw


def test_base_url_takes_one_url_a_list_or_commas():
    assert OpenAIOptions(base_url="http://a:8000/v1/").urls == ("http://a:8000/v1",)
    assert OpenAIOptions(base_url="http://a:8000/v1/").base_url == "http://a:8000/v1/"
    both = ("http://a:8000/v1", "http://b:8000/v1")
    assert OpenAIOptions(base_url="http://a:8000/v1, http://b:8000/v1/,").urls == both
    assert OpenAIOptions(base_url=list(both)).base_url == both  # hashable
    spec = BackendSpec.from_mapping({"kind": "openai", "model": "m", "base_url": list(both)})
    assert spec.options.urls == both
    assert BackendSpec.from_mapping(spec.to_mapping()).options == spec.options
    json.dumps(spec.describe())
    assert split_urls(None) == ()
    with pytest.raises(UserError, match=r"needs base_url starting with http:// or https://"):
        OpenAIOptions(base_url="localhost:8000")
    with pytest.raises(UserError, match=r"needs base_url starting with http:// or https://"):
        OpenAIOptions(base_url=" , ")
    with pytest.raises(
        UserError, match=r"every base_url of an openai endpoint pool .* \(got 'b:8000'\)"
    ):
        OpenAIOptions(base_url="http://a:8000/v1,b:8000")
    with pytest.raises(UserError, match="lists http://a:8000/v1 more than once"):
        OpenAIOptions(base_url=["http://a:8000/v1", "http://a:8000/v1/"])
