"""Authentication > Mode A rule 5: "A live key writing before business verification is approved:
`LIVE_KEY_ORG_NOT_APPROVED` (reads work)", the LIVE_KEY_ORG_NOT_APPROVED row (403), and Endpoints rule 1
("A 401 or 403 means nothing ran").

The organization is a fresh unverified one made by the operator; the live key only reads, and its one
write is a recipient create, which moves no money and is no checkout call.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Contract, expect_error, expect_status

from .._support.recipients import recipient_body

pytestmark = pytest.mark.needs("operator")


def _unverified_live(fresh_org) -> tuple[Any, str]:
    """A fresh organization whose business verification is not approved, and a live read+write key of it."""
    org = fresh_org(verified=False)
    return org, org.issue_key(mode="live", scopes=["read", "write"])


@pytest.mark.smoke
@pytest.mark.req("AUTH-LIVE-UNAPPROVED-WRITE", "ERR-LIVE-KEY-ORG-NOT-APPROVED", "AUTH-REFUSED-NOTHING-RAN")
def test_live_key_write_before_verification_is_refused(fresh_org, contract: Contract, unique) -> None:
    """A recipient create with the live key: 403 LIVE_KEY_ORG_NOT_APPROVED, and no recipient has the external
    id it sent (read by external id with the same key: 404 NOT_FOUND)."""
    org, live = _unverified_live(fresh_org)
    body = recipient_body(contract, unique, externalId=unique("ext"))
    expect_error(org.api.op("createBeneficiary", json=body, credential=live), 403, "LIVE_KEY_ORG_NOT_APPROVED")
    expect_error(org.api.op("getBeneficiaryByExternalId", externalId=body["externalId"], credential=live),
                 404, "NOT_FOUND", "the refused create must have made no recipient")


@pytest.mark.req("AUTH-LIVE-UNAPPROVED-READS-WORK")
def test_live_key_reads_before_verification(fresh_org) -> None:
    """Reads with the live key of an organization not yet verified work: 200."""
    org, live = _unverified_live(fresh_org)
    expect_status(org.api.op("getBalance", credential=live), 200, "a read with the live key before verification")
