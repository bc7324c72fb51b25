"""OpenAI-compatible HTTP backend (`/v1/completions`, or `/v1/chat/completions` with chat).

Works with vLLM, SGLang and TGI servers and hosted APIs. Requests run in a thread pool of
`max_concurrency`; 429, 5xx, timeouts and dropped connections are retried with exponential
backoff (honouring Retry-After); any other refusal, or a server that cannot be reached, is a
UserError naming the URL. The API key is read from the environment variable the spec names and
is never logged, stored or put into an identity or error message.

Each request asks for n samples of one prompt with seed base + first index (vLLM servers give
child i the seed + i, so sample j gets base + j however requests were split); whether a server
honours seeds at all is up to the server.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from benchmarks.errors import UserError
from benchmarks.generation._backend import BackendBase, BackendSpec, Request, consecutive_runs
from benchmarks.generation._decoding import DecodingConfig, chat_message, sample_seed

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_MAX_DELAY_S = 60.0


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class OpenAIBackend(BackendBase):
    def __init__(self, spec: BackendSpec) -> None:
        self.spec = spec
        self.max_samples_per_call = spec.samples_per_request or 16
        self.base_url = (spec.base_url or "").rstrip("/")
        # The server's weights cannot be hashed from here: the identity is what we can see.
        self.identity = f"openai|{self.base_url}|{spec.model}"
        self.sleep = time.sleep  # tests replace it to skip real waiting

    def build_body(self, request: Request, decoding: DecodingConfig) -> tuple[str, dict[str, Any]]:
        """(endpoint path, JSON body) for one request; greedy requests ask for one sample."""
        n = 1 if decoding.greedy else len(request.indices)
        body: dict[str, Any] = {
            "model": self.spec.model,
            "max_tokens": decoding.max_new_tokens,
            "temperature": float(decoding.temperature),
            "n": n,
            "seed": sample_seed(decoding.seed, request.prompt_hash, request.indices[0]),
        }
        if not decoding.greedy:
            body["top_p"] = float(decoding.top_p)
        if decoding.chat:
            body["messages"] = [{"role": "user", "content": chat_message(request.prompt, decoding)}]
            return "/chat/completions", body
        body["prompt"] = request.prompt
        if self.spec.server_stop and decoding.stop:
            body["stop"] = list(decoding.stop)
        return "/completions", body

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        runs = [
            (position, part) for position, r in enumerate(requests) for part in consecutive_runs(r)
        ]
        results: dict[int, list[tuple[int, list[str]]]] = {}
        parts_left = {position: 0 for position in range(len(requests))}
        for position, _ in runs:
            parts_left[position] += 1
        with ThreadPoolExecutor(max_workers=self.spec.max_concurrency) as pool:
            pending: dict[Future[list[str]], tuple[int, int]] = {}
            queue = list(enumerate(runs))
            try:
                while queue or pending:
                    while queue and len(pending) < self.spec.max_concurrency:
                        order, (position, part) = queue.pop(0)
                        pending[pool.submit(self._one, part, decoding)] = (position, order)
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        position, order = pending.pop(future)
                        results.setdefault(position, []).append((order, future.result()))
                        parts_left[position] -= 1
                        if parts_left[position] == 0:
                            ordered = sorted(results.pop(position))
                            yield position, [text for _, texts in ordered for text in texts]
            finally:
                for future in pending:
                    future.cancel()

    def _one(self, request: Request, decoding: DecodingConfig) -> list[str]:
        path, body = self.build_body(request, decoding)
        url = self.base_url + path
        payload = self._post_with_retries(url, body)
        texts = self._parse(url, payload, body["n"], chat=decoding.chat)
        if decoding.greedy:
            texts = texts * len(request.indices)
        return texts

    def _post_with_retries(self, url: str, body: dict[str, Any]) -> Any:
        attempt = 0
        while True:
            try:
                return self._post(url, body)
            except _Retryable as err:
                if attempt >= self.spec.retries:
                    raise UserError(
                        f"endpoint {url} kept failing ({err.reason}) after {attempt} retries; "
                        "check the server's health and load, or raise retries."
                    ) from None
                delay = min(_MAX_DELAY_S, self.spec.backoff_s * 2**attempt)
                if err.retry_after is not None:
                    delay = min(_MAX_DELAY_S, max(delay, err.retry_after))
                attempt += 1
                self.sleep(delay)

    def _post(self, url: str, body: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.spec.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.spec.timeout_s) as response:
                data = response.read()
        except urllib.error.HTTPError as err:
            detail = _error_detail(err)
            if err.code in _RETRY_STATUS:
                raise _Retryable(f"HTTP {err.code}: {detail}", _retry_after(err)) from None
            hint = (
                f"check that {self.spec.api_key_env} holds a valid key"
                if err.code in (401, 403)
                else "check the URL, the model name and the prompt length"
            )
            raise UserError(
                f"endpoint {url} refused the request (HTTP {err.code}: {detail}); {hint}."
            ) from None
        except (TimeoutError, ConnectionResetError, ConnectionAbortedError) as err:
            raise _Retryable(type(err).__name__) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError | ConnectionResetError):
                raise _Retryable(type(err.reason).__name__) from None
            raise UserError(
                f"endpoint {url} is unreachable ({err.reason}); is the server running and "
                "base_url right?"
            ) from None
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise UserError(
                f"endpoint {url} did not return JSON; is it an OpenAI-compatible server?"
            ) from None

    @staticmethod
    def _parse(url: str, payload: Any, n: int, *, chat: bool) -> list[str]:
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or len(choices) != n:
            got = len(choices) if isinstance(choices, list) else "no"
            raise UserError(
                f"endpoint {url} returned {got} choices for n={n}; the server must support n."
            )
        texts = []
        for choice in sorted(choices, key=lambda c: c.get("index", 0)):
            text = (choice.get("message") or {}).get("content") if chat else choice.get("text")
            texts.append(text if isinstance(text, str) else "")
        return texts


def _error_detail(err: urllib.error.HTTPError) -> str:
    try:
        text = err.read().decode("utf-8", errors="replace")
    except OSError:
        text = ""
    try:
        message = json.loads(text).get("error", {}).get("message")
    except (ValueError, AttributeError):
        message = None
    return (message or text or str(err.reason)).strip().replace("\n", " ")[:200]


def _retry_after(err: urllib.error.HTTPError) -> float | None:
    value = err.headers.get("Retry-After") if err.headers else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
