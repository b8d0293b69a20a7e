"""An httpx transport that keeps the requests reaching the wire: tests that bound a command's requests count them
there, not in the command's own accounting."""

from __future__ import annotations

import httpx


class Counting(httpx.HTTPTransport):
    """Sends as ``httpx.HTTPTransport`` does and keeps ``METHOD path`` of each request in ``sent``."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(f"{request.method} {request.url.path}")
        return super().handle_request(request)
