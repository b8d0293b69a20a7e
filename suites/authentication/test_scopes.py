"""Authentication > Mode A rule 4 ("Scopes chosen at issue are enforced on every request"; row `refunds`: "May
refund checkout payments") and rule 6 ("It may read the approval queue and the audit trail").

A read-only key is refused every write it tries, however many requests it has made before; the refunds key
refunds; the read+write and read-only keys both read the approval queue and the audit trail.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status, fill

from .._support.controls import expect_refused_without_key
from .._support.payments import expect_payment_unchanged, payment, read_payment, refund
from .._support.products import product_body
from .._support.profile import success
from .._support.recipients import recipient_body


def _writes(contract: Contract, unique) -> list[tuple[str, dict[str, Any]]]:
    """One write per part of the API a read-only key might try: recipients, checkout, sandbox funding."""
    return [("createBeneficiary", recipient_body(contract, unique)),
            ("createCheckoutProduct", product_body(contract, unique)),
            ("fundSandbox", fill(contract.operation("fundSandbox").get("body") or {}, {}))]


@pytest.mark.req("AUTH-SCOPES-ENFORCED")
@pytest.mark.needs("read_only_key")
def test_read_only_key_is_refused_on_every_request(api_as, contract: Contract, unique) -> None:
    """The read-only key reads (200), then each write twice: 403 INSUFFICIENT_SCOPE every time."""
    read_only = api_as("read_only_key")
    expect_status(read_only.op("getBalance"), 200, "a read with the read-only key")
    for op_id, body in _writes(contract, unique):
        for attempt in ("first", "second"):
            expect_error(read_only.op(op_id, json=body), 403, "INSUFFICIENT_SCOPE",
                         f"{op_id} with the read-only key, {attempt} attempt")


@pytest.mark.req("AUTH-REFUNDS-MISSING", "ERR-INSUFFICIENT-SCOPE")
def test_a_key_without_refunds_cannot_refund(api: Api, contract: Contract, unique) -> None:
    """The run's `api_key` (read+write, as a target file describes it), without `refunds`: a refund is 403
    INSUFFICIENT_SCOPE and nothing is refunded (the refunds key's side: test_refunds_key_refunds)."""
    link_id, paid = payment(api, contract, unique)
    before = read_payment(api, contract, link_id, paid["id"])
    ex = refund(api, contract, paid["id"], "100")
    expect_error(ex, 403, "INSUFFICIENT_SCOPE", "a refund with a key lacking `refunds`")
    expect_payment_unchanged(api, contract, link_id, before, ex)


@pytest.mark.req("AUTH-REFUNDS-SCOPE")
@pytest.mark.needs("refunds_key")
def test_refunds_key_refunds(api: Api, api_as, contract: Contract, unique) -> None:
    """The refunds key (read, write, refunds) refunds 50.00 of a 150.00 payment: `refundedBase` reads 5000."""
    link_id, paid = payment(api, contract, unique, "150.00")
    expect_status(refund(api_as("refunds_key"), contract, paid["id"], "5000"),
                  success(contract, "refundCheckoutPayment"), "a refund with the refunds key")
    after = read_payment(api, contract, link_id, paid["id"])
    expect(after.get("refundedBase") == "5000", f"after the refund refundedBase reads {after.get('refundedBase')!r}")


@pytest.mark.req("AUTH-KEY-MAY-READ")
@pytest.mark.parametrize("credential", [
    pytest.param("api_key", marks=[pytest.mark.needs("api_key"), pytest.mark.req("APPROVAL-QUEUE-READABLE")]),
    pytest.param("read_only_key", marks=pytest.mark.needs("read_only_key")),
])
def test_key_reads_the_approval_queue_and_audit_trail(credential: str, api_as) -> None:
    """GET the approval queue and the audit events with the key: 200 each (with the read+write key this is also
    States > Payout approval: "An API key may read the queue")."""
    client = api_as(credential)
    for op_id in ("listPayoutApprovals", "listAuditEvents"):
        expect_status(client.op(op_id), 200, f"{op_id} with the {credential}")
        expect_refused_without_key(client, op_id, f"the {credential} reading it")
