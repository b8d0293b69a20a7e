"""Letting time pass for real, where a test must not move an organization's clock: on the target's own
organization other tests share that clock, so a wait of the spec's or the profile's seconds is waited out.
`REAL_TIME.advance(org_id, seconds)` stands in for the operator clock's; a wait longer than `REAL_WAIT` skips
with `needs clock`. A test that waits out one of the spec's windows of minutes (the duplicate-body guard, a
signature challenge, the first retries of a delivery) asks `slow_timed` (`suites/conftest.py`): under
`--run-slow` (the deep tier) its waits may last up to `SLOW_WAIT` (`RealTime(SLOW_WAIT)`), without it they skip
with `needs --run-slow`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from payconform.suite import Api
from payconform.suite import Kind, Needs

REAL_WAIT = 45.0  # seconds a test may wait in real time when it cannot move the clock
SLOW_WAIT = 17 * 60.0  # under --run-slow: the longest window a test waits out (15 minutes), a minute either side
SLOW_TIMEOUT = 25 * 60  # the per-test timeout of a test that waits up to SLOW_WAIT in real time


class RealTime:
    """The operator clock's `advance`, in real time, each wait up to `limit` seconds."""

    def __init__(self, limit: float = REAL_WAIT) -> None:
        self.limit = limit

    def advance(self, org_id: str, seconds: float) -> None:
        if seconds > self.limit:
            Needs(Kind.CLOCK, note=f"a {seconds:g} s wait").skip()
        time.sleep(max(0.0, seconds))


REAL_TIME = RealTime()


def real_clock(seconds: float, run_slow: bool) -> RealTime:
    """The real time of a test that cannot move a clock and whose longest wait is `seconds`: under
    `--run-slow` each wait may last up to `SLOW_WAIT`; without it the test skips with `needs --run-slow` (with
    `needs clock` beyond `SLOW_WAIT`), before it makes anything."""
    if seconds > SLOW_WAIT:
        Needs(Kind.CLOCK, note=f"a {seconds:g} s wait").skip()
    if not run_slow:
        Needs(Kind.REAL_TIME, note=f"a {seconds:g} s wait in real time").skip()
    return RealTime(SLOW_WAIT)


def waits_minutes(test: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a `slow_timed` test: `long_wait` (it starts among the first, so its minutes overlap the others')
    and a timeout that lets its real-time waits end."""
    return pytest.mark.long_wait(pytest.mark.timeout(SLOW_TIMEOUT)(test))


def is_real(clock: Any) -> bool:
    """Whether `clock` lets time pass for real (a `RealTime`) rather than moving an organization's clock."""
    return isinstance(clock, RealTime)


def next_step(clock: Any, org_id: str, step: float, started: float, elapsed: float) -> None:
    """Let a walk's next step of `step` seconds pass, the step that ends `elapsed` seconds into it: an operator
    clock moves by `step`; in real time the wait ends `elapsed` seconds after `started` (`time.monotonic()` at
    the walk's first read), so the time the reads in between spent waiting for the pacer (the key's minute,
    shared with the other tests) is not added to every step and the walk reads at the profile's instants."""
    if is_real(clock):
        clock.advance(org_id, max(0.0, started + elapsed - time.monotonic()))
    else:
        clock.advance(org_id, step)


@dataclass(frozen=True)
class Timed:
    """An organization's client and how its time passes there (`advance(org_id, seconds)`): the operator
    clock of a fresh organization, or `REAL_TIME` on the target's own (the `timed` fixture). `reader`, where
    given, is a read-only key of the same organization for the reads a test times (`reads`)."""

    api: Api
    clock: Any
    reader: Api | None = None

    @property
    def reads(self) -> Api:
        """The client of the reads that must go out at the profile's instants: the read-only key, whose
        minute no other test spends (on a run's busy key a read may wait for the window to turn, longer than
        a state lasts), else the organization's client."""
        return self.reader or self.api

    @property
    def org_id(self) -> str:
        return str(self.api.org_id)

    def at_once(self) -> contextlib.AbstractContextManager[Any]:
        """Where a request is timed: in real time it goes out now, not when the key's minute turns; on a
        clock it may wait its turn."""
        return self.api.run.urgent() if self.real else contextlib.nullcontext()

    @property
    def real(self) -> bool:
        """Whether time passes for real here (the target's own organization, no operator clock)."""
        return is_real(self.clock)
