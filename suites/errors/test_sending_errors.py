"""Errors on sending: `CRYPTO_PAYOUTS_DISABLED`, `INSUFFICIENT_BALANCE`, and `ORDERS_TEMPORARILY_UNAVAILABLE` on
the payout lookup by reference.

Crypto payouts: a key without `crypto_payouts` is refused; a key with it (the target's `crypto_key`) pays a
crypto recipient. Balance: a fresh organization has nothing to pay from.

"503 `ORDERS_TEMPORARILY_UNAVAILABLE` when a network read fails" / "A network read failed; partial lists are
never returned as complete." (retry: as is). A failing network read is an operator fault injected into the
next `GET /orders?reference=` of a fresh organization; the same read resent then finds the payout.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from payconform.contract import Contract
from payconform.expect import expect, expect_error, expect_status

from ..endpoints.factories import success
from ..errors.idempotency_support import payouts_with_reference
from ..states.payout_support import (
    Unique,
    create,
    crypto_payout_body,
    payout_body,
    scenario_destination,
)


@pytest.mark.req("ORDER-UNAVAILABLE", "ERR-ORDERS-TEMPORARILY-UNAVAILABLE")
@pytest.mark.needs("operator", "profile")
def test_a_failed_network_read_is_503_never_a_partial_list(fresh_org, operator, contract: Contract,
                                                           unique: Unique) -> None:
    """The lookup whose network read fails answers 503 ORDERS_TEMPORARILY_UNAVAILABLE; resent as is, it
    finds the payout."""
    org = fresh_org()
    payout = create(org.api, contract, unique).json
    operator.inject_fault(org.org_id, "listOrders", "error", type="ORDERS_TEMPORARILY_UNAVAILABLE", status=503)
    expect_error(org.api.op("listOrders", params={"reference": payout["reference"]}), 503,
                 "ORDERS_TEMPORARILY_UNAVAILABLE", "GET /orders?reference= while a network read fails")
    found = [p.get("payoutId") for p in payouts_with_reference(org.api, contract, payout["reference"])]
    expect(found == [payout["payoutId"]], f"resent as is, the lookup finds {found}, not [{payout['payoutId']!r}]")


@pytest.mark.req("AUTH-CRYPTO-DISABLED", "ERR-CRYPTO-PAYOUTS-DISABLED")
@pytest.mark.needs("profile")
def test_a_key_without_crypto_payouts_cannot_pay_crypto(api, contract: Contract, unique: Unique) -> None:
    """A crypto payout with a read+write key: 400 CRYPTO_PAYOUTS_DISABLED, and nothing sent."""
    body = crypto_payout_body(api, contract, unique)
    expect_error(api.op("createPayout", json=body), 400, "CRYPTO_PAYOUTS_DISABLED",
                 "a crypto payout with a key lacking crypto_payouts")
    found = payouts_with_reference(api, contract, body["reference"])
    expect(not found, f"the refused crypto payout was sent: {[p.get('payoutId') for p in found]}")


@pytest.mark.req("AUTH-CRYPTO-SCOPE")
@pytest.mark.needs("crypto_key", "profile")
def test_a_crypto_payouts_key_pays_a_crypto_recipient(api_as, contract: Contract, unique: Unique) -> None:
    """The same crypto payout with a key holding `crypto_payouts` is accepted."""
    api = api_as("crypto_key")
    ex = api.op("createPayout", json=crypto_payout_body(api, contract, unique))
    expect_status(ex, success(contract, "createPayout"), "a crypto payout with a crypto_payouts key")


@pytest.mark.req("ERR-INSUFFICIENT-BALANCE")
@pytest.mark.needs("operator", "profile")
def test_a_payout_above_the_balance_is_refused(fresh_org, contract: Contract, unique: Unique) -> None:
    """With the balance topped up once, a payout of more than the top-up: 400 INSUFFICIENT_BALANCE, nothing sent."""
    org = fresh_org()
    destination = scenario_destination(org.api, contract, unique)
    top_up = contract.profile["sandbox"]["top_up"]["amount"]
    body = payout_body(contract, destination, unique("ref"), sourceAmount=str(Decimal(top_up) + 1))
    expect_error(org.api.op("createPayout", json=body), 400, "INSUFFICIENT_BALANCE", "a payout above the balance")
    expect(not payouts_with_reference(org.api, contract, body["reference"]), "the refused payout was sent")
