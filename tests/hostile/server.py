"""A hostile target on loopback: ``python server.py MODE [--after N]`` prints ``listening on http://HOST:PORT``.

Modes (what every request gets once the server has turned hostile):

- ``silent``: the connection is accepted and never answered;
- ``slowloris``: a status line and headers, a byte a second;
- ``garbage``: random bytes that are not HTTP, then the connection is closed;
- ``reset``: the connection is reset (RST) once the request is read;
- ``huge``: 10 MB JSON bodies (declared by content-length on every other answer, streamed without one else);
- ``html``: an HTML 500 error page;
- ``empty``: ``200 {}`` (application/json) to everything;
- ``json-as-html``: this API's error body (404 ``ROUTE_NOT_FOUND``, x-request-id) served as ``text/html``.

``--after N``: the first N requests are answered as this API would answer the preflight (an unknown route:
404 error body; a read of the organization ``ORG``: 200; any other organization: 403), so that the run gets
past the preflight and the suite's own handling of the hostile answers is exercised.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import socketserver
import struct
import sys
import time
import uuid

ORG = "5f0c9a6e0b7d4c1f"
OTHER_ORG = "9b2e4d7a1c3f5e80"
HUGE = 10 * 1024 * 1024
MODES = ("silent", "slowloris", "garbage", "reset", "huge", "html", "empty", "json-as-html")


def _answer(status: int, body: bytes, content_type: str = "application/json", extra: str = "") -> bytes:
    reason = {200: "OK", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error"}[status]
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
            f"x-request-id: {uuid.uuid4().hex}\r\nconnection: close\r\n{extra}\r\n").encode() + body


def _error(status: int, kind: str, content_type: str = "application/json") -> bytes:
    body = json.dumps({"type": kind, "status": status, "detail": kind.lower(), "requestId": uuid.uuid4().hex})
    return _answer(status, body.encode(), content_type)


def sane(path: str) -> bytes:
    """What the preflight needs to see from this API."""
    if "/policy" in path:
        return _answer(200, b'{"approvalsRequired": 1}') if f"/{ORG}/" in path else _error(403, "FORBIDDEN")
    return _error(404, "ROUTE_NOT_FOUND")


class Handler(socketserver.BaseRequestHandler):
    server: "HostileServer"

    def handle(self) -> None:
        sock: socket.socket = self.request
        path = self._read_request(sock)
        if path is None:
            return
        number = next(self.server.count)
        if number < self.server.after:
            sock.sendall(sane(path))
            return
        getattr(self, "mode_" + self.server.mode.replace("-", "_"))(sock, number)

    @staticmethod
    def _read_request(sock: socket.socket) -> str | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next((int(v) for k, _, v in (ln.partition(":") for ln in lines[1:])
                       if k.strip().lower() == "content-length"), 0)
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"

    def mode_silent(self, sock: socket.socket, number: int) -> None:
        while sock.recv(1024):  # until the client gives up
            pass

    def mode_slowloris(self, sock: socket.socket, number: int) -> None:
        for byte in _answer(200, b"{}"):
            sock.sendall(bytes([byte]))
            time.sleep(1.0)

    def mode_garbage(self, sock: socket.socket, number: int) -> None:
        sock.sendall(os.urandom(2048))

    def mode_reset(self, sock: socket.socket, number: int) -> None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def mode_huge(self, sock: socket.socket, number: int) -> None:
        declared = f"content-length: {HUGE}\r\n" if number % 2 else ""
        sock.sendall(f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{declared}"
                     f"x-request-id: {uuid.uuid4().hex}\r\nconnection: close\r\n\r\n".encode())
        chunk = b"[" + b'"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",' * 2000
        sent = 0
        while sent < HUGE:
            part = chunk[: HUGE - sent]
            sock.sendall(part)
            sent += len(part)

    def mode_html(self, sock: socket.socket, number: int) -> None:
        page = b"<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body>" \
               b"<h1>Internal Server Error</h1><p>The server encountered an internal error.</p></body></html>"
        sock.sendall(_answer(500, page, "text/html; charset=utf-8"))

    def mode_empty(self, sock: socket.socket, number: int) -> None:
        sock.sendall(_answer(200, b"{}"))

    def mode_json_as_html(self, sock: socket.socket, number: int) -> None:
        sock.sendall(_error(404, "ROUTE_NOT_FOUND", "text/html"))


class HostileServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, mode: str, after: int) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = mode
        self.after = after
        self.count = itertools.count()

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (reset, closed mid-answer) is what this server expects: no traceback."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--after", type=int, default=0, help="answer the first N requests as this API")
    ns = parser.parse_args()
    server = HostileServer(ns.mode, ns.after)
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
