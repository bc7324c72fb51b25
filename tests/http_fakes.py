"""The handler every fake HTTP server of the tests builds on: JSON in, JSON out, no access log."""

from __future__ import annotations

import json
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any


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
