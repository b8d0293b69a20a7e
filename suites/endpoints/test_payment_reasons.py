"""Endpoints > Payout operations: `GET /payment-reasons` and `GET /policy`.

The payment-reasons response shape is not shown; the profile reads it as a list of reason strings under
`page.items`. The policy's `features` lists `developer` exactly when developer tools are on, which the
operator switches per organization.
"""

from __future__ import annotations

import pytest

from payconform.suite import Contract, expect, expect_status

from .._support.answers import member
from .._support.profile import items
from .._support.schemas import expect_schema


@pytest.mark.req("DISC-REASONS-ROUTE")
def test_payment_reasons_are_served(api, contract: Contract) -> None:
    """200 with a non-empty list of payment reasons, each a non-empty string."""
    ex = api.op("listPaymentReasons")
    expect_status(ex, 200, "GET /payment-reasons")
    reasons = items(contract, "listPaymentReasons", ex)
    expect(reasons and all(isinstance(r, str) and r for r in reasons),
           f"the payment reasons are {reasons!r}, not a non-empty list of strings", ex)


@pytest.mark.req("POLICY-FEATURES-DEVELOPER")
@pytest.mark.needs("operator")
@pytest.mark.parametrize("developer", [True, False], ids=["developer-on", "developer-off"])
def test_policy_features_list_developer_when_on(developer: bool, fresh_org) -> None:
    """`features` contains `developer` when developer tools are on, and not when they are off."""
    org = fresh_org(features=("developer", "mass_payouts") if developer else ("mass_payouts",))
    ex = org.api.op("getPolicy")
    expect_status(ex, 200, "GET /policy")
    expect_schema(ex)
    features = member(ex, "features")
    expect(("developer" in features) == developer,
           f"developer tools are {'on' if developer else 'off'} but `features` is {features!r}", ex)
