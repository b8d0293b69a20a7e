"""Resources > Checkout payment (webhook bodies); Events > Event types (what is not announced).

The body shape of `checkout_payment.*` is not shown, so the checks read values, not field names, except
where the spec names them (and those at any depth of `data`): amounts appear as decimal strings (`150.00` for `amountBase` 15000 with
`decimals: 2`, compared by value: the scale is not fixed), never in base units; a partial refund carries `refund` (the piece) and `refunded` (the
running total). A dispute before it resolves is not announced.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from payconform.suite import Delivery, expect, expect_status

from .._support.answers import by_id, find_member
from .._support.deliveries import kind, parsed
from .._support.drive import Stage, Subject, partial_refund
from .._support.events import feed
from .._support.money import base_amount, decimal_values
from .._support.payments import example_total, payment, read_payment
from .._support.profile import items

NEEDS = ("api_key", "profile", "webhook_receiver")


def _paid(stage: Stage) -> dict[str, Any]:
    _, paid = payment(stage.api, stage.contract, stage.unique, example_total(stage.contract, "paid"))
    return paid


@pytest.mark.req("PAY-WEBHOOK-DECIMAL")
@pytest.mark.needs(*NEEDS)
def test_checkout_event_amounts_are_decimal_strings(stage: Stage) -> None:
    paid = _paid(stage)
    data = parsed(stage.delivery_of("checkout_payment.paid", Subject("payment", paid["id"]))).get("data")
    decimal = base_amount(paid, "amountBase")
    expect(decimal in decimal_values(data), f"`checkout_payment.paid` does not carry the amount {decimal} as a decimal "
                                            f"string (of any scale: '150', '150.00'): {data}")
    # a base-unit figure beside it is an addition (Versioning 2: 'Additions are backwards compatible')


@pytest.mark.req("PAY-WEBHOOK-PARTIAL-REFUND")
@pytest.mark.needs("refunds_key", "profile", "webhook_receiver")
def test_partial_refunds_carry_the_piece_and_the_running_total(stage: Stage) -> None:
    """Two refunds of a third each: both events carry the piece as `refund`; `refunded` is one third, then
    two thirds of the amount."""
    paid = _paid(stage)
    subject, places = Subject("payment", paid["id"]), paid["decimals"]
    pieces = [partial_refund(stage, paid) for _ in range(2)]
    def partial(ds: list[Delivery]) -> list[Delivery]:
        return [d for d in ds if subject.delivered(d) and kind(d) == "checkout_payment.partially_refunded"]

    def announced(ds: list[Delivery]) -> list[dict[str, Any]]:  # "at least once": a duplicate is the same `id`
        return list(by_id([parsed(d) for d in partial(ds)]).values())

    events = sorted(announced(stage.wait(lambda ds: len(announced(ds)) >= 2)), key=lambda b: int(b["sequence"]))
    expect(len(events) == 2, f"two partial refunds announced {len(events)} partially_refunded (duplicates counted once)")
    total = Decimal(0)
    for event, piece in zip(events, pieces):
        amount = Decimal(piece).scaleb(-places)
        total += amount
        data = event["data"]
        refund, refunded = find_member(data, "refund"), find_member(data, "refunded")
        expect(amount in decimal_values(refund),
               f"`refund` is {refund!r}, not the piece {amount} (a decimal string of any scale, at any depth)")
        expect(total in decimal_values(refunded),
               f"`refunded` is {refunded!r}, not the running total {total} (a decimal string of any scale, at any depth)")



@pytest.mark.req("EVT-CHECKOUT-PARTIALLY-REFUNDED", "VER-SANDBOX-EVENTS-ENUM")
@pytest.mark.needs("refunds_key", "profile", "webhook_receiver")
def test_partial_refund_keeps_the_payment_paid(stage: Stage) -> None:
    """A refund of a third: `checkout_payment.partially_refunded` says the payment is still `paid` (where its
    `data` carries a `status`, at any depth), and so does the payment read afterwards; the endpoint's delivery
    log names the delivery by that type ("`checkout_payment.partially_refunded` (also as a delivery
    `eventType` ...)")."""
    link_id, paid = payment(stage.api, stage.contract, stage.unique, example_total(stage.contract, "paid"))
    partial_refund(stage, paid)
    event = parsed(stage.delivery_of("checkout_payment.partially_refunded", Subject("payment", paid["id"])))
    said = find_member(event.get("data"), "status")
    expect(said in (None, "paid"), f"`checkout_payment.partially_refunded` carries `status: {said}`; the spec says "
                                   "\"`status` stays `paid`\"")
    status = read_payment(stage.api, stage.contract, link_id, paid["id"]).get("status")
    expect(status == "paid", f"after a partial refund the payment reads `status: {status}`; the spec says \"`status` "
                             "stays `paid`\"")
    ex = stage.api.op("listSandboxWebhookDeliveries", endpointId=stage.endpoint["id"])
    expect_status(ex, 200, "reading the endpoint's deliveries")
    types = {r.get("eventType") for r in items(stage.contract, "listSandboxWebhookDeliveries", ex)
             if isinstance(r, dict) and r.get("eventId") == event.get("id")}
    # the log holds the 50 newest attempts: on a busy organization the row may have left it, and is not judged
    expect(types <= {"checkout_payment.partially_refunded"},
           f"VER-SANDBOX-EVENTS-ENUM: the delivery log names the delivery of event {event.get('id')} by eventType "
           f"{sorted(map(str, types))}, not `checkout_payment.partially_refunded` (\"also as a delivery "
           "`eventType`\")", ex)


@pytest.mark.req("EVT-NOT-ANNOUNCED")
@pytest.mark.needs(*NEEDS, "operator")
def test_a_dispute_is_not_announced_before_it_resolves(stage: Stage) -> None:
    """The card holder disputes a paid payment (operator): a minute later the feed and the endpoint hold
    nothing about it beyond `checkout_payment.paid`. (A bank deposit held short of the total cannot be
    driven through the API or the operator: not checked.)"""
    paid = _paid(stage)
    subject = Subject("payment", paid["id"])
    first = parsed(stage.delivery_of("checkout_payment.paid", subject))
    stage.need_operator().open_dispute(stage.org_id, paid["id"])
    stage.advance(60)
    seen = stage.box.wait_for(lambda ds: False, 1.0, flush=stage.flush)
    announced = sorted({parsed(d).get("type") for d in seen if subject.delivered(d)} - {"checkout_payment.paid"})
    expect(not announced, f"an open dispute was announced: {announced}")
    later = [e.get("type") for e in feed(stage.api, since=first["sequence"]) if subject.matches(e)]
    expect(not later, f"the feed holds events about the disputed payment: {later}")
