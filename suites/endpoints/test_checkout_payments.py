"""Endpoints > Checkout, the payment rows: POST /links/{linkId}/payments/simulate, POST
/payments/{paymentId}/simulate, GET /links/{linkId}/payments, GET /sandbox/scenarios; Resources >
Checkout payment; Conventions > Money (checkout payment reads in base units with `decimals`).

Totals that pick a sandbox scenario come from the profile (`sandbox.checkout_payment.example_totals`).
"""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from payconform.suite import Api, Contract, created_together, expect, expect_error, expect_status, in_order

from .._support.answers import scalars
from .._support.checkout import draft, link_in, pause, sent_link
from .._support.money import base_amount
from .._support.payments import (
    crowded_link,
    example_total,
    force,
    list_payments,
    page_items,
    payment,
    read_payment,
    simulate,
)
from .._support.schemas import expect_component

APART = 1.0  # seconds between the payments whose order is checked


@pytest.mark.req("PAY-FIELDS", "CONV-MONEY-CHECKOUT-BASE-UNITS")
def test_payment_reads_use_base_units(api: Api, contract: Contract, unique) -> None:
    """A payment on a 150.00 link, as the OpenAPI `Payment` types it (base-unit strings, integer `decimals`,
    string `status` and `reference`, a `refunds` list): `amountBase` "15000" with `decimals` 2 (150.00
    exactly), `refundedBase` "0", the `reference` and `clientReferenceId` sent - in the simulate answer and in
    the authoritative list alike."""
    link_id, paid = payment(api, contract, unique, "150.00")
    for source, got in (("simulate answer", paid), ("list", read_payment(api, contract, link_id, paid["id"]))):
        expect_component(None, got, "Payment", f"the payment in the {source}")
        expect(base_amount(got, "amountBase") == Decimal("150.00"),
               f"{source}: amountBase {got.get('amountBase')!r} with decimals {got.get('decimals')!r} is not 150.00")
        expect(base_amount(got, "refundedBase") == 0, f"{source}: refundedBase is {got.get('refundedBase')!r}")
        expect(got.get("reference") == paid.get("reference"), f"{source}: reference is {got.get('reference')!r}")
        expect(got.get("clientReferenceId") == got.get("reference"),
               f"{source}: clientReferenceId is {got.get('clientReferenceId')!r}, {got.get('reference')!r} was sent")
        expect("status" in got and "refunds" in got,
               f"{source}: status {got.get('status', 'absent')!r}, refunds {got.get('refunds', 'absent')!r}")


@pytest.mark.req("PAY-SIMULATE", "PAY-LIST-AUTHORITATIVE")
def test_reference_deduplicates(api: Api, contract: Contract, unique) -> None:
    """The same `reference` again under a new Idempotency-Key answers the same payment; the link lists one. The
    second body carries another `clientReferenceId`, so it is not an identical body under a different key
    (whether the duplicate-body guard of "money writes" covers a simulated payment is open: a 409
    DUPLICATE_REQUEST_DETECTED would be as legal as the dedup for an identical one)."""
    link = sent_link(api, contract, unique)
    reference = unique("pref")
    first = simulate(api, link["id"], reference)
    second = simulate(api, link["id"], reference, client_reference_id=unique("cref"))
    expect_status(first, 200, "simulating a payment")
    expect_status(second, 200, "simulating again with the same reference")
    expect(second.json.get("id") == first.json.get("id"),
           f"the same reference made a second payment ({first.json.get('id')!r}, {second.json.get('id')!r})", second)
    items = page_items(contract, list_payments(api, link["id"]))
    expect([p.get("id") for p in items] == [first.json.get("id")], f"the link lists {items!r}, not one payment")
    expect(items[0].get("status") == first.json.get("status"),
           f"the list shows status {items[0].get('status')!r}, simulate answered {first.json.get('status')!r}")


@pytest.mark.req("PAY-SIMULATE-IDEM")
def test_simulate_needs_idempotency_key(api: Api, contract: Contract, unique) -> None:
    """Without an Idempotency-Key: 400 IDEMPOTENCY_KEY_REQUIRED, and no payment is recorded."""
    link = sent_link(api, contract, unique)
    expect_error(simulate(api, link["id"], unique("pref"), idempotency_key=None), 400, "IDEMPOTENCY_KEY_REQUIRED")
    expect(page_items(contract, list_payments(api, link["id"])) == [], "the refused simulate recorded a payment")


@pytest.mark.req("PAY-SIMULATE-OUTCOME-BY-AMOUNT")
@pytest.mark.parametrize(("scenario", "status"), [("paid", "paid"), ("settles_later", "pending"),
                                                  ("charged_back", "paid")])
def test_total_picks_the_outcome(scenario: str, status: str, api: Api, contract: Contract, unique) -> None:
    """The last two digits of the total in minor units: ordinary `paid`, `.02` `pending`, `.04` `paid`."""
    _, paid = payment(api, contract, unique, example_total(contract, scenario))
    expect(paid.get("status") == status, f"a payment on {example_total(contract, scenario)} answered status"
           f" {paid.get('status')!r}, not `{status}`")


@pytest.mark.req("PAY-SIMULATE-CANNOT-TAKE", "ERR-BAD-REQUEST")
@pytest.mark.parametrize("state", ["draft", "cancelled"])
def test_link_that_cannot_take_a_payment(state: str, api: Api, contract: Contract, unique) -> None:
    """A draft or a paused link: 400 BAD_REQUEST, nothing recorded."""
    link = draft(api, contract, unique) if state == "draft" else sent_link(api, contract, unique)
    if state == "cancelled":
        expect_status(pause(api, link["id"]), 200, "pausing the link")
    expect_error(simulate(api, link["id"], unique("pref")), 400, "BAD_REQUEST", f"a payment on a {state} link")
    expect(page_items(contract, list_payments(api, link["id"])) == [], f"the {state} link recorded a payment")


@pytest.mark.req("PAY-LIST")
def test_list_is_newest_first_and_paged(api: Api, contract: Contract, unique) -> None:
    """Three payments a second apart, `limit=2`: newest first, a `nextCursor` on the first page, none on the
    last, and the pages together are exactly the three. "Newest first" gives no tie rule, so payments with the
    same `createdAt` may be listed either way round."""
    link = sent_link(api, contract, unique)
    made = []
    for number in range(3):
        if number:
            time.sleep(APART)  # distinct instants at a one-second precision
        ex = simulate(api, link["id"], unique("pref"))
        expect_status(ex, 200, "simulating a payment")
        made.append(ex.json["id"])
    first = list_payments(api, link["id"], limit="2")
    cursor = first.json.get("nextCursor")
    expect(isinstance(cursor, str) and cursor, "the first of two pages has no `nextCursor`", first)
    last = list_payments(api, link["id"], limit="2", cursor=cursor)
    expect("nextCursor" not in last.json or last.json.get("nextCursor") is None,
           "the last page still carries a `nextCursor`", last)
    listed = page_items(contract, first) + page_items(contract, last)
    seen = _ids(listed)
    expect(sorted(seen) == sorted(made), f"pages list {seen!r}; the payments are {made!r}", last)
    newest_first = sorted(listed, key=lambda p: made.index(p["id"]), reverse=True)
    expect(in_order(listed, newest_first, created_together),
           f"pages list {seen!r}; newest first is {list(reversed(made))!r} (only payments with the same `createdAt` "
           "may be in either order)", last)


@pytest.mark.smoke
@pytest.mark.req("LIMIT-PAY-INVALID-DEFAULT")
def test_invalid_limit_is_never_refused(api: Api, contract: Contract, unique) -> None:
    """`limit` of `0`, `-5` or `abc` is never a 400: each answers the page a read without `limit` answered, on a
    link of a few payments (that the page is then 20 long is `test_limit_defaults_and_clamps`'s: 21 payments).
    The link is the run's payable link, which other tests' payments join meanwhile (a list that only grows):
    each page holds at least the payments the plain read listed, all of them unless it is a full page."""
    link, _ = payment(api, contract, unique)
    default = next(r["default"] for r in contract.limits["list_limits"]["routes"]
                   if r["operation"] == "listCheckoutPayments")
    plain = _ids(page_items(contract, list_payments(api, link)))
    for value in ("0", "-5", "abc"):
        ex = list_payments(api, link, limit=value)
        got = _ids(page_items(contract, ex))
        expect(len(got) >= len(plain) and (len(got) >= default or set(plain) <= set(got)),
               f"limit {value!r} listed {got}; without `limit` the page listed {plain} just before: zero, negative "
               "or non-numeric becomes the default of 20", ex)


@pytest.mark.fill
@pytest.mark.crowds(21)
@pytest.mark.req("LIMIT-PAY-DEFAULT", "LIMIT-PAY-INVALID-DEFAULT", "LIMIT-PAY-CLAMP-HIGH")
def test_limit_defaults_and_clamps(api: Api, contract: Contract, unique) -> None:
    """On a link of 21 payments or more (the worker's crowded link): no `limit`, `0`, `-5` and `abc` each give a
    page of 20 with a `nextCursor`; both ends of the range 1-100 are taken as sent (`1` gives one payment, `100`
    every payment up to 100, each with a `nextCursor` while more are left); `150` gives every payment up to 100
    (not refused, not clamped below 100: `test_limit_above_100_becomes_100` tells 100 from no clamp); never a
    400."""
    link, held = crowded_link(api, contract, unique, 21, "the default of 20")
    for params in ({}, {"limit": "0"}, {"limit": "-5"}, {"limit": "abc"}):
        ex = list_payments(api, link, **params)
        items = page_items(contract, ex)
        expect(len(items) == 20 and ex.json.get("nextCursor"),
               f"limit {params.get('limit', 'absent')!r} gave {len(items)} payments; it must become 20", ex)
    for value, size in (("1", 1), ("100", min(held, 100))):
        ex = list_payments(api, link, limit=value)
        items = page_items(contract, ex)
        cursor = "with" if ex.json.get("nextCursor") else "without"
        expect(len(items) == size and (size == held or cursor == "with"),
               f"limit {value} gave {len(items)} of {held} payments ({cursor} a `nextCursor`), not {size}: `limit` "
               "is 1-100 (default 20), so both ends are taken as sent", ex)
    ex = list_payments(api, link, limit="150")
    expect(len(page_items(contract, ex)) == min(held, 100), f"limit 150 gave {len(page_items(contract, ex))} of "
           f"{held} payments; above 100 becomes 100", ex)


@pytest.mark.fill
@pytest.mark.crowds(101)
@pytest.mark.req("LIMIT-PAY-CLAMP-HIGH")
@pytest.mark.needs("many_requests")
def test_limit_above_100_becomes_100(api: Api, contract: Contract, unique) -> None:
    """With 101 payments (the worker's crowded link), `limit=150` gives 100 and a `nextCursor`: above 100 becomes
    100, told apart from no clamp (101) and from a lower one (50, 20). The 80 payments more than the default's
    test needs are a key's minute: on one key the check is the deep tier's."""
    link, held = crowded_link(api, contract, unique, 101, "the clamp of 100")
    ex = list_payments(api, link, limit="150")
    items = page_items(contract, ex)
    expect(len(items) == 100 and ex.json.get("nextCursor"), f"limit 150 over {held} payments gave {len(items)} "
           f"({'with' if ex.json.get('nextCursor') else 'without'} a `nextCursor`); above 100 becomes 100", ex)


def _ids(listed: list) -> list:
    return [p.get("id") if isinstance(p, dict) else p for p in listed]


@pytest.mark.req("PAY-FORCE", "PAY-FORCE-BY-REFERENCE")
def test_force_by_reference(api: Api, contract: Contract, unique) -> None:
    """`paymentId` may be the payment's `reference`: forcing `chargeback` through it moves that payment."""
    link_id, paid = payment(api, contract, unique)
    ex = force(api, paid["reference"], "chargeback")
    expect_status(ex, 200, "forcing a chargeback by reference")
    expect(ex.json.get("moved") is True, f"moved is {ex.json.get('moved')!r}", ex)
    after = read_payment(api, contract, link_id, paid["id"])
    expect(after.get("status") != "paid", f"the payment named by its reference still reads {after.get('status')!r}")


@pytest.mark.req("PAY-FORCE-AMBIGUOUS-REFERENCE")
def test_reference_on_two_links_is_409(api: Api, contract: Contract, unique) -> None:
    """One `reference` on payments of two links (the worker's shared links of two totals, each paid under that
    reference): forcing by that reference answers 409; by id it works."""
    reference = unique("pref")

    def same_reference(prefix: str) -> str:
        return reference if prefix == "pref" else unique(prefix)

    _, paid = payment(api, contract, same_reference)
    payment(api, contract, same_reference, example_total(contract, "settles_later"))
    ex = force(api, reference, "chargeback")
    expect_status(ex, 409, "forcing by a reference used on two links")
    expect(all(f.json.get("moved") is True for f in [force(api, paid["id"], "chargeback")]),
           "forcing by id after the 409 did not move the payment", ex)


@pytest.mark.req("PAY-FORCE-MOVED")
def test_refused_transition_is_not_an_error(api: Api, contract: Contract, unique) -> None:
    """Forcing `fail` on a charged-back payment: 200 with `moved: false`, status unchanged."""
    link_id, paid = payment(api, contract, unique)
    expect_status(force(api, paid["id"], "chargeback"), 200, "charging back a paid payment")
    before = read_payment(api, contract, link_id, paid["id"])
    ex = force(api, paid["id"], "fail")
    expect_status(ex, 200, "forcing `fail` on a terminal payment")
    expect(ex.json.get("moved") is False, f"moved is {ex.json.get('moved')!r} for a refused transition", ex)
    after = read_payment(api, contract, link_id, paid["id"])
    expect(after.get("status") == before.get("status"),
           f"the refused transition moved the payment from {before.get('status')!r} to {after.get('status')!r}", ex)


@pytest.mark.req("SBX-SCENARIOS")
def test_scenario_table(api: Api) -> None:
    """GET /sandbox/scenarios: 200 with a table naming the `02` and `04` endings."""
    ex = api.op("getSandboxScenarios")
    expect_status(ex, 200)
    text = " ".join(scalars(ex.json))
    for ending in ("02", "04"):
        expect(ending in text, f"the scenario table does not mention the `{ending}` ending", ex)


@pytest.mark.smoke
@pytest.mark.needs("live_key")
@pytest.mark.req("AUTH-SANDBOX-ONLY-LIVE-REFUSED", "ERR-LIVE-MODE-UNSUPPORTED")
def test_live_key_on_sandbox_route(api_as, unique) -> None:
    """Forcing a payment outcome, a route the spec marks "Sandbox only", with a live key: 400
    LIVE_MODE_UNSUPPORTED (on a payment id that does not exist: nothing can move). The scenario table is not
    marked sandbox-only ("Table of amount-driven sandbox outcomes"), so a live key may read it or be refused:
    anything but a 5xx is accepted there."""
    live = api_as("live_key")
    ex = force(live, unique("pay-none"), "fail", allow_live_refusal=True)
    expect_error(ex, 400, "LIVE_MODE_UNSUPPORTED", "forcing a payment outcome (a sandbox-only route) with a live key")
    table = live.op("getSandboxScenarios")
    expect(table.status < 500, f"the scenario table answered a live key {table.status} (accepted: any answer but a "
                               "5xx; the route is not marked sandbox-only)", table)


@pytest.mark.needs("live_key")
@pytest.mark.req("PAY-SIMULATE-LIVE-REFUSED", "ERR-LIVE-MODE-UNSUPPORTED")
def test_live_key_cannot_simulate(api: Api, api_as, contract: Contract, unique) -> None:
    """Simulating a payment with a live key: 400 LIVE_MODE_UNSUPPORTED, and the link records nothing. The one
    live-key checkout write the harness lets through (`allow_live_refusal`): a refusal the spec promises, on a
    sandbox link, which does not exist in live mode, so nothing can move."""
    link = sent_link(api, contract, unique)
    ex = simulate(api_as("live_key"), link["id"], unique("pref"), allow_live_refusal=True)
    expect_error(ex, 400, "LIVE_MODE_UNSUPPORTED", "simulating a payment with a live key")
    expect(page_items(contract, list_payments(api, link["id"])) == [], "the refused simulate recorded a payment")


@pytest.mark.needs("operator")
@pytest.mark.req("CHK-404-FOREIGN")
def test_link_of_another_organization_is_404(api: Api, fresh_org, contract: Contract, unique) -> None:
    """A link made in another organization: reading it, listing its payments or simulating on it with this
    organization's key and path answers 404 NOT_FOUND."""
    other = fresh_org()
    link = sent_link(other.api, contract, unique)
    expect_error(api.op("getCheckoutLink", linkId=link["id"]), 404, "NOT_FOUND", "reading a foreign link")
    expect_error(api.op("listCheckoutPayments", linkId=link["id"]), 404, "NOT_FOUND", "a foreign link's payments")
    expect_error(simulate(api, link["id"], unique("pref")), 404, "NOT_FOUND", "a payment on a foreign link")


@pytest.mark.needs("operator", "clock", "profile")
@pytest.mark.req("PAY-SIMULATE-CANNOT-TAKE")
def test_expired_link_cannot_take_a_payment(request: pytest.FixtureRequest, contract: Contract, unique) -> None:
    """A link past its `expiresAt` (profile: `sandbox.checkout_link_expiry`): 400 BAD_REQUEST or
    LINK_EXPIRED (the row names both), nothing recorded."""
    api, link = link_in("expired", request, contract, unique)
    expect_error(simulate(api, link["id"], unique("pref")), 400, {"BAD_REQUEST", "LINK_EXPIRED"},
                 "a payment on an expired link")
    expect(page_items(contract, list_payments(api, link["id"])) == [], "the expired link recorded a payment")
