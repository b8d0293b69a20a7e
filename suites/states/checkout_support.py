"""Checkout links brought into each state of the Checkout link table, for the state suites.

`draft`, `sent` and `cancelled` are reached through the API. What moves a link to `expired` is not shown:
the suite follows the profile (`sandbox.checkout_link_expiry`: a sent link whose `expiresAt` has passed),
so an `expired` link needs a fresh organization whose clock the operator moves past `expiresAt`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from payconform.client import Api
from payconform.contract import Contract
from payconform.expect import expect, expect_status

from ..endpoints.checkout_flow import draft, pause, publish, read_link

Unique = Callable[[str], str]
LINK_LIFETIME = 120  # seconds between "now" on the organization's clock and a link's expiresAt


def org_now(clock: Any, org_id: str) -> datetime:
    """The organization's current instant, as the operator clock reports it."""
    return datetime.fromisoformat(str(clock.advance(org_id, 0)))


def expiring_draft(api: Api, contract: Contract, unique: Unique, clock: Any, total: str = "150.00") -> dict[str, Any]:
    """A draft whose `expiresAt` is LINK_LIFETIME seconds ahead on its organization's clock."""
    at = org_now(clock, api.org_id) + timedelta(seconds=LINK_LIFETIME)
    return draft(api, contract, unique, total, expiresAt=at.isoformat().replace("+00:00", "Z"))


def let_expire(clock: Any, org_id: str) -> None:
    clock.advance(org_id, 2 * LINK_LIFETIME)


def link_in(state: str, request: pytest.FixtureRequest, contract: Contract, unique: Unique) -> tuple[Api, dict]:
    """(client, link) with the link in `state`; `expired` uses a fresh organization and its clock."""
    if state == "expired":
        org, clock = request.getfixturevalue("fresh_org")(), request.getfixturevalue("clock")
        api = org.api
        link = expiring_draft(api, contract, unique, clock)
        expect_status(publish(api, link["id"]), 200, "publishing the draft before it expires")
        let_expire(clock, org.org_id)
        link = read_link(api, link["id"])
        expect(link.get("status") == "expired",
               f"a sent link read after its expiresAt passed has status {link.get('status')!r}; the profile"
               " (sandbox.checkout_link_expiry) assumes it is `expired`")
        return api, link
    api = request.getfixturevalue("api")
    link = draft(api, contract, unique)
    if state in ("sent", "cancelled"):
        expect_status(publish(api, link["id"]), 200, "publishing the draft")
    if state == "cancelled":
        expect_status(pause(api, link["id"]), 200, "pausing the link")
    return api, read_link(api, link["id"])
