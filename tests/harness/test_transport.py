"""payconform.transport.sender: the body cap holds while streaming, the deadline covers the whole exchange, absolute URLs
on the target's host go out with no key, and each attempt is recorded."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace

import pytest

from payconform.transport.sender import SafetyError, TargetError, Transport

KEY = "svc_test_" + "a" * 32 + "_" + "B" * 43


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[socket.socket], None]], str]]:
    """serve(handler) -> base URL of a loopback server that runs handler(connection) for each connection."""
    servers: list[socket.socket] = []

    def start(handler: Callable[[socket.socket], None]) -> str:
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def loop() -> None:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                threading.Thread(target=_run, args=(handler, conn), daemon=True).start()

        threading.Thread(target=loop, daemon=True).start()
        return f"http://127.0.0.1:{server.getsockname()[1]}/business/api/v1"

    yield start
    for server in servers:
        server.close()


def _run(handler: Callable[[socket.socket], None], conn: socket.socket) -> None:
    with conn:
        try:
            conn.recv(65536)  # the request (small, one read)
            handler(conn)
        except OSError:
            pass  # the harness hung up: what these servers are for


def _endless_body(conn: socket.socket) -> None:
    """A chunked answer that never ends: 64 KiB chunks for as long as the client reads."""
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
    chunk = b"x" * 65536
    while True:
        conn.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")


def _slowloris(conn: socket.socket) -> None:
    """Headers one byte at a time, each well within a read timeout, never finishing."""
    for byte in b"HTTP/1.1 200 OK\r\nx-request-id: slow\r\n" * 1000:
        conn.sendall(bytes([byte]))
        time.sleep(0.05)


def _ok(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nx-request-id: r1\r\ncontent-length: 2\r\n\r\n{}")


def _transport(base_url: str, **kw) -> Transport:
    return Transport(SimpleNamespace(base_url=base_url, request_timeout=kw.pop("timeout", 1.0)), **kw)


def test_a_huge_body_is_cut_at_the_cap_while_streaming(serve, record) -> None:
    """The body never ends: only the cap can end this request before its 60 s deadline, and the error says which
    ended it (a deadline would say so instead; a wall-clock bound here failed on a loaded machine)."""
    transport = _transport(serve(_endless_body), max_body=256 * 1024, timeout=60.0)
    with pytest.raises(TargetError, match="larger than 262144 bytes"):
        transport.send("GET", "/big")
    entry = record.transcript[-1]
    assert entry["status"] == 200 and "stopped reading" in entry["error"]
    assert "truncated" in entry["response_body"]


def test_the_total_deadline_ends_a_slowloris_answer(serve, record) -> None:
    transport = _transport(serve(_slowloris), timeout=0.8)
    with pytest.raises(TargetError, match="no answer within 0.8s"):  # a per-read timeout alone never ends it
        transport.send("GET", "/slow")
    assert record.transcript[-1]["error"].startswith("no answer")


def test_an_absolute_url_on_the_targets_host_goes_out_without_a_key(serve, record) -> None:
    base = serve(_ok)
    transport = _transport(base)
    ex = transport.send("POST", base.replace("/business/api/v1", "/hooks/x"), content=b"{}")
    assert ex.status == 200 and ex.request_id == "r1" and "x-api-key" not in ex.request.headers
    assert record.request_ids == ["r1"] and record.transcript[0]["attempt"] == 1
    with pytest.raises(SafetyError):
        transport.send("GET", "http://example.invalid/x")


def test_a_live_key_never_goes_out_on_a_money_write(serve) -> None:
    transport = _transport(serve(_ok))
    live = "svc_live_" + "c" * 32 + "_" + "D" * 43
    with pytest.raises(SafetyError, match="live key"):
        transport.send("POST", "/payments/organizations/o/payouts", headers={"x-api-key": live})
    assert transport.send("GET", "/payments/organizations/o/payouts", headers={"x-api-key": KEY}).status == 200
