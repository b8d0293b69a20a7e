"""Errors, `ROUTE_NOT_FOUND` (404): "No route matches" - with a valid key, under the API prefix."""

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
