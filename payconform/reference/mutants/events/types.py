"""Mutants of the Events part about the event types, their data and the feed.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...events.events import event_json
from ...resources.batches import AWAITING, CANCELED, COMPLETED, FAILED, VALIDATING
from ...resources.payout_view import payout_json
from ..patching import Handler, around
from ..registry import mutant
from ..support.events import on_record, rewrite_event_data, rewrite_webhook_replies

if TYPE_CHECKING:
    from ...core.operation import Call, Reply
    from ...reference import Reference


def _drop(ref: Reference, *types: str) -> None:
    """Events of `types` are never recorded."""
    on_record(ref, lambda rec, o, m, t, d, n: "" if t in types else rec(o, m, t, d, n))


@mutant("batch-no-awaiting-confirmation-event", reqs=["EVT-BATCH-AWAITING-CONFIRMATION"],
        doc="A run that reaches `awaiting_confirmation` records no payout_batch.awaiting_confirmation event.")
def batch_no_awaiting_confirmation_event(ref: Reference) -> None:
    del ref.batches.events[AWAITING]


@mutant("batch-awaiting-confirmation-event-early", reqs=["EVT-BATCH-AWAITING-CONFIRMATION"],
        doc="payout_batch.awaiting_confirmation is recorded when validation starts, before the lines are validated.")
def batch_awaiting_confirmation_event_early(ref: Reference) -> None:
    ref.batches.events[VALIDATING] = ref.batches.events.pop(AWAITING)


@mutant("batch-no-completed-event", reqs=["EVT-BATCH-COMPLETED"],
        doc="A completed run records no payout_batch.completed event.")
def batch_no_completed_event(ref: Reference) -> None:
    del ref.batches.events[COMPLETED]


@mutant("batch-no-canceled-event", reqs=["EVT-BATCH-CANCELED"],
        doc="A canceled run records no payout_batch.canceled event.")
def batch_no_canceled_event(ref: Reference) -> None:
    del ref.batches.events[CANCELED]


@mutant("batch-no-failed-event", reqs=["EVT-BATCH-FAILED"], doc="A broken run records no payout_batch.failed event.")
def batch_no_failed_event(ref: Reference) -> None:
    del ref.batches.events[FAILED]


@mutant("events-payout-pending-missing", reqs=["EVT-PAYOUT-PENDING", "EVT-ONE-PER-CHANGE"],
        doc="Creating a payout records no `payout.pending` event.")
def events_payout_pending_missing(ref: Reference) -> None:
    on_record(ref, lambda rec, o, m, t, d, n: "" if t == "payout.pending" else rec(o, m, t, d, n))


@mutant("events-payout-pending-funding-unflagged", reqs=["EVT-PAYOUT-PENDING"],
        doc="`payout.pending` of a payout waiting on the organization's own funds carries `requiresFunding: false`.")
def events_payout_pending_funding_unflagged(ref: Reference) -> None:
    rewrite_event_data(ref, "payout.pending", lambda d: {**d, "requiresFunding": False})


@mutant("events-payout-pending-twice", reqs=["EVT-ONE-PER-CHANGE"],
        doc="Creating a payout records `payout.pending` twice.")
def events_payout_pending_twice(ref: Reference) -> None:
    on_record(ref, lambda rec, o, m, t, d, n: (rec(o, m, t, d, n), rec(o, m, t, d, n))[0] if t == "payout.pending"
            else rec(o, m, t, d, n))


@mutant("events-payout-data-missing-fields", reqs=["EVT-DATA-PAYOUT"],
        doc="`data` of payout events lacks `fee` and `rate` (not the flat WebhookPayout).")
def events_payout_data_missing_fields(ref: Reference) -> None:
    on_record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, {k: v for k, v in d.items() if k not in ("fee", "rate")}, n)
            if t.startswith("payout.") else rec(o, m, t, d, n))


@mutant("events-feed-since-inclusive", reqs=["FEED-SINCE"], doc="`since` returns the event of that sequence too.")
def events_feed_since_inclusive(ref: Reference) -> None:
    original = ref.events.feed
    ref.events.feed = lambda org, mode, since, types, limit: original(org, mode, since - 1 if since else since,
                                                                      types, limit)


@mutant("events-feed-type-ignored", reqs=["FEED-TYPE-FILTER"], doc="The feed ignores `type`.")
def events_feed_type_ignored(ref: Reference) -> None:
    original = ref.events.feed
    ref.events.feed = lambda org, mode, since, types, limit: original(org, mode, since, None, limit)


@mutant("events-feed-data-rebuilt", reqs=["FEED-SAME-OBJECTS", "EVT-DATA-IMMUTABLE"],
        doc="The feed returns `data` rebuilt without the caller's `reference`, not the object delivered.")
def events_feed_data_rebuilt(ref: Reference) -> None:
    def change(body: dict[str, Any]) -> dict[str, Any]:
        for event in body["data"]:
            if isinstance(event["data"], dict):
                event["data"].pop("reference", None)
        return body

    rewrite_webhook_replies(ref, ("listEvents",), change)


@mutant("events-feed-sequence-number", reqs=["FEED-SAME-OBJECTS"],
        doc="The feed writes `sequence` as a JSON number, not the decimal string delivered.")
def events_feed_sequence_number(ref: Reference) -> None:
    rewrite_webhook_replies(ref, ("listEvents",), lambda body: {
        **body, "data": [{**row, "sequence": int(row["sequence"])} for row in body["data"]]})


@mutant("events-data-rebuilt-on-read", reqs=["EVT-DATA-IMMUTABLE"],
        doc="`data` of a payout event is rebuilt from the payout as it stands whenever the event is read or sent, "
            "not built once when it is recorded.")
def events_data_rebuilt_on_read(ref: Reference) -> None:
    def envelope(row: Any) -> dict[str, Any]:
        body = event_json(row)
        payout_id = body["data"].get("payoutId") if row["type"].startswith("payout.") else None
        current = ref.store.one("SELECT * FROM payouts WHERE id = ?", (payout_id,)) if payout_id else None
        return {**body, "data": payout_json(current)} if current is not None else body

    ref.events.envelope = envelope


@mutant("events-feed-drops-never-queued", reqs=["FEED-IS-RECORD"],
        doc="The feed leaves out events queued for no endpoint (recorded while the only endpoint was paused).")
def events_feed_drops_never_queued(ref: Reference) -> None:
    original = ref.events.feed

    def feed(org: str, mode: str, since: int | None, types: list[str] | None, limit: int) -> list[Any]:
        queued = {r["event_id"] for r in ref.store.all("SELECT DISTINCT event_id FROM webhook_deliveries")}
        return [row for row in original(org, mode, since, types, limit) if row["id"] in queued]

    ref.events.feed = feed


@mutant("events-feed-drops-undelivered", reqs=["FEED-IS-RECORD"],
        doc="The feed leaves out events whose deliveries are dead.")
def events_feed_drops_undelivered(ref: Reference) -> None:
    original = ref.events.feed

    def feed(org: str, mode: str, since: int | None, types: list[str] | None, limit: int) -> list[Any]:
        dead = {r["event_id"] for r in ref.store.all("SELECT event_id FROM webhook_deliveries WHERE status = 'dead'")}
        return [row for row in original(org, mode, since, types, limit) if row["id"] not in dead]

    ref.events.feed = feed


@mutant("events-payout-processing-missing", reqs=["EVT-PAYOUT-PROCESSING"],
        doc="A payout the network picks up moves to `processing` without a `payout.processing` event.")
def events_payout_processing_missing(ref: Reference) -> None:
    _drop(ref, "payout.processing")


@mutant("events-payout-completed-missing", reqs=["EVT-PAYOUT-COMPLETED"],
        doc="A paid payout records no `payout.completed`.")
def events_payout_completed_missing(ref: Reference) -> None:
    _drop(ref, "payout.completed")


@mutant("events-payout-failed-no-failure-code", reqs=["EVT-PAYOUT-FAILED"],
        doc="`payout.failed` carries no `failureCode`.")
def events_payout_failed_no_failure_code(ref: Reference) -> None:
    rewrite_event_data(ref, "payout.failed", lambda d: {k: v for k, v in d.items() if k != "failureCode"})


@mutant("events-payout-failed-no-funds-returned", reqs=["EVT-PAYOUT-FAILED"],
        doc="`payout.failed` carries no `fundsReturned`.")
def events_payout_failed_no_funds_returned(ref: Reference) -> None:
    rewrite_event_data(ref, "payout.failed", lambda d: {k: v for k, v in d.items() if k != "fundsReturned"})


@mutant("events-payout-returned-as-failed", reqs=["EVT-PAYOUT-RETURNED"],
        doc="A bank return is announced as `payout.failed` instead of `payout.returned`.")
def events_payout_returned_as_failed(ref: Reference) -> None:
    on_record(ref, lambda rec, o, m, t, d, n: rec(o, m, "payout.failed" if t == "payout.returned" else t, d, n))


@mutant("events-payout-returned-status-returned", reqs=["EVT-PAYOUT-RETURNED"],
        doc="`payout.returned` carries `status: returned`, named after the event, instead of `failed`.")
def events_payout_returned_status_returned(ref: Reference) -> None:
    rewrite_event_data(ref, "payout.returned", lambda d: {**d, "status": "returned"})


@mutant("events-payout-returned-keeps-funds", reqs=["EVT-PAYOUT-RETURNED"],
        doc="`payout.returned` carries `fundsReturned: false`.")
def events_payout_returned_keeps_funds(ref: Reference) -> None:
    rewrite_event_data(ref, "payout.returned", lambda d: {**d, "fundsReturned": False})


@mutant("events-payout-returned-failure-code-generic", reqs=["EVT-PAYOUT-RETURNED"],
        doc="`payout.returned` carries the failed payout's `failureCode: account_invalid`, not `returned_by_bank`.")
def events_payout_returned_failure_code_generic(ref: Reference) -> None:
    rewrite_event_data(ref, "payout.returned", lambda d: {**d, "failureCode": "account_invalid"})


@mutant("events-payout-canceled-missing", reqs=["EVT-PAYOUT-CANCELED"], doc="Canceling a payout records no event.")
def events_payout_canceled_missing(ref: Reference) -> None:
    _drop(ref, "payout.canceled")


@mutant("events-approval-pending-missing", reqs=["EVT-APPROVAL-PENDING"],
        doc="A payout held for approvers records no `payout_approval.pending`.")
def events_approval_pending_missing(ref: Reference) -> None:
    _drop(ref, "payout_approval.pending")


@mutant("events-batch-approval-pending-missing", reqs=["EVT-APPROVAL-PENDING"],
        doc="Only a held payout records `payout_approval.pending`: a run held for approvers records none.")
def events_batch_approval_pending_missing(ref: Reference) -> None:
    def record(rec: Callable[..., str], org_id: str, mode: str, type_: str, data: dict, now: Any) -> str:
        batch = type_ == "payout_approval.pending" and (data.get("approval") or {}).get("kind") == "batch"
        return "" if batch else rec(org_id, mode, type_, data, now)

    on_record(ref, record)


@mutant("events-approval-decisions-missing", reqs=["EVT-APPROVAL-APPROVED", "EVT-APPROVAL-REJECTED",
                                                  "EVT-APPROVAL-EXPIRED"],
        doc="Approving, rejecting and expiring an approval change its status without an event.")
def events_approval_decisions_missing(ref: Reference) -> None:
    _drop(ref, "payout_approval.approved", "payout_approval.rejected", "payout_approval.expired")


@mutant("events-approval-executed-no-payout-id", reqs=["EVT-APPROVAL-EXECUTED"],
        doc="`payout_approval.executed` does not carry the `payoutId` of the payout made.")
def events_approval_executed_no_payout_id(ref: Reference) -> None:
    rewrite_event_data(ref, "payout_approval.executed",
          lambda d: {"approval": {k: v for k, v in d["approval"].items() if k != "payoutId"}})


@mutant("events-approval-execution-failed-no-error", reqs=["EVT-APPROVAL-EXECUTION-FAILED"],
        doc="`payout_approval.execution_failed` does not carry `approval.error`.")
def events_approval_execution_failed_no_error(ref: Reference) -> None:
    rewrite_event_data(ref, "payout_approval.execution_failed",
          lambda d: {"approval": {k: v for k, v in d["approval"].items() if k != "error"}})


@mutant("events-approval-execution-failed-generic-error", reqs=["EVT-APPROVAL-EXECUTION-FAILED"],
        doc="`payout_approval.execution_failed` carries the generic `approval.error.type: INTERNAL`, not the type "
            "the payout's creation was refused with.")
def events_approval_execution_failed_generic_error(ref: Reference) -> None:
    rewrite_event_data(ref, "payout_approval.execution_failed",
          lambda d: {"approval": {**d["approval"], "error": {"type": "INTERNAL"}}})


@mutant("events-approval-data-flat", reqs=["EVT-DATA-APPROVAL"],
        doc="`payout_approval.*` carry the approval's fields flat in `data`, not under `approval`.")
def events_approval_data_flat(ref: Reference) -> None:
    on_record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, d["approval"] if t.startswith("payout_approval.") else d, n))


@mutant("events-checkout-paid-missing", reqs=["EVT-CHECKOUT-PAID"], doc="A paid checkout payment is not announced.")
def events_checkout_paid_missing(ref: Reference) -> None:
    _drop(ref, "checkout_payment.paid")


@mutant("events-checkout-outcomes-missing", reqs=["EVT-CHECKOUT-FAILED", "EVT-CHECKOUT-REFUNDED",
                                                 "EVT-CHECKOUT-REVERSED"],
        doc="A failed, refunded or charged-back checkout payment is not announced.")
def events_checkout_outcomes_missing(ref: Reference) -> None:
    _drop(ref, "checkout_payment.failed", "checkout_payment.refunded", "checkout_payment.reversed")


@mutant("events-api-refund-not-announced", reqs=["EVT-CHECKOUT-REFUNDED"],
        doc="A payment refunded in full through the refund route (the API) records no `checkout_payment.refunded`; "
            "only a forced `refund` outcome is announced.")
def events_api_refund_not_announced(ref: Reference) -> None:
    inside = threading.local()  # the refund route records its events in its own request's thread

    def record(rec: Callable[..., str], org_id: str, mode: str, type_: str, data: dict, now: Any) -> str:
        dropped = type_ == "checkout_payment.refunded" and getattr(inside, "refund", False)
        return "" if dropped else rec(org_id, mode, type_, data, now)

    on_record(ref, record)

    @around(ref, "refundCheckoutPayment")
    def refund(original: Handler, call: Call) -> Reply:
        inside.refund = True
        try:
            return original(call)
        finally:
            inside.refund = False


@mutant("events-partial-refund-missing", reqs=["EVT-CHECKOUT-PARTIALLY-REFUNDED"],
        doc="A partial refund is not announced.")
def events_partial_refund_missing(ref: Reference) -> None:
    _drop(ref, "checkout_payment.partially_refunded")


@mutant("events-partial-refund-status-renamed", reqs=["EVT-CHECKOUT-PARTIALLY-REFUNDED"],
        doc="`checkout_payment.partially_refunded` carries `status: partially_refunded`, named after the event, "
            "instead of `paid`.")
def events_partial_refund_status_renamed(ref: Reference) -> None:
    rewrite_event_data(ref, "checkout_payment.partially_refunded", lambda d: {**d, "status": "partially_refunded"})


@mutant("events-type-renamed", reqs=["EVT-TYPES-22", "EVT-TYPE"],
        doc="A completed payout is announced as `payout.succeeded`, a type outside the 22.")
def events_type_renamed(ref: Reference) -> None:
    on_record(ref, lambda rec, o, m, t, d, n: rec(o, m, "payout.succeeded" if t == "payout.completed" else t, d, n))


@mutant("events-network-status-words", reqs=["EVT-NO-NETWORK-NAMES"],
        doc="`payout.processing` carries the network's status word `IN_TRANSIT` as `status`.")
def events_network_status_words(ref: Reference) -> None:
    rewrite_event_data(ref, "payout.processing", lambda d: {**d, "status": "IN_TRANSIT"})


@mutant("events-dispute-announced", reqs=["EVT-NOT-ANNOUNCED"],
        doc="An open dispute is announced at once as `checkout_payment.reversed`.")
def events_dispute_announced(ref: Reference) -> None:
    original, announced = ref.dispatcher.settle_due, set()

    def settle_due(org_id: str | None) -> None:
        original(org_id)
        with ref.store.tx():
            for row in ref.store.all("SELECT * FROM checkout_payments WHERE disputed = 1"):
                if row["id"] not in announced:
                    announced.add(row["id"])
                    ref.events.record(row["org_id"], row["mode"], "checkout_payment.reversed",
                                      {"paymentId": row["id"], "status": "disputed"}, ref.clock.now(row["org_id"]))

    ref.dispatcher.settle_due = settle_due
