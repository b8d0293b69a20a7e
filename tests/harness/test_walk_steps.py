"""A real-time walk reads at the profile's instants (`suites/_support/realtime.py`, `next_step`): the time its
reads spent waiting for the pacer is taken off the next wait, so a walk on a busy key does not drift a step
later each time; an operator clock is moved by whole steps."""

from __future__ import annotations

from suites._support import realtime
from suites._support.realtime import REAL_TIME, next_step


class Clock:
    def __init__(self) -> None:
        self.moves: list[float] = []

    def advance(self, org_id: str, seconds: float) -> None:
        self.moves.append(seconds)


def test_real_time_waits_only_for_what_is_left_of_the_step(monkeypatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(realtime.time, "monotonic", lambda: 1000.0 + 14.0)  # reads took 4 s past the first step
    monkeypatch.setattr(REAL_TIME, "advance", lambda org_id, seconds: waits.append(seconds), raising=False)
    next_step(REAL_TIME, "org", 10.0, started=1000.0, elapsed=20.0)
    next_step(REAL_TIME, "org", 10.0, started=1000.0, elapsed=10.0)  # already past: no wait at all
    assert waits == [6.0, 0.0]


def test_an_operator_clock_moves_a_whole_step() -> None:
    clock = Clock()
    next_step(clock, "org", 10.0, started=0.0, elapsed=50.0)
    assert clock.moves == [10.0]
