"""How long a test waits for a delivery (`suites/_support/deliveries.py`, `awaited`): while other deliveries keep
arriving the wait goes on, to `BUSY_WAIT` with a clock and to `DRAIN_WAIT` without one (a new endpoint's
backlog drains at the sender's pace), the part past `BUSY_WAIT` credited to the test's timeout; a quiet
mailbox ends the wait after one quiet period either way. The bounds are scaled down here."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest

from payconform.webhooks import Delivery, Mailbox
from suites._support import deliveries

QUIET, BUSY, DRAIN, EVERY = 0.3, 0.6, 3.0, 0.05
WANTED_AT = 1.5  # seconds into the backlog: past BUSY and well before DRAIN, with margin for a loaded machine


def _wanted(seen: list[Delivery]) -> bool:
    return any(json.loads(d.body).get("id") == "evt_wanted" for d in seen)


@pytest.fixture
def credited(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    monkeypatch.setattr(deliveries, "BUSY_WAIT", BUSY)
    monkeypatch.setattr(deliveries, "DRAIN_WAIT", DRAIN)
    out: list[float] = []
    monkeypatch.setattr(Mailbox, "credit", staticmethod(out.append))
    return out


@pytest.fixture
def backlog() -> Iterator[tuple[Mailbox, threading.Event]]:
    """A mailbox receiving a delivery every `EVERY` seconds (a backlog draining), the wanted one after `WANTED_AT`."""
    box, stop = Mailbox("/hooks/x", "http://127.0.0.1/hooks/x"), threading.Event()

    def sender() -> None:
        started = time.monotonic()
        while not stop.wait(EVERY):
            wanted = time.monotonic() - started > WANTED_AT
            box._take(json.dumps({"id": "evt_wanted" if wanted else "evt_older", "type": "payout.pending"}).encode(), [])

    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    yield box, stop
    stop.set()
    thread.join()


def test_without_a_clock_a_draining_backlog_is_waited_out_and_credited(credited, backlog) -> None:
    box, _ = backlog
    started = time.monotonic()
    seen = deliveries.awaited(box, _wanted, None, QUIET)
    assert _wanted(seen), f"gave up after {time.monotonic() - started:.1f} s while deliveries kept arriving"
    assert credited and sum(credited) <= DRAIN - BUSY  # only the time past BUSY_WAIT


def test_with_a_clock_the_busy_bound_still_holds(credited, backlog) -> None:
    box, _ = backlog
    seen = deliveries.awaited(box, _wanted, lambda: None, QUIET)
    # it gave up at the busy bound while the backlog kept arriving: before the wanted one, with nothing credited
    assert seen and not _wanted(seen)
    assert not credited


def test_a_quiet_mailbox_ends_the_wait_after_one_quiet_period(credited) -> None:
    box = Mailbox("/hooks/y", "http://127.0.0.1/hooks/y")
    waits: list[float] = []
    wait_for = box.wait_for
    box.wait_for = lambda predicate, timeout, **kw: waits.append(timeout) or wait_for(predicate, timeout, **kw)
    assert deliveries.awaited(box, _wanted, None, QUIET) == []
    assert waits == [QUIET] and not credited  # one wait of one quiet period, nothing past it


def test_the_failure_names_the_bound_that_applied(credited) -> None:
    box = Mailbox("/hooks/z", "http://127.0.0.1/hooks/z")
    with pytest.raises(AssertionError, match=f"or after {DRAIN:g} s"):
        deliveries.wait_for(box, _wanted, None, "the wanted event", QUIET)
