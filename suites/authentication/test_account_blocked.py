"""Authentication > Mode A rule 5, "Suspended organization: `ACCOUNT_BLOCKED`", the ACCOUNT_BLOCKED row (403),
and Endpoints rule 1, "A 401 or 403 means nothing ran". Suspending an organization is an operator action."""

from __future__ import annotations

import pytest

from payconform.suite import Contract, expect_error, expect_status

from .._support.products import product_body

pytestmark = pytest.mark.needs("operator")


@pytest.mark.smoke
@pytest.mark.req("AUTH-ACCOUNT-BLOCKED", "ERR-ACCOUNT-BLOCKED")
def test_suspended_org_read_is_blocked(fresh_org) -> None:
    """A read in a suspended organization with its own valid key: 403 ACCOUNT_BLOCKED."""
    org = fresh_org(suspended=True)
    expect_error(org.api.op("getBalance"), 403, "ACCOUNT_BLOCKED")


@pytest.mark.req("AUTH-ACCOUNT-BLOCKED", "ERR-ACCOUNT-BLOCKED", "AUTH-REFUSED-NOTHING-RAN")
def test_suspended_org_write_is_blocked_and_ran_nothing(fresh_org, operator, contract: Contract, unique) -> None:
    """A product create in a suspended organization: 403 ACCOUNT_BLOCKED; once the organization is reinstated,
    a create of the same name answers 201 (names are unique among active products)."""
    org = fresh_org(suspended=True)
    body = product_body(contract, unique)
    expect_error(org.api.op("createCheckoutProduct", json=body), 403, "ACCOUNT_BLOCKED")
    operator.update_org(org.org_id, suspended=False)
    expect_status(org.api.op("createCheckoutProduct", json=body), 201,
                  f"a create of product {body['name']!r} after reinstatement: the name must still be free")
