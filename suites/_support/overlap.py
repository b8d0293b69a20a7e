"""Two requests meant to overlap on the target: when each was on the wire, and whether they overlapped.

A test that holds one request with an operator delay and sends a second half a second later cannot know the
second reached the target while the first was held: the key's pacing may hold one of them back, on a busy
run even past the other's answer. The exchange's `elapsed` is its time on the wire (the pacing wait before it
excluded), so the test can tell, and judge only what overlapped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from payconform.suite import Exchange


@dataclass(frozen=True)
class OnWire:
    """An exchange and when it was on the wire (monotonic seconds)."""

    ex: Exchange
    start: float
    end: float


def on_wire(send: Callable[[], Exchange]) -> OnWire:
    """`send()`, and when its request was on the wire."""
    ex = send()
    ended = time.monotonic()
    return OnWire(ex, ended - ex.elapsed, ended)


def overlapped(a: OnWire, b: OnWire) -> bool:
    """Whether the two requests were on the wire at the same time."""
    return a.start < b.end and b.start < a.end
