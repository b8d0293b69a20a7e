"""Pricing and the payout operations whose paths the spec does not show (profile paths and bodies).

`pricePayout` quotes a payout to a recipient (a `RegEDisclosure` of kind `prepayment`); `sendPayout`
executes a quote as a real payout; `getIndicativeQuote` prices without a recipient where the routing allows
it (all three: `quotes.py`); `listCorridors` names each corridor's `capabilities`; `getFundingAccounts` lists
the `FundingAccount`s (`settlesTo`); `getPayoutFunding` gives the funding instructions of a self-funded payout
(`funding.py`). Pricing rules: `pricing.py`.
"""

from __future__ import annotations

from decimal import Decimal

from ..resources import funding, quotes
from ..resources.corridors import RATES
from ..resources.pricing import QUERY_FIELDS
from ..core.errors import ApiError, validation_error
from ..conventions.paging import page
from ..core.operation import Call, Operation, Reply
from ..resources.payouts import DESTINATION_CURRENCY, PAYMENT_REASONS, SOURCE_CURRENCIES
from ..core.validate import Checker, check

def _amounts(c: Checker) -> tuple[Decimal | None, Decimal | None]:
    """`sourceAmount` or `destinationAmount` (exact output): exactly one, positive."""
    source, destination = c.amount("sourceAmount"), c.amount("destinationAmount")
    c.done()
    if (source is None) == (destination is None):
        raise validation_error([{"field": "sourceAmount", "reason": "send exactly one of sourceAmount and "
                                                                    "destinationAmount"}])
    if (source if source is not None else destination) <= 0:  # type: ignore[operator]
        raise ApiError("BAD_REQUEST", "The amount must be positive.")
    return source, destination


def price_payout(call: Call) -> Reply:
    c = check(call.json())
    account_id = c.string("destinationAccountId", required=True, max_len=100)
    source_currency = c.string("sourceCurrency", required=True, choices=SOURCE_CURRENCIES)
    destination_currency = c.string("destinationCurrency", required=True, pattern=DESTINATION_CURRENCY, max_len=4)
    source, destination = _amounts(c)
    assert account_id and source_currency and destination_currency
    return Reply(200, quotes.quote(call, account_id, source_currency, destination_currency, source, destination))


def send_payout(call: Call) -> Reply:
    c = check(call.json())
    quote_id = c.string("quoteId", required=True, max_len=4096)
    reference = c.string("reference", required=True)
    expect_destination = c.amount("expectDestination")
    reason = c.string("paymentReason", nullable=True, choices=PAYMENT_REASONS)
    c.done()
    assert reference
    return quotes.send(call, quote_id, reference, expect_destination, reason)


def indicative_quote(call: Call) -> Reply:
    c = check({name: value for name in QUERY_FIELDS if (value := call.query.get(name)) is not None})
    source_currency = c.string("sourceCurrency", choices=SOURCE_CURRENCIES) or SOURCE_CURRENCIES[0]
    destination_currency = c.string("destinationCurrency", required=True, choices=tuple(RATES))
    c.string("country", max_len=2)
    source, destination = _amounts(c)
    assert destination_currency
    return Reply(200, quotes.indicative(call, source_currency, destination_currency, source, destination))


def list_corridors(call: Call) -> Reply:
    return Reply(200, page(call, call.ref.pricing.corridors()))


def funding_accounts(call: Call) -> Reply:
    return Reply(200, page(call, funding.funding_accounts()))


def payout_funding(call: Call) -> Reply:
    return Reply(200, funding.instructions(call, call.params["payoutId"]))


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("pricePayout", "POST", P + "/payouts/price", price_payout, takes_body=True),
    Operation("sendPayout", "POST", P + "/payouts/send", send_payout, idempotency="required", money_write=True,
              takes_body=True, audit="payout.create"),
    Operation("getIndicativeQuote", "GET", P + "/indicative-quote", indicative_quote),
    Operation("listCorridors", "GET", P + "/corridors", list_corridors),
    Operation("getFundingAccounts", "GET", P + "/funding-accounts", funding_accounts),
    Operation("getPayoutFunding", "GET", P + "/payouts/{payoutId}/funding", payout_funding),
]
