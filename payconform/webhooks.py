"""The harness's webhook receiver and signature verifier.

`Receiver` is a loopback HTTP server the suite starts once per process (per xdist worker). It listens on the
target file's `webhooks.listen` address and advertises `webhooks.public_url` (for a remote target) or its own
address. Every test gets its own `Mailbox` (a distinct path under the receiver), so tests never see each
other's deliveries; a mailbox keeps the raw bytes and the raw header strings of every delivery it receives
and can be scripted: fail the next N deliveries with a status, answer slowly, or answer 2xx.

`verify` is the suite's own strict Standard Webhooks verifier (Events > Delivery headers): it reads the raw
header strings, checks the timestamp against *our* clock, recomputes HMAC-SHA256 over
`<whk-id>.<whk-timestamp>.<raw body>` and compares in constant time. It is deliberately not the
`standardwebhooks` library, which is lenient in ways a conformance check must not be (a fractional timestamp
is floored, an entry without a comma raises a bare ValueError); a unit test cross-checks the two.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .pacing import timeouts as _timeouts
from .contract import run_contract

TOLERANCE_SECONDS = 300
HEADER_ID, HEADER_TIMESTAMP, HEADER_SIGNATURE, HEADER_VERSION = (
    "whk-id", "whk-timestamp", "whk-signature", "Svc-Webhook-Version")


class SignatureError(ValueError):
    """A delivery whose signature headers do not verify; the message says which rule failed."""


def _secret_key(secret: str) -> bytes:
    if not secret.startswith("whsec_"):
        raise SignatureError("the signing secret has no whsec_ prefix")
    try:
        return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error:
        raise SignatureError("the signing secret is not base64 after whsec_") from None


def expected_signature(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256(key, id.timestamp.body)>` for the given raw strings and bytes."""
    content = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    return "v1," + base64.b64encode(hmac.new(_secret_key(secret), content, hashlib.sha256).digest()).decode()


def verify(secrets_: str | list[str], msg_id: str | None, timestamp: str | None, signature: str | None,
           body: bytes, *, now: float | None = None, tolerance: int = TOLERANCE_SECONDS) -> list[str]:
    """Verify one delivery; the `v1` entries that matched (one per secret that signed). Raises SignatureError.

    The timestamp must be an integer number of seconds within `tolerance` of `now` (our clock). Entries of
    other versions are skipped; an entry without a comma is malformed and never matches.
    """
    if not msg_id:
        raise SignatureError(f"missing {HEADER_ID}")
    if timestamp is None or not (timestamp.isascii() and timestamp.isdigit()):
        raise SignatureError(f"{HEADER_TIMESTAMP} is not integer Unix seconds: {timestamp!r}")
    clock = time.time() if now is None else now
    if abs(clock - int(timestamp)) > tolerance:
        raise SignatureError(f"{HEADER_TIMESTAMP} {timestamp} is {int(clock) - int(timestamp)} s from our clock")
    if not signature:
        raise SignatureError(f"missing {HEADER_SIGNATURE}")
    entries = [e for e in signature.split(" ") if e]
    keys = [secrets_] if isinstance(secrets_, str) else list(secrets_)
    matched = []
    for secret in keys:
        wanted = expected_signature(secret, msg_id, timestamp, body).encode()
        if any(e.startswith("v1,") and hmac.compare_digest(e.encode(), wanted) for e in entries):
            matched.append(secret)
    if not matched:
        raise SignatureError(f"no v1 entry of {HEADER_SIGNATURE} verifies over the raw body "
                             f"({len(entries)} entries)")
    return matched


@dataclass
class Delivery:
    """One received POST: the raw bytes, the raw header strings, when it arrived (our clock)."""

    body: bytes
    headers: list[tuple[str, str]]
    received_at: float
    answered: int

    def header(self, name: str) -> str | None:
        """The raw string of a header (case-insensitive name); None when absent."""
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        return values[0] if values else None

    def header_count(self, name: str) -> int:
        return sum(1 for k, _ in self.headers if k.lower() == name.lower())


def _event_types() -> frozenset[str]:
    return frozenset(t["type"] for t in run_contract().events.get("types") or [])


def _unrecognized(body: bytes) -> bool:
    """An event of a type the spec does not name: a receiver ignores it and answers 2xx (Versioning rule 2),
    so it never takes one of the failures a test scripted for the events it knows."""
    try:
        kind = json.loads(body).get("type")
    except (ValueError, AttributeError):
        return False
    return isinstance(kind, str) and kind not in _event_types()


@dataclass
class Script:
    """How the mailbox answers: the next `fail` deliveries get `fail_status`; `delay` seconds before any answer."""

    fail: int = 0
    fail_status: int = 500
    delay: float = 0.0
    status: int = 204


@dataclass
class Mailbox:
    path: str
    url: str
    deliveries: list[Delivery] = field(default_factory=list)
    script: Script = field(default_factory=Script)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def fail_next(self, count: int, status: int = 500) -> None:
        with self.cond:
            self.script.fail, self.script.fail_status = count, status

    def answer(self, status: int = 204, delay: float = 0.0) -> None:
        with self.cond:
            self.script.status, self.script.delay, self.script.fail = status, delay, 0

    def _take(self, body: bytes, headers: list[tuple[str, str]]) -> tuple[int, float]:
        with self.cond:
            if self.script.fail > 0 and not _unrecognized(body):
                self.script.fail -= 1
                status = self.script.fail_status
            else:
                status = self.script.status
            self.deliveries.append(Delivery(body, headers, time.time(), status))
            self.cond.notify_all()
            return status, self.script.delay

    def snapshot(self) -> list[Delivery]:
        with self.cond:
            return list(self.deliveries)

    @staticmethod
    def credit(seconds: float) -> None:
        """Give the test waiting here ``seconds`` more before its timeout: the sender is working, not hung."""
        _timeouts.credit(seconds)

    def wait_for(self, predicate: Callable[[list[Delivery]], bool], timeout: float,
                 flush: Callable[[], Any] | None = None, poll: float = 0.5) -> list[Delivery]:
        """Wait until `predicate(deliveries)` holds or `timeout` passes; `flush` (e.g. a zero clock advance
        that runs the reference's dispatcher) is called before each wait. The deliveries seen."""
        deadline = time.monotonic() + timeout
        while True:
            if flush is not None:
                flush()
            seen = self.snapshot()
            if predicate(seen) or time.monotonic() >= deadline:
                return seen
            with self.cond:
                self.cond.wait(min(poll, max(0.0, deadline - time.monotonic())))


class _ListeningServer(ThreadingHTTPServer):
    """A thread per connection, and room for a sender's burst of connections while this process is busy
    (the standard library queues 5: one more is refused or dropped, and a sender takes that for a dead
    receiver and puts off the endpoint's deliveries by its first retry delay)."""

    daemon_threads = True
    request_queue_size = 128


class Receiver:
    """The loopback server: one per process; `mailbox()` hands out a fresh path."""

    def __init__(self, listen: str = "127.0.0.1:0", public_url: str | None = None) -> None:
        host, _, port = listen.rpartition(":")
        self._boxes: dict[str, Mailbox] = {}
        self._lock = threading.Lock()
        self._server = _ListeningServer((host or "127.0.0.1", int(port or 0)), self._handler())
        bound_host, bound_port = self._server.server_address[:2]
        self.base_url = (public_url or f"http://{bound_host}:{bound_port}").rstrip("/")
        self._thread = threading.Thread(target=self._server.serve_forever, name="webhook-receiver", daemon=True)
        self._thread.start()

    def mailbox(self, path: str | None = None) -> Mailbox:
        """A fresh mailbox at a new path, or at `path` (an earlier mailbox's): it takes that address over, so an
        endpoint registered once (a sandbox endpoint cannot be deleted with a key) serves test after test."""
        path = path or "/hooks/" + secrets.token_hex(8)
        box = Mailbox(path, self.base_url + path)
        with self._lock:
            self._boxes[path] = box
        return box

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        boxes, lock = self._boxes, self._lock

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: a sender's run of deliveries shares one connection

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with lock:
                    box = boxes.get(urlsplit(self.path).path)
                if box is None:
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                status, delay = box._take(body, list(self.headers.items()))
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("content-length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender gave up (a timeout): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


def receiver_settings(webhooks: Mapping[str, Any] | None) -> tuple[str, str | None]:
    """(listen, public_url) from the target file's `webhooks` section."""
    cfg = dict(webhooks or {})
    return str(cfg.get("listen") or "127.0.0.1:0"), cfg.get("public_url") or None
