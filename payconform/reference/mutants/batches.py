"""Mutants of payout batches: the run's rules on this server's `ref.batches` (statuses it may be confirmed or
canceled in, its events, the organization's opt-out, the external reference, the approval) and the answers
of the batch operations (wrapped handlers).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..batches import AWAITING, CANCELED, COMPLETED, FAILED, RECEIVED, VALIDATING
from ..errors import ApiError
from ..operation import Call, Reply
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference

Handler = Callable[[Call], Reply]
OPERATIONS = ("createPayoutBatch", "listPayoutBatches", "getPayoutBatch", "listPayoutBatchItems",
              "confirmPayoutBatch", "cancelPayoutBatch")


def _wrap(ref: Reference, op_ids: tuple[str, ...], wrap: Callable[[Handler], Handler]) -> None:
    for op_id in op_ids:
        ref.wrap_handler(op_id, wrap)


def _rewrite(ref: Reference, op_ids: tuple[str, ...], change: Callable[[Reply], Any]) -> None:
    """The reply body of the given operations becomes `change(reply)`."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            return dataclasses.replace(reply, body=change(reply))
        return handler

    _wrap(ref, op_ids, wrap)


def _retype(ref: Reference, type_: str, change: Callable[[ApiError], ApiError]) -> None:
    """An ApiError of `type_` raised by a batch operation is answered as `change(err)` instead."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            try:
                return original(call)
            except ApiError as err:
                if err.type != type_:
                    raise
                raise change(err) from None
        return handler

    _wrap(ref, OPERATIONS, wrap)


def _answer_201(ref: Reference, op_id: str) -> None:
    """Every success of `op_id` is answered 201."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            return dataclasses.replace(original(call), status=201)
        return handler

    _wrap(ref, (op_id,), wrap)


@mutant("batch-create-answers-201", reqs=["BATCH-CREATE"], doc="An accepted run is answered 201, not 202.")
def _(ref: Reference) -> None:
    _answer_201(ref, "createPayoutBatch")


@mutant("batch-status-queued", reqs=["BATCH-STATUS-VALUES"],
        doc="A run not yet validated reads `queued`, a status outside the spec's six.")
def _(ref: Reference) -> None:
    def change(reply: Reply) -> Any:
        body = reply.body
        return {**body, "status": "queued"} if body.get("status") in (RECEIVED, VALIDATING) else body

    _rewrite(ref, ("createPayoutBatch", "getPayoutBatch"), change)


@mutant("batch-external-reference-dropped", reqs=["BATCH-EXTERNAL-REFERENCE"],
        doc="A run is read without its `externalReferenceId`.")
def _(ref: Reference) -> None:
    _rewrite(ref, ("getPayoutBatch",),
             lambda reply: {k: v for k, v in reply.body.items() if k != "externalReferenceId"})


@mutant("batch-external-reference-reusable", reqs=["ERR-PAYOUT-BATCH-DUPLICATE-REFERENCE", "BATCH-EXTERNAL-REFERENCE"],
        doc="A second run under a taken `externalReferenceId` is accepted.")
def _(ref: Reference) -> None:
    ref.batches.duplicate_of = lambda call, external_reference_id: None  # type: ignore[method-assign]


@mutant("batch-duplicate-without-original-id", reqs=["ERRBODY-ORIGINAL-BATCH-ID"],
        doc="PAYOUT_BATCH_DUPLICATE_REFERENCE does not name the run (`originalBatchId` missing).")
def _(ref: Reference) -> None:
    _retype(ref, "PAYOUT_BATCH_DUPLICATE_REFERENCE", lambda err: ApiError(err.type, err.detail))


@mutant("batch-read-newest-run", reqs=["BATCH-READ"],
        doc="Reading a run by id answers the organization's newest run.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            newest = call.ref.store.one("SELECT id FROM payout_batches WHERE org_id = ? AND mode = ?"
                                        " ORDER BY seq DESC LIMIT 1", (call.org_id, call.mode))
            if newest is not None:
                call.params = {**call.params, "batchId": newest["id"]}
            return original(call)
        return handler

    _wrap(ref, ("getPayoutBatch",), wrap)


@mutant("batch-list-first-run-only", reqs=["BATCH-LIST"], doc="The list of runs holds only the newest run.")
def _(ref: Reference) -> None:
    _rewrite(ref, ("listPayoutBatches",), lambda reply: {**reply.body, "data": reply.body["data"][:1]})


@mutant("batch-items-first-line-only", reqs=["BATCH-ITEMS"], doc="A run's items list holds only its first line.")
def _(ref: Reference) -> None:
    _rewrite(ref, ("listPayoutBatchItems",), lambda reply: {**reply.body, "data": reply.body["data"][:1]})


@mutant("batch-items-status-filter-ignored", reqs=["BATCH-ITEMS-STATUS-FILTER"],
        doc="The items list ignores `status` and answers every line.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            call.query_params = type(call.query_params)([(k, v) for k, v in call.query_params.multi_items()
                                                          if k != "status"])
            return original(call)
        return handler

    _wrap(ref, ("listPayoutBatchItems",), wrap)


@mutant("batch-item-errors-missing", reqs=["BATCH-ITEM-FAILED"],
        doc="A failed line (`invalid`, `create_failed`) is read without `errors[]`.")
def _(ref: Reference) -> None:
    _rewrite(ref, ("listPayoutBatchItems",), lambda reply: {
        **reply.body, "data": [{k: v for k, v in item.items() if k != "errors"} for item in reply.body["data"]]})


@mutant("batch-cancel-not-applied", reqs=["BATCH-T-CANCEL"],
        doc="A cancel answers 200 with the run `canceled`, but the run carries on as if never canceled.")
def _(ref: Reference) -> None:
    ref.batches.cancel = lambda call, row: ref.batches.row(call.ref.store, row["id"])  # type: ignore[method-assign]
    _rewrite(ref, ("cancelPayoutBatch",), lambda reply: {**reply.body, "status": CANCELED})


@mutant("batch-cancel-after-creation", reqs=["BATCH-T-CANCEL-AFTER-CREATION", "ERR-PAYOUT-BATCH-NOT-CANCELABLE"],
        doc="A run whose creation began (completed or failed) is canceled, its payouts left in place.")
def _(ref: Reference) -> None:
    ref.batches.cancelable = (RECEIVED, VALIDATING, AWAITING, COMPLETED, FAILED)


@mutant("batch-confirm-any-state", reqs=["BATCH-T-CONFIRM", "ERR-PAYOUT-BATCH-NOT-CONFIRMABLE"],
        doc="A run is confirmed in any status; PAYOUT_BATCH_NOT_CONFIRMABLE is never answered.")
def _(ref: Reference) -> None:
    ref.batches.confirmable = (RECEIVED, VALIDATING, AWAITING, CANCELED, COMPLETED, FAILED)


@mutant("batch-confirm-creates-nothing", reqs=["BATCH-CONFIRM", "BATCH-T-CONFIRM"],
        doc="A confirmed run completes without creating any payout from its lines.")
def _(ref: Reference) -> None:
    ref.batches.run = lambda call, row: ref.batches.enter(call, row, COMPLETED, call.now)  # type: ignore[method-assign]


@mutant("batch-confirm-answers-201", reqs=["BATCH-CONFIRM"], doc="A confirm that begins creation answers 201.")
def _(ref: Reference) -> None:
    _answer_201(ref, "confirmPayoutBatch")


@mutant("batch-cancel-needs-no-key", reqs=["BATCH-CANCEL-IDEM"],
        doc="Cancelling a run runs without an `Idempotency-Key` (the key is optional).")
def _(ref: Reference) -> None:
    ref.operations["cancelPayoutBatch"] = dataclasses.replace(ref.operations["cancelPayoutBatch"],
                                                              idempotency="optional")


@mutant("batch-cancel-answers-old-status", reqs=["BATCH-CANCEL-OK"],
        doc="The cancel answers the run as it was before (not `canceled`), though it is canceled.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            before = call.ref.batches.json(call, call.ref.batches.find(call, call.params["batchId"]))
            return dataclasses.replace(original(call), body=before)
        return handler

    _wrap(ref, ("cancelPayoutBatch",), wrap)


@mutant("batch-not-found-generic", reqs=["ERR-BATCH-NOT-FOUND", "BATCH-CANCEL-NOT-FOUND"],
        doc="An unknown batch id answers 404 NOT_FOUND instead of BATCH_NOT_FOUND.")
def _(ref: Reference) -> None:
    _retype(ref, "BATCH_NOT_FOUND", lambda err: ApiError("NOT_FOUND", "No such batch."))


@mutant("mass-payouts-opt-out-ignored", reqs=["ERR-MASS-PAYOUTS-DISABLED"],
        doc="An organization that opted out of batches (`mass_payouts` off) can still submit runs.")
def _(ref: Reference) -> None:
    ref.batches.enabled = lambda store, org_id: True  # type: ignore[method-assign]


@mutant("batch-approval-ignored", reqs=["ERR-PAYOUT-BATCH-AWAITING-APPROVAL"],
        doc="A run over the approval threshold is confirmed and paid without its approvers.")
def _(ref: Reference) -> None:
    ref.batches.approval_pending = lambda call, row: False  # type: ignore[method-assign]


@mutant("batch-awaiting-approval-without-id", reqs=["ERRBODY-APPROVAL-ID"],
        doc="PAYOUT_BATCH_AWAITING_APPROVAL does not name the approval (`approvalId` missing).")
def _(ref: Reference) -> None:
    _retype(ref, "PAYOUT_BATCH_AWAITING_APPROVAL", lambda err: ApiError(err.type, err.detail))


@mutant("batch-no-awaiting-confirmation-event", reqs=["EVT-BATCH-AWAITING-CONFIRMATION"],
        doc="A run that reaches `awaiting_confirmation` records no payout_batch.awaiting_confirmation event.")
def _(ref: Reference) -> None:
    del ref.batches.events[AWAITING]


@mutant("batch-no-completed-event", reqs=["EVT-BATCH-COMPLETED"],
        doc="A completed run records no payout_batch.completed event.")
def _(ref: Reference) -> None:
    del ref.batches.events[COMPLETED]


@mutant("batch-completed-event-without-counts", reqs=["BATCH-COMPLETED-COUNTS"],
        doc="The payout_batch.completed event carries no `counts`.")
def _(ref: Reference) -> None:
    record = ref.events.record

    def without_counts(org_id: str, mode: str, type_: str, data: dict[str, Any], now: Any) -> str:
        if type_ == "payout_batch.completed":
            data = {k: v for k, v in data.items() if k != "counts"}
        return record(org_id, mode, type_, data, now)

    ref.events.record = without_counts  # type: ignore[method-assign]


@mutant("batch-no-canceled-event", reqs=["EVT-BATCH-CANCELED"],
        doc="A canceled run records no payout_batch.canceled event.")
def _(ref: Reference) -> None:
    del ref.batches.events[CANCELED]


@mutant("batch-no-failed-event", reqs=["EVT-BATCH-FAILED"], doc="A broken run records no payout_batch.failed event.")
def _(ref: Reference) -> None:
    del ref.batches.events[FAILED]


@mutant("batch-validating-event", reqs=["BATCH-EVENTS"],
        doc="A run announces an in-progress event (`payout_batch.validating`) when its validation starts.")
def _(ref: Reference) -> None:
    ref.batches.events[VALIDATING] = "payout_batch.validating"


@mutant("batch-submission-unlimited", reqs=["RATE-BATCH"],
        doc="Batch submission has no limit of its own: only the default 100 per minute applies.")
def _(ref: Reference) -> None:
    ref.ratelimit.per_operation_limits.pop("createPayoutBatch", None)
