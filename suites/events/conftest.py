"""Fixtures of the events suite: `flusher(org_id)` -> a callable that runs the target's dispatcher now (a
zero advance of that organization's operator clock), or None when the target has no clock; `stage` -> a
`_support.drive.Stage` (an organization with this test's mailbox registered, opted in to every checkout-payment
event, and time under the test's control); `shared_stage` -> the same, but on the target's own organization
with the worker's one endpoint (for tests that only look for deliveries about subjects of their own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from payconform.contract import Contract
from payconform.webhooks import Mailbox

from .._support.deliveries import register
from .._support.drive import Stage
from .._support.events import opt_in_types
from .._support.types import Scope, shared_scope

ALL_SCOPES = ("read", "write", "refunds", "crypto_payouts")
_ENDPOINTS: dict[Scope, tuple[dict[str, Any], str, Mailbox]] = {}  # the worker's shared endpoint, per organization


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
    else:
        api, api_as = request.getfixturevalue("api"), request.getfixturevalue("api_as")
        org_id, key = api.org_id, api_as
    endpoint, secret = register(api, contract, webhook_receiver, opt_in_types())
    return Stage(api, org_id, contract, unique, webhook_receiver, secret, endpoint, clock, operator, key)


@pytest.fixture
def shared_stage(request: pytest.FixtureRequest, contract: Contract, unique: Any, webhook_server: Any) -> Stage:
    """`stage`, except that on the target's own organization the endpoint (opted in to every checkout-payment
    event) and its mailbox are this worker's one, registered once: every registration is one request more and
    one more endpoint every later event is delivered to. With an operator clock, `stage` (a fresh organization)."""
    operator, clock = _optional(request, "operator"), _optional(request, "clock")
    if operator is not None and clock is not None:
        return request.getfixturevalue("stage")
    api, api_as = request.getfixturevalue("api"), request.getfixturevalue("api_as")
    shared = shared_scope(api)
    if shared not in _ENDPOINTS:
        box = webhook_server.mailbox()
        _ENDPOINTS[shared] = (*register(api, contract, box, opt_in_types()), box)
    endpoint, secret, box = _ENDPOINTS[shared]
    return Stage(api, api.org_id, contract, unique, box, secret, endpoint, clock, operator, api_as)
