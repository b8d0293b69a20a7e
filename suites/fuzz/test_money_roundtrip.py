"""Property: a product's ``unitAmount`` comes back as exactly the decimal value that was sent.

Conventions, Money: "Decimal strings beside a currency field"; Checkout, POST /products: "`unitAmount`
(decimal string) ... 201: the product". Amounts are drawn in whole cents (the product's currency, USD, has
two decimal places; the spec says nothing about more), from one cent to fifteen integer digits, written with
two decimals, with trailing zeros trimmed, or as a whole number. A refusal (400 with the spec's error body)
is tolerated: the spec gives no price limits. An accepted amount must read back equal - in the create answer
and in a read of the product - which is what a float or a rounding step on the way breaks.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from payconform.suite import Api, Contract, expect, expect_error_body, expect_status, fuzz_session

SESSION = fuzz_session()
MAX_CENTS = 10**17 - 1  # 999,999,999,999,999.99


def _written(cents: int, style: str) -> str:
    whole, frac = divmod(cents, 100)
    if style == "whole" and frac == 0:
        return str(whole)
    text = f"{whole}.{frac:02d}"
    return text.rstrip("0").rstrip(".") if style == "trimmed" else text


amounts = st.builds(_written, st.integers(min_value=1, max_value=MAX_CENTS),
                    st.sampled_from(["two-places", "trimmed", "whole"]))


@pytest.mark.req("PROD-CREATE", "PROD-FIELDS", "CONV-MONEY-DECIMAL-STRING")
@SESSION.settings.hypothesis_settings()
@given(amount=amounts)
@example(amount="90071992547409.93")  # above 2**53 cents: a binary float cannot hold it (first: a share of the
@example(amount="999999999999999.99")  # phase's budget cut short still sends the amounts a float changes)
@example(amount="0.01")
@example(amount="10.5")
@example(amount="1234.56")
def test_unit_amount_round_trips(api: Api, contract: Contract, unique: Callable[[str], str], amount: str) -> None:
    """Create a product priced ``amount``; the answer and a read of it carry the same decimal value."""
    SESSION.spend(need=2)  # each example is two requests of the fuzz phase's budget
    body = {**contract.operation("createCheckoutProduct")["body"], "name": unique("fz"), "unitAmount": amount}
    created = api.op("createCheckoutProduct", json=body)
    if created.status == 400:
        expect_error_body(created, f"a refused unitAmount {amount!r}")
        return
    expect_status(created, 201, f"create a product priced {amount!r}")
    read = expect_status(api.op("getCheckoutProduct", productId=created.json.get("id")), 200, "read the product")
    for ex in (created, read):
        got = ex.json.get("unitAmount")
        expect(isinstance(got, str) and _same(got, amount),
               f"unitAmount {amount!r} was sent; the answer carries {got!r}", ex)


def _same(got: str, sent: str) -> bool:
    try:
        return Decimal(got) == Decimal(sent)
    except ArithmeticError:
        return False
