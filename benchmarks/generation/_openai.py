"""OpenAI-compatible HTTP backend (`/v1/completions`, or `/v1/chat/completions` with chat).

Works with vLLM, SGLang and TGI servers and hosted APIs, through the one HTTP client
(`benchmarks.common.http.OpenAIClient`): up to `max_concurrency` requests are in flight at once;
429, 5xx, timeouts and dropped connections are retried with exponential backoff (honouring
Retry-After); any other refusal, or a server that cannot be reached, is a UserError naming the
URL. The API key is read from the environment variable the options name and is never logged,
stored or put into an identity or error message.

Each request asks for n samples of one prompt with seed base + first index (vLLM servers give
child i the seed + i, so sample j gets base + j however requests were split); whether a server
honours seeds at all is up to the server.

An endpoint pool: `base_url` may name several servers of the same model (a list, or URLs
separated by commas), each taking up to `max_concurrency` requests at once:

- Routing: a request goes to the live server with the fewest requests in flight, unless a
  server that already holds its prefix (below) has at most `affinity_slack` more (a quarter of
  max_concurrency, at least 1). In a busy pool, where only the server that just finished has
  a free slot, that server takes from the next requests one whose prefix it holds, else one
  whose prefix no server holds, else the first: a problem's requests wait for the server that
  holds it while the others start new problems, and no slot is left idle.
- Affinity: every server remembers the prompts it was sent (a sorted list, so the longest
  prefix a new prompt shares with any of them is found by bisection: it is shared with a sorted
  neighbour). A server holds a prompt's prefix when that shared prefix is at least
  `AFFINITY_SHARE` (a quarter) of the prompt's characters: the other sample chunks of the same
  prompt, and a problem's variants that keep the prompt's beginning (the signature, most of
  the docstring), go where the server's prefix cache already has that text. The longest shared
  prefix of a problem's variants is not known in advance; this measure needs no problem id
  and no fixed prefix length. A variant that changes the prompt's first lines shares little
  a prefix cache could reuse and goes by load.
- Failure: a request that fails on a server in a way another server could answer (it cannot be
  reached, or 5xx/429/timeouts outlast the client's retries, or the answer is not an OpenAI
  one) marks that server down for the rest of this backend's life, with one line on stderr,
  and goes to another live server; a refusal of the request itself (HTTP 400, 413, 422: too
  long a prompt, a bad parameter) would be the same everywhere and stops the run, as with one
  server. When every server is down, the call ends with one UserError naming them and the last
  error. Requests in flight when a call ends are waited for and their samples handed back
  first, so nothing generated is lost.
- Identity: which server answered does not change the outputs the pool stands for (every server
  serves the same weights under the same name, and a request's seed does not depend on where
  it goes), so a pool's identity is `openai|pool|MODEL`: the same whatever the order of the
  URLs, and a cache stays valid when a server is added, removed or replaced. One URL keeps
  the identity `openai|URL|MODEL` it always had.
"""

from __future__ import annotations

import bisect
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.http import HTTPStatusError, OpenAIClient
from benchmarks.generation._backend import BackendBase, Request, check_positive, consecutive_runs
from benchmarks.generation._decoding import DecodingConfig, chat_message, sample_seed
from benchmarks.generation._spec import BackendSpec

AFFINITY_SHARE = 0.25
"""A server holds a prompt's prefix when it was sent a prompt sharing this fraction of it."""

PICK_WINDOW = 4
"""A server with a free slot looks this many times the pool's slots ahead in the queue for a
request whose prefix it holds (see `OpenAIBackend._pick`)."""

_SCHEMES = ("http://", "https://")

REQUEST_FAULTS = frozenset({400, 413, 422})
"""HTTP statuses that refuse the request itself: another server would refuse it too."""


def split_urls(base_url: str | Sequence[str] | None) -> tuple[str, ...]:
    """The server URLs a `base_url` option names (one URL, a list, or URLs separated by
    commas), without trailing slashes."""
    if base_url is None:
        return ()
    parts = base_url.split(",") if isinstance(base_url, str) else [str(p) for p in base_url]
    return tuple(part.strip().rstrip("/") for part in parts if part.strip())


@dataclass(frozen=True)
class OpenAIOptions:
    """Options of the `openai` backend (an OpenAI-compatible HTTP server, or a pool of them)."""

    base_url: str | tuple[str, ...] | None = field(
        default=None,
        metadata={
            "help": "server base URL, e.g. http://127.0.0.1:8000/v1; several servers of the "
            "same model (an endpoint pool): a list, or the URLs separated by commas"
        },
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata={
            "help": "environment variable holding the API key (never logged)",
            "operational": True,
        },
    )
    max_concurrency: int = field(
        default=8,
        metadata={"help": "requests in flight at once (per server of a pool)", "operational": True},
    )
    timeout_s: float = field(
        default=300.0,
        metadata={"help": "seconds to wait for one response", "operational": True},
    )
    retries: int = field(
        default=5,
        metadata={
            "help": "retries after 429, 5xx, timeouts or dropped connections",
            "operational": True,
        },
    )
    backoff_s: float = field(
        default=1.0,
        metadata={
            "help": "first retry delay; doubles each retry (capped at 60 s)",
            "operational": True,
        },
    )
    samples_per_request: int | None = field(
        default=None, metadata={"help": "most samples (n) of one prompt per request (default 16)"}
    )
    server_stop: bool = field(
        default=True,
        metadata={
            "help": "send stop sequences to the server (some hosted APIs accept at most 4); "
            "completion-mode output is cut at them locally either way"
        },
    )

    def __post_init__(self) -> None:
        if isinstance(self.base_url, list):  # a list given in Python: kept hashable
            object.__setattr__(self, "base_url", tuple(self.base_url))
        urls = self.urls
        if len(urls) <= 1 and not (urls and urls[0].startswith(_SCHEMES)):
            raise UserError(
                f"an openai backend needs base_url starting with http:// or https:// (got "
                f"{self.base_url!r}), e.g. http://127.0.0.1:8000/v1."
            )
        for url in urls:
            if not url.startswith(_SCHEMES):
                raise UserError(
                    f"every base_url of an openai endpoint pool must start with http:// or "
                    f"https:// (got {url!r}), e.g. [http://10.0.0.1:8000/v1, "
                    "http://10.0.0.2:8000/v1]."
                )
        repeated = sorted({url for url in urls if urls.count(url) > 1})
        if repeated:
            raise UserError(
                f"base_url lists {repeated[0]} more than once; list each server once (raise "
                "max_concurrency to send one server more requests at once)."
            )
        check_positive("max_concurrency", self.max_concurrency)
        check_positive("samples_per_request", self.samples_per_request, optional=True)
        if self.retries < 0:
            raise UserError(f"backend retries must be 0 or more (got {self.retries!r}).")
        if self.timeout_s <= 0 or self.backoff_s < 0:
            raise UserError("backend timeout_s must be positive and backoff_s non-negative.")

    def identity_options(self) -> dict[str, Any]:
        """What the identity takes instead of the options' own values (BackendSpec.identity_mapping
        hashes those that decide outputs): not a pool's servers, which serve one model (as the
        pool's cache identity says), so a run resumes with a server taken out of the list or
        added to it. One server's URL stays: another server may serve other weights under the
        same name."""
        return {"base_url": "pool"} if len(self.urls) > 1 else {}

    @property
    def urls(self) -> tuple[str, ...]:
        """The server URLs, without trailing slashes (one, or a pool's)."""
        return split_urls(self.base_url)

    @property
    def affinity_slack(self) -> int:
        """How many more requests in flight than the least loaded server a server holding a
        request's prefix may have and still get it: a quarter of max_concurrency, at least 1."""
        return max(1, self.max_concurrency // 4)


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of `a` and `b` (slices compared in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class _Server:
    """One server of the pool: its URL, whether it is down, and what it was sent."""

    def __init__(self, index: int, url: str) -> None:
        self.index = index
        self.url = url
        self.down: str | None = None
        """Why it was marked down (the error), or None while it is live."""
        self.sent = 0
        self._prompts: list[str] = []  # sorted, each once

    def shared(self, prompt: str) -> int:
        """The longest prefix `prompt` shares with a prompt this server was sent."""
        prompts = self._prompts
        at = bisect.bisect_left(prompts, prompt)
        return max(
            (_common_prefix(prompt, prompts[i]) for i in (at - 1, at) if 0 <= i < len(prompts)),
            default=0,
        )

    def remember(self, prompt: str) -> None:
        at = bisect.bisect_left(self._prompts, prompt)
        if at == len(self._prompts) or self._prompts[at] != prompt:
            self._prompts.insert(at, prompt)


class OpenAIBackend(BackendBase):
    Options = OpenAIOptions
    model_required = "the name the server serves"

    def __init__(self, spec: BackendSpec) -> None:
        self.spec = spec
        self.max_samples_per_call = self.options.samples_per_request or 16
        self.base_urls = self.options.urls
        self.base_url = self.base_urls[0]
        # The server's weights cannot be hashed from here: the identity is what we can see. A
        # pool's servers serve one model, so which of them answers is not part of it.
        where = self.base_url if len(self.base_urls) == 1 else "pool"
        self.identity = f"openai|{where}|{spec.model}"
        self.sleep = time.sleep  # tests replace it to skip real waiting
        self.warn: Callable[[str], None] = lambda text: print(text, file=sys.stderr)
        self.servers = [_Server(i, url) for i, url in enumerate(self.base_urls)]
        self._downed: list[_Server] = []  # in the order they went down

    @property
    def options(self) -> OpenAIOptions:
        options: OpenAIOptions = self.spec.options
        return options

    def client(self, url: str | None = None) -> OpenAIClient:
        """A client for one server, the first by default (close it, or use it as a context
        manager)."""
        options = self.options
        return OpenAIClient(
            url or self.base_url,
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
        if self.options.server_stop and decoding.generation_stop:
            body["stop"] = list(decoding.generation_stop)
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
        live = [server for server in self.servers if server.down is None]
        if runs and not live:
            raise self._all_down()
        limit = self.options.max_concurrency
        loads = {server.index: 0 for server in live}
        with ExitStack() as stack:
            clients = {
                server.index: stack.enter_context(self.client(server.url)) for server in live
            }
            pool = stack.enter_context(ThreadPoolExecutor(max_workers=limit * len(live)))
            pending: dict[Future[list[str]], tuple[int, int, Request, _Server]] = {}
            queue = deque(enumerate(runs))
            failure: Exception | None = None  # raised once the requests in flight are back
            try:
                while queue or pending:
                    while queue and failure is None:
                        picked = self._pick(queue, live, loads)
                        if picked is None:
                            break  # every live server has max_concurrency requests in flight
                        at, server = picked
                        order, (position, part) = queue[at]
                        del queue[at]
                        loads[server.index] += 1
                        server.sent += 1
                        if len(self.servers) > 1:
                            server.remember(part.prompt)
                        future = pool.submit(self._one, clients[server.index], part, decoding)
                        pending[future] = (position, order, part, server)
                    if not pending:
                        break
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        position, order, part, server = pending.pop(future)
                        loads[server.index] -= 1
                        try:
                            texts = future.result()
                        except UserError as err:
                            if failure is None and self._server_fault(err):
                                queue.appendleft((order, (position, part)))
                                failure = self._mark_down(server, err)
                            elif failure is None:
                                failure = err
                            continue
                        except Exception as err:  # a bug: raised as it is, after the others
                            failure = failure or err
                            continue
                        results.setdefault(position, []).append((order, texts))
                        parts_left[position] -= 1
                        if parts_left[position] == 0:
                            ordered = sorted(results.pop(position))
                            yield position, [text for _, texts in ordered for text in texts]
            finally:
                for future in pending:
                    future.cancel()
        if failure is not None:
            raise failure

    def _pick(
        self,
        queue: deque[tuple[int, tuple[int, Request]]],
        live: list[_Server],
        loads: dict[int, int],
    ) -> tuple[int, _Server] | None:
        """(place in `queue`, server) of the next request to send; None when every live server
        is full.

        The first request goes where `_route` says. When that server was chosen by load alone
        (the request's prefix is on no server with room for it), it looks among the next
        requests (`PICK_WINDOW` times the pool's slots) for the first whose prefix it holds,
        else the first whose prefix no live server holds, else takes the first: in a busy pool,
        where only the server that just finished has a free slot, a problem's requests wait for
        the server that holds their prefix (at most a window of them) while the others start
        new problems. Every free slot still gets a request, so this costs no throughput."""
        server, held = self._route(queue[0][1][1].prompt, live, loads)
        if server is None:
            return None
        if held or len(live) == 1:
            return 0, server
        window = min(len(queue), PICK_WINDOW * self.options.max_concurrency * len(live))
        fresh = None
        previous = None
        for at in range(window):
            prompt = queue[at][1][1].prompt
            if prompt is previous or prompt == previous:
                continue  # another chunk of the same prompt: the same answers
            previous = prompt
            if self._holds(server, prompt):
                return at, server
            if fresh is None and not any(
                self._holds(other, prompt) for other in live if other.down is None
            ):
                fresh = at
        return (fresh or 0), server

    def _route(
        self, prompt: str, live: list[_Server], loads: dict[int, int]
    ) -> tuple[_Server | None, bool]:
        """(server, whether for its prefix): the live server with a free slot that should take
        `prompt`: one within `affinity_slack` of the least loaded that holds the prompt's prefix
        (the longest), else the least loaded; None when all are full."""
        limit = self.options.max_concurrency
        open_ = [s for s in live if s.down is None and loads[s.index] < limit]
        if not open_:
            return None, False
        least = min(loads[s.index] for s in open_)
        near = [s for s in open_ if loads[s.index] <= least + self.options.affinity_slack]
        shares = {s.index: s.shared(prompt) for s in near} if len(self.servers) > 1 else {}
        best = max(shares.values(), default=0)
        held = best > 0 and best >= AFFINITY_SHARE * len(prompt)
        if held:
            near = [s for s in near if shares[s.index] == best]
        else:
            near = [s for s in near if loads[s.index] == least]
        return min(near, key=lambda s: (loads[s.index], s.sent, s.index)), held

    @staticmethod
    def _holds(server: _Server, prompt: str) -> bool:
        """Whether `server` was sent a prompt that shares `AFFINITY_SHARE` of `prompt`."""
        return server.shared(prompt) >= max(1, AFFINITY_SHARE * len(prompt))

    def _server_fault(self, err: UserError) -> bool:
        """Whether another server of the pool might answer what failed with `err`."""
        if len(self.servers) == 1:
            return False  # nowhere else to go: the error is the run's, as it always was
        return not (isinstance(err, HTTPStatusError) and err.status in REQUEST_FAULTS)

    def _mark_down(self, server: _Server, err: UserError) -> UserError | None:
        """Mark `server` down (its requests in flight may still come back); the error to end
        the call with when no server is left, else None."""
        if server.down is None:
            server.down = str(err)
            self._downed.append(server)
            left = sum(s.down is None for s in self.servers)
            if left:
                self.warn(
                    f"openai server {server.url} is marked down and its requests go to the "
                    f"other {left} live server{'s' if left > 1 else ''}: {err}"
                )
        if any(s.down is None for s in self.servers):
            return None
        return self._all_down()

    def _all_down(self) -> UserError:
        return UserError(
            f"every server of the openai pool is down ({', '.join(self.base_urls)}); the last "
            f"error: {self._downed[-1].down}"
        )

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
