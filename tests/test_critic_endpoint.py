"""The OpenAI-compatible endpoint backend, against a tiny server on 127.0.0.1 that answers like
vLLM (a list of prompts per request), like llama-cpp-python's server (one prompt per request; a
list of several is an HTTP 500), or like servers whose echo is not the prompt's log-probabilities.
"""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer

import pytest

from benchmarks.common.errors import UserError
from critic.scoring import EndpointScorer, EndpointScorerConfig
from tests.http_fakes import InFlight, JsonHandler


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


def _with_top(echo: dict, shift: int = 0) -> dict:
    """`echo` with each position's top-1 prediction (plus the echoed token, as llama.cpp adds):
    the token itself (shift 0), or, shift 1, the next token, with every log-probability moved to
    the token before it: llama-cpp-python's echo for a model that adds no BOS token."""
    tokens, lps = echo["tokens"], list(echo["token_logprobs"])
    if shift:
        lps = [None, *lps[2:]]  # token i gets the number of token i+1; the generated one is lost
    tops = [
        None if lp is None else {tokens[min(i + shift, len(tokens) - 1)]: -0.01, tokens[i]: lp}
        for i, lp in enumerate(lps)
    ]
    return {**echo, "tokens": tokens[: len(lps)], "token_logprobs": lps, "top_logprobs": tops}


def _echo(mode: str, prompt: str) -> dict | None:
    """The `logprobs` object of one choice, as a server in `mode` would echo `prompt`."""
    echo = _fake_logprobs(prompt)
    if mode == "no-logprobs":
        return None
    if mode == "vllm-bos":
        # vLLM on a SentencePiece model: the start token echoed as text (counted in the
        # offsets) and the first word with the tokenizer's dummy-prefix space.
        first = " " + echo["tokens"][0]
        return {
            "tokens": ["<s>", first, *echo["tokens"][1:]],
            "text_offset": [0] + [o + 3 for o in echo["text_offset"]],
            "token_logprobs": [None, -0.25, *echo["token_logprobs"][1:]],
            "top_logprobs": None,
        }
    if mode == "bytes":
        # "é" split into two byte tokens the server cannot decode one at a time
        tokens, lps = [], []
        for token, lp in zip(echo["tokens"], echo["token_logprobs"], strict=True):
            if "é" in token:
                head, tail = token.split("é", 1)
                tokens += [head, "", "\ufffd", tail] if head else ["", "\ufffd", tail]
                lps += [lp, -0.3, -0.2, -0.1] if head else [lp if lp is None else -0.3, -0.2, -0.1]
            else:
                tokens.append(token)
                lps.append(lp)
        return {**echo, "tokens": tokens, "token_logprobs": lps}
    if mode == "aligned-top":
        return _with_top(echo)
    if mode == "shifted":
        return _with_top(echo, shift=1)
    if mode == "positive":
        return {**echo, "token_logprobs": [None, 0.7, *echo["token_logprobs"][2:]]}
    if mode == "nan":
        return {**echo, "token_logprobs": [None, float("nan"), *echo["token_logprobs"][2:]]}
    if mode == "no-token-logprobs":
        return {k: v for k, v in echo.items() if k != "token_logprobs"}
    if mode == "no-echo":  # only the generated token, as a server that ignores echo
        return {"tokens": ["\n    return"], "text_offset": [0], "token_logprobs": [-0.5]}
    if mode == "half-echo":  # the echo stops early
        return {k: v[:4] for k, v in echo.items() if v is not None}
    if mode == "other-text":  # tokens that do not spell the prompt
        return {**echo, "tokens": [t.upper() for t in echo["tokens"]]}
    return echo


class _Handler(JsonHandler):
    mode = "ok"
    requests: list = []
    failures_left = 0  # answer this many requests with 503 first
    single_prompt = False  # like llama-cpp-python's server: one prompt per request
    overlap = 0  # hold each request until this many are in flight at once
    in_flight = InFlight()
    lock = threading.Lock()

    def do_POST(self):
        cls = type(self)
        body = self.read_json()
        with cls.lock:
            cls.requests.append(
                {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
            )
        with cls.in_flight.counted():
            cls.in_flight.overlap(cls.overlap)
        self._answer(body)

    def _answer(self, body):
        cls = type(self)
        if self.mode == "refuse":
            self.send_json(400, {"error": {"message": "prompt is too long for this model"}})
            return
        if cls.failures_left > 0:
            cls.failures_left -= 1
            self.send_json(503, {"error": {"message": "model is loading"}})
            return
        prompts = body["prompt"]
        if cls.single_prompt and isinstance(prompts, list) and len(prompts) > 1:
            # llama-cpp-python asserts len(prompt) <= 1: an AssertionError is an HTTP 500
            self.send_json(500, {"error": {"message": "", "type": "internal_server_error"}})
            return
        if isinstance(prompts, str):
            prompts = [prompts]
        choices = [
            {"index": i, "text": "x", "logprobs": _echo(self.mode, p)}
            for i, p in enumerate(prompts)
        ]
        self.send_json(200, {"choices": list(reversed(choices))})  # order must not matter


@pytest.fixture
def server():
    _Handler.mode = "ok"
    _Handler.requests = []
    _Handler.failures_left = 0
    _Handler.single_prompt = False
    _Handler.overlap = 0
    _Handler.in_flight = InFlight()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/v1"
    _Handler.overlap = 0  # tests/test_runner.py serves with this handler too
    httpd.shutdown()
    httpd.server_close()


def _one_sentence(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert message.endswith(".") and ". " not in message and "\n" not in message, message
    return message


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
    with pytest.raises(UserError, match=r"HTTP 400.*too long"):
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


PROMPTS = ["def add(a, b):", "return the sum", "x y", "def add(a, b):", "import os"]


def test_a_batched_server_gets_all_prompts_in_one_request(server):
    scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m"))
    scores = scorer.score(PROMPTS)
    assert [r["body"]["prompt"] for r in _Handler.requests] == [list(dict.fromkeys(PROMPTS))]
    assert scores[0].logprobs == pytest.approx([-0.7, -0.4])
    assert scorer.describe()["batching"] == "auto"
    assert scorer.describe()["batching_used"] == "list"


def _recorded_waits(scorer: EndpointScorer) -> list[float]:
    """The backoff waits of `scorer`'s clients, recorded instead of slept."""
    waits: list[float] = []
    make = scorer.client

    def client():
        made = make()
        made.sleep = waits.append
        return made

    scorer.client = client
    return waits


def test_a_single_prompt_server_falls_back_and_scores_identically(server):
    """llama-cpp-python's server answers a list of prompts with HTTP 500 (not retried here): the
    first prompt goes alone, then every prompt, and later calls remember the mode."""
    batched = EndpointScorer(EndpointScorerConfig(url=server, model="m")).score(PROMPTS)
    _Handler.requests, _Handler.single_prompt = [], True
    scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m", backoff_s=30.0))
    waits = _recorded_waits(scorer)
    assert scorer.score(PROMPTS) == batched
    assert waits == []  # the 500 was not retried (after a 30 s backoff)
    sent = [r["body"]["prompt"] for r in _Handler.requests]
    assert sent[0] == list(dict.fromkeys(PROMPTS)) and sent[1] == PROMPTS[0]
    assert sorted(sent[1:]) == sorted(dict.fromkeys(PROMPTS))  # each distinct prompt once
    assert scorer.describe()["batching_used"] == "single"
    _Handler.requests = []
    assert scorer.score(["x y", "import os"]) == [batched[2], batched[4]]
    assert sorted(r["body"]["prompt"] for r in _Handler.requests) == ["import os", "x y"]


def test_one_prompt_per_request_runs_concurrently_up_to_the_limit(server):
    _Handler.overlap = 3  # the first three wait for each other, however the threads start
    prompts = [f"def f{i}(): pass" for i in range(9)]
    config = EndpointScorerConfig(url=server, model="m", batching="single", concurrency=3)
    scorer = EndpointScorer(config)
    scores = scorer.score(prompts)
    assert [s.n_tokens for s in scores] == [2] * 9
    assert all(isinstance(r["body"]["prompt"], str) for r in _Handler.requests)
    assert _Handler.in_flight.most == 3
    assert scorer.describe()["batching_used"] == "single"


def test_a_list_that_gets_too_few_choices_falls_back_too(server):
    """A server that silently answers only the first prompt of a list."""
    _Handler.single_prompt = True
    original = _Handler._answer

    def first_only(self, body):
        if isinstance(body["prompt"], list):
            body = {**body, "prompt": body["prompt"][:1]}
        original(self, body)

    _Handler._answer = first_only
    try:
        scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m"))
        assert [s.n_tokens for s in scorer.score(["a b c", "d e"])] == [2, 1]
    finally:
        _Handler._answer = original
    assert scorer.describe()["batching_used"] == "single"


@pytest.mark.parametrize(
    ("mode", "prompt", "logprobs", "spans"),
    [
        # the echoed "<s>" is not scored; " def" stands for "def"; text_offset is not used
        ("vllm-bos", "def f(x): pass", (-0.25, -0.6, -0.5), ((0, 3), (3, 9), (9, 14))),
        # the two byte pieces of "é" get its span; the echo still spells the rest exactly
        ("bytes", "x = 'café' + y", (-0.2, -0.7, -0.3, -0.2, -0.1, -0.2, -0.2), None),
        # the top-1 token is the echoed one: a sound server passes the shift check
        ("aligned-top", "a bb ccc dddd " * 6 + "e", None, None),
    ],
)
def test_the_ways_servers_differ_in_their_echo_are_allowed(server, mode, prompt, logprobs, spans):
    _Handler.mode = mode
    (score,) = EndpointScorer(EndpointScorerConfig(url=server, model="m")).score([prompt])
    if logprobs is not None:
        assert score.logprobs == pytest.approx(logprobs)
    if spans is not None:
        assert score.offsets == spans
    # every scored span lies in the prompt, in order
    assert all(0 <= a <= b <= len(prompt) for a, b in score.offsets)
    assert [a for a, _ in score.offsets] == sorted(a for a, _ in score.offsets)
    if mode == "bytes":
        assert score.offsets[2:5] == ((8, 9), (8, 9), (9, 10))  # both pieces of "é", then "'"


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("positive", r"echoed 0\.7 as the log-probability of prompt token 1 \(' f\(\):'\)"),
        ("nan", "echoed nan as the log-probability"),
        ("no-token-logprobs", "returned no prompt log-probabilities"),
        ("no-echo", r"echoed token 0 as '\\n    return' where the prompt has 'def f\(\)"),
        ("half-echo", "echoed only the first 17 of the prompt's 87 characters"),
        ("other-text", r"echoed token 0 as 'DEF' where the prompt has 'def"),
        ("shifted", "shifted by one token"),
    ],
)
def test_an_echo_that_is_not_the_prompts_logprobs_is_refused_in_one_sentence(server, mode, message):
    _Handler.mode = mode
    scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m"))
    prompt = "def f(): pass " * 6 + "end"
    with pytest.raises(UserError, match=message) as err:
        scorer.score([prompt])
    assert server in _one_sentence(err)


def test_a_short_shifted_echo_is_refused_at_the_end_of_the_call(server):
    """Fewer than SHIFT_EVIDENCE checked tokens: the call decides on what it has."""
    _Handler.mode = "shifted"
    scorer = EndpointScorer(EndpointScorerConfig(url=server, model="m"))
    with pytest.raises(UserError, match=r"in 4 of 4 checked positions"):
        scorer.score(["a bb ccc dddd eeeee f"])


def test_bad_batching_settings_are_one_sentence():
    with pytest.raises(UserError, match="batching 'lists' is unknown; use auto, list, single"):
        EndpointScorerConfig(url="http://h/v1", model="m", batching="lists")
    with pytest.raises(UserError, match="concurrency must be at least 1"):
        EndpointScorerConfig(url="http://h/v1", model="m", concurrency=0)
