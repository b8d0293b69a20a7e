"""Mutants of Checkout links, payments and refunds: the Checkout link and payment transition tables, the
link, payment and refund rows of Endpoints > Checkout, the sandbox scenarios and the Refund errors table.

Each changes one rule of one server instance: a handler (`around`), an Operation field, a rule of
`ref.checkout` (the sandbox delays, the public page, the processor, the in-flight checks) or a response
filter.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from starlette.datastructures import QueryParams

from ..checkout import CHARGEBACK, ORDINARY
from ..errors import ApiError, error_body, field_error
from ..operation import Call, Reply
from ..responses import Outgoing
from . import mutant
from .recipients import Handler, around, body

if TYPE_CHECKING:
    from ..reference import Reference


def _set_op(ref: Reference, op_id: str, **fields: Any) -> None:
    ref.operations[op_id] = dataclasses.replace(ref.operations[op_id], **fields)


def _link(ref: Reference, call: Call) -> Any:
    return ref.store.one("SELECT * FROM links WHERE id = ?", (call.params.get("linkId"),))


def _payment(ref: Reference, call: Call) -> Any:
    return ref.store.one("SELECT * FROM checkout_payments WHERE id = ?", (call.params.get("paymentId"),))


def _with_query(call: Call, **values: str) -> None:
    params = dict(call.query_params)
    params.update(values)
    call.query_params = QueryParams(params)


# ---------------------------------------------------------------- sandbox payment timeline

@mutant("pending-paid-at-once", reqs=["PAY-T-SIMULATE", "PAY-SIMULATE-OUTCOME-BY-AMOUNT", "SBX-PAYMENT-TIMING"],
        doc="A `.02` total is `paid` at once instead of `pending`.")
def _(ref: Reference) -> None:
    ref.checkout.initial_status = lambda scenario: "paid"  # type: ignore[method-assign]


@mutant("every-total-pending", reqs=["PAY-T-SIMULATE", "PAY-SIMULATE-OUTCOME-BY-AMOUNT"],
        doc="Every simulated payment starts `pending`, whatever the last two digits of the total.")
def _(ref: Reference) -> None:
    ref.checkout.initial_status = lambda scenario: "pending"  # type: ignore[method-assign]


@mutant("ordinary-total-charged-back", reqs=["PAY-T-SIMULATE", "SBX-PAYMENT-TIMING"],
        doc="An ordinary total follows the `.04` scenario: paid, then charged back a minute later.")
def _(ref: Reference) -> None:
    scenario = ref.checkout.scenario
    ref.checkout.scenario = lambda amount_base: CHARGEBACK if scenario(amount_base) == ORDINARY else scenario(
        amount_base)  # type: ignore[method-assign]


@mutant("pending-never-settles", reqs=["PAY-T-SIMULATE", "SBX-PAYMENT-TIMING"],
        doc="A `.02` payment stays `pending` for an hour instead of settling within 20 seconds.")
def _(ref: Reference) -> None:
    ref.checkout.settle_seconds = 3600.0


@mutant("chargeback-never-comes", reqs=["PAY-T-SIMULATE", "SBX-PAYMENT-TIMING"],
        doc="A `.04` payment is never charged back.")
def _(ref: Reference) -> None:
    ref.checkout.chargeback_seconds = 10.0 ** 9


@mutant("chargeback-after-ten-seconds", reqs=["PAY-T-SIMULATE", "SBX-PAYMENT-TIMING"],
        doc="A `.04` payment is charged back after ten seconds instead of one minute.")
def _(ref: Reference) -> None:
    ref.checkout.chargeback_seconds = 10.0


@mutant("forced-chargeback-moves-twice", reqs=["PAY-FORCE-SAME-GUARD", "PAY-FORCE-MOVED"],
        doc="A chargeback is not status-guarded: a reversed payment is charged back (and announced) again.")
def _(ref: Reference) -> None:
    leaves, to, event = ref.checkout.forced["chargeback"]
    ref.checkout.forced["chargeback"] = ((*leaves, to), to, event)


# ---------------------------------------------------------------- forced outcomes

@mutant("forced-fail-refused", reqs=["PAY-T-FORCE-FAIL"], doc="Forcing `fail` on an in-flight payment never moves it.")
def _(ref: Reference) -> None:
    ref.checkout.forced["fail"] = ((), *ref.checkout.forced["fail"][1:])


@mutant("forced-chargeback-refused", reqs=["PAY-T-FORCE-CHARGEBACK", "PAY-FORCE", "PAY-FORCE-BY-REFERENCE"],
        doc="Forcing `chargeback` on a paid payment never moves it.")
def _(ref: Reference) -> None:
    ref.checkout.forced["chargeback"] = ((), *ref.checkout.forced["chargeback"][1:])


@mutant("forced-refund-refunds-nothing", reqs=["PAY-T-FORCE-REFUND"],
        doc="A forced refund changes the status but leaves `refundedBase` at 0.")
def _(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPaymentOutcome")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if body(call).get("action") == "refund":
            ref.store.run("UPDATE checkout_payments SET refunded_base = 0 WHERE id = ?", (reply.resource_id,))
            ref.store.run("DELETE FROM checkout_refunds WHERE payment_id = ?", (reply.resource_id,))
        return reply


@mutant("refused-transition-is-409", reqs=["PAY-FORCE-MOVED"],
        doc="A forced outcome the status refuses answers 409 CONFLICT instead of 200 with `moved: false`.")
def _(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPaymentOutcome")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if reply.body.get("moved") is False:
            raise ApiError("CONFLICT", "The payment cannot make that transition.")
        return reply


@mutant("force-by-reference-unsupported", reqs=["PAY-FORCE-BY-REFERENCE"],
        doc="POST /payments/{paymentId}/simulate accepts only the payment id, not its reference (404).")
def _(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPaymentOutcome")
    def _(original: Handler, call: Call) -> Reply:
        if _payment(ref, call) is None:
            raise ApiError("NOT_FOUND", "No such payment in this organization.")
        return original(call)


@mutant("ambiguous-reference-picks-one", reqs=["PAY-FORCE-AMBIGUOUS-REFERENCE"],
        doc="A reference on payments of two links silently names the newest instead of answering 409.")
def _(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPaymentOutcome")
    def _(original: Handler, call: Call) -> Reply:
        row = ref.store.one("SELECT id FROM checkout_payments WHERE reference = ? AND org_id = ? AND mode = ?"
                            " ORDER BY seq DESC", (call.params["paymentId"], call.org_id, call.mode))
        if _payment(ref, call) is None and row is not None:
            call.params["paymentId"] = row["id"]
        return original(call)


# ---------------------------------------------------------------- simulate and list

@mutant("simulate-reference-not-deduplicated", reqs=["PAY-SIMULATE"],
        doc="The same `reference` under a new Idempotency-Key records a second payment.")
def _(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        sent = body(call)
        if isinstance(sent.get("reference"), str):
            sent["reference"] += "-" + call.request_id
        return original(call)


@mutant("simulate-idempotency-key-optional", reqs=["PAY-SIMULATE-IDEM"],
        doc="POST /links/{linkId}/payments/simulate runs without an Idempotency-Key.")
def _(ref: Reference) -> None:
    _set_op(ref, "simulateCheckoutPayment", idempotency="optional")


@mutant("payment-decimals-wrong", reqs=["PAY-FIELDS", "CONV-MONEY-CHECKOUT-BASE-UNITS"],
        doc="Payment reads report `decimals: 3` beside base units counted in hundredths.")
def _(ref: Reference) -> None:
    def shift(value: Any) -> None:
        if isinstance(value, dict):
            if "amountBase" in value and value.get("decimals") == 2:
                value["decimals"] = 3
            for item in value.values():
                shift(item)
        elif isinstance(value, list):
            for item in value:
                shift(item)

    ref.response_filters.append(lambda out: shift(out.body))


@mutant("draft-link-takes-payments", reqs=["PAY-SIMULATE-CANNOT-TAKE"],
        doc="A draft or paused link takes a simulated payment as if it were sent.")
def _(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        link = _link(ref, call)
        if link is not None and link["status"] in ("draft", "cancelled"):
            ref.store.run("UPDATE links SET status = 'sent' WHERE id = ?", (link["id"],))
            try:
                return original(call)
            finally:
                ref.store.run("UPDATE links SET status = ? WHERE id = ?", (link["status"], link["id"]))
        return original(call)


@mutant("expired-link-takes-payments", reqs=["PAY-SIMULATE-CANNOT-TAKE"],
        doc="A link past its expiresAt takes a simulated payment (it is revived as sent without expiry).")
def _(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE links SET status = 'sent', expires_at = NULL WHERE id = ? AND status = 'expired'",
                      (call.params["linkId"],))
        return original(call)


@mutant("payments-oldest-first", reqs=["PAY-LIST"], doc="GET /links/{linkId}/payments lists each page oldest first.")
def _(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body["data"].reverse()
        return reply


@mutant("payments-limit-zero-refused", reqs=["LIMIT-PAY-INVALID-DEFAULT"],
        doc="`limit=0` on GET /links/{linkId}/payments is a 400 instead of becoming 20.")
def _(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def _(original: Handler, call: Call) -> Reply:
        if call.query_params.get("limit") == "0":
            raise field_error("limit", "must be between 1 and 100")
        return original(call)


@mutant("payments-default-limit-10", reqs=["LIMIT-PAY-DEFAULT"],
        doc="GET /links/{linkId}/payments without `limit` answers pages of 10 instead of 20.")
def _(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def _(original: Handler, call: Call) -> Reply:
        if "limit" not in call.query_params:
            _with_query(call, limit="10")
        return original(call)


def _limit_above_100_becomes(ref: Reference, value: str) -> None:
    """GET /links/{linkId}/payments takes a `limit` above 100 as ``value`` instead of 100."""
    @around(ref, "listCheckoutPayments")
    def _(original: Handler, call: Call) -> Reply:
        raw = call.query_params.get("limit") or ""
        if raw.isdigit() and int(raw) > 100:
            _with_query(call, limit=value)
        return original(call)


@mutant("payments-limit-above-100-becomes-20", reqs=["LIMIT-PAY-CLAMP-HIGH"],
        doc="A `limit` above 100 on GET /links/{linkId}/payments becomes 20 instead of 100.")
def _(ref: Reference) -> None:
    _limit_above_100_becomes(ref, "20")


@mutant("payments-limit-above-100-becomes-50", reqs=["LIMIT-PAY-CLAMP-HIGH"],
        doc="A `limit` above 100 on GET /links/{linkId}/payments becomes 50 instead of 100.")
def _(ref: Reference) -> None:
    _limit_above_100_becomes(ref, "50")


@mutant("scenario-table-without-chargeback", reqs=["SBX-SCENARIOS"],
        doc="GET /sandbox/scenarios leaves out the `.04` row.")
def _(ref: Reference) -> None:
    full = ref.checkout.table

    def table() -> dict[str, Any]:
        answer = full()
        answer["data"] = [row for row in answer["data"] if row.get("suffix") != "04"]
        return answer

    ref.checkout.table = table  # type: ignore[method-assign]


@mutant("payment-outcome-accepts-live-key", reqs=["AUTH-SANDBOX-ONLY-LIVE-REFUSED", "ERR-LIVE-MODE-UNSUPPORTED"],
        doc="POST /payments/{paymentId}/simulate (\"Sandbox only\") serves a live key instead of 400 "
            "LIVE_MODE_UNSUPPORTED.")
def _(ref: Reference) -> None:
    _set_op(ref, "simulateCheckoutPaymentOutcome", sandbox_only=False)


@mutant("simulate-accepts-live-key", reqs=["PAY-SIMULATE-LIVE-REFUSED"],
        doc="POST /links/{linkId}/payments/simulate serves a live key instead of 400 LIVE_MODE_UNSUPPORTED.")
def _(ref: Reference) -> None:
    _set_op(ref, "simulateCheckoutPayment", sandbox_only=False)


@mutant("foreign-link-readable", reqs=["CHK-404-FOREIGN"],
        doc="A link of another organization can be read, listed and paid through this organization's path.")
def _(ref: Reference) -> None:
    @around(ref, "getCheckoutLink", "listCheckoutPayments", "simulateCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        link = _link(ref, call)
        if link is not None:
            call.org_id = link["org_id"]
        return original(call)


# ---------------------------------------------------------------- links

@mutant("paused-page-still-200", reqs=["LINK-T-PAUSE"], doc="The public page of a paused link is still served (200).")
def _(ref: Reference) -> None:
    page_status = ref.checkout.page_status
    ref.checkout.page_status = lambda status: 200 if status == "cancelled" else page_status(status)  # type: ignore


@mutant("sent-page-missing", reqs=["LINK-T-PUBLISH-DRAFT"], doc="The public page of a sent link answers 404.")
def _(ref: Reference) -> None:
    page_status = ref.checkout.page_status
    ref.checkout.page_status = lambda status: 404 if status == "sent" else page_status(status)  # type: ignore


@mutant("publish-leaves-draft", reqs=["LINK-PUBLISH", "LINK-T-PUBLISH-DRAFT"],
        doc="Publishing a draft answers 200 but the link stays a draft without a shareUrl.")
def _(ref: Reference) -> None:
    @around(ref, "publishCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        link = _link(ref, call)
        if link is None or link["status"] != "draft":
            return original(call)
        return ref.operations["getCheckoutLink"].handler(call)


@mutant("expired-draft-publishes", reqs=["LINK-T-PUBLISH-EXPIRED", "LINK-PUBLISH-EXPIRED", "ERR-LINK-EXPIRED"],
        doc="A draft whose expiresAt passed is published instead of answering LINK_EXPIRED.")
def _(ref: Reference) -> None:
    @around(ref, "publishCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE links SET expires_at = NULL WHERE id = ? AND status = 'draft'", (call.params["linkId"],))
        return original(call)


@mutant("republish-sent-refused", reqs=["LINK-T-PUBLISH-SENT-NOOP"],
        doc="Publishing a sent link answers 400 instead of returning the link.")
def _(ref: Reference) -> None:
    @around(ref, "publishCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        link = _link(ref, call)
        if link is not None and link["status"] == "sent":
            raise ApiError("BAD_REQUEST", "The link is already published.")
        return original(call)


@mutant("terminal-link-republished", reqs=["LINK-T-PUBLISH-TERMINAL", "LINK-T-PAUSE"],
        doc="A cancelled or expired link can be published again (it is treated as a draft).")
def _(ref: Reference) -> None:
    @around(ref, "publishCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE links SET status = 'draft', expires_at = NULL WHERE id = ?"
                      " AND status IN ('cancelled', 'expired')", (call.params["linkId"],))
        return original(call)


@mutant("pause-cancels-expired", reqs=["LINK-T-PAUSE-EXPIRED"],
        doc="Pausing an expired link turns it `cancelled` instead of returning it as is.")
def _(ref: Reference) -> None:
    @around(ref, "pauseCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        original(call)
        ref.store.run("UPDATE links SET status = 'cancelled' WHERE id = ? AND status = 'expired'",
                      (call.params["linkId"],))
        return ref.operations["getCheckoutLink"].handler(call)


@mutant("pause-ignored", reqs=["LINK-T-PAUSE", "LINK-PAUSE"], doc="Pause answers 200 with the link unchanged.")
def _(ref: Reference) -> None:
    @around(ref, "pauseCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        return ref.operations["getCheckoutLink"].handler(call)


@mutant("pause-drops-payments", reqs=["LINK-T-PAUSE"], doc="Pausing a link removes the payments recorded on it.")
def _(ref: Reference) -> None:
    @around(ref, "pauseCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("DELETE FROM checkout_payments WHERE link_id = ?", (call.params["linkId"],))
        return original(call)


@mutant("live-link-deletable", reqs=["LINK-T-DELETE-DRAFT", "LINK-DELETE"],
        doc="A link that was live (sent or paused) can be deleted.")
def _(ref: Reference) -> None:
    @around(ref, "deleteCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        link = _link(ref, call)
        if link is not None and link["status"] != "draft":
            ref.store.run("UPDATE links SET status = 'draft' WHERE id = ?", (link["id"],))
        return original(call)


@mutant("deleted-draft-kept", reqs=["LINK-T-DELETE-DRAFT", "LINK-DELETE"],
        doc="DELETE of a draft answers 200 but the draft is still there.")
def _(ref: Reference) -> None:
    @around(ref, "deleteCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE links SET deleted_at = NULL WHERE id = ?", (call.params["linkId"],))
        return reply


@mutant("link-product-and-items-accepted", reqs=["LINK-PRODUCT-XOR-ITEMS"],
        doc="A link create with both `productId` and `items` ignores `items` instead of answering BAD_REQUEST.")
def _(ref: Reference) -> None:
    @around(ref, "createCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        sent = body(call)
        if sent.get("productId") is not None:
            sent.pop("items", None)
        return original(call)


@mutant("published-link-editable", reqs=["ERR-BAD-REQUEST"], doc="PATCH of a sent link is accepted (200).")
def _(ref: Reference) -> None:
    @around(ref, "updateCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        link = _link(ref, call)
        if link is None or link["status"] == "draft":
            return original(call)
        return ref.operations["getCheckoutLink"].handler(call)


@mutant("publish-on-create-ignored", reqs=["LINK-PUBLISH-ON-CREATE"],
        doc="`publish: true` on create leaves the link a draft, without `publishError`.")
def _(ref: Reference) -> None:
    @around(ref, "createCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        body(call).pop("publish", None)
        return original(call)


@mutant("failed-publish-on-create-is-an-error", reqs=["LINK-PUBLISH-ON-CREATE"],
        doc="A create whose publish failed answers the publish error instead of 201 with `publishError`.")
def _(ref: Reference) -> None:
    @around(ref, "createCheckoutLink")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        failed = reply.body.get("publishError")
        if failed:
            raise ApiError(failed["type"], failed.get("detail"), status=503)
        return reply


@mutant("processor-refusal-ignored", reqs=["LINK-PUBLISH-NOT-SET-UP"],
        doc="A publish the card processor refused (card payments not set up) is published anyway.")
def _(ref: Reference) -> None:
    call_processor = ref.checkout.call_processor

    def lenient(call: Call, link_id: str, total: str) -> None:
        try:
            call_processor(call, link_id, total)
        except ApiError as err:
            if err.status != 503:
                raise

    ref.checkout.call_processor = lenient  # type: ignore[method-assign]


@mutant("processor-refusal-is-500", reqs=["LINK-PUBLISH-NOT-SET-UP"],
        doc="Card payments not set up answers 500 instead of 503.")
def _(ref: Reference) -> None:
    call_processor = ref.checkout.call_processor

    def as_500(call: Call, link_id: str, total: str) -> None:
        try:
            call_processor(call, link_id, total)
        except ApiError as err:
            if err.status == 503:
                raise ApiError(err.type, err.detail, status=500) from None
            raise

    ref.checkout.call_processor = as_500  # type: ignore[method-assign]


@mutant("publish-retry-never-conflicts", reqs=["LINK-PUBLISH-PROCESSOR-TIMEOUT", "LINK-PUBLISH-CONFLICT"],
        doc="Neither an unanswered attempt nor a reprice since the card page makes a publish answer 409.")
def _(ref: Reference) -> None:
    ref.checkout.publish_blocked = lambda link_id, total, now: None  # type: ignore[method-assign]


@mutant("repriced-publish-bad-request", reqs=["LINK-PUBLISH-CONFLICT"],
        doc="A draft repriced after its card page was set up is refused with 400 BAD_REQUEST instead of 409 "
            "CONFLICT ('the draft was repriced after its card page was set up').")
def _(ref: Reference) -> None:
    blocked = ref.checkout.publish_blocked

    def bad_request(link_id: str, total: str, now: Any) -> str | None:
        why = blocked(link_id, total, now)
        if why is not None and "repriced" in why:
            raise ApiError("BAD_REQUEST", why)
        return why

    ref.checkout.publish_blocked = bad_request  # type: ignore[method-assign]


@mutant("publish-attempt-never-clears", reqs=["LINK-PUBLISH-PROCESSOR-TIMEOUT"],
        doc="After the card processor did not answer, every later publish of the link answers 409.")
def _(ref: Reference) -> None:
    ref.checkout.attempt_clears_seconds = 10.0 ** 9


@mutant("publish-in-flight-undetected", reqs=["LINK-PUBLISH-CONFLICT"],
        doc="A publish while another publish of the link is in flight runs too instead of answering 409.")
def _(ref: Reference) -> None:
    ref.checkout.publish_in_flight = lambda call: False  # type: ignore[method-assign]


@mutant("link-edit-during-publish-runs", reqs=["LINK-PUBLISH-CONFLICT"],
        doc="A PATCH of a link while a publish of it is in flight runs instead of answering 409 CONFLICT.")
def _(ref: Reference) -> None:
    ref.checkout.publish_running = lambda call, publish_path: False  # type: ignore[method-assign]


# ---------------------------------------------------------------- refunds

@mutant("refund-without-refunds-scope", reqs=["REFUND-SCOPE", "AUTH-REFUNDS-MISSING", "ERR-INSUFFICIENT-SCOPE"],
        doc="A read+write key without `refunds` can refund.")
def _(ref: Reference) -> None:
    _set_op(ref, "refundCheckoutPayment", scopes=())


@mutant("refund-gated-by-payments-verification", reqs=["CHK-VERIFICATION-REQUIRED"],
        doc="The refund route too answers 403 FORBIDDEN until the organization may accept payments.")
def _(ref: Reference) -> None:
    _set_op(ref, "refundCheckoutPayment", payments_gate=True)


@mutant("partial-refund-marks-refunded", reqs=["PAY-EVENTS", "PAY-PAID-NOT-FINAL"],
        doc="A partial refund moves the payment's status to `refunded` instead of keeping `paid`.")
def _(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE checkout_payments SET status = 'refunded' WHERE id = ?", (reply.resource_id,))
        return reply


@mutant("refunds-not-listed", reqs=["PAY-LIST-REFUNDS"], doc="Payments never list their refunds (`refunds: []`).")
def _(ref: Reference) -> None:
    def hide(out: Outgoing) -> None:
        for item in out.body.get("data") or [] if isinstance(out.body, dict) else []:
            if isinstance(item, dict) and "refundedBase" in item:
                item["refunds"] = []

    ref.response_filters.append(hide)


@mutant("omitted-refund-amount-refused", reqs=["REFUND-OMIT-AMOUNT"],
        doc="A refund without an amount is a 400 VALIDATION_ERROR instead of refunding the rest.")
def _(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        sent = call.json() if call.raw_body.strip() else {}
        if not isinstance(sent, dict) or "amount" not in sent:
            raise field_error("amount", "required")
        return original(call)


def _remaining(ref: Reference, call: Call) -> int | None:
    row = _payment(ref, call)
    return None if row is None else row["amount_base"] - row["refunded_base"]


def _asked(call: Call) -> int | None:
    raw = (call.json() if call.raw_body.strip() else {}).get("amount")
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


@mutant("refund-beyond-remaining-clamped", reqs=["ERR-REFUND-EXCEEDS-REMAINING", "REFUND-MAX-REMAINING"],
        doc="A refund above `amountBase - refundedBase` refunds the remainder instead of answering 400.")
def _(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        remaining, asked = _remaining(ref, call), _asked(call)
        if remaining is not None and asked is not None and asked > remaining:
            body(call)["amount"] = str(remaining)
        return original(call)


@mutant("refund-exact-remainder-refused", reqs=["REFUND-MAX-REMAINING"],
        doc="A refund of exactly `amountBase - refundedBase` answers REFUND_EXCEEDS_REMAINING.")
def _(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        remaining, asked = _remaining(ref, call), _asked(call)
        if remaining and asked == remaining and _payment(ref, call)["refunded_base"]:
            raise ApiError("REFUND_EXCEEDS_REMAINING", "The amount exceeds what remains refundable.")
        return original(call)


@mutant("pending-payment-refundable", reqs=["ERR-REFUND-NOT-ALLOWED"],
        doc="A pending payment can be refunded.")
def _(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE checkout_payments SET status = 'paid', scenario = 'paid' WHERE id = ?"
                      " AND status = 'pending'", (call.params["paymentId"],))
        return original(call)


@mutant("refunded-payment-refusal-is-exceeds", reqs=["ERR-REFUND-NOT-ALLOWED"],
        doc="A refund of a payment refunded in full answers REFUND_EXCEEDS_REMAINING instead of REFUND_NOT_ALLOWED.")
def _(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE checkout_payments SET status = 'paid' WHERE id = ? AND status = 'refunded'",
                      (call.params["paymentId"],))
        return original(call)


@mutant("refund-refusal-moves-money", reqs=["REFUND-REFUSAL-NO-MONEY"],
        doc="A refused refund answers its error but refunds the payment in full anyway.")
def _(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if not err.type.startswith("REFUND_"):
                raise
            ref.store.run("UPDATE checkout_payments SET refunded_base = amount_base, status = 'refunded'"
                          " WHERE id = ?", (call.params["paymentId"],))
            return Reply(err.status, error_body(err, call.request_id))


@mutant("dispute-ignored", reqs=["ERR-REFUND-DISPUTED"], doc="A disputed payment can be refunded.")
def _(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def _(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE checkout_payments SET disputed = 0 WHERE id = ?", (call.params["paymentId"],))
        return original(call)


@mutant("concurrent-refunds-allowed", reqs=["ERR-REFUND-IN-PROGRESS"],
        doc="A refund while another is still running runs too instead of answering REFUND_IN_PROGRESS.")
def _(ref: Reference) -> None:
    ref.checkout.refund_in_flight = lambda call: False  # type: ignore[method-assign]


@mutant("refund-outcome-unknown-as-internal", reqs=["ERR-REFUND-OUTCOME-UNKNOWN", "REFUND-ERROR-TYPES"],
        doc="A refund whose outcome is unknown answers 500 INTERNAL instead of 502 REFUND_OUTCOME_UNKNOWN.")
def _(ref: Reference) -> None:
    def generic(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == "REFUND_OUTCOME_UNKNOWN":
            out.status, out.body["type"], out.body["status"] = 500, "INTERNAL", 500

    ref.response_filters.append(generic)


@mutant("refund-outcome-unknown-releases-key", reqs=["ERR-REFUND-OUTCOME-UNKNOWN"],
        doc="REFUND_OUTCOME_UNKNOWN releases the idempotency key: the same request resent refunds again.")
def _(ref: Reference) -> None:
    ref.idempotency.releases = lambda err: err.type != "PAYOUT_OUTCOME_UNKNOWN"  # type: ignore[method-assign]
