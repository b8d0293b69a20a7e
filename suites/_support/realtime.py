"""Letting time pass for real, where a test must not move an organization's clock: on the target's own
organization other tests share that clock, so a wait of the spec's or the profile's seconds is waited out.
`REAL_TIME.advance(org_id, seconds)` stands in for the operator clock's; a wait longer than `REAL_WAIT` skips
with `needs clock`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from payconform.suite import Api
from payconform.suite import Kind, Needs

REAL_WAIT = 45.0  # seconds a test may wait in real time when it cannot move the clock


class RealTime:
    """The operator clock's `advance`, in real time."""

    def advance(self, org_id: str, seconds: float) -> None:
        if seconds > REAL_WAIT:
            Needs(Kind.CLOCK, note=f"a {seconds:g} s wait").skip()
        time.sleep(max(0.0, seconds))


REAL_TIME = RealTime()


def next_step(clock: Any, org_id: str, step: float, started: float, elapsed: float) -> None:
    """Let a walk's next step of `step` seconds pass, the step that ends `elapsed` seconds into it: an operator
    clock moves by `step`; in real time the wait ends `elapsed` seconds after `started` (`time.monotonic()` at
    the walk's first read), so the time the reads in between spent waiting for the pacer (the key's minute,
    shared with the other tests) is not added to every step and the walk reads at the profile's instants."""
    if clock is REAL_TIME:
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
