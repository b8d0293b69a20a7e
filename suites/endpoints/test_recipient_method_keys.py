"""Endpoints > Recipients, `POST /{recipientId}/methods`: "Add a payment method to an existing recipient.
Header `Idempotency-Key` required."

Without the header the request is refused (400 IDEMPOTENCY_KEY_REQUIRED, Endpoints rule 3) and nothing is
added; the same request twice under one key adds the method once.
"""

from __future__ import annotations

import pytest

from payconform.suite import Contract, expect, expect_error

from .._support.recipients import add_method_body, added_method, create_recipient, method_ids, read_recipient
from .._support.types import Unique


@pytest.mark.req("RCP-ADD-METHOD-IDEM")
@pytest.mark.needs("profile")
def test_add_method_needs_a_key_and_adds_once(api, contract: Contract, unique: Unique) -> None:
    """No key: 400 IDEMPOTENCY_KEY_REQUIRED, methods unchanged. One key sent twice: one new method."""
    recipient = create_recipient(api, contract, unique)
    body = add_method_body(contract)
    expect_error(api.op("addBeneficiaryMethod", recipientId=recipient["id"], json=body, idempotency_key=None), 400,
                 "IDEMPOTENCY_KEY_REQUIRED", "adding a method without an Idempotency-Key")
    expect(method_ids(read_recipient(api, recipient["id"])) == method_ids(recipient),
           "the method refused for its missing key was added")
    key = unique("key")
    first, again = (added_method(api.op("addBeneficiaryMethod", recipientId=recipient["id"], json=body,
                                        idempotency_key=key)) for _ in range(2))
    now = method_ids(read_recipient(api, recipient["id"]))
    expect(again.get("id") == first.get("id") and len(now) == len(method_ids(recipient)) + 1,
           f"the same add-method request twice under one key left methods {now} "
           f"(before: {method_ids(recipient)}; answers named {first.get('id')!r} and {again.get('id')!r})")
