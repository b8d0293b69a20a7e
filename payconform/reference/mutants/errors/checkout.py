"""Mutants of the Errors part for the Checkout error tables.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.errors import ApiError, error_body
from ...core.operation import Call, Reply
from ...core.responses import Outgoing
from ..patching import Handler, around, body
from ..registry import mutant
from ..rewrites import rewrite_refusals
from ..support.checkout import link_row, payment_row

if TYPE_CHECKING:
    from ...reference import Reference


def _remaining(ref: Reference, call: Call) -> int | None:
    row = payment_row(ref, call)
    return None if row is None else row["amount_base"] - row["refunded_base"]


def _asked(call: Call) -> int | None:
    raw = (call.json() if call.raw_body.strip() else {}).get("amount")
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


@mutant("published-link-editable", reqs=["ERR-BAD-REQUEST"], doc="PATCH of a sent link is accepted (200).")
def published_link_editable(ref: Reference) -> None:
    @around(ref, "updateCheckoutLink")
    def update_checkout_link(original: Handler, call: Call) -> Reply:
        link = link_row(ref, call)
        if link is None or link["status"] == "draft":
            return original(call)
        return ref.operations["getCheckoutLink"].handler(call)


@mutant("refund-beyond-remaining-clamped", reqs=["ERR-REFUND-EXCEEDS-REMAINING", "REFUND-MAX-REMAINING"],
        doc="A refund above `amountBase - refundedBase` refunds the remainder instead of answering 400.")
def refund_beyond_remaining_clamped(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def refund_checkout_payment(original: Handler, call: Call) -> Reply:
        remaining, asked = _remaining(ref, call), _asked(call)
        if remaining is not None and asked is not None and asked > remaining:
            body(call)["amount"] = str(remaining)
        return original(call)


@mutant("refund-exact-remainder-refused", reqs=["REFUND-MAX-REMAINING"],
        doc="A refund of exactly `amountBase - refundedBase` answers REFUND_EXCEEDS_REMAINING.")
def refund_exact_remainder_refused(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def refund_checkout_payment(original: Handler, call: Call) -> Reply:
        remaining, asked = _remaining(ref, call), _asked(call)
        if remaining and asked == remaining and payment_row(ref, call)["refunded_base"]:
            raise ApiError("REFUND_EXCEEDS_REMAINING", "The amount exceeds what remains refundable.")
        return original(call)


@mutant("pending-payment-refundable", reqs=["ERR-REFUND-NOT-ALLOWED"],
        doc="A pending payment can be refunded.")
def pending_payment_refundable(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def refund_checkout_payment(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE checkout_payments SET status = 'paid', scenario = 'paid' WHERE id = ?"
                      " AND status = 'pending'", (call.params["paymentId"],))
        return original(call)


@mutant("refunded-payment-refusal-is-exceeds", reqs=["ERR-REFUND-NOT-ALLOWED"],
        doc="A refund of a payment refunded in full answers REFUND_EXCEEDS_REMAINING instead of REFUND_NOT_ALLOWED.")
def refunded_payment_refusal_is_exceeds(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def refund_checkout_payment(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE checkout_payments SET status = 'paid' WHERE id = ? AND status = 'refunded'",
                      (call.params["paymentId"],))
        return original(call)


@mutant("refund-refusal-moves-money", reqs=["REFUND-REFUSAL-NO-MONEY"],
        doc="A refused refund answers its error but refunds the payment in full anyway.")
def refund_refusal_moves_money(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def refund_checkout_payment(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if not err.type.startswith("REFUND_"):
                raise
            ref.store.run("UPDATE checkout_payments SET refunded_base = amount_base, status = 'refunded'"
                          " WHERE id = ?", (call.params["paymentId"],))
            return Reply(err.status, error_body(err, call.request_id))


@mutant("dispute-ignored", reqs=["ERR-REFUND-DISPUTED"], doc="A disputed payment can be refunded.")
def dispute_ignored(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def refund_checkout_payment(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE checkout_payments SET disputed = 0 WHERE id = ?", (call.params["paymentId"],))
        return original(call)


@mutant("refund-disputed-as-not-allowed", reqs=["REFUND-ERROR-TYPES", "ERR-REFUND-DISPUTED"],
        doc="A refund of a disputed payment answers REFUND_NOT_ALLOWED instead of REFUND_DISPUTED.")
def refund_disputed_as_not_allowed(ref: Reference) -> None:
    rewrite_refusals(ref, "refundCheckoutPayment", lambda call, err: ApiError("REFUND_NOT_ALLOWED", err.detail)
                     if err.type == "REFUND_DISPUTED" else None)


@mutant("concurrent-refunds-allowed", reqs=["ERR-REFUND-IN-PROGRESS"],
        doc="A refund while another is still running runs too instead of answering REFUND_IN_PROGRESS.")
def concurrent_refunds_allowed(ref: Reference) -> None:
    ref.checkout.refund_in_flight = lambda call: False  # type: ignore[method-assign]


@mutant("refund-outcome-unknown-as-internal", reqs=["ERR-REFUND-OUTCOME-UNKNOWN", "REFUND-ERROR-TYPES"],
        doc="A refund whose outcome is unknown answers 500 INTERNAL instead of 502 REFUND_OUTCOME_UNKNOWN.")
def refund_outcome_unknown_as_internal(ref: Reference) -> None:
    def generic(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == "REFUND_OUTCOME_UNKNOWN":
            out.status, out.body["type"], out.body["status"] = 500, "INTERNAL", 500

    ref.response_filters.append(generic)


@mutant("refund-outcome-unknown-releases-key", reqs=["ERR-REFUND-OUTCOME-UNKNOWN"],
        doc="REFUND_OUTCOME_UNKNOWN releases the idempotency key: the same request resent refunds again.")
def refund_outcome_unknown_releases_key(ref: Reference) -> None:
    ref.idempotency.releases = lambda err: err.type != "PAYOUT_OUTCOME_UNKNOWN"  # type: ignore[method-assign]


@mutant("fuzz-negative-amount-accepted", reqs=["ERR-BAD-REQUEST"],
        doc="A negative amount (product `unitAmount`, sandbox funding `amount`, payout link `sourceAmount`) is "
            "accepted, its absolute value used, instead of 400 BAD_REQUEST.")
def fuzz_negative_amount_accepted(ref: Reference) -> None:
    for op_id, field in (("createCheckoutProduct", "unitAmount"), ("updateCheckoutProduct", "unitAmount"),
                         ("fundSandbox", "amount"), ("createPayoutLink", "sourceAmount")):
        @around(ref, op_id)
        def handler(original: Handler, call: Call, field: str = field) -> Reply:
            amount = body(call).get(field)
            if isinstance(amount, str) and amount.startswith("-"):
                body(call)[field] = amount[1:]
            return original(call)


@mutant("quote-never-expires", reqs=["ERR-BAD-REQUEST"],
        doc="A quote sent after its expiresAt is still executed instead of 400 BAD_REQUEST.")
def quote_never_expires(ref: Reference) -> None:
    ref.pricing.expired = lambda terms, now: False  # type: ignore[method-assign]
