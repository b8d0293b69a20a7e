"""Conventions, Money: "Decimal strings beside a currency field" - never JSON numbers.

Checked on the amounts the spec names: a product's `unitAmount`, the balance figures (and the balance
transaction rows' `balanceAfter` and `net`), and a payout's `sourceAmount`, `destinationAmount`, `rate`
and `fee.amount`. Checkout payment reads (base units with `decimals`) are the spec's exception and are
not checked here.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_status

from .._support.answers import leaves, member
from .._support.balance import fund_sandbox
from .._support.money import is_decimal_string, is_json_number
from .._support.payouts import payable_destination, payout_body
from .._support.products import post_product, product_body
from .._support.types import Unique

PAYOUT_AMOUNTS = ("sourceAmount", "destinationAmount", "rate")


def expect_decimal_strings(ex: Exchange, obj: Any, names: tuple[str, ...], where: str, *,
                           required: bool = False) -> None:
    """Each of ``names`` in ``obj`` is a decimal string; with ``required``, each must be there."""
    for name in names:
        present = isinstance(obj, dict) and name in obj
        expect(present or not required, f"{where} has no `{name}`", ex)
        if present:
            expect(is_decimal_string(obj[name]), f"{where}.{name} is {obj[name]!r}, not a decimal string", ex)


@pytest.mark.req("CONV-MONEY-DECIMAL-STRING")
def test_product_unit_amount_is_a_decimal_string(api: Api, contract: Contract, unique: Unique) -> None:
    """`unitAmount` in the create answer and in a read of the product."""
    created = post_product(api, product_body(contract, unique))
    read = expect_status(api.op("getCheckoutProduct", productId=member(created, "id")), 200, "read the product")
    for ex in (created, read):
        expect_decimal_strings(ex, ex.json, ("unitAmount",), "product", required=True)


@pytest.mark.req("CONV-MONEY-DECIMAL-STRING")
def test_balance_figures_are_decimal_strings(api: Api, contract: Contract) -> None:
    """After a top-up, `balances` and `provider` hold decimal strings and no JSON number.

    Their inner structure is not shown, so every value inside them is checked rather than named fields.
    Balance transaction rows, if any are listed yet, carry `balanceAfter` and `net` as decimal strings.
    """
    fund_sandbox(api, contract)
    balance = expect_status(api.op("getBalance"), 200)
    figures = [leaf for source in ("balances", "provider") for leaf in leaves(member(balance, source), source)]
    numbers = [path for path, value in figures if is_json_number(value)]
    expect(not numbers, f"JSON numbers in the balance: {', '.join(numbers)}", balance)
    expect(any(is_decimal_string(value) for path, value in figures if path.startswith("balances")),
           "after a top-up `balances` holds no decimal string", balance)
    rows = expect_status(api.op("listBalanceTransactions", params={"limit": 5}), 200)
    for index, row in enumerate(member(rows, contract.operation("listBalanceTransactions")["page"]["items"])):
        expect_decimal_strings(rows, row, ("balanceAfter", "net"), f"row[{index}]")


@pytest.mark.req("CONV-MONEY-DECIMAL-STRING")
def test_payout_amounts_are_decimal_strings(api: Api, contract: Contract, unique: Unique) -> None:
    """A payout's amounts and `rate` (and `fee.amount`) in the create answer and in GET /orders/{payoutId}.

    The read is the spec's authoritative one and carries the payout's fields, so there they must be present.
    """
    body = payout_body(contract, payable_destination(api, contract, unique), unique("po"))
    created = api.op("createPayout", json=body)
    if created.status == 202:
        pytest.skip("the target held this payout for approval (202); there is no payout to read")
    expect_status(created, {201, 200}, "create a payout (profile)")
    read = expect_status(api.op("getOrder", payoutId=member(created, "payoutId")), 200, "GET /orders/{payoutId}")
    for ex in (created, read):
        expect_decimal_strings(ex, ex.json, PAYOUT_AMOUNTS, "payout", required=ex is read)
        expect_decimal_strings(ex, ex.json.get("fee"), ("amount",), "payout.fee")
