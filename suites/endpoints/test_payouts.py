"""Endpoints > Payout operations: reading payouts, checked against the `WebhookPayout` fields.

Resources > Payout names the payout's fields (the event payload shape `WebhookPayout`); the payout read
through the API carries them ("fields ... beyond those above: not shown", so extra fields are tolerated).
The payout is created through the profile's `createPayout` body and read with the spec's authoritative read
(`GET /orders/{payoutId}`) and the lookup by caller reference (`GET /orders?reference=`).
"""

from __future__ import annotations

import pytest

from payconform.suite import Contract, expect, expect_status

from .._support.payouts import create_payout, payout_problems, read_payout
from .._support.profile import items
from .._support.types import Unique


@pytest.mark.req("PAYOUT-FIELDS", "PAYOUT-FEE-OBJECT", "PAYOUT-REFERENCE", "PAYOUT-STATUS-VALUES", "ORDER-READ")
@pytest.mark.needs("profile")
def test_payout_read_carries_the_webhook_payout_fields(api, contract: Contract, unique: Unique) -> None:
    """The payout read through GET /orders/{payoutId} carries every `WebhookPayout` field. The create answer is
    not checked: "Bodies and responses of the payout operations (create, ...): not shown"."""
    created = create_payout(api, contract, unique)
    states = contract.machine("payout")["states"]
    read = read_payout(api, created.json["payoutId"])
    problems = payout_problems(read.json, created.request.json, states)
    expect(not problems, "GET /orders/{payoutId}: " + "; ".join(problems), read)


@pytest.mark.req("ORDER-BY-REFERENCE")
@pytest.mark.needs("profile")
def test_orders_by_reference_finds_the_payout(api, contract: Contract, unique: Unique) -> None:
    """GET /orders?reference= returns the payout made with that caller reference, not another one."""
    created = create_payout(api, contract, unique)
    create_payout(api, contract, unique)
    reference = created.request.json["reference"]
    ex = api.op("listOrders", params={"reference": reference})
    expect_status(ex, 200, "looking a payout up by its caller reference")
    found = items(contract, "listOrders", ex)
    expect([p.get("payoutId") for p in found] == [created.json["payoutId"]],
           f"GET /orders?reference={reference} found {[p.get('payoutId') for p in found]}, "
           f"expected exactly [{created.json['payoutId']!r}]", ex)
