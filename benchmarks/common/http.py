"""The one place boi talks HTTP: the client for OpenAI-compatible servers (vLLM, SGLang, TGI,
hosted APIs) and `download`, the GET that `boi data fetch` streams a pinned dataset file with.

Both the `openai` generation backend and the critic's endpoint scorer post JSON through
`OpenAIClient.post_json`: 408, 409, 425, 429 and 5xx answers, timeouts and dropped connections
are retried `retries` times, waiting `backoff_s`, then twice that, ... (at most 60 s; a longer
Retry-After is honoured up to that cap); any other refusal, a server that cannot be reached or
an answer that is not JSON is a one-sentence UserError naming the URL. The API key is read from
the environment variable the caller names, sent as a Bearer token, and never logged, stored or
put into an error message or a `describe()`. A refusal the server answered with an HTTP status
(at once, or after the retries ran out) is an `HTTPStatusError`, a UserError that carries the
status, so a caller can tell "the server said no" from "the server could not be reached"; a
caller may also narrow which statuses one POST retries (`retry_status`), as the critic does to
learn quickly whether a server takes a list of prompts.

Built on httpx2 (the maintained successor of httpx, by the same author): it is already installed
with every boi install, since huggingface_hub (and the `openai` package itself) depend on it; it
pools connections across threads and has per-phase timeouts and precise exceptions (connect
error vs. dropped connection vs. timeout), which the retry policy needs. The `openai` package
was not used: its retry schedule is its own (0.5 s start, 8 s cap, random jitter), so the
configured `backoff_s` and a reproducible schedule could not be kept, and it parses answers into
its typed models, while the critic reads vLLM's non-standard echoed prompt log-probabilities
raw. httpx2 is imported on first use only, so importing this module stays cheap.

`download` streams one file into a file the caller opened (the caller checks its checksum and
moves it into place); a server that cannot be reached, an error status or a dropped connection
is a one-sentence UserError naming the URL, never a partial success.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from benchmarks.common.errors import UserError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_DELAY_S = 60.0


class HTTPStatusError(UserError):
    """The server answered with an HTTP error status (`status`): the message says what it said."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _Retryable(Exception):
    def __init__(
        self, reason: str, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.status = status


class OpenAIClient:
    """JSON POSTs to one OpenAI-compatible server, retried with exponential backoff.

    Use it as a context manager (or call `close()`) to release its connections. It may be
    shared by threads: `max_connections` bounds the connections it keeps open.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 300.0,
        retries: int = 5,
        backoff_s: float = 1.0,
        max_connections: int = 8,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        # httpx2 is imported here, not at module level: commands that never talk to a server
        # should not pay for importing it.
        import httpx2

        if not base_url.startswith(("http://", "https://")):
            raise UserError(
                f"server URL {base_url!r} must start with http:// or https://, e.g. "
                "http://127.0.0.1:8000/v1."
            )
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.retries = retries
        self.backoff_s = backoff_s
        self.sleep = sleep  # tests replace it to skip real waiting
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._httpx = httpx2
        self._client = httpx2.Client(
            headers=headers,
            timeout=httpx2.Timeout(timeout_s),
            limits=httpx2.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
        )

    def __enter__(self) -> OpenAIClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def url(self, path: str) -> str:
        """The full URL of `path` (e.g. "/completions") on this server."""
        return self.base_url + "/" + path.lstrip("/")

    def post_json(
        self, path: str, body: dict[str, Any], *, retry_status: frozenset[int] = RETRY_STATUS
    ) -> Any:
        """POST `body` to `path`; the decoded JSON answer, after retries where they help.

        `retry_status`: the HTTP statuses worth retrying for this POST (a subset of
        `RETRY_STATUS`); any other error status is an `HTTPStatusError` at once.
        """
        url = self.url(path)
        attempt = 0
        while True:
            try:
                return self._post_once(url, body, retry_status)
            except _Retryable as err:
                if attempt >= self.retries:
                    message = (
                        f"endpoint {url} kept failing ({err.reason}) after {attempt} retries; "
                        "check the server's health and load, or raise retries."
                    )
                    if err.status is not None:
                        raise HTTPStatusError(message, err.status) from None
                    raise UserError(message) from None
                delay = min(MAX_DELAY_S, self.backoff_s * 2**attempt)
                if err.retry_after is not None:
                    delay = min(MAX_DELAY_S, max(delay, err.retry_after))
                attempt += 1
                self.sleep(delay)

    def _post_once(self, url: str, body: dict[str, Any], retry_status: frozenset[int]) -> Any:
        httpx2 = self._httpx
        try:
            response = self._client.post(url, content=json.dumps(body).encode("utf-8"))
        except httpx2.TimeoutException:
            raise _Retryable("timed out") from None
        except httpx2.ConnectError as err:
            raise UserError(
                f"endpoint {url} is unreachable ({_first_line(err)}); is the server running and "
                "the URL right?"
            ) from None
        except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as err:
            raise _Retryable(f"connection dropped: {_first_line(err)}") from None
        except (httpx2.TransportError, httpx2.InvalidURL) as err:
            raise UserError(
                f"endpoint {url} is unreachable ({_first_line(err)}); check the URL and any "
                "proxy settings."
            ) from None
        if response.status_code in retry_status:
            raise _Retryable(
                f"HTTP {response.status_code}: {_error_detail(response)}",
                _retry_after(response),
                response.status_code,
            )
        if response.status_code >= 400:
            hint = (
                f"check that {self.api_key_env} holds a valid key"
                if response.status_code in (401, 403)
                else "check the URL, the model name and the prompt length"
            )
            raise HTTPStatusError(
                f"endpoint {url} refused the request (HTTP {response.status_code}: "
                f"{_error_detail(response)}); {hint}.",
                response.status_code,
            )
        try:
            return json.loads(response.content.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise UserError(
                f"endpoint {url} did not return JSON; is it an OpenAI-compatible server?"
            ) from None


def download(url: str, out: BinaryIO, *, timeout_s: float = 60.0) -> int:
    """GET `url` (redirects followed, proxies from the environment) and write its body to
    `out`, streamed; the number of bytes written. Not retried: a broken download is refused
    and the caller, which checks the bytes against a pinned checksum anyway, can simply rerun."""
    import httpx2  # on first use only, as in OpenAIClient

    if not url.startswith(("http://", "https://")):
        raise UserError(f"download URL {url!r} must start with http:// or https://.")
    written = 0
    try:
        with httpx2.stream(
            "GET", url, follow_redirects=True, timeout=httpx2.Timeout(timeout_s)
        ) as response:
            if response.status_code >= 400:
                raise HTTPStatusError(
                    f"{url} answered HTTP {response.status_code} "
                    f"({response.reason_phrase or 'error'}); check the URL.",
                    response.status_code,
                )
            for chunk in response.iter_bytes():
                out.write(chunk)
                written += len(chunk)
    except httpx2.TimeoutException:
        raise UserError(
            f"{url} timed out after {timeout_s:g} s; check the internet connection and rerun."
        ) from None
    except httpx2.ConnectError as err:
        raise UserError(
            f"{url} is unreachable ({_first_line(err)}); check the internet connection and any "
            "proxy settings."
        ) from None
    except (httpx2.HTTPError, httpx2.InvalidURL) as err:
        raise UserError(
            f"downloading {url} failed ({_first_line(err)}); check the URL and any proxy "
            "settings, and rerun."
        ) from None
    return written


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _error_detail(response: Any) -> str:
    """The server's error message (OpenAI's `{"error": {"message": ...}}` and common variants)."""
    text = response.content.decode("utf-8", errors="replace")
    message = None
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        message = message or payload.get("message") or payload.get("detail")
    detail = message if isinstance(message, str) and message else text or response.reason_phrase
    return str(detail).strip().replace("\n", " ")[:200]


def _retry_after(response: Any) -> float | None:
    value = response.headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to the backoff schedule


def unreachable(urls: Sequence[str], timeout_s: float = 5.0) -> list[str]:
    """The URLs of `urls` where nothing accepts a TCP connection at the host and port (a cheap
    check before hours of work: no request is sent, so no key, no model and no quota are
    needed). A URL reached through a proxy (HTTP(S)_PROXY) is not checked: the proxy decides."""
    proxies = urllib.request.getproxies()
    down = []
    for url in urls:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        if parts.scheme in proxies and not urllib.request.proxy_bypass(host):
            continue
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            with socket.create_connection((host, port), timeout=timeout_s):
                pass
        except (OSError, ValueError):
            down.append(url)
    return down
