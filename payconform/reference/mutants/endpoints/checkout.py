"""Mutants of the Endpoints part for Checkout products, links, payments and refunds (the list of a link's
payments: `payment_list.py`).

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Iterator

import contextlib

from ...core.errors import ApiError, field_error
from ...core.operation import Call, Operation, Reply
from ...core.responses import Outgoing
from ..patching import Handler, around, body
from ..registry import mutant
from ..support.checkout import link_row, payment_row, set_op

if TYPE_CHECKING:
    from ...authentication.auth import Principal
    from ...reference import Reference


@contextlib.contextmanager
def name_clash_hidden(ref: Reference, call: Call, name: object) -> Iterator[None]:
    """Active products of the organization named `name` count as archived while the block runs."""
    rows = ref.store.all("SELECT id FROM products WHERE org_id = ? AND mode = ? AND name = ? AND archived = 0"
                         " AND deleted_at IS NULL", (call.org_id, call.mode, str(name)))
    ids = [r["id"] for r in rows if r["id"] != call.params.get("productId")]
    for pid in ids:
        ref.store.run("UPDATE products SET archived = 1 WHERE id = ?", (pid,))
    try:
        yield
    finally:
        for pid in ids:
            ref.store.run("UPDATE products SET archived = 0 WHERE id = ?", (pid,))


@mutant("ambiguous-reference-picks-one", reqs=["PAY-FORCE-AMBIGUOUS-REFERENCE"],
        doc="A reference on payments of two links silently names the newest instead of answering 409.")
def ambiguous_reference_picks_one(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPaymentOutcome")
    def simulate_checkout_payment_outcome(original: Handler, call: Call) -> Reply:
        row = ref.store.one("SELECT id FROM checkout_payments WHERE reference = ? AND org_id = ? AND mode = ?"
                            " ORDER BY seq DESC", (call.params["paymentId"], call.org_id, call.mode))
        if payment_row(ref, call) is None and row is not None:
            call.params["paymentId"] = row["id"]
        return original(call)


@mutant("simulate-reference-not-deduplicated", reqs=["PAY-SIMULATE"],
        doc="The same `reference` under a new Idempotency-Key records a second payment.")
def simulate_reference_not_deduplicated(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPayment")
    def simulate_checkout_payment(original: Handler, call: Call) -> Reply:
        sent = body(call)
        if isinstance(sent.get("reference"), str):
            sent["reference"] += "-" + call.request_id
        return original(call)


@mutant("simulate-idempotency-key-optional", reqs=["PAY-SIMULATE-IDEM"],
        doc="POST /links/{linkId}/payments/simulate runs without an Idempotency-Key.")
def simulate_idempotency_key_optional(ref: Reference) -> None:
    set_op(ref, "simulateCheckoutPayment", idempotency="optional")


@mutant("draft-link-takes-payments", reqs=["PAY-SIMULATE-CANNOT-TAKE"],
        doc="A draft or paused link takes a simulated payment as if it were sent.")
def draft_link_takes_payments(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPayment")
    def simulate_checkout_payment(original: Handler, call: Call) -> Reply:
        link = link_row(ref, call)
        if link is not None and link["status"] in ("draft", "cancelled"):
            ref.store.run("UPDATE links SET status = 'sent' WHERE id = ?", (link["id"],))
            try:
                return original(call)
            finally:
                ref.store.run("UPDATE links SET status = ? WHERE id = ?", (link["status"], link["id"]))
        return original(call)


@mutant("expired-link-takes-payments", reqs=["PAY-SIMULATE-CANNOT-TAKE"],
        doc="A link past its expiresAt takes a simulated payment (it is revived as sent without expiry).")
def expired_link_takes_payments(ref: Reference) -> None:
    @around(ref, "simulateCheckoutPayment")
    def simulate_checkout_payment(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE links SET status = 'sent', expires_at = NULL WHERE id = ? AND status = 'expired'",
                      (call.params["linkId"],))
        return original(call)


@mutant("scenario-table-without-chargeback", reqs=["SBX-SCENARIOS"],
        doc="GET /sandbox/scenarios leaves out the `.04` row.")
def scenario_table_without_chargeback(ref: Reference) -> None:
    full = ref.checkout.table

    def table() -> dict[str, Any]:
        answer = full()
        answer["data"] = [row for row in answer["data"] if row.get("suffix") != "04"]
        return answer

    ref.checkout.table = table  # type: ignore[method-assign]


@mutant("simulate-accepts-live-key", reqs=["PAY-SIMULATE-LIVE-REFUSED"],
        doc="POST /links/{linkId}/payments/simulate serves a live key instead of 400 LIVE_MODE_UNSUPPORTED.")
def simulate_accepts_live_key(ref: Reference) -> None:
    set_op(ref, "simulateCheckoutPayment", sandbox_only=False)


@mutant("processor-refusal-ignored", reqs=["LINK-PUBLISH-NOT-SET-UP"],
        doc="A publish the card processor refused (card payments not set up) is published anyway.")
def processor_refusal_ignored(ref: Reference) -> None:
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
def processor_refusal_is_500(ref: Reference) -> None:
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
def publish_retry_never_conflicts(ref: Reference) -> None:
    ref.checkout.publish_blocked = lambda link_id, total, now: None  # type: ignore[method-assign]


@mutant("repriced-publish-bad-request", reqs=["LINK-PUBLISH-CONFLICT"],
        doc="A draft repriced after its card page was set up is refused with 400 BAD_REQUEST instead of 409 "
            "CONFLICT ('the draft was repriced after its card page was set up').")
def repriced_publish_bad_request(ref: Reference) -> None:
    blocked = ref.checkout.publish_blocked

    def bad_request(link_id: str, total: str, now: Any) -> str | None:
        why = blocked(link_id, total, now)
        if why is not None and "repriced" in why:
            raise ApiError("BAD_REQUEST", why)
        return why

    ref.checkout.publish_blocked = bad_request  # type: ignore[method-assign]


@mutant("publish-attempt-never-clears", reqs=["LINK-PUBLISH-PROCESSOR-TIMEOUT"],
        doc="After the card processor did not answer, every later publish of the link answers 409.")
def publish_attempt_never_clears(ref: Reference) -> None:
    ref.checkout.attempt_clears_seconds = 10.0 ** 9


@mutant("publish-in-flight-undetected", reqs=["LINK-PUBLISH-CONFLICT"],
        doc="A publish while another publish of the link is in flight runs too instead of answering 409.")
def publish_in_flight_undetected(ref: Reference) -> None:
    ref.checkout.publish_in_flight = lambda call, link_id: False  # type: ignore[method-assign]


@mutant("link-edit-during-publish-runs", reqs=["LINK-PUBLISH-CONFLICT"],
        doc="A PATCH of a link while a publish of it is in flight runs instead of answering 409 CONFLICT.")
def link_edit_during_publish_runs(ref: Reference) -> None:
    ref.checkout.publish_running = lambda call, link_id: False  # type: ignore[method-assign]


@mutant("refund-gated-by-payments-verification", reqs=["CHK-VERIFICATION-REQUIRED"],
        doc="The refund route too answers 403 FORBIDDEN until the organization may accept payments.")
def refund_gated_by_payments_verification(ref: Reference) -> None:
    set_op(ref, "refundCheckoutPayment", payments_gate=True)


@mutant("refunds-not-listed", reqs=["PAY-LIST-REFUNDS"], doc="Payments never list their refunds (`refunds: []`).")
def refunds_not_listed(ref: Reference) -> None:
    def hide(out: Outgoing) -> None:
        for item in out.body.get("data") or [] if isinstance(out.body, dict) else []:
            if isinstance(item, dict) and "refundedBase" in item:
                item["refunds"] = []

    ref.response_filters.append(hide)


@mutant("omitted-refund-amount-refused", reqs=["REFUND-OMIT-AMOUNT"],
        doc="A refund without an amount is a 400 VALIDATION_ERROR instead of refunding the rest.")
def omitted_refund_amount_refused(ref: Reference) -> None:
    @around(ref, "refundCheckoutPayment")
    def refund_checkout_payment(original: Handler, call: Call) -> Reply:
        sent = call.json() if call.raw_body.strip() else {}
        if not isinstance(sent, dict) or "amount" not in sent:
            raise field_error("amount", "required")
        return original(call)


@mutant("fuzz-unit-amount-via-float", reqs=["PROD-CREATE"],
        doc="A product's `unitAmount` goes through a binary float, so large amounts come back changed in the cents.")
def fuzz_unit_amount_via_float(ref: Reference) -> None:
    @around(ref, "createCheckoutProduct")
    def create_checkout_product(original: Handler, call: Call) -> Reply:
        amount = body(call).get("unitAmount")
        if isinstance(amount, str):
            try:
                body(call)["unitAmount"] = f"{Decimal(float(amount)):.2f}"
            except ValueError:
                pass
        return original(call)


@mutant("product-create-ignores-description", reqs=["PROD-CREATE"],
        doc="POST /products answers 201 but drops the `description` sent.")
def product_create_ignores_description(ref: Reference) -> None:
    @around(ref, "createCheckoutProduct")
    def create_checkout_product(original: Handler, call: Call) -> Reply:
        body(call).pop("description", None)
        return original(call)


@mutant("product-duplicate-names-allowed", reqs=["PROD-CREATE-CONFLICT", "PROD-NAME-UNIQUE"],
        doc="POST /products with the name of an active product answers 201 instead of 409.")
def product_duplicate_names_allowed(ref: Reference) -> None:
    @around(ref, "createCheckoutProduct")
    def create_checkout_product(original: Handler, call: Call) -> Reply:
        with name_clash_hidden(ref, call, body(call).get("name")):
            return original(call)


@mutant("product-name-unique-only-by-body-guard", reqs=["PROD-CREATE-CONFLICT", "PROD-NAME-UNIQUE"],
        doc="POST /products checks no name, but guards against a repeated body: the same body under a new key "
            "within 15 minutes answers 409 DUPLICATE_REQUEST_DETECTED, while another product with the name of an "
            "active one (another price or description) answers 201.")
def product_name_unique_only_by_body_guard(ref: Reference) -> None:
    set_op(ref, "createCheckoutProduct", money_write=True)

    @around(ref, "createCheckoutProduct")
    def create_checkout_product(original: Handler, call: Call) -> Reply:
        with name_clash_hidden(ref, call, body(call).get("name")):
            return original(call)


@mutant("product-rename-to-taken-name-allowed", reqs=["PROD-UPDATE-NAME-CONFLICT"],
        doc="PATCH /products/{productId} to the name of another active product answers 200 instead of 409.")
def product_rename_to_taken_name_allowed(ref: Reference) -> None:
    @around(ref, "updateCheckoutProduct")
    def update_checkout_product(original: Handler, call: Call) -> Reply:
        with name_clash_hidden(ref, call, body(call).get("name")):
            return original(call)


@mutant("archived-name-still-taken", reqs=["PROD-NAME-UNIQUE"],
        doc="Names are unique among all products: the name of an archived product cannot be used again (409).")
def archived_name_still_taken(ref: Reference) -> None:
    @around(ref, "createCheckoutProduct")
    def create_checkout_product(original: Handler, call: Call) -> Reply:
        if ref.store.one("SELECT id FROM products WHERE org_id = ? AND mode = ? AND name = ? AND deleted_at IS NULL",
                         (call.org_id, call.mode, str(body(call).get("name")))):
            raise ApiError("CONFLICT", "A product already has this name.")
        return original(call)


@mutant("product-patch-clears-omitted-description", reqs=["PROD-UPDATE"],
        doc="PATCH /products/{productId} treats an omitted `description` as null (replace, not update).")
def product_patch_clears_omitted_description(ref: Reference) -> None:
    @around(ref, "updateCheckoutProduct")
    def update_checkout_product(original: Handler, call: Call) -> Reply:
        body(call).setdefault("description", None)
        return original(call)


@mutant("archived-product-still-links", reqs=["PROD-ARCHIVE"],
        doc="A new checkout link can be made from an archived product.")
def archived_product_still_links(ref: Reference) -> None:
    @around(ref, "createCheckoutLink")
    def create_checkout_link(original: Handler, call: Call) -> Reply:
        pid = str(body(call).get("productId"))
        archived = ref.store.one("SELECT archived FROM products WHERE id = ?", (pid,))
        ref.store.run("UPDATE products SET archived = 0 WHERE id = ?", (pid,))
        try:
            return original(call)
        finally:
            ref.store.run("UPDATE products SET archived = ? WHERE id = ?", (archived[0] if archived else 0, pid))


@mutant("archive-pauses-product-links", reqs=["PROD-ARCHIVE"],
        doc="Archiving a product also pauses the sent links made from it (`cancelled`), not only new links.")
def archive_pauses_product_links(ref: Reference) -> None:
    @around(ref, "updateCheckoutProduct")
    def update_checkout_product(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if body(call).get("archived") is True:
            ref.store.run("UPDATE links SET status = 'cancelled' WHERE product_id = ? AND status = 'sent'",
                          (call.params["productId"],))
        return reply


@mutant("product-delete-with-links-allowed", reqs=["PROD-DELETE-LINKCOUNT"],
        doc="DELETE /products/{productId} deletes a product links were made from instead of 409.")
def product_delete_with_links_allowed(ref: Reference) -> None:
    @around(ref, "deleteCheckoutProduct")
    def delete_checkout_product(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE products SET link_count = 0 WHERE id = ? AND org_id = ?",
                      (call.params["productId"], call.org_id))
        return original(call)


@mutant("unverified-org-checkout-allowed", reqs=["CHK-VERIFICATION-REQUIRED"],
        doc="Checkout calls work before the business has completed verification to accept payments.")
def unverified_org_checkout_allowed(ref: Reference) -> None:
    original = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        original(principal, org_id, dataclasses.replace(op, payments_gate=False))

    ref.auth.authorize = authorize  # type: ignore[method-assign]
