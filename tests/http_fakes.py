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
        self._lock = threading.Lock()

    @contextmanager
    def counted(self) -> Iterator[None]:
        """Count one request in for the body of the `with` (its work, not its answer)."""
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            yield
        finally:
            with self._lock:
                self.now -= 1


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
