"""Errors, `ROUTE_NOT_FOUND` (404): "No route matches; payouts are sent to `/payouts` and read from `/orders`" -
with a valid key, under the API prefix; an unknown id on a route that matches is NOT_FOUND."""

from __future__ import annotations

import pytest

from payconform.suite import Api, expect_error

from .._support.types import Unique

UNKNOWN_ROUTES = [
    pytest.param("/payments/organizations/{orgId}/{name}", id="under-the-organization"),
    pytest.param("/{name}", id="top-level"),
]


@pytest.mark.smoke(ids=["under-the-organization"])
@pytest.mark.req("ERR-ROUTE-NOT-FOUND")
@pytest.mark.parametrize("template", UNKNOWN_ROUTES)
def test_unknown_route_is_route_not_found(api: Api, unique: Unique, template: str) -> None:
    """A path no documented route matches answers 404 `ROUTE_NOT_FOUND`, not `NOT_FOUND` (that is for ids).

    The key is valid, so the refusal can only be about the route.
    """
    expect_error(api.get(template.replace("{name}", unique("no-such-route"))), 404, "ROUTE_NOT_FOUND")


@pytest.mark.req("ERR-ROUTE-NOT-FOUND")
def test_an_unknown_payout_on_the_orders_route_is_not_found(api: Api, unique: Unique) -> None:
    """Payouts are "read from `/orders`": GET /orders/{payoutId} with an id no payout has matches that route, so
    it answers 404 `NOT_FOUND` ("No such payout"), not `ROUTE_NOT_FOUND`."""
    expect_error(api.op("getOrder", payoutId=unique("po-unknown")), 404, "NOT_FOUND", "reading a payout id no payout has")
