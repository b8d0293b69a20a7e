"""Authentication > Mode A rule 4, row `read` only: "Can reconcile, cannot spend; `INSUFFICIENT_SCOPE` on
spending ...", with Endpoints rule 1 (writes answer 403 `INSUFFICIENT_SCOPE` for a read-only key; a 403 means
nothing ran) and "Readable with a read-only key" (audit events).

Every refused write is followed by a read-back with a read+write key showing that nothing changed. (Reading
full account details with a read-only key is tested with the recipient methods, suites/endpoints; a product
create with a read-only key in test_refused_nothing_ran.)
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status, fill

from .._support.accounts import method_body
from .._support.balance import fund_sandbox
from .._support.recipients import method_ids, reread, untouched_recipient

pytestmark = pytest.mark.needs("read_only_key")


@pytest.fixture
def read_only(api_as) -> Api:
    return api_as("read_only_key")


@pytest.fixture
def recipient(api: Api, contract: Contract, unique) -> dict[str, Any]:
    """A recipient with one payment method, created with the read+write key: the one the tests of refused
    recipient changes share (`untouched_recipient`), as last read; a refusal must leave it as it was."""
    created = untouched_recipient(api, contract, unique)
    expect(bool(created.get("paymentMethods")), "the shared recipient lists no payment method")
    return created


@pytest.mark.req("AUTH-READ-ONLY-NO-SPEND", "AUTH-COMMON-403", "ERR-INSUFFICIENT-SCOPE", "AUTH-REFUSED-NOTHING-RAN")
def test_read_only_key_cannot_add_method(api: Api, read_only: Api, recipient, contract: Contract) -> None:
    """Adding a payment method with a read-only key: 403 INSUFFICIENT_SCOPE, and the recipient's methods are
    unchanged."""
    ex = read_only.op("addBeneficiaryMethod", recipientId=recipient["id"], json=method_body(contract, "EUR"))
    expect_error(ex, 403, "INSUFFICIENT_SCOPE")
    after = method_ids(reread(api, recipient))
    expect(after == method_ids(recipient), f"the refused add-method ran: methods were {method_ids(recipient)}, "
                                           f"now {after}")


@pytest.mark.smoke
@pytest.mark.req("AUTH-READ-ONLY-NO-SPEND", "AUTH-COMMON-403", "ERR-INSUFFICIENT-SCOPE", "AUTH-REFUSED-NOTHING-RAN",
                 "KEY-SCOPES")
def test_read_only_key_cannot_update_recipient(api: Api, read_only: Api, recipient, unique) -> None:
    """A PATCH of a recipient's name with a read-only key: 403 INSUFFICIENT_SCOPE, and the name is unchanged."""
    ex = read_only.op("updateBeneficiary", recipientId=recipient["id"], json={"name": unique("renamed")})
    expect_error(ex, 403, "INSUFFICIENT_SCOPE")
    name = reread(api, recipient).get("name")
    expect(name == recipient.get("name"), f"the refused PATCH ran: the name is now {name!r}")


@pytest.mark.req("AUTH-READ-ONLY-NO-SPEND", "ERR-INSUFFICIENT-SCOPE", "AUTH-REFUSED-NOTHING-RAN")
def test_read_only_key_cannot_pay(api: Api, read_only: Api, recipient, contract: Contract, unique) -> None:
    """A payout (from a funded balance, to a payable recipient) with a read-only key: 403 INSUFFICIENT_SCOPE, and
    no payout carries its reference (looked up with `GET /orders?reference=`)."""
    fund_sandbox(api, contract)
    reference = unique("po")
    template = contract.operation("createPayout").get("body") or {}
    body = fill(template, {"unique": reference,
                           "destinationAccountId": recipient["paymentMethods"][0]["destinationAccountId"]})
    expect_error(read_only.op("createPayout", json=body), 403, "INSUFFICIENT_SCOPE")
    found = api.op("listOrders", params={"reference": reference})
    expect_status(found, 200, "looking the reference up")
    items_key = contract.operation("listOrders")["page"]["items"]
    items = found.json.get(items_key) if items_key else found.json
    expect(items == [], f"the refused payout ran: the lookup by its reference found {items!r}", found)


@pytest.mark.req("AUTH-READ-ONLY-NO-SPEND", "AUDIT-READ-ONLY-KEY")
def test_read_only_key_reads(read_only: Api, recipient) -> None:
    """A read-only key can reconcile: it reads a recipient and the audit trail."""
    ex = read_only.op("getBeneficiary", recipientId=recipient["id"])
    expect_status(ex, 200, "reading a recipient with a read-only key")
    expect(ex.json.get("id") == recipient["id"], f"the read answers recipient {ex.json.get('id')!r}", ex)
    expect_status(read_only.op("listAuditEvents"), 200, "reading the audit events with a read-only key")
