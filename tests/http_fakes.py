"""What every fake HTTP server of the tests builds on: a JSON handler with no access log, and the
count of requests in flight."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any


class InFlight:
    """How many requests a fake server is answering at once, and the most it ever was.

    A request is counted out before its answer is written: once a client has its answer it may
    send its next request, which a slow scheduler could count in before the answering thread
    counted the first one out, and the server would see one more in flight than the client sent.
    """

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.waited_in_vain = False
        self._changed = threading.Condition()

    @contextmanager
    def counted(self) -> Iterator[None]:
        """Count one request in for the body of the `with` (its work, not its answer)."""
        with self._changed:
            self.now += 1
            self.most = max(self.most, self.now)
            self._changed.notify_all()
        try:
            yield
        finally:
            with self._changed:
                self.now -= 1

    def overlap(self, count: int, timeout_s: float = 30.0) -> None:
        """Inside `counted`: hold this request until `count` requests have been in flight at
        once, so a test of concurrency does not depend on the scheduler starting the client's
        threads within a server's delay. A client that never sends `count` together leaves
        `most` below it after one `timeout_s` (`waited_in_vain`: later requests go on at once),
        which the test's assertion on `most` then reports."""
        with self._changed:
            arrived = self._changed.wait_for(
                lambda: self.most >= count or self.waited_in_vain, timeout_s
            )
            if not arrived:
                self.waited_in_vain = True
                self._changed.notify_all()


class JsonHandler(BaseHTTPRequestHandler):
    def read_json(self) -> Any:
        """The request's JSON body."""
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        """`payload` as JSON (bytes are sent as they are: a server that answers with HTML)."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass
