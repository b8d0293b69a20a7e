"""Conventions, `{orgId}` and other ids: opaque, passed unchanged - the organization id in every
organization-scoped path, and every other id exactly as the service returned it."""

from __future__ import annotations

import pytest

from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.expect import expect, expect_status

from .support import Unique, create_product, create_recipient, member

# One read per organization-scoped prefix (payments, recipients, checkout) that needs nothing but the key.
ORG_SCOPED_READS = ["getBalance", "listBeneficiaries", "listCheckoutProducts"]


def expect_same_id(read: Exchange, wanted: str, what: str) -> None:
    """The read answers the resource that was asked for."""
    expect(member(read, "id") == wanted, f"reading {what} {wanted!r} answered id {member(read, 'id')!r}", read)


@pytest.mark.req("CONV-ORGID-UNCHANGED")
@pytest.mark.parametrize("op_id", ORG_SCOPED_READS)
def test_org_id_as_issued_works_on_every_prefix(api: Api, op_id: str) -> None:
    """The organization id exactly as issued addresses the organization under each prefix (200)."""
    expect_status(api.op(op_id), 200, f"{op_id} with the organization id as issued")


@pytest.mark.req("CONV-IDS-OPAQUE")
def test_returned_ids_are_accepted_verbatim(api: Api, contract: Contract, unique: Unique) -> None:
    """Ids from create answers (recipient, its method, product) address the same resource when sent back as is."""
    _, created = create_recipient(api, contract, unique)
    recipient_id, method_id = member(created, "id"), member(created, "paymentMethods", 0, "id")
    read = expect_status(api.op("getBeneficiary", recipientId=recipient_id), 200, "read the recipient by its id")
    expect_same_id(read, recipient_id, "recipient")
    expect_status(api.op("getBeneficiaryMethodDetails", recipientId=recipient_id, methodId=method_id), 200,
                  "read the method's details by the returned ids")
    _, created = create_product(api, contract, unique)
    product_id = member(created, "id")
    read = expect_status(api.op("getCheckoutProduct", productId=product_id), 200, "read the product by its id")
    expect_same_id(read, product_id, "product")
