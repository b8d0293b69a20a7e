"""Mutants of the States part for the payout, approval and batch transition tables.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ...events.webhook_endpoints import new_secret
from ...resources.batches import AWAITING, CANCELED, FAILED, RECEIVED, VALIDATING
from ...resources.batches import COMPLETED as BATCH_COMPLETED
from ...states.lifecycle import COMPLETED, DEFAULT, PROCESSING, Step
from ..patching import Handler, around
from ..registry import mutant
from ..rewrites import rewrite_events, rewrite_replies
from ..support.events import on_record
from ..support.payouts import (
    QUEUE,
    rewrite_approvals,
    rewrite_batch_replies,
    rewrite_reads,
)

if TYPE_CHECKING:
    from ...reference import Reference


def on_decide(ref: Reference, change: Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]] | None]) -> None:
    """Route every recorded decision through `change(status, fields)`; None drops the decision."""
    original = ref.approvals.decide

    def decide(store: Any, row: Any, status: str, now: Any, **fields: Any) -> None:
        changed = change(status, fields)
        if changed is not None:
            original(store, row, changed[0], now, **changed[1])

    ref.approvals.decide = decide  # type: ignore[method-assign]


DAY = 86400


@mutant("approval-threshold-ignored", reqs=["PAYOUT-T-CREATE-APPROVAL", "APPROVAL-T-PENDING"],
        doc="A payout at the approval threshold is created at once instead of being held (202).")
def approval_threshold_ignored(ref: Reference) -> None:
    ref.approvals.default_threshold = None


@mutant("approval-pending-not-announced", reqs=["PAYOUT-T-CREATE-APPROVAL", "APPROVAL-T-PENDING"],
        doc="A held payout answers 202 `pending_approval`, but no `payout_approval.pending` event is recorded.")
def approval_pending_not_announced(ref: Reference) -> None:
    on_record(ref, lambda rec, o, m, t, d, n: "" if t == "payout_approval.pending" else rec(o, m, t, d, n))


@mutant("approval-expires-after-48-hours", reqs=["APPROVAL-T-EXPIRED", "APPROVAL-EXPIRY-LIMIT", "APPROVAL-EXPIRES-AT"],
        doc="Undecided approvals expire 48 hours after creation instead of 24.")
def approval_expires_after_48_hours(ref: Reference) -> None:
    ref.approvals.lifetime = timedelta(hours=48)


@mutant("approval-expires-early", reqs=["APPROVAL-T-EXPIRED", "APPROVAL-EXPIRY-LIMIT"],
        doc="Undecided approvals expire after 23 hours, before the 24 the spec gives.")
def approval_expires_early(ref: Reference) -> None:
    ref.approvals.lifetime = timedelta(hours=23)


@mutant("approval-approve-ignored", reqs=["APPROVAL-T-APPROVED"],
        doc="Approving a held payout leaves the approval pending.")
def approval_approve_ignored(ref: Reference) -> None:
    on_decide(ref, lambda status, fields: None if status != "rejected" else (status, fields))


@mutant("approval-approved-never-executed", reqs=["APPROVAL-T-EXECUTED"],
        doc="An approved payout's approval stays `approved`; it never reads `executed`.")
def approval_approved_never_executed(ref: Reference) -> None:
    on_decide(ref, lambda status, fields: ("approved", fields) if status == "executed" else (status, fields))


@mutant("approval-executed-without-payout-id", reqs=["APPROVAL-T-EXECUTED"],
        doc="An executed approval does not carry the `payoutId` that joins it to its payout.")
def approval_executed_without_payout_id(ref: Reference) -> None:
    rewrite_approvals(ref, lambda a: {k: v for k, v in a.items() if k != "payoutId"})


@mutant("approval-reject-ignored", reqs=["APPROVAL-T-REJECTED"],
        doc="Rejecting a held payout leaves the approval pending.")
def approval_reject_ignored(ref: Reference) -> None:
    on_decide(ref, lambda status, fields: None if status == "rejected" else (status, fields))


@mutant("approval-execution-failed-without-error", reqs=["APPROVAL-T-EXECUTION-FAILED"],
        doc="A failed execution is recorded without the refusal's error `type`.")
def approval_execution_failed_without_error(ref: Reference) -> None:
    on_decide(ref, lambda status, fields: (status, {**fields, "error_type": None}))


@mutant("approval-queue-dashboard-only", reqs=["APPROVAL-QUEUE-READABLE"],
        doc="The approval queue refuses API keys (403 FORBIDDEN), as if reading it were a dashboard action.")
def approval_queue_dashboard_only(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            raise ApiError("FORBIDDEN", "The approval queue is read in the dashboard.")
        return handler

    for op_id in QUEUE:
        ref.wrap_handler(op_id, wrap)


@mutant("batch-cancel-not-applied", reqs=["BATCH-T-CANCEL"],
        doc="A cancel answers 200 with the run `canceled`, but the run carries on as if never canceled.")
def batch_cancel_not_applied(ref: Reference) -> None:
    ref.batches.cancel = lambda call, row: ref.batches.row(call.ref.store, row["id"])  # type: ignore[method-assign]
    rewrite_batch_replies(ref, ("cancelPayoutBatch",), lambda reply: {**reply.body, "status": CANCELED})


@mutant("batch-cancel-only-awaiting-confirmation", reqs=["BATCH-T-CANCEL"],
        doc="Only a run awaiting confirmation can be canceled: a cancel while `received` or `validating` is refused "
            "(409 PAYOUT_BATCH_NOT_CANCELABLE).")
def batch_cancel_only_awaiting_confirmation(ref: Reference) -> None:
    ref.batches.cancelable = (AWAITING,)


@mutant("batch-cancel-after-creation", reqs=["BATCH-T-CANCEL-AFTER-CREATION", "ERR-PAYOUT-BATCH-NOT-CANCELABLE"],
        doc="A run whose creation began (completed or failed) is canceled, its payouts left in place.")
def batch_cancel_after_creation(ref: Reference) -> None:
    ref.batches.cancelable = (RECEIVED, VALIDATING, AWAITING, BATCH_COMPLETED, FAILED)


CREATION_SECONDS = 10  # how long the background creation of `batch-cancel-while-creating` takes


@mutant("batch-cancel-while-creating", reqs=["BATCH-T-CANCEL-AFTER-CREATION", "ERR-PAYOUT-BATCH-NOT-CANCELABLE"],
        doc="Creation runs in the background: a confirmed run reads `awaiting_confirmation` until its payouts are "
            "made ten seconds later, and a cancel in that window is accepted (judged by the status alone).")
def batch_cancel_while_creating(ref: Reference) -> None:
    batches, run, settle = ref.batches, ref.batches.run, ref.batches.settle
    started: dict[str, Any] = {}  # batch id -> when its confirm began creation

    def begin(call: Call, row: Any) -> Any:
        started[row["id"]] = call.now
        return row

    def settle_then_create(call: Call, row: Any) -> Any:
        row = settle(call, row)
        began = started.get(row["id"])
        if began is None or row["status"] != AWAITING:
            started.pop(row["id"], None)
            return row
        if call.now < began + timedelta(seconds=CREATION_SECONDS):
            return row
        del started[row["id"]]
        return run(call, row)

    batches.run = begin  # type: ignore[method-assign]
    batches.settle = settle_then_create  # type: ignore[method-assign]


@mutant("batch-validating-event", reqs=["BATCH-EVENTS"],
        doc="A run announces an in-progress event (`payout_batch.validating`) when its validation starts.")
def batch_validating_event(ref: Reference) -> None:
    ref.batches.events[VALIDATING] = "payout_batch.validating"


@mutant("batch-lines-not-announced", reqs=["BATCH-EVENTS"],
        doc="The payouts a run creates from its lines emit no `payout.*` events of their own; only the run's "
            "`payout_batch.*` events are recorded.")
def batch_lines_not_announced(ref: Reference) -> None:
    run = ref.batches.run
    creating: list[str] = []  # the run whose lines are being created, while they are
    silent: set[str] = set()  # payouts made from a run's lines

    def run_silently(call: Call, row: Any) -> Any:
        creating.append(row["id"])
        try:
            return run(call, row)
        finally:
            creating.pop()

    def record(rec: Callable[..., str], org_id: str, mode: str, type_: str, data: dict, now: Any) -> str:
        if type_.startswith("payout.") and (creating or data.get("payoutId") in silent):
            silent.add(data.get("payoutId"))
            return ""
        return rec(org_id, mode, type_, data, now)

    ref.batches.run = run_silently  # type: ignore[method-assign]
    on_record(ref, record)


@mutant("webhooks-never-auto-disabled", reqs=["WH-AUTO-DISABLE"],
        doc="An endpoint with dead deliveries and five quiet days stays enabled.")
def webhooks_never_auto_disabled(ref: Reference) -> None:
    ref.dispatcher.disable_unhealthy = lambda org_id: None


@mutant("webhooks-auto-disabled-after-one-dead-delivery", reqs=["WH-AUTO-DISABLE"],
        doc="An endpoint with one dead delivery and five days with no accepted delivery is disabled, not after "
            "three dead deliveries.")
def webhooks_auto_disabled_after_one_dead_delivery(ref: Reference) -> None:
    ref.dispatcher.disable_after_dead = 1


@mutant("webhooks-auto-disabled-before-five-days", reqs=["WH-AUTO-DISABLE"],
        doc="An endpoint is disabled as soon as three of its deliveries are dead, without waiting for five days "
            "with no accepted delivery.")
def webhooks_auto_disabled_before_five_days(ref: Reference) -> None:
    ref.dispatcher.disable_after_quiet = timedelta(0)


@mutant("webhooks-disabled-still-sent", reqs=["WH-DISABLED-EVENTS-RECORDED"],
        doc="A disabled endpoint keeps receiving deliveries.")
def webhooks_disabled_still_sent(ref: Reference) -> None:
    ref.events.active = "deleted_at IS NULL AND enabled = 1"


@mutant("webhooks-resume-keeps-health", reqs=["WH-RESUME-CLEARS-HEALTH", "WH-ENABLED"],
        doc="Resuming re-enables the endpoint but keeps its failure count and disable reason.")
def webhooks_resume_keeps_health(ref: Reference) -> None:
    ref.events.resume = lambda endpoint_id, now: ref.store.run(
        "UPDATE webhook_endpoints SET enabled = 1 WHERE id = ?", (endpoint_id,))


@mutant("webhooks-pause-ignored", reqs=["WH-ENABLED-PAUSED"], doc="A paused endpoint keeps receiving deliveries.")
def webhooks_pause_ignored(ref: Reference) -> None:
    ref.events.active = "deleted_at IS NULL AND disabled_reason IS NULL"


@mutant("webhooks-resume-new-secret", reqs=["WH-ENABLED"], doc="Resuming an endpoint replaces its signing secret.")
def webhooks_resume_new_secret(ref: Reference) -> None:
    original = ref.events.resume

    def resume(endpoint_id: str, now: Any) -> None:
        original(endpoint_id, now)
        ref.store.run("UPDATE webhook_endpoints SET secret = ? WHERE id = ?", (new_secret(), endpoint_id))

    ref.events.resume = resume


@mutant("webhooks-processing-not-delivered", reqs=["PAYOUT-EVENTS-AT-LEAST-ONCE"],
        doc="`payout.processing` is recorded in the feed but never queued for delivery.")
def webhooks_processing_not_delivered(ref: Reference) -> None:
    original = ref.events.queue

    def queue(endpoint_id: str, org_id: str, mode: str, event_id: str, type_: str, due: str) -> None:
        if type_ != "payout.processing":
            original(endpoint_id, org_id, mode, event_id, type_, due)

    ref.events.queue = queue  # type: ignore[method-assign]


@mutant("cancel-leaves-pending", reqs=["PAYOUT-T-CANCEL", "PAYOUT-CANCEL-ROUTE"],
        doc="Cancel answers the payout `canceled` but it stays pending and awaiting funds.")
def cancel_leaves_pending(ref: Reference) -> None:
    @around(ref, "cancelPayout")
    def cancel_payout(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE payouts SET status = 'pending', funds_returned = NULL WHERE id = ?",
                      (call.params["payoutId"],))
        return reply


@mutant("cancel-not-announced", reqs=["PAYOUT-T-CANCEL"],
        doc="A canceled payout reads `canceled`, but no `payout.canceled` event is recorded.")
def cancel_not_announced(ref: Reference) -> None:
    original = ref.events.record

    def record(org_id: str, mode: str, type_: str, data: dict[str, Any], now: Any) -> str:
        return "" if type_ == "payout.canceled" else original(org_id, mode, type_, data, now)

    ref.events.record = record  # type: ignore[method-assign]


@mutant("payout-skips-processing", reqs=["PAYOUT-T-PROCESSING"],
        doc="An ordinary sandbox payout goes straight from pending to completed, never `processing`.")
def payout_skips_processing(ref: Reference) -> None:
    ref.lifecycle.timelines[DEFAULT] = (COMPLETED,)


@mutant("payout-0002-processes", reqs=["PAYOUT-T-PROCESSING"],
        doc="Sandbox scenario 0002 passes through `processing` like any other payout.")
def payout_0002_processes(ref: Reference) -> None:
    ref.lifecycle.timelines["0002"] = (PROCESSING, COMPLETED)


@mutant("payout-never-completes", reqs=["PAYOUT-T-COMPLETED"],
        doc="Sandbox payouts stay where they are instead of completing (recipient never paid).")
def payout_never_completes(ref: Reference) -> None:
    ref.lifecycle.timelines[DEFAULT] = (PROCESSING,)
    ref.lifecycle.timelines["0002"] = ()


@mutant("payout-completed-without-completed-at", reqs=["PAYOUT-T-COMPLETED"],
        doc="A paid sandbox payout reads `completed` but its `completedAt` stays null.")
def payout_completed_without_completed_at(ref: Reference) -> None:
    ref.lifecycle.timelines[DEFAULT] = (PROCESSING, dataclasses.replace(COMPLETED, completes=False))


@mutant("payout-0003-completes", reqs=["PAYOUT-T-FAILED"],
        doc="Sandbox scenario 0003 is paid like any other payout instead of failing.")
def payout_0003_completes(ref: Reference) -> None:
    ref.lifecycle.timelines["0003"] = (PROCESSING, COMPLETED)


@mutant("payout-never-returned", reqs=["PAYOUT-T-RETURNED"],
        doc="Sandbox scenario 0004 completes and is never returned by the bank.")
def payout_never_returned(ref: Reference) -> None:
    ref.lifecycle.timelines["0004"] = (PROCESSING, COMPLETED)


@mutant("payout-return-keeps-funds", reqs=["PAYOUT-RETURN-BODY"],
        doc="A bank return reads `fundsReturned: false`.")
def payout_return_keeps_funds(ref: Reference) -> None:
    returned = Step(90, "payout.returned", "failed", "returned_by_bank", False)
    ref.lifecycle.timelines["0004"] = (PROCESSING, COMPLETED, returned)


@mutant("payout-return-not-failed", reqs=["PAYOUT-RETURN-BODY"],
        doc="A bank return keeps the payout `completed` (with its failureCode and fundsReturned) instead of `failed`.")
def payout_return_not_failed(ref: Reference) -> None:
    processing, completed, returned = ref.lifecycle.timelines["0004"]
    ref.lifecycle.timelines["0004"] = (processing, completed, dataclasses.replace(returned, status="completed"))


@mutant("payout-return-account-closed", reqs=["PAYOUT-RETURN-BODY"],
        doc="A bank return reads `failureCode: account_closed`, the bank's reason, instead of `returned_by_bank`.")
def payout_return_account_closed(ref: Reference) -> None:
    processing, completed, returned = ref.lifecycle.timelines["0004"]
    ref.lifecycle.timelines["0004"] = (processing, completed, dataclasses.replace(returned, failure_code="account_closed"))


@mutant("payout-failed-recovers", reqs=["PAYOUT-TERMINAL"],
        doc="A day after failing, a sandbox payout of scenario 0003 or 0004 reads `completed` again.")
def payout_failed_recovers(ref: Reference) -> None:
    for scenario in ("0003", "0004"):
        recovered = Step(DAY, "payout.completed", "completed", completes=True)
        ref.lifecycle.timelines[scenario] = (*ref.lifecycle.timelines[scenario], recovered)


@mutant("payout-canceled-revived-by-funding", reqs=["PAYOUT-TERMINAL"],
        doc="Funds confirmed for a canceled payout revive it: it reads `pending` again and goes on to be paid.")
def payout_canceled_revived_by_funding(ref: Reference) -> None:
    @around(ref, "confirmPayoutFunding")
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        ref.store.run("UPDATE payouts SET status = 'pending', funds_returned = NULL WHERE id = ? AND status = "
                      "'canceled'", (call.params["payoutId"],))
        return original(call)


@mutant("payout-created-processing", reqs=["PAYOUT-T-CREATE"],
        doc="An accepted payout is answered `processing` instead of `pending`.")
def payout_created_processing(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            if reply.status == 201:
                return dataclasses.replace(reply, body={**reply.body, "status": "processing"})
            return reply
        return handler

    ref.wrap_handler("createPayout", wrap)


@mutant("payout-return-skips-completed", reqs=["PAYOUT-COMPLETED-NOT-TERMINAL"],
        doc="A payout the bank sends back (scenario 0004) never reads `completed`: it goes from `processing` "
            "straight to the return, as if `completed` were terminal.")
def payout_return_skips_completed(ref: Reference) -> None:
    processing, _, returned = ref.lifecycle.timelines["0004"]
    ref.lifecycle.timelines["0004"] = (processing, returned)


@mutant("payout-canceled-spelled-cancelled", reqs=["PAYOUT-STATES"],
        doc="A canceled payout reads `status: cancelled` (British spelling) in reads, the cancel's answer and "
            "`payout.*` events.")
def payout_canceled_spelled_cancelled(ref: Reference) -> None:
    def spell(payout: dict[str, Any]) -> dict[str, Any]:
        return {**payout, "status": "cancelled"} if payout.get("status") == "canceled" else payout

    rewrite_reads(ref, spell)
    rewrite_replies(ref, "cancelPayout", lambda reply: dataclasses.replace(reply, body=spell(reply.body)))
    rewrite_events(ref, spell, "payout.")


@mutant("payout-returned-status", reqs=["PAYOUT-STATES"],
        doc="A bank return reads `status: returned`, a state of its own named after `payout.returned`, instead of "
            "`failed`.")
def payout_returned_status(ref: Reference) -> None:
    processing, completed, returned = ref.lifecycle.timelines["0004"]
    ref.lifecycle.timelines["0004"] = (processing, completed, dataclasses.replace(returned, status="returned"))
