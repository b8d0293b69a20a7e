"""Mutants of the States part for the Checkout link and payment transition tables and the sandbox
payment timeline.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...states.checkout import CHARGEBACK, ORDINARY
from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ..patching import Handler, around, body, refuse_for_good
from ..registry import mutant
from ..support.checkout import link_row, payment_row
from ..support.events import on_record

if TYPE_CHECKING:
    from ...reference import Reference


@mutant("pending-paid-at-once", reqs=["PAY-T-SIMULATE", "PAY-SIMULATE-OUTCOME-BY-AMOUNT", "SBX-PAYMENT-TIMING"],
        doc="A `.02` total is `paid` at once instead of `pending`.")
def pending_paid_at_once(ref: Reference) -> None:
    ref.checkout.initial_status = lambda scenario: "paid"  # type: ignore[method-assign]


@mutant("every-total-pending", reqs=["PAY-T-SIMULATE", "PAY-SIMULATE-OUTCOME-BY-AMOUNT"],
        doc="Every simulated payment starts `pending`, whatever the last two digits of the total.")
def every_total_pending(ref: Reference) -> None:
    ref.checkout.initial_status = lambda scenario: "pending"  # type: ignore[method-assign]


@mutant("ordinary-total-charged-back", reqs=["PAY-T-SIMULATE", "SBX-PAYMENT-TIMING"],
        doc="An ordinary total follows the `.04` scenario: paid, then charged back a minute later.")
def ordinary_total_charged_back(ref: Reference) -> None:
    scenario = ref.checkout.scenario
    ref.checkout.scenario = lambda amount_base: CHARGEBACK if scenario(amount_base) == ORDINARY else scenario(
        amount_base)  # type: ignore[method-assign]


@mutant("pending-never-settles", reqs=["PAY-T-SIMULATE", "SBX-PAYMENT-TIMING"],
        doc="A `.02` payment stays `pending` for an hour instead of settling within 20 seconds.")
def pending_never_settles(ref: Reference) -> None:
    ref.checkout.settle_seconds = 3600.0


@mutant("chargeback-never-comes", reqs=["PAY-T-SIMULATE", "SBX-PAYMENT-TIMING"],
        doc="A `.04` payment is never charged back.")
def chargeback_never_comes(ref: Reference) -> None:
    ref.checkout.chargeback_seconds = 10.0 ** 9


@mutant("chargeback-after-ten-seconds", reqs=["PAY-T-SIMULATE", "SBX-PAYMENT-TIMING"],
        doc="A `.04` payment is charged back after ten seconds instead of one minute.")
def chargeback_after_ten_seconds(ref: Reference) -> None:
    ref.checkout.chargeback_seconds = 10.0


@mutant("chargeback-comes-unannounced", reqs=["PAY-T-SIMULATE"],
        doc="A `.04` payment is charged back a minute later, but the timeline records no "
            "`checkout_payment.reversed` (a forced chargeback still does).")
def chargeback_comes_unannounced(ref: Reference) -> None:
    def unannounced(record: Callable[..., str], org_id: str, mode: str, type_: str, data: dict, now: Any) -> str:
        if type_ == "checkout_payment.reversed":
            step = ref.store.one("SELECT trigger FROM checkout_payment_transitions WHERE payment_id = ?"
                                 " ORDER BY id DESC LIMIT 1", (data.get("paymentId"),))
            if step is not None and step["trigger"] == "timeline":
                return ""
        return record(org_id, mode, type_, data, now)

    on_record(ref, unannounced)


@mutant("forced-chargeback-moves-twice", reqs=["PAY-FORCE-SAME-GUARD", "PAY-FORCE-MOVED"],
        doc="A chargeback is not status-guarded: a reversed payment is charged back (and announced) again.")
def forced_chargeback_moves_twice(ref: Reference) -> None:
    leaves, to, event = ref.checkout.forced["chargeback"]
    ref.checkout.forced["chargeback"] = ((*leaves, to), to, event)


@mutant("forced-chargeback-not-announced", reqs=["PAY-FORCE-SAME-GUARD"],
        doc="A forced chargeback moves the payment to reversed without recording `checkout_payment.reversed`; the "
            "timeline, finding it reversed, records none either.")
def forced_chargeback_not_announced(ref: Reference) -> None:
    forcing: list[str] = []

    @around(ref, "simulateCheckoutPaymentOutcome")
    def simulate_checkout_payment_outcome(original: Handler, call: Call) -> Reply:
        forcing.append(str(body(call).get("action")))
        try:
            return original(call)
        finally:
            forcing.pop()

    on_record(ref, lambda rec, o, m, t, d, n: "" if forcing == ["chargeback"] and t == "checkout_payment.reversed"
              else rec(o, m, t, d, n))


@mutant("forced-fail-refused", reqs=["PAY-T-FORCE-FAIL", "PAY-FORCE"],
        doc="Forcing `fail` on an in-flight payment never moves it.")
def forced_fail_refused(ref: Reference) -> None:
    ref.checkout.forced["fail"] = ((), *ref.checkout.forced["fail"][1:])


@mutant("forced-chargeback-refused", reqs=["PAY-T-FORCE-CHARGEBACK", "PAY-FORCE", "PAY-FORCE-BY-REFERENCE"],
        doc="Forcing `chargeback` on a paid payment never moves it.")
def forced_chargeback_refused(ref: Reference) -> None:
    ref.checkout.forced["chargeback"] = ((), *ref.checkout.forced["chargeback"][1:])


@mutant("forced-refund-refunds-nothing", reqs=["PAY-T-FORCE-REFUND", "PAY-FORCE"],
        doc="A forced refund changes the status but leaves `refundedBase` at 0.")
def forced_refund_refunds_nothing(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPaymentOutcome")
    def simulate_checkout_payment_outcome(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if body(call).get("action") == "refund":
            ref.store.run("UPDATE checkout_payments SET refunded_base = 0 WHERE id = ?", (reply.resource_id,))
            ref.store.run("DELETE FROM checkout_refunds WHERE payment_id = ?", (reply.resource_id,))
        return reply


@mutant("refused-transition-is-409", reqs=["PAY-FORCE-MOVED"],
        doc="A forced outcome the status refuses answers 409 CONFLICT instead of 200 with `moved: false`.")
def refused_transition_is_409(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPaymentOutcome")
    def simulate_checkout_payment_outcome(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if reply.body.get("moved") is False:
            raise ApiError("CONFLICT", "The payment cannot make that transition.")
        return reply


@mutant("force-by-reference-unsupported", reqs=["PAY-FORCE-BY-REFERENCE"],
        doc="POST /payments/{paymentId}/simulate accepts only the payment id, not its reference (404).")
def force_by_reference_unsupported(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPaymentOutcome")
    def simulate_checkout_payment_outcome(original: Handler, call: Call) -> Reply:
        if payment_row(ref, call) is None:
            raise ApiError("NOT_FOUND", "No such payment in this organization.")
        return original(call)


@mutant("paused-page-still-200", reqs=["LINK-T-PAUSE"], doc="The public page of a paused link is still served (200).")
def paused_page_still_200(ref: Reference) -> None:
    page_status = ref.checkout.page_status
    ref.checkout.page_status = lambda status: 200 if status == "cancelled" else page_status(status)  # type: ignore


@mutant("sent-page-missing", reqs=["LINK-T-PUBLISH-DRAFT"], doc="The public page of a sent link answers 404.")
def sent_page_missing(ref: Reference) -> None:
    page_status = ref.checkout.page_status
    ref.checkout.page_status = lambda status: 404 if status == "sent" else page_status(status)  # type: ignore


@mutant("publish-leaves-draft", reqs=["LINK-PUBLISH", "LINK-T-PUBLISH-DRAFT"],
        doc="Publishing a draft answers 200 but the link stays a draft without a shareUrl.")
def publish_leaves_draft(ref: Reference) -> None:
    @around(ref, "publishCheckoutLink")
    def publish_checkout_link(original: Handler, call: Call) -> Reply:
        link = link_row(ref, call)
        if link is None or link["status"] != "draft":
            return original(call)
        return ref.operations["getCheckoutLink"].handler(call)


@mutant("expired-draft-publishes", reqs=["LINK-T-PUBLISH-EXPIRED", "LINK-PUBLISH-EXPIRED", "ERR-LINK-EXPIRED"],
        doc="A draft whose expiresAt passed is published instead of answering LINK_EXPIRED.")
def expired_draft_publishes(ref: Reference) -> None:
    @around(ref, "publishCheckoutLink")
    def publish_checkout_link(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE links SET expires_at = NULL WHERE id = ? AND status = 'draft'", (call.params["linkId"],))
        return original(call)


@mutant("expired-draft-stays-refused", reqs=["ERR-LINK-EXPIRED"],
        doc="A draft once refused LINK_EXPIRED is refused for good, even after its expiresAt is PATCHed to null.")
def expired_draft_stays_refused(ref: Reference) -> None:
    refuse_for_good(ref, "publishCheckoutLink", "linkId", {"LINK_EXPIRED"}, "LINK_EXPIRED")


@mutant("republish-sent-refused", reqs=["LINK-T-PUBLISH-SENT-NOOP"],
        doc="Publishing a sent link answers 400 instead of returning the link.")
def republish_sent_refused(ref: Reference) -> None:
    @around(ref, "publishCheckoutLink")
    def publish_checkout_link(original: Handler, call: Call) -> Reply:
        link = link_row(ref, call)
        if link is not None and link["status"] == "sent":
            raise ApiError("BAD_REQUEST", "The link is already published.")
        return original(call)


@mutant("terminal-link-republished", reqs=["LINK-T-PUBLISH-TERMINAL", "LINK-T-PAUSE"],
        doc="A cancelled or expired link can be published again (it is treated as a draft).")
def terminal_link_republished(ref: Reference) -> None:
    @around(ref, "publishCheckoutLink")
    def publish_checkout_link(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE links SET status = 'draft', expires_at = NULL WHERE id = ?"
                      " AND status IN ('cancelled', 'expired')", (call.params["linkId"],))
        return original(call)


@mutant("pause-cancels-expired", reqs=["LINK-T-PAUSE-EXPIRED"],
        doc="Pausing an expired link turns it `cancelled` instead of returning it as is.")
def pause_cancels_expired(ref: Reference) -> None:
    @around(ref, "pauseCheckoutLink")
    def pause_checkout_link(original: Handler, call: Call) -> Reply:
        original(call)
        ref.store.run("UPDATE links SET status = 'cancelled' WHERE id = ? AND status = 'expired'",
                      (call.params["linkId"],))
        return ref.operations["getCheckoutLink"].handler(call)


@mutant("pause-ignored", reqs=["LINK-T-PAUSE", "LINK-PAUSE"], doc="Pause answers 200 with the link unchanged.")
def pause_ignored(ref: Reference) -> None:
    @around(ref, "pauseCheckoutLink")
    def pause_checkout_link(original: Handler, call: Call) -> Reply:
        return ref.operations["getCheckoutLink"].handler(call)


@mutant("pause-drops-payments", reqs=["LINK-T-PAUSE"], doc="Pausing a link removes the payments recorded on it.")
def pause_drops_payments(ref: Reference) -> None:
    @around(ref, "pauseCheckoutLink")
    def pause_checkout_link(original: Handler, call: Call) -> Reply:
        ref.store.run("DELETE FROM checkout_payments WHERE link_id = ?", (call.params["linkId"],))
        return original(call)


@mutant("live-link-deletable", reqs=["LINK-T-DELETE-DRAFT", "LINK-DELETE"],
        doc="A link that was live (sent or paused) can be deleted.")
def live_link_deletable(ref: Reference) -> None:
    @around(ref, "deleteCheckoutLink")
    def delete_checkout_link(original: Handler, call: Call) -> Reply:
        link = link_row(ref, call)
        if link is not None and link["status"] != "draft":
            ref.store.run("UPDATE links SET status = 'draft' WHERE id = ?", (link["id"],))
        return original(call)


@mutant("deleted-draft-kept", reqs=["LINK-T-DELETE-DRAFT", "LINK-DELETE"],
        doc="DELETE of a draft answers 200 but the draft is still there.")
def deleted_draft_kept(ref: Reference) -> None:
    @around(ref, "deleteCheckoutLink")
    def delete_checkout_link(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE links SET deleted_at = NULL WHERE id = ?", (call.params["linkId"],))
        return reply


@mutant("partial-refund-announced-as-refunded", reqs=["PAY-EVENTS"],
        doc="A partial refund keeps the payment `paid` but is announced as `checkout_payment.refunded` instead of "
            "`checkout_payment.partially_refunded`.")
def partial_refund_announced_as_refunded(ref: Reference) -> None:
    partial, full = "checkout_payment.partially_refunded", "checkout_payment.refunded"
    on_record(ref, lambda rec, o, m, t, d, n: rec(o, m, full if t == partial else t, d, n))


@mutant("partial-refund-marks-refunded", reqs=["PAY-EVENTS", "PAY-PAID-NOT-FINAL"],
        doc="A partial refund moves the payment's status to `refunded` instead of keeping `paid`.")
def partial_refund_marks_refunded(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def refund_checkout_payment(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE checkout_payments SET status = 'refunded' WHERE id = ?", (reply.resource_id,))
        return reply
