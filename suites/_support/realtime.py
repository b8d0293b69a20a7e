"""Letting time pass for real, where a test must not move an organization's clock: on the target's own
organization other tests share that clock, so a wait of the spec's or the profile's seconds is waited out.
`REAL_TIME.advance(org_id, seconds)` stands in for the operator clock's; a wait longer than `REAL_WAIT` skips
with `needs clock`.
"""

from __future__ import annotations

import time

import pytest

REAL_WAIT = 45.0  # seconds a test may wait in real time when it cannot move the clock


class RealTime:
    """The operator clock's `advance`, in real time."""

    def advance(self, org_id: str, seconds: float) -> None:
        if seconds > REAL_WAIT:
            pytest.skip(f"needs clock (a {seconds:g} s wait)")
        time.sleep(max(0.0, seconds))


REAL_TIME = RealTime()
