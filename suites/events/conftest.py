"""Fixtures of the events suite: `flusher(org_id)` -> a callable that runs the target's dispatcher now (a
zero advance of that organization's operator clock), or None when the target has no clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def flusher(request: pytest.FixtureRequest) -> Callable[[str], Callable[[], Any] | None]:
    try:
        operator = request.getfixturevalue("operator")
    except pytest.skip.Exception:
        operator = None
    capable = operator is not None and "advance_clock" in getattr(operator, "capabilities", {"advance_clock"})

    def make(org_id: str) -> Callable[[], Any] | None:
        if not capable:
            return None
        return lambda: operator.advance_clock(org_id, 0)

    return make
