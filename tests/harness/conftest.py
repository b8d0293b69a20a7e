"""Fixtures for the harness unit tests: a misbehaving HTTP server and a fake reference server."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from payconform.results import records as results
from payconform.provision import provision_reference
from payconform.refserver import RefServer

from .fake_project import workdir  # noqa: F401  (the fake suite project, for the CLI tests)

HERE = Path(__file__).resolve().parent
PREFIX = "/business/api/v1"


class Misbehaving(BaseHTTPRequestHandler):
    """Routes under /business/api/v1: ok, echo, hang, drop, garbage, notjson, big, bigchunked, 429 ..."""

    protocol_version = "HTTP/1.1"
    counters: dict[str, int] = {}
    lock = threading.Lock()

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        rid = uuid.uuid4().hex
        self.send_header("x-request-id", rid)
        self.send_header("content-length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj, headers: dict | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), {"content-type": "application/json", **(headers or {})})

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        if not path.startswith(PREFIX):
            return self._json(404, {"type": "ROUTE_NOT_FOUND", "status": 404, "detail": "x", "requestId": "r"})
        route = path[len(PREFIX):]
        name = route.strip("/").split("/")[0]
        with self.lock:
            self.counters[route] = self.counters.get(route, 0) + 1
            count = self.counters[route]
        if name == "hang":
            time.sleep(5)
            return self._json(200, {})
        if name == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if name == "garbage":
            self.wfile.write(b"\x00\x01 this is not http at all\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
            return
        if name == "notjson":
            return self._send(200, b"<html>not json</html>", {"content-type": "text/html"})
        if name == "big":
            return self._send(200, b"x" * (2 * 1024 * 1024), {"content-type": "application/json"})
        if name == "bigchunked":
            self.send_response(200)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            chunk = b"y" * 65536
            try:
                for _ in range(40):
                    self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            return
        if name == "ratelimited-once":
            if count == 1:
                rid = "rl-" + uuid.uuid4().hex
                return self._json(429, {"type": "RATE_LIMITED", "status": 429, "detail": "slow down",
                                        "requestId": rid}, {"retry-after": "1"})
            return self._json(200, {"count": count})
        if name == "ratelimited-always":
            return self._json(429, {"type": "RATE_LIMITED", "status": 429, "detail": "slow down",
                                    "requestId": "x"}, {"retry-after": "0"})
        if name == "redirect":
            return self._send(302, b"", {"location": "http://example.invalid/elsewhere"})
        if name == "error":
            status = int(route.strip("/").split("/")[1]) if route.count("/") > 1 else 409
            rid = "err-" + uuid.uuid4().hex
            self.send_response(status)
            payload = json.dumps({"type": "IDEMPOTENCY_KEY_CONFLICT", "status": status,
                                  "detail": "key reused with x-api-key: " + (self.headers.get("x-api-key") or ""),
                                  "requestId": rid}).encode()
            self.send_header("x-request-id", rid)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        # echo
        return self._json(200, {"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                                "body": body.decode("utf-8", "replace"), "count": count})

    do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _handle


@pytest.fixture(scope="session")
def misbehaving():
    """Root URL (http://127.0.0.1:PORT) of a server with deliberately bad routes."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Misbehaving)
    server.daemon_threads = True
    server.handle_error = lambda request, address: None  # the drop/garbage routes are meant to be rude
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def fake_ref():
    """The fake reference server started through RefServer (as the real one would be)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    with RefServer(module="fake_reference", env=env) as ref:
        yield ref


@pytest.fixture(scope="session")
def ref_target(fake_ref, tmp_path_factory):
    """(Target, path of its file) provisioned on the fake reference server."""
    target = provision_reference(fake_ref)
    path = target.dump(tmp_path_factory.mktemp("target") / "target.yaml")
    return target, path


@pytest.fixture
def record() -> Iterator[results.TestRecord]:
    """A test record made current, as the plugin does around a suite test (what the transport records into)."""
    rec = results.TestRecord(nodeid="suites/limits/test_x.py::test_one")
    token = results.use_record(rec)
    yield rec
    results.reset_record(token)
