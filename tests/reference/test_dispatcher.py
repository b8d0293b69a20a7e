"""The webhook dispatcher with an organization that holds many endpoints nobody answers at (earlier test runs'
loopback receivers, gone): a live endpoint still gets its deliveries at once, in order, and each dead
endpoint costs the run one attempt (Events > Delivery and retries: "a delivery lands within about 15 seconds")."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from payconform.reference.core.clock import iso
from payconform.reference.reference import Reference

from .helpers import Org, new_org

SANDBOX = "/payments/organizations/{orgId}/sandbox/webhook-endpoints"
DEAD, SILENT, EVENTS = 60, 3, 20
SLOW, BACKLOG = 0.5, 8  # seconds a slow receiver takes to answer; deliveries queued for it
RELEASE_AFTER = 120.0  # seconds the silent ports stay open at most (a safety stop, not a bound of the test)


class Live:
    """A receiver that answers 204 (after `delay` seconds) and notes when each delivery arrived."""

    def __init__(self, delay: float = 0.0) -> None:
        self.arrivals: list[tuple[float, str]] = []
        arrivals = self.arrivals

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                arrivals.append((time.monotonic(), self.headers["whk-id"]))
                time.sleep(delay)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/live"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def live() -> Iterator[Live]:
    receiver = Live()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


@pytest.fixture
def slow() -> Iterator[Live]:
    receiver = Live(delay=SLOW)
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


@pytest.fixture
def silent() -> Iterator[list[socket.socket]]:
    """Ports that accept connections (the kernel's backlog) and never answer: each attempt times out."""
    sockets = [socket.create_server(("127.0.0.1", 0), backlog=64) for _ in range(SILENT)]
    yield sockets
    for s in sockets:
        s.close()


def _release_when(done: Callable[[], bool], silent: list[socket.socket]) -> None:
    """Close the silent ports (their pending connections are reset, so the attempts on them end) once ``done``
    holds, or after `RELEASE_AFTER` seconds, a safety stop: the test then fails on what had not arrived."""
    deadline = time.monotonic() + RELEASE_AFTER
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    for s in silent:
        s.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _register(org: Org, url: str) -> str:
    answer = org.call("POST", SANDBOX, json={"url": url, "events": []})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def _record(ref: Reference, org_id: str, count: int) -> list[str]:
    now = ref.clock.now(org_id) - timedelta(seconds=1)
    with ref.store.tx():
        return [ref.events.record(org_id, "test", "payout.pending", {"id": f"po_{i}"}, now) for i in range(count)]


def test_a_long_run_holds_up_no_other_endpoint(ref: Reference, client, org: Org, live: Live, slow: Live) -> None:
    """While a run works through a slow endpoint's backlog, a run started meanwhile (the next tick, an operator's
    flush) sends another organization's delivery at once, and returns only once its own are sent; the slow
    endpoint gets each of its deliveries once."""
    ref.dispatcher.interval = 3600.0
    _register(org, slow.url)
    backlog = _record(ref, org.id, BACKLOG)
    other = new_org(client)
    _register(other, live.url)

    async def both() -> tuple[int, int]:
        long_run = asyncio.create_task(ref.dispatcher.run())
        while not slow.arrivals:
            await asyncio.sleep(0.01)
        _record(ref, other.id, 1)
        sent = await ref.dispatcher.run(other.id)
        slow_by_then = len(slow.arrivals)
        await long_run
        return sent, slow_by_then

    sent, slow_by_then = asyncio.run(both())
    assert sent == 1 and len(live.arrivals) == 1
    assert slow_by_then < BACKLOG, "the flush returned only once the other organization's run had sent everything"
    assert [event_id for _, event_id in slow.arrivals] == backlog  # each once, in order


def test_dead_endpoints_do_not_delay_a_live_one(ref: Reference, org: Org, live: Live,
                                                silent: list[socket.socket]) -> None:
    ref.dispatcher.interval = 3600.0  # only the run below sends
    dead = [_register(org, f"http://127.0.0.1:{_closed_port()}/hooks/gone") for _ in range(DEAD)]
    dead += [_register(org, f"http://127.0.0.1:{s.getsockname()[1]}/hooks/silent") for s in silent]
    live_id = _register(org, live.url)  # registered last: it waits behind every dead one in a sequential run
    now = ref.clock.now(org.id) - timedelta(seconds=1)
    with ref.store.tx():
        event_ids = [ref.events.record(org.id, "test", "payout.pending", {"id": f"po_{i}"}, now)
                     for i in range(EVENTS)]

    # a silent attempt waits until the silent ports close, which they do once the live endpoint has every
    # delivery: a live endpoint queued behind a silent one would get none before that (or the safety release)
    ref.dispatcher.timeout = 10 * RELEASE_AFTER
    released = threading.Thread(target=_release_when, args=(lambda: len(live.arrivals) >= EVENTS, silent))
    released.start()
    attempted = asyncio.run(ref.dispatcher.run(org.id))
    released.join()

    assert attempted == EVENTS * (len(dead) + 1)
    assert [event_id for _, event_id in live.arrivals] == event_ids  # all of them, in sequence order
    rows = ref.store.all("SELECT endpoint_id, status, attempts, next_attempt_at, last_error FROM webhook_deliveries"
                         " WHERE org_id = ?", (org.id,))
    assert {r["status"] for r in rows if r["endpoint_id"] == live_id} == {"succeeded"}
    failed = [r for r in rows if r["endpoint_id"] != live_id]
    assert len(failed) == EVENTS * len(dead)
    assert all(r["status"] == "failed" and r["attempts"] == 1 and r["last_error"] for r in failed)
    assert all(r["next_attempt_at"] > iso(ref.clock.now(org.id)) for r in failed)  # retried on the ladder


def test_an_operator_flush_answers_within_its_bound_and_the_run_goes_on(ref: Reference, org: Org, slow: Live) -> None:
    """A flush whose run outlasts `flush_bound` (a busy organization's backlog) returns at the bound, so the
    operator's call answers within its client's timeout; the run goes on and sends every delivery once."""
    ref.dispatcher.interval = 3600.0
    ref.dispatcher.flush_bound = SLOW * 2
    _register(org, slow.url)
    backlog = _record(ref, org.id, BACKLOG)

    async def flush_then_rest() -> int:
        await ref.dispatcher.flush(org.id)
        sent_by_then = len(slow.arrivals)
        await asyncio.gather(*ref.dispatcher._runs)
        return sent_by_then

    sent_by_then = asyncio.run(flush_then_rest())
    # the flush answered at its bound, before the run it started had sent the backlog (BACKLOG * SLOW seconds)
    assert sent_by_then < BACKLOG, sent_by_then
    assert [event_id for _, event_id in slow.arrivals] == backlog
