"""Conventions, Money: "Decimal strings beside a currency field" - never JSON numbers.

Checked on the amounts the spec names: a product's `unitAmount`, the balance figures (and the balance
transaction rows' `balanceAfter` and `net`), and a payout's `sourceAmount`, `destinationAmount`, `rate`
and `fee.amount`. Checkout payment reads (base units with `decimals`) are the spec's exception and are
not checked here. "Beside a currency field" is checked where the spec names the object's currency field:
a product's `unitAmount` (`currency`), a payout's `sourceAmount` and `destinationAmount` (`sourceCurrency`,
`destinationCurrency`) and `fee.amount` (`fee.currency`). Accepted reading: any member of the same object
whose name holds "currency" and whose value is a non-empty string stands beside the amount. `rate` is a
ratio, not an amount; the balance's inner structure and the row's currency field are not shown.
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
PAYOUT_MONEY = ("sourceAmount", "destinationAmount")  # amounts, each beside its currency field (`rate` is a ratio)


def expect_decimal_strings(ex: Exchange, obj: Any, names: tuple[str, ...], where: str, *,
                           required: bool = False, beside_currency: bool = False) -> None:
    """Each of ``names`` in ``obj`` is a decimal string; with ``required``, each must be there; with
    ``beside_currency``, a currency field (a member naming "currency", a non-empty string) sits beside it."""
    for name in names:
        present = isinstance(obj, dict) and name in obj
        expect(present or not required, f"{where} has no `{name}`", ex)
        if present:
            expect(is_decimal_string(obj[name]), f"{where}.{name} is {obj[name]!r}, not a decimal string", ex)
        if present and beside_currency:
            currencies = {k: v for k, v in obj.items() if "currency" in k.lower() and isinstance(v, str) and v}
            expect(bool(currencies), f"{where}.{name} is {obj[name]!r} with no currency field beside it ({where} "
                   f"holds {sorted(obj)}): money is a decimal string beside a currency field", ex)


@pytest.mark.req("CONV-MONEY-DECIMAL-STRING")
def test_product_unit_amount_is_a_decimal_string(api: Api, contract: Contract, unique: Unique) -> None:
    """`unitAmount` in the create answer and in a read of the product, beside the product's `currency`."""
    created = post_product(api, product_body(contract, unique))
    read = expect_status(api.op("getCheckoutProduct", productId=member(created, "id")), 200, "read the product")
    for ex in (created, read):
        expect_decimal_strings(ex, ex.json, ("unitAmount",), "product", required=True, beside_currency=True)


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
    """A payout's amounts and `rate` (and `fee.amount`) in the create answer and in GET /orders/{payoutId},
    the amounts each beside a currency field (`sourceCurrency`, `destinationCurrency`, `fee.currency`).

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
        expect_decimal_strings(ex, ex.json, PAYOUT_MONEY, "payout", beside_currency=True)
        expect_decimal_strings(ex, ex.json.get("fee"), ("amount",), "payout.fee", beside_currency=True)
