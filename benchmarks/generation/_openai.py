"""OpenAI-compatible HTTP backend (`/v1/completions`, or `/v1/chat/completions` with chat).

Works with vLLM, SGLang and TGI servers and hosted APIs, through the one HTTP client
(`benchmarks.common.http.OpenAIClient`): requests run in a thread pool of `max_concurrency`;
429, 5xx, timeouts and dropped connections are retried with exponential backoff (honouring
Retry-After); any other refusal, or a server that cannot be reached, is a UserError naming the
URL. The API key is read from the environment variable the options name and is never logged,
stored or put into an identity or error message.

Each request asks for n samples of one prompt with seed base + first index (vLLM servers give
child i the seed + i, so sample j gets base + j however requests were split); whether a server
honours seeds at all is up to the server.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.http import OpenAIClient
from benchmarks.generation._backend import BackendBase, Request, check_positive, consecutive_runs
from benchmarks.generation._decoding import DecodingConfig, chat_message, sample_seed
from benchmarks.generation._spec import BackendSpec


@dataclass(frozen=True)
class OpenAIOptions:
    """Options of the `openai` backend (an OpenAI-compatible HTTP server)."""

    base_url: str | None = field(
        default=None, metadata={"help": "server base URL, e.g. http://127.0.0.1:8000/v1"}
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata={"help": "environment variable holding the API key (never logged)"},
    )
    max_concurrency: int = field(default=8, metadata={"help": "requests in flight at once"})
    timeout_s: float = field(default=300.0, metadata={"help": "seconds to wait for one response"})
    retries: int = field(
        default=5, metadata={"help": "retries after 429, 5xx, timeouts or dropped connections"}
    )
    backoff_s: float = field(
        default=1.0, metadata={"help": "first retry delay; doubles each retry (capped at 60 s)"}
    )
    samples_per_request: int | None = field(
        default=None, metadata={"help": "most samples (n) of one prompt per request (default 16)"}
    )
    server_stop: bool = field(
        default=True,
        metadata={
            "help": "send stop sequences to the server (some hosted APIs accept at most 4); "
            "completions are cut at them locally either way"
        },
    )

    def __post_init__(self) -> None:
        if not self.base_url or not self.base_url.startswith(("http://", "https://")):
            raise UserError(
                f"an openai backend needs base_url starting with http:// or https:// (got "
                f"{self.base_url!r}), e.g. http://127.0.0.1:8000/v1."
            )
        check_positive("max_concurrency", self.max_concurrency)
        check_positive("samples_per_request", self.samples_per_request, optional=True)
        if self.retries < 0:
            raise UserError(f"backend retries must be 0 or more (got {self.retries!r}).")
        if self.timeout_s <= 0 or self.backoff_s < 0:
            raise UserError("backend timeout_s must be positive and backoff_s non-negative.")


class OpenAIBackend(BackendBase):
    Options = OpenAIOptions
    model_required = "the name the server serves"

    def __init__(self, spec: BackendSpec) -> None:
        self.spec = spec
        self.max_samples_per_call = self.options.samples_per_request or 16
        self.base_url = (self.options.base_url or "").rstrip("/")
        # The server's weights cannot be hashed from here: the identity is what we can see.
        self.identity = f"openai|{self.base_url}|{spec.model}"
        self.sleep = time.sleep  # tests replace it to skip real waiting

    @property
    def options(self) -> OpenAIOptions:
        return self.spec.options

    def client(self) -> OpenAIClient:
        """A client for this server (close it, or use it as a context manager)."""
        options = self.options
        return OpenAIClient(
            self.base_url,
            api_key_env=options.api_key_env,
            timeout_s=options.timeout_s,
            retries=options.retries,
            backoff_s=options.backoff_s,
            max_connections=options.max_concurrency,
            sleep=self.sleep,
        )

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
        if self.options.server_stop and decoding.stop:
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
        limit = self.options.max_concurrency
        with self.client() as client, ThreadPoolExecutor(max_workers=limit) as pool:
            pending: dict[Future[list[str]], tuple[int, int]] = {}
            queue = list(enumerate(runs))
            try:
                while queue or pending:
                    while queue and len(pending) < limit:
                        order, (position, part) = queue.pop(0)
                        pending[pool.submit(self._one, client, part, decoding)] = (position, order)
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

    def _one(self, client: OpenAIClient, request: Request, decoding: DecodingConfig) -> list[str]:
        path, body = self.build_body(request, decoding)
        payload = client.post_json(path, body)
        texts = self._parse(client.url(path), payload, body["n"], chat=decoding.chat)
        if decoding.greedy:
            texts = texts * len(request.indices)
        return texts

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
