"""Pricing and the payout operations whose paths the spec does not show (profile paths and bodies).

`pricePayout` quotes a payout to a recipient (a `RegEDisclosure` of kind `prepayment`); `sendPayout`
executes a quote as a real payout through `payouts.place` (the same rules as POST /payouts, plus the
quote's: QUOTE_UNVERIFIABLE, an expired quote as BAD_REQUEST, RATE_DRIFT_EXCEEDED against
`expectDestination`, and USE_POST_PAYOUTS where POST /payouts would hold the payout for approvers);
`getIndicativeQuote` prices without a recipient where the routing allows it; `listCorridors` names each
corridor's `capabilities`; `getFundingAccounts` lists the `FundingAccount`s (`settlesTo`);
`getPayoutFunding` gives the funding instructions of a self-funded payout. Pricing rules: `pricing.py`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from decimal import Decimal

from ..corridors import RATES
from ..errors import ApiError, validation_error
from ..money import fmt
from ..operation import Call, Operation, Reply
from ..pricing import disclosure, terms_price
from ..validate import Checker, check
from .payouts import (
    DESTINATION_CURRENCY,
    PAYMENT_REASONS,
    SOURCE_CURRENCIES,
    PayoutOrder,
    awaiting_funds,
    find,
    place,
    vet,
)

QUERY_FIELDS = ("sourceCurrency", "destinationCurrency", "country", "sourceAmount", "destinationAmount")


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
    """A sendable quote to a payable destination; refused before pricing when the account is not payable."""
    c = check(call.json())
    account_id = c.string("destinationAccountId", required=True, max_len=100)
    source_currency = c.string("sourceCurrency", required=True, choices=SOURCE_CURRENCIES)
    destination_currency = c.string("destinationCurrency", required=True, pattern=DESTINATION_CURRENCY, max_len=4)
    source, destination = _amounts(c)
    assert account_id and source_currency and destination_currency
    amount = source if source is not None else destination
    assert amount is not None
    method = vet(call, PayoutOrder(account_id, amount, source_currency, destination_currency, reference=""))
    price = call.ref.pricing.price(source_currency, destination_currency, source_amount=source,
                                   destination_amount=destination)
    call.ref.pricing.check_network(price.source_amount, source_currency, method["details"])
    return Reply(200, call.ref.pricing.issue(call.org_id, call.mode, account_id, price, call.now))


def send_payout(call: Call) -> Reply:
    """Execute a quote: 201 with the payout and its receipt disclosure; every refusal sends nothing."""
    c = check(call.json())
    quote_id = c.string("quoteId", required=True, max_len=4096)
    reference = c.string("reference", required=True)
    expect_destination = c.amount("expectDestination")
    reason = c.string("paymentReason", nullable=True, choices=PAYMENT_REASONS)
    c.done()
    assert reference
    pricing = call.ref.pricing
    terms = pricing.verify(quote_id, call.org_id, call.mode)
    if pricing.expired(terms, call.now):
        raise ApiError("BAD_REQUEST", f"The quote expired at {terms['e']}; price the payout again.")
    price = terms_price(terms)
    if expect_destination is not None and price.destination_amount < expect_destination:
        raise ApiError("RATE_DRIFT_EXCEEDED",
                       f"The quote delivers {fmt(price.destination_amount)} {price.destination_currency}, less "
                       f"than expectDestination {fmt(expect_destination)}; price the payout again.")
    if call.ref.approvals.applies(call, price.source_amount):
        raise ApiError("USE_POST_PAYOUTS")
    order = PayoutOrder(terms["d"], price.source_amount, price.source_currency, price.destination_currency,
                        reference, reason, fee=price.fee)
    reply = place(call, order, approved=True)
    return dataclasses.replace(reply, body={**reply.body, "disclosure": disclosure("receipt", price, estimated=False)})


def indicative_quote(call: Call) -> Reply:
    """An estimate without a recipient, where the corridor's `capabilities.indicativePricing` allows it."""
    c = check({name: value for name in QUERY_FIELDS if (value := call.query.get(name)) is not None})
    source_currency = c.string("sourceCurrency", choices=SOURCE_CURRENCIES) or SOURCE_CURRENCIES[0]
    destination_currency = c.string("destinationCurrency", required=True, choices=tuple(RATES))
    c.string("country", max_len=2)
    source, destination = _amounts(c)
    assert destination_currency
    if not call.ref.pricing.capable(destination_currency, "indicativePricing"):
        raise ApiError("INDICATIVE_PRICING_UNAVAILABLE",
                       f"The {destination_currency} routing prices only against a recipient; use pricePayout.")
    price = call.ref.pricing.price(source_currency, destination_currency, source_amount=source,
                                   destination_amount=destination)
    return Reply(200, {**price.to_json(), "indicative": True,
                       "disclosure": disclosure("prepayment", price, estimated=True)})


def list_corridors(call: Call) -> Reply:
    return Reply(200, {"data": call.ref.pricing.corridors()})


def funding_accounts(call: Call) -> Reply:
    """Where money to pay from is held: the provider-held balance (sandbox top-ups) and the own wallet."""
    return Reply(200, {"data": [
        {"id": "fa_provider_usd", "settlesTo": "provider_balance", "currency": "USD"},
        {"id": "fa_wallet_evm", "settlesTo": "wallet", "currencies": ["USDC", "USDT"]},
    ]})


def payout_funding(call: Call) -> Reply:
    """The funding instructions of a self-funded payout: send `amount` of `token` to `depositAddress`."""
    row = find(call, call.params["payoutId"])
    if not row["requires_funding"]:
        raise ApiError("FUNDING_NOT_APPLICABLE")
    method = call.ref.store.one("SELECT details FROM payment_methods WHERE destination_account_id = ?",
                                (row["destination_account_id"],))
    assert method is not None
    return Reply(200, {
        "payoutId": row["id"],
        "awaitingFunds": awaiting_funds(row),
        "token": row["destination_currency"],
        "chain": json.loads(method["details"]).get("chain"),
        "amount": row["source_amount"],
        "depositAddress": "0x" + hashlib.sha256(row["id"].encode()).hexdigest()[:40],
    })


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
