"""Endpoints, common rule 2: every checkout call except refund is refused with 403 `FORBIDDEN` (the detail
says which) until the business has completed verification to accept payments.

The operator makes an organization that has not completed that verification; recipients are not
checkout calls and keep working there, and once the operator completes it, checkout works too.
"""

from __future__ import annotations

import pytest

from payconform.suite import Contract, expect, expect_error, expect_status

from .._support.products import product_body
from .._support.recipients import create_recipient


@pytest.mark.needs("operator")
@pytest.mark.req("CHK-VERIFICATION-REQUIRED")
def test_checkout_refused_until_verified(fresh_org, operator, contract: Contract, unique) -> None:
    """Creating and listing products answer 403 FORBIDDEN with a detail while the
    organization cannot accept payments; a recipient can still be created; after verification the same
    product create succeeds."""
    org = fresh_org(payments_enabled=False)
    body = product_body(contract, unique)
    for ex in (org.api.op("createCheckoutProduct", json=body), org.api.op("listCheckoutProducts")):
        err = expect_error(ex, 403, "FORBIDDEN", "checkout before verification to accept payments")
        expect(err["detail"].strip(), "the 403 detail is empty; it must say which verification is missing", ex)
    create_recipient(org.api, contract, unique)
    operator.update_org(org.org_id, payments_enabled=True)
    expect_status(org.api.op("createCheckoutProduct", json=body), 201, "the same product once payments are enabled")
