"""Endpoints > Payout operations: reading payouts, checked against the `WebhookPayout` fields.

Resources > Payout names the payout's fields (the event payload shape `WebhookPayout`); the payout read
through the API carries them ("fields ... beyond those above: not shown", so extra fields are tolerated).
The payout is created through the profile's `createPayout` body and read with the spec's authoritative read
(`GET /orders/{payoutId}`) and the lookup by caller reference (`GET /orders?reference=`).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from payconform.contract import Contract
from payconform.expect import expect, expect_status

from ..errors.idempotency_support import items
from ..states.payout_support import Unique, create, machine, read

DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def _problems(payout: dict[str, Any], sent: dict[str, Any], states: list[str]) -> list[str]:
    """How a payout falls short of the `WebhookPayout` fields (types, decimal strings, the caller's values)."""
    problems = []

    def check(ok: bool, what: str) -> None:
        if not ok:
            problems.append(what)

    def decimal(name: str, value: Any) -> None:
        check(isinstance(value, str) and DECIMAL.match(value) is not None,
              f"`{name}` is {value!r}, not a decimal string")

    check(isinstance(payout.get("payoutId"), str) and payout.get("payoutId"), "`payoutId` is not a string")
    check(payout.get("status") in states, f"`status` is {payout.get('status')!r}, not one of {states}")
    check(isinstance(payout.get("requiresFunding"), bool), "`requiresFunding` is not a boolean")
    for name in ("sourceAmount", "destinationAmount", "rate"):
        decimal(name, payout.get(name))
    for name in ("sourceCurrency", "destinationCurrency", "destinationAccountId", "endUserId"):
        check(isinstance(payout.get(name), str) and payout.get(name), f"`{name}` is {payout.get(name)!r}, not a string")
    fee = payout.get("fee")
    check(isinstance(fee, dict) and isinstance(fee.get("currency"), str), f"`fee` is {fee!r}, not {{currency, amount}}")
    if isinstance(fee, dict):
        decimal("fee.amount", fee.get("amount"))
    end_user = payout.get("endUser")
    check(isinstance(end_user, dict) and isinstance(end_user.get("id"), str), f"`endUser` is {end_user!r}, not {{id}}")
    check(isinstance(payout.get("createdAt"), str) and INSTANT.match(payout["createdAt"]) is not None,
          f"`createdAt` is {payout.get('createdAt')!r}, not an ISO 8601 instant")
    check("completedAt" in payout and payout.get("completedAt") is None or payout.get("status") == "completed",
          f"`completedAt` is {payout.get('completedAt', '(absent)')!r}, not null before completion")
    for name in ("reference", "destinationAccountId", "sourceCurrency", "destinationCurrency"):
        check(payout.get(name) == sent.get(name), f"`{name}` is {payout.get(name)!r}, but {sent.get(name)!r} was sent")
    return problems


@pytest.mark.req("PAYOUT-FIELDS", "PAYOUT-FEE-OBJECT", "PAYOUT-REFERENCE", "PAYOUT-STATUS-VALUES", "ORDER-READ")
@pytest.mark.needs("profile")
def test_payout_read_carries_the_webhook_payout_fields(api, contract: Contract, unique: Unique) -> None:
    """The created payout and its read through GET /orders/{payoutId} carry every `WebhookPayout` field."""
    created = create(api, contract, unique)
    states = machine("payout", contract)["states"]
    sent = created.request.json
    for ex, what in ((created, "the create answer"), (read(api, created.json["payoutId"]), "GET /orders/{payoutId}")):
        problems = _problems(ex.json, sent, states)
        expect(not problems, f"{what}: " + "; ".join(problems), ex)


@pytest.mark.req("ORDER-BY-REFERENCE")
@pytest.mark.needs("profile")
def test_orders_by_reference_finds_the_payout(api, contract: Contract, unique: Unique) -> None:
    """GET /orders?reference= returns the payout made with that caller reference, not another one."""
    created = create(api, contract, unique)
    create(api, contract, unique)
    reference = created.request.json["reference"]
    ex = api.op("listOrders", params={"reference": reference})
    expect_status(ex, 200, "looking a payout up by its caller reference")
    found = items(contract, "listOrders", ex)
    expect([p.get("payoutId") for p in found] == [created.json["payoutId"]],
           f"GET /orders?reference={reference} found {[p.get('payoutId') for p in found]}, "
           f"expected exactly [{created.json['payoutId']!r}]", ex)
