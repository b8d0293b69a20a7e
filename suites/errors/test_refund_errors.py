"""Errors > Refund errors, every row, and Endpoints > Checkout, POST /payments/{paymentId}/refund.

"Every refusal left the money where it was, except `REFUND_OUTCOME_UNKNOWN`": after each refusal the
payment's `refundedBase` and `status` are read back unchanged. The amount field's name and unit (base
units, like `amountBase`) are the profile's; a dispute, a refund still in flight and a processor that does
not answer (`timeout` on `refundProcessor`) are made by the operator in a fresh organization.
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_error, expect_status, new_idempotency_key

from .._support.drive import Subject
from .._support.events import feed
from .._support.overlap import on_wire, overlapped
from .._support.payments import example_total, expect_payment_unchanged, force, forced, payment, read_payment, refund
from .._support.profile import success

pytestmark = pytest.mark.needs("refunds_key")
REFUND_SCOPES = ["read", "write", "refunds"]
REFUND_PROCESSOR = "refundProcessor"  # operator fault pseudo-operation: the processor a refund is sent to


def _refunded(ex: Exchange, contract: Contract, what: str) -> None:
    expect_status(ex, success(contract, "refundCheckoutPayment"), what)


def _refunds_org(fresh_org) -> tuple[Any, Api]:
    """A fresh organization and a client whose key holds `refunds` beside `write`."""
    org = fresh_org()
    return org, org.api.with_credential(org.issue_key(mode="test", scopes=REFUND_SCOPES))


@pytest.mark.req("REFUND-SCOPE", "AUTH-REFUNDS-MISSING", "ERR-INSUFFICIENT-SCOPE")
def test_refund_needs_the_refunds_scope(api: Api, api_as, contract: Contract, unique) -> None:
    """A read+write key without `refunds`: 403 INSUFFICIENT_SCOPE and nothing refunded; the refunds key
    refunds the same payment."""
    link_id, paid = payment(api, contract, unique)
    before = read_payment(api, contract, link_id, paid["id"])
    ex = refund(api, contract, paid["id"], "100")
    expect_error(ex, 403, "INSUFFICIENT_SCOPE", "a refund with a key lacking `refunds`")
    expect_payment_unchanged(api, contract, link_id, before, ex)
    _refunded(refund(api_as("refunds_key"), contract, paid["id"], "100"), contract, "the same refund with `refunds`")


@pytest.mark.req("PAY-EVENTS", "PAY-LIST-REFUNDS", "PAY-PAID-NOT-FINAL")
def test_partial_refund_keeps_paid(api: Api, api_as, contract: Contract, unique) -> None:
    """A refund of part of a paid payment: status stays `paid`, `refundedBase` is the piece, and the refund
    is listed under `refunds` on the payment; the event feed announces it as `checkout_payment.partially_refunded`
    (the payment's id anywhere in `data`, whose shape is not shown; the feed is read until that event is found)."""
    link_id, paid = payment(api, contract, unique, "150.00")
    _refunded(refund(api_as("refunds_key"), contract, paid["id"], "5000"), contract, "refunding 50.00 of 150.00")
    after = read_payment(api, contract, link_id, paid["id"])
    expect(after.get("status") == "paid", f"after a partial refund the status is {after.get('status')!r}")
    expect(after.get("refundedBase") == "5000", f"refundedBase is {after.get('refundedBase')!r}, not \"5000\"")
    pieces = [r.get("amountBase", r.get("amount")) for r in after.get("refunds") or [] if isinstance(r, dict)]
    expect(len(pieces) == 1, f"the payment lists refunds {after.get('refunds')!r}, not the one refund")
    subject = Subject("payment", paid["id"])
    partial = feed(api, type="checkout_payment.partially_refunded", found=lambda rows: any(map(subject.matches, rows)))
    expect(any(map(subject.matches, partial)),
           "PAY-EVENTS: \"Events: `paid`, `failed`, `refunded` (full), ... `partially_refunded` (status stays "
           "`paid`)\", but the feed holds no checkout_payment.partially_refunded about the partial refund of 50.00 "
           "of 150.00")


@pytest.mark.req("REFUND-OMIT-AMOUNT", "EVT-CHECKOUT-REFUNDED")
def test_omitted_amount_refunds_the_rest(api: Api, api_as, contract: Contract, unique) -> None:
    """After a partial refund, a refund without an amount brings `refundedBase` to `amountBase`; the feed
    announces the payment refunded in full through the API (`checkout_payment.refunded`: "Refunded in full,
    from the API or dashboard")."""
    link_id, paid = payment(api, contract, unique, "150.00")
    refunds = api_as("refunds_key")
    _refunded(refund(refunds, contract, paid["id"], "5000"), contract, "refunding 50.00")
    _refunded(refund(refunds, contract, paid["id"]), contract, "refunding the rest (no amount)")
    after = read_payment(api, contract, link_id, paid["id"])
    expect(after.get("refundedBase") == after.get("amountBase") == "15000",
           f"refundedBase {after.get('refundedBase')!r} of amountBase {after.get('amountBase')!r}")
    expect(after.get("status") != "paid", f"refunded in full but still {after.get('status')!r}")
    subject = Subject("payment", paid["id"])
    full = feed(api, type="checkout_payment.refunded", found=lambda rows: any(map(subject.matches, rows)))
    expect(any(map(subject.matches, full)),
           "EVT-CHECKOUT-REFUNDED: \"`checkout_payment.refunded` | Refunded in full, from the API or dashboard\", "
           "but the feed holds no checkout_payment.refunded about the payment refunded in full through the API")


@pytest.mark.smoke
@pytest.mark.req("ERR-REFUND-EXCEEDS-REMAINING", "REFUND-MAX-REMAINING", "REFUND-REFUSAL-NO-MONEY",
                 "REFUND-ERROR-TYPES")
def test_more_than_remaining(api: Api, api_as, contract: Contract, unique) -> None:
    """One unit more than `amountBase - refundedBase`: 400 REFUND_EXCEEDS_REMAINING, money unchanged;
    exactly the remainder is refunded."""
    link_id, paid = payment(api, contract, unique, "150.00")
    refunds = api_as("refunds_key")
    _refunded(refund(refunds, contract, paid["id"], "5000"), contract, "refunding 50.00")
    before = read_payment(api, contract, link_id, paid["id"])
    ex = refund(refunds, contract, paid["id"], "10001")
    expect_error(ex, 400, "REFUND_EXCEEDS_REMAINING", "refunding one unit more than remains")
    expect_payment_unchanged(api, contract, link_id, before, ex)
    _refunded(refund(refunds, contract, paid["id"], "10000"), contract, "refunding exactly the remainder")


@pytest.mark.smoke(ids=["refunded in full"])
@pytest.mark.req("ERR-REFUND-NOT-ALLOWED", "REFUND-REFUSAL-NO-MONEY", "REFUND-ERROR-TYPES")
@pytest.mark.parametrize("case", ["pending", "refunded in full", "charged back", "failed"])
def test_refund_not_allowed(case: str, api: Api, api_as, contract: Contract, unique) -> None:
    """A pending (`.02`), refunded-in-full, charged-back or failed payment: 400 REFUND_NOT_ALLOWED, money
    unchanged."""
    total = example_total(contract, "settles_later" if case in ("pending", "failed") else "paid")
    action = {"refunded in full": "refund", "charged back": "chargeback", "failed": "fail"}.get(case)
    refunds = api_as("refunds_key")
    with api.run.urgent():  # a `.02` payment is pending for twenty seconds of real time at most
        if action:
            link_id, paid, moved = forced(api, contract, unique, total, action)
            expect(moved.status == 200 and moved.json.get("moved") is True, f"setup: forcing `{action}`", moved)
        else:
            link_id, paid = payment(api, contract, unique, total)
        before = read_payment(api, contract, link_id, paid["id"])
        if case == "pending" and before.get("status") != "pending":
            pytest.skip(f"the `.02` payment read {before.get('status')!r} before the refund could be tried (the "
                        "key's window held the requests past the twenty seconds it stays pending): not judged")
        ex = refund(refunds, contract, paid["id"], "100")
    expect_error(ex, 400, "REFUND_NOT_ALLOWED", f"refunding a {case} payment")
    expect_payment_unchanged(api, contract, link_id, before, ex)


@pytest.mark.smoke
@pytest.mark.needs("operator")
@pytest.mark.req("ERR-REFUND-DISPUTED", "REFUND-REFUSAL-NO-MONEY", "REFUND-ERROR-TYPES")
def test_refund_of_disputed_payment(fresh_org, operator, contract: Contract, unique) -> None:
    """A paid payment the card holder disputes (opened by the operator): 400 REFUND_DISPUTED, money
    unchanged."""
    org, refunds = _refunds_org(fresh_org)
    link_id, paid = payment(org.api, contract, unique)
    operator.open_dispute(org.org_id, paid["id"])
    before = read_payment(org.api, contract, link_id, paid["id"])
    ex = refund(refunds, contract, paid["id"], "100")
    expect_error(ex, 400, "REFUND_DISPUTED", "refunding a disputed payment")
    expect_payment_unchanged(org.api, contract, link_id, before, ex)


@pytest.mark.smoke
@pytest.mark.needs("operator")
@pytest.mark.req("ERR-REFUND-IN-PROGRESS", "REFUND-REFUSAL-NO-MONEY", "REFUND-ERROR-TYPES")
def test_one_refund_at_a_time(fresh_org, operator, contract: Contract, unique) -> None:
    """While a refund is still running (held by an operator delay), a second refund of the payment answers
    409 REFUND_IN_PROGRESS; only the one that ran is recorded. The two are sent half a second apart, but a busy
    key may put the second on the wire first: whichever ran, the other is the one refused."""
    org, refunds = _refunds_org(fresh_org)
    link_id, paid = payment(org.api, contract, unique, "150.00")
    operator.inject_fault(org.org_id, "refundCheckoutPayment", "delay", seconds=2)
    amounts = ("1000", "2000")
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        held = pool.submit(on_wire, lambda: refund(refunds, contract, paid["id"], amounts[0]))
        time.sleep(0.5)  # the first refund is now held by the operator's delay
        second = on_wire(lambda: refund(refunds.with_credential(refunds.credential), contract, paid["id"],
                                        amounts[1], timeout=5))
        first = held.result(timeout=15)
    ran = [(sent.ex, amount) for sent, amount in zip((first, second), amounts) if sent.ex.status in (200, 201)]
    if len(ran) == 2 and not overlapped(first, second):
        pytest.skip("the two refunds did not overlap on the wire (the key's pacing held one back until the other "
                    "ended): one refund at a time could not be put to the test")
    expect(len(ran) == 1, f"{len(ran)} of two overlapping refunds of one payment ran: 'One refund at a time'",
           ran[-1][0] if ran else first.ex)
    done, amount = ran[0]
    _refunded(done, contract, "the refund that ran")
    expect_error(second.ex if done is first.ex else first.ex, 409, "REFUND_IN_PROGRESS",
                 "a second refund while the first is running")
    after = read_payment(org.api, contract, link_id, paid["id"])
    expect(after.get("refundedBase") == amount, f"refundedBase is {after.get('refundedBase')!r}; only the refund"
           f" that ran ({amount}) may be recorded", done)


@pytest.mark.smoke
@pytest.mark.needs("operator")
@pytest.mark.req("ERR-REFUND-OUTCOME-UNKNOWN", "REFUND-ERROR-TYPES")
def test_refund_outcome_unknown(fresh_org, operator, contract: Contract, unique) -> None:
    """The card processor does not answer the refund (the operator breaks it): its outcome is unknown, 502
    REFUND_OUTCOME_UNKNOWN. "May have gone through; do not resend": the key is kept (only a 4xx releases one),
    so the same request resent under the same key is no success and refunds nothing more. A target that
    answers 200 sends the refund to the processor after answering: the test skips there."""
    org, refunds = _refunds_org(fresh_org)
    link_id, paid = payment(org.api, contract, unique)
    operator.inject_fault(org.org_id, REFUND_PROCESSOR, "timeout")
    key = new_idempotency_key()
    first = refund(refunds, contract, paid["id"], "100", idempotency_key=key)
    if first.status == 200:
        pytest.skip("the refund answered 200 while the card processor did not answer: the target sends it to the "
                    "processor after answering, so its outcome was never unknown at the request")
    expect_error(first, 502, "REFUND_OUTCOME_UNKNOWN")
    before = read_payment(org.api, contract, link_id, paid["id"])
    again = refund(refunds, contract, paid["id"], "100", idempotency_key=key)
    expect(again.status >= 400, f"the refund resent under the key of the REFUND_OUTCOME_UNKNOWN answered"
           f" {again.status}: the key was released and the refund ran again", again)
    expect_payment_unchanged(org.api, contract, link_id, before, again)


@pytest.mark.needs("operator")
@pytest.mark.req("CHK-VERIFICATION-REQUIRED")
def test_refund_is_not_gated_by_payments_verification(fresh_org, operator, contract: Contract, unique) -> None:
    """Endpoints rule 2 gates every checkout call except refund: once the organization can no longer accept
    payments, a simulate answers 403 FORBIDDEN while a refund of an earlier payment still goes through."""
    org, refunds = _refunds_org(fresh_org)
    _, paid = payment(org.api, contract, unique)
    operator.update_org(org.org_id, payments_enabled=False)
    expect_error(force(org.api, paid["id"], "fail"), 403, "FORBIDDEN", "a checkout call other than refund")
    _refunded(refund(refunds, contract, paid["id"], "100"), contract, "a refund while payments are not enabled")
