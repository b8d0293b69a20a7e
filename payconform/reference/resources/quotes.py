"""Priced payouts: a quote to a payable destination, a quote sent as a payout, an indicative estimate.

`quote` refuses before pricing when the account is not payable (`payouts.vet`); `send` executes a quote as
a real payout through `payouts.place` (the rules of POST /payouts plus the quote's: QUOTE_UNVERIFIABLE, an
expired quote as BAD_REQUEST, RATE_DRIFT_EXCEEDED against `expectDestination`, and USE_POST_PAYOUTS where
POST /payouts would hold the payout for approvers). The pricing rules themselves are `ref.pricing`.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

from ..core.errors import ApiError
from ..core.money import fmt
from ..core.operation import Call, Reply
from .payouts import PayoutOrder, PayoutServer, place, vet
from .pricing import disclosure, terms_price


def quote(call: Call[PayoutServer], account_id: str, source_currency: str, destination_currency: str,
          source: Decimal | None, destination: Decimal | None) -> dict[str, Any]:
    """A sendable quote for exactly one of `source` and `destination` (exact output) to a payable account."""
    amount = source if source is not None else destination
    assert amount is not None
    method = vet(call, PayoutOrder(account_id, amount, source_currency, destination_currency, reference=""))
    price = call.ref.pricing.price(source_currency, destination_currency, source_amount=source,
                                   destination_amount=destination)
    call.ref.pricing.check_network(price.source_amount, source_currency, method["details"])
    return call.ref.pricing.issue(call.org_id, call.mode, account_id, price, call.now)


def send(call: Call[PayoutServer], quote_id: str | None, reference: str, expect_destination: Decimal | None,
         reason: str | None) -> Reply:
    """Execute a quote: 201 with the payout and its receipt disclosure; every refusal sends nothing."""
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


def indicative(call: Call[PayoutServer], source_currency: str, destination_currency: str, source: Decimal | None,
               destination: Decimal | None) -> dict[str, Any]:
    """An estimate without a recipient, where the corridor's `capabilities.indicativePricing` allows it."""
    if not call.ref.pricing.capable(destination_currency, "indicativePricing"):
        raise ApiError("INDICATIVE_PRICING_UNAVAILABLE",
                       f"The {destination_currency} routing prices only against a recipient; use pricePayout.")
    price = call.ref.pricing.price(source_currency, destination_currency, source_amount=source,
                                   destination_amount=destination)
    return {**price.to_json(), "indicative": True, "disclosure": disclosure("prepayment", price, estimated=True)}
