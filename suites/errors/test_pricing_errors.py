"""Errors > Sending and funding errors: the rows about quotes, and the expired quote of BAD_REQUEST.

- "`RATE_DRIFT_EXCEEDED` | 400 | No | After a fix | Quote moved past `expectDestination`; re-quote."
- "`QUOTE_UNVERIFIABLE` | 400 | No | After a fix | Quote could not be compared; nothing sent."
- "`QUOTE_NOT_POSITIVE` | 400 | No | After a fix | Nothing would arrive after fees."
- "`EXACT_OUTPUT_UNSUPPORTED` | 400 | ... | Routing cannot lock the receiving amount (`capabilities.exactOutput`)."
- "`INDICATIVE_PRICING_UNAVAILABLE` | 400 | ... | Routing prices only against a recipient
  (`capabilities.indicativePricing: false`)."
- "`USE_POST_PAYOUTS` | 403 | No | After a fix | Approval threshold or velocity cap applies; send via `POST /payouts`."
  Both: a quote at the threshold, and one sent over a velocity cap the operator sets.
- BAD_REQUEST: "Non-field 400 (expired quote, ...)".

Paths, bodies, the fee, the quote lifetime and the capabilities' place are the profile's (`sandbox.pricing`);
the corridor a capability test uses is the one `listCorridors` says lacks the capability. "No" money moved:
after each refusal the caller reference finds no payout.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status, fill

from .._support.accounts import method_body
from .._support.answers import member
from .._support.approvals import threshold
from .._support.payouts import create_payout, payouts_with_reference, scenario_destination
from .._support.pricing import corridor_where, price_body, pricing, quote, send
from .._support.profile import corridors, success
from .._support.types import Unique


def expect_nothing_sent(api: Api, contract: Contract, reference: str, refusal: str = "") -> None:
    found = payouts_with_reference(api, contract, reference)
    expect(not found, f"the refused send{f' ({refusal})' if refusal else ''} made payouts "
                      f"{[p.get('payoutId') for p in found]}")


def corridor_destination(api: Api, contract: Contract, unique: Unique, corridor: str) -> str:
    return scenario_destination(api, contract, unique, method=method_body(contract, corridor))


@pytest.mark.smoke
@pytest.mark.req("ERR-RATE-DRIFT-EXCEEDED")
@pytest.mark.needs("profile")
def test_a_quote_short_of_expect_destination_is_refused(api, contract: Contract, unique: Unique) -> None:
    """Sending a quote that delivers less than `expectDestination`: 400 RATE_DRIFT_EXCEEDED, nothing sent;
    the same quote expecting what it delivers is sent."""
    quoted = quote(api, contract, scenario_destination(api, contract, unique))
    priced, arrives = quoted.json, Decimal(member(quoted, "destinationAmount"))
    reference = unique("ref")
    expect_error(send(api, contract, priced, reference, expectDestination=str(arrives + Decimal("0.01"))), 400,
                 "RATE_DRIFT_EXCEEDED", f"a quote delivering {arrives} sent expecting more")
    expect_nothing_sent(api, contract, reference)
    expect_status(send(api, contract, priced, reference), success(contract, "sendPayout"),
                  "the same quote, expecting what it delivers")


@pytest.mark.smoke
@pytest.mark.req("ERR-QUOTE-UNVERIFIABLE")
@pytest.mark.needs("profile")
def test_a_tampered_quote_is_unverifiable(api, contract: Contract, unique: Unique) -> None:
    """A quote id altered in its last letter or digit: refused, nothing sent. The spec does not say what a quote id
    the server never issued answers: 400 QUOTE_UNVERIFIABLE ("Quote could not be compared"), 400
    VALIDATION_ERROR or BAD_REQUEST, or 404 NOT_FOUND ("No such payout, recipient or other id") are each
    accepted, and the failure names the one seen."""
    priced = quote(api, contract, scenario_destination(api, contract, unique)).json
    field = pricing(contract)["quote_id"]
    tampered = tamper_last(priced[field])
    reference = unique("ref")
    ex = send(api, contract, {**priced, field: tampered}, reference)
    types = UNISSUED_QUOTE.get(ex.status) or sorted({t for ts in UNISSUED_QUOTE.values() for t in ts})
    err = expect_error(ex, ex.status if ex.status in UNISSUED_QUOTE else set(UNISSUED_QUOTE), types,
                       "a quote id altered after pricing")
    expect_nothing_sent(api, contract, reference, f"refused with {ex.status} {err.get('type')}")


# what a quote id the server never issued may answer (status -> types); the spec pins none of them
UNISSUED_QUOTE = {400: ("BAD_REQUEST", "QUOTE_UNVERIFIABLE", "VALIDATION_ERROR"), 404: ("NOT_FOUND",)}
BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def tamper_last(quote_id: str) -> str:
    """`quote_id` with its last letter or digit changed in the top bit of its base64url value (A<->g, a<->6, ...):
    a change every base64 decoder sees (the low bits of a last character may be padding), which is neither a
    change of case nor of padding, so no reading of an opaque id can take it for the same id."""
    index = max((i for i, c in enumerate(quote_id) if c.isascii() and c.isalnum()), default=None)
    if index is None:
        return quote_id + "A"
    swapped = BASE64URL[BASE64URL.index(quote_id[index]) ^ 32]
    return quote_id[:index] + swapped + quote_id[index + 1:]


@pytest.mark.smoke
@pytest.mark.req("ERR-QUOTE-NOT-POSITIVE")
@pytest.mark.needs("profile")
def test_nothing_would_arrive_after_fees(api, contract: Contract, unique: Unique) -> None:
    """Pricing an amount the fee eats (profile `sandbox.pricing.not_positive`): 400 QUOTE_NOT_POSITIVE."""
    case = pricing(contract)["not_positive"]
    destination = scenario_destination(api, contract, unique)
    ex = api.op("pricePayout", json=price_body(contract, destination, sourceAmount=case["sourceAmount"]))
    expect_error(ex, 400, "QUOTE_NOT_POSITIVE", f"pricing {case['sourceAmount']}, which the fee eats")


@pytest.mark.smoke
@pytest.mark.req("ERR-EXACT-OUTPUT-UNSUPPORTED")
@pytest.mark.needs("profile")
def test_exact_output_follows_the_capability(api, contract: Contract, unique: Unique) -> None:
    """Pricing a receiving amount: 400 EXACT_OUTPUT_UNSUPPORTED on a corridor with `exactOutput: false`,
    a quote delivering exactly that amount on one with `exactOutput: true`."""
    field = pricing(contract)["exact_output_field"]
    for capable in (False, True):
        corridor = corridor_where(api, contract, "exactOutput", capable)
        expect(corridor is not None, f"no profile corridor lists capabilities.exactOutput {capable}")
        row = corridors(contract)[corridor]
        body = {"sourceAmount": None, field: "10.00", "destinationCurrency": row["currency"]}
        destination = corridor_destination(api, contract, unique, corridor)
        if capable:
            priced = quote(api, contract, destination, **body)
            expect(Decimal(str(priced.json.get(field))) == Decimal("10.00"),
                   f"the exact-output quote delivers {priced.json.get(field)!r}, not 10.00", priced)
        else:
            expect_error(api.op("pricePayout", json=price_body(contract, destination, **body)), 400,
                         "EXACT_OUTPUT_UNSUPPORTED", f"an exact receiving amount in {row['currency']}")


@pytest.mark.smoke
@pytest.mark.req("ERR-INDICATIVE-PRICING-UNAVAILABLE")
@pytest.mark.needs("profile")
def test_indicative_pricing_follows_the_capability(api, contract: Contract, unique: Unique) -> None:
    """An indicative quote: 400 INDICATIVE_PRICING_UNAVAILABLE on a corridor with `indicativePricing: false`,
    200 on one with `indicativePricing: true`. The refusing corridor still prices against a recipient ("prices
    only against a recipient"): a quote, or, on a crypto corridor, 400 CRYPTO_PAYOUTS_DISABLED for this key
    without `crypto_payouts` (the spec does not say whether pricing already needs that scope)."""
    for capable in (False, True):
        corridor = corridor_where(api, contract, "indicativePricing", capable)
        expect(corridor is not None, f"no profile corridor lists capabilities.indicativePricing {capable}")
        row = corridors(contract)[corridor]
        params = fill(contract.operation("getIndicativeQuote")["query"],
                      {"currency": row["currency"], "country": row["country"]})
        ex = api.op("getIndicativeQuote", params=params)
        if capable:
            expect_status(ex, 200, f"an indicative quote to {row['currency']}")
        else:
            expect_error(ex, 400, "INDICATIVE_PRICING_UNAVAILABLE", f"an indicative quote to {row['currency']}")
            expect_recipient_priced(api, contract, unique, corridor)


def expect_recipient_priced(api: Api, contract: Contract, unique: Unique, corridor: str) -> None:
    """Pricing against a recipient of a corridor without indicative pricing answers a quote."""
    row = corridors(contract)[corridor]
    destination = corridor_destination(api, contract, unique, corridor)
    ex = api.op("pricePayout", json=price_body(contract, destination, destinationCurrency=row["currency"]))
    what = (f"pricing against a {row['currency']} recipient, where the routing \"prices only against a "
            "recipient\" (`capabilities.indicativePricing: false`)")
    if row.get("kind") == "crypto" and ex.status == 400:
        expect_error(ex, 400, "CRYPTO_PAYOUTS_DISABLED", f"{what} (accepted: a quote, or 400 CRYPTO_PAYOUTS_DISABLED "
                                                         "for this key without `crypto_payouts`)")
        return
    expect_status(ex, success(contract, "pricePayout"), what)


@pytest.mark.smoke
@pytest.mark.req("ERR-BAD-REQUEST")
@pytest.mark.needs("operator", "clock", "profile")
def test_an_expired_quote_is_a_bad_request(fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """A quote sent after its lifetime (profile `quote_lifetime_seconds`, organization clock): 400
    BAD_REQUEST with a `detail`, nothing sent."""
    org = fresh_org()
    priced = quote(org.api, contract, scenario_destination(org.api, contract, unique)).json
    clock.advance(org.org_id, pricing(contract)["quote_lifetime_seconds"] + 1)
    reference = unique("ref")
    err = expect_error(send(org.api, contract, priced, reference), 400, "BAD_REQUEST", "sending an expired quote")
    expect(isinstance(err.get("detail"), str) and err["detail"], "the BAD_REQUEST `detail` does not name the cause")
    expect_nothing_sent(org.api, contract, reference)


@pytest.mark.smoke
@pytest.mark.req("ERR-USE-POST-PAYOUTS")
@pytest.mark.needs("profile")
def test_a_send_an_approval_applies_to_is_refused(api: Api, contract: Contract, unique: Unique) -> None:
    """Sending a quote at the approval threshold (as the policy shows it, else the profile's `sandbox.approval`):
    403 USE_POST_PAYOUTS, nothing sent. The target's own organization, with a key: its threshold is read."""
    destination = scenario_destination(api, contract, unique)
    priced = quote(api, contract, destination, sourceAmount=threshold(api, contract)).json
    reference = unique("ref")
    expect_error(send(api, contract, priced, reference), 403, "USE_POST_PAYOUTS",
                 "sending a quote an approval threshold applies to")
    expect_nothing_sent(api, contract, reference)


@pytest.mark.req("ERR-USE-POST-PAYOUTS")
@pytest.mark.needs("operator", "profile")
def test_a_send_over_the_velocity_cap_is_refused(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """With no threshold and a velocity cap of one payout an hour, a send after the first payout: 403
    USE_POST_PAYOUTS ("velocity cap applies"), nothing sent."""
    org = fresh_org()
    operator.set_approval_policy(org.org_id, threshold=None, velocity_cap={"count": 1, "window_seconds": 3600})
    create_payout(org.api, contract, unique)
    priced = quote(org.api, contract, scenario_destination(org.api, contract, unique)).json
    reference = unique("ref")
    expect_error(send(org.api, contract, priced, reference), 403, "USE_POST_PAYOUTS",
                 "sending a quote once a velocity cap of one payout an hour is reached")
    expect_nothing_sent(org.api, contract, reference, "over the velocity cap")
