"""Fixtures of the events suite: `flusher(org_id)` -> a callable that runs the target's dispatcher now (a
zero advance of that organization's operator clock), or None when the target has no clock; `stage` -> a
`_support.drive.Stage` (an organization with this test's mailbox registered, opted in to every checkout-payment
event, and time under the test's control; on the target's own organization, the worker's reused endpoint);
`timeline` -> a `_support.clocked.Timeline` (a fresh organization, this test's mailbox, the operator clock)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from payconform.suite import Contract, Mailbox

from .._support.clocked import Timeline
from .._support.deliveries import register, reused
from .._support.drive import Stage
from .._support.events import opt_in_types

ALL_SCOPES = ("read", "write", "refunds", "crypto_payouts")


def _optional(request: pytest.FixtureRequest, name: str) -> Any:
    """A fixture's value, or None where the target cannot provide it (the fixture skips)."""
    try:
        return request.getfixturevalue(name)
    except pytest.skip.Exception:
        return None


@pytest.fixture
def flusher(request: pytest.FixtureRequest) -> Callable[[str], Callable[[], Any] | None]:
    operator = _optional(request, "operator")
    capable = operator is not None and "advance_clock" in getattr(operator, "capabilities", {"advance_clock"})

    def make(org_id: str) -> Callable[[], Any] | None:
        if not capable:
            return None
        return lambda: operator.advance_clock(org_id, 0)

    return make


@pytest.fixture
def stage(request: pytest.FixtureRequest, contract: Contract, unique: Any, webhook_receiver: Mailbox) -> Stage:
    operator, clock = _optional(request, "operator"), _optional(request, "clock")
    if operator is not None and clock is not None:
        org = request.getfixturevalue("fresh_org")(scopes=ALL_SCOPES)
        api, org_id, key = org.api, org.org_id, (lambda name: org.api)
        endpoint, secret = register(api, contract, webhook_receiver, opt_in_types())
        box = webhook_receiver
    else:
        api, api_as = request.getfixturevalue("api"), request.getfixturevalue("api_as")
        org_id, key = api.org_id, api_as
        endpoint, secret, box = reused(api, contract, request.getfixturevalue("webhook_server"))
    return Stage(api, org_id, contract, unique, box, secret, endpoint, clock, operator, key)


@pytest.fixture
def timeline(fresh_org, clock, contract: Contract, webhook_receiver: Mailbox) -> Timeline:
    return Timeline(fresh_org(), clock, webhook_receiver, contract)
