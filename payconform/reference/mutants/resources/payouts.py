"""Mutants of the Resources part for quotes, payouts, orders, approvals and batches.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...resources.batches import RECEIVED, VALIDATING
from ...core.errors import ApiError
from ...states.lifecycle import PROCESSING, Step
from ...core.operation import Call, Reply
from ..patching import Handler, around
from ..registry import mutant
from ..support.payouts import (
    retype_batch_refusal, rewrite_approvals, rewrite_batch_replies, rewrite_reads, wrap_batch_operations,
)

if TYPE_CHECKING:
    from ...reference import Reference


def _rewrite_answer(ref: Reference, op_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """The 2xx answers of `op_id` go through `change`."""
    @around(ref, op_id)
    def handler(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body=change(dict(reply.body)))


@mutant("approval-fields-missing", reqs=["APPROVAL-FIELDS"],
        doc="Approvals are read without `requiredApprovals` and `approvals`.")
def approval_fields_missing(ref: Reference) -> None:
    rewrite_approvals(ref, lambda a: {k: v for k, v in a.items() if k not in ("requiredApprovals", "approvals")})


@mutant("approval-counts-the-requester", reqs=["APPROVAL-FIELDS"],
        doc="`approvals` counts the requester: an approval no approver has decided reads `approvals: 1`.")
def approval_counts_the_requester(ref: Reference) -> None:
    rewrite_approvals(ref, lambda a: {**a, "approvals": a["approvals"] + 1} if "approvals" in a else a)


@mutant("batch-status-queued", reqs=["BATCH-STATUS-VALUES"],
        doc="A run not yet validated reads `queued`, a status outside the spec's six.")
def batch_status_queued(ref: Reference) -> None:
    def change(reply: Reply) -> Any:
        body = reply.body
        return {**body, "status": "queued"} if body.get("status") in (RECEIVED, VALIDATING) else body

    rewrite_batch_replies(ref, ("createPayoutBatch", "getPayoutBatch"), change)


@mutant("batch-external-reference-dropped", reqs=["BATCH-EXTERNAL-REFERENCE"],
        doc="A run is read without its `externalReferenceId`.")
def batch_external_reference_dropped(ref: Reference) -> None:
    rewrite_batch_replies(ref, ("getPayoutBatch",),
             lambda reply: {k: v for k, v in reply.body.items() if k != "externalReferenceId"})


@mutant("batch-external-reference-reusable", reqs=["ERR-PAYOUT-BATCH-DUPLICATE-REFERENCE", "BATCH-EXTERNAL-REFERENCE"],
        doc="A second run under a taken `externalReferenceId` is accepted.")
def batch_external_reference_reusable(ref: Reference) -> None:
    ref.batches.duplicate_of = lambda call, external_reference_id: None  # type: ignore[method-assign]


@mutant("batch-duplicate-without-original-id", reqs=["ERRBODY-ORIGINAL-BATCH-ID"],
        doc="PAYOUT_BATCH_DUPLICATE_REFERENCE does not name the run (`originalBatchId` missing).")
def batch_duplicate_without_original_id(ref: Reference) -> None:
    retype_batch_refusal(ref, "PAYOUT_BATCH_DUPLICATE_REFERENCE", lambda err: ApiError(err.type, err.detail))


@mutant("batch-items-status-filter-ignored", reqs=["BATCH-ITEMS-STATUS-FILTER"],
        doc="The items list ignores `status` and answers every line.")
def batch_items_status_filter_ignored(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            call.query_params = type(call.query_params)([(k, v) for k, v in call.query_params.multi_items()
                                                          if k != "status"])
            return original(call)
        return handler

    wrap_batch_operations(ref, ("listPayoutBatchItems",), wrap)


@mutant("batch-item-errors-missing", reqs=["BATCH-ITEM-FAILED"],
        doc="A failed line (`invalid`, `create_failed`) is read without `errors[]`.")
def batch_item_errors_missing(ref: Reference) -> None:
    rewrite_batch_replies(ref, ("listPayoutBatchItems",), lambda reply: {
        **reply.body, "data": [{k: v for k, v in item.items() if k != "errors"} for item in reply.body["data"]]})


@mutant("batch-awaiting-approval-without-id", reqs=["ERRBODY-APPROVAL-ID"],
        doc="PAYOUT_BATCH_AWAITING_APPROVAL does not name the approval (`approvalId` missing).")
def batch_awaiting_approval_without_id(ref: Reference) -> None:
    retype_batch_refusal(ref, "PAYOUT_BATCH_AWAITING_APPROVAL", lambda err: ApiError(err.type, err.detail))


@mutant("batch-completed-event-without-counts", reqs=["BATCH-COMPLETED-COUNTS"],
        doc="The payout_batch.completed event carries no `counts`.")
def batch_completed_event_without_counts(ref: Reference) -> None:
    record = ref.events.record

    def without_counts(org_id: str, mode: str, type_: str, data: dict[str, Any], now: Any) -> str:
        if type_ == "payout_batch.completed":
            data = {k: v for k, v in data.items() if k != "counts"}
        return record(org_id, mode, type_, data, now)

    ref.events.record = without_counts  # type: ignore[method-assign]


@mutant("self-funded-flag-false", reqs=["PAYOUT-REQUIRES-FUNDING"],
        doc="Every payout reads `requiresFunding: false`, including one waiting on the organization's own funds.")
def self_funded_flag_false(ref: Reference) -> None:
    def change(p: dict[str, Any]) -> dict[str, Any]:
        return {**p, "requiresFunding": False}

    rewrite_reads(ref, change)

    @around(ref, "createPayout")
    def create_payout(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body=change(reply.body)) if reply.status == 201 else reply


@mutant("payout-canceled-with-completed-at", reqs=["PAYOUT-COMPLETED-AT-FAILED-CANCELED"],
        doc="A canceled payout is read with a `completedAt`, which stays null on canceled payloads.")
def payout_canceled_with_completed_at(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "completedAt": p.get("createdAt")} if p.get("status") == "canceled" else p)


@mutant("payout-completed-at-from-creation", reqs=["PAYOUT-COMPLETED-AT"],
        doc="Payout reads carry `completedAt` (the creation instant) before the payout completed.")
def payout_completed_at_from_creation(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "completedAt": p.get("completedAt") or p.get("createdAt")})


@mutant("payout-failed-without-failure-code", reqs=["PAYOUT-FAILURE-CODE"],
        doc="A failed payout is read without its `failureCode`.")
def payout_failed_without_failure_code(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {k: v for k, v in p.items() if k != "failureCode"})


@mutant("payout-failed-without-funds-returned", reqs=["PAYOUT-FUNDS-RETURNED"],
        doc="A failed payout is read without `fundsReturned`.")
def payout_failed_without_funds_returned(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {k: v for k, v in p.items() if k != "fundsReturned"})


@mutant("payout-returned-without-failure-code", reqs=["PAYOUT-FAILURE-CODE"],
        doc="A payout the bank returned is read without `failureCode`; only a payout that failed outright has one.")
def payout_returned_without_failure_code(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {k: v for k, v in p.items()
                                  if not (k == "failureCode" and v == "returned_by_bank")})


@mutant("payout-canceled-without-funds-returned", reqs=["PAYOUT-FUNDS-RETURNED"],
        doc="A canceled payout is read without `fundsReturned`; only failed and returned payouts carry it.")
def payout_canceled_without_funds_returned(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {k: v for k, v in p.items()
                                  if not (k == "fundsReturned" and p.get("status") == "canceled")})


@mutant("payout-failed-sets-completed-at", reqs=["PAYOUT-COMPLETED-AT-FAILED-CANCELED"],
        doc="Failing a payout stamps `completedAt`, which stays null on failed payloads.")
def payout_failed_sets_completed_at(ref: Reference) -> None:
    failed = Step(30, "payout.failed", "failed", "account_invalid", True, completes=True)
    ref.lifecycle.timelines["0003"] = (PROCESSING, failed)


@mutant("payout-return-clears-completed-at", reqs=["PAYOUT-COMPLETED-AT-RETURNED"],
        doc="A returned payout is read with `completedAt: null`, though a returned payload keeps it.")
def payout_return_clears_completed_at(ref: Reference) -> None:
    def change(p: dict[str, Any]) -> dict[str, Any]:
        return {**p, "completedAt": None} if p.get("failureCode") == "returned_by_bank" else p

    rewrite_reads(ref, change)


@mutant("payout-read-amounts-as-numbers", reqs=["PAYOUT-FIELDS"],
        doc="Payout reads carry `sourceAmount` and `destinationAmount` as JSON numbers, not decimal strings.")
def payout_read_amounts_as_numbers(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "sourceAmount": float(p["sourceAmount"]),
                                  "destinationAmount": float(p["destinationAmount"])})


@mutant("payout-fee-flat", reqs=["PAYOUT-FEE-OBJECT"],
        doc="Payout reads carry `fee` as a bare amount string instead of `{currency, amount}`.")
def payout_fee_flat(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "fee": p["fee"]["amount"]})


@mutant("payout-reference-dropped", reqs=["PAYOUT-REFERENCE"],
        doc="Payout reads omit the caller's `reference`.")
def payout_reference_dropped(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {k: v for k, v in p.items() if k != "reference"})


@mutant("payout-status-uppercase", reqs=["PAYOUT-STATUS-VALUES"],
        doc="Payout reads spell the status in upper case (`PENDING`), outside the spec's values.")
def payout_status_uppercase(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "status": str(p["status"]).upper()})


@mutant("rege-lines-unsigned", reqs=["DISC-REGE-SHAPE"],
        doc="The RegEDisclosure lines of quotes and sends carry no `sign`.")
def rege_lines_unsigned(ref: Reference) -> None:
    def unsigned(body: dict[str, Any]) -> dict[str, Any]:
        disclosure = body.get("disclosure")
        if isinstance(disclosure, dict):
            lines = [{k: v for k, v in line.items() if k != "sign"} for line in disclosure.get("lines", [])]
            body["disclosure"] = {**disclosure, "lines": lines}
        return body

    for op_id in ("pricePayout", "sendPayout"):
        _rewrite_answer(ref, op_id, unsigned)


@mutant("rege-kind-pre-payment", reqs=["DISC-REGE-SHAPE"],
        doc="The RegEDisclosure of a quote spells its `kind` `pre_payment`, not `prepayment`.")
def rege_kind_pre_payment(ref: Reference) -> None:
    def respelled(body: dict[str, Any]) -> dict[str, Any]:
        disclosure = body.get("disclosure")
        if isinstance(disclosure, dict) and disclosure.get("kind") == "prepayment":
            body["disclosure"] = {**disclosure, "kind": "pre_payment"}
        return body

    _rewrite_answer(ref, "pricePayout", respelled)


@mutant("funding-accounts-unsettled", reqs=["DISC-FUNDING-ACCOUNT"],
        doc="Funding accounts are listed without `settlesTo`.")
def funding_accounts_unsettled(ref: Reference) -> None:
    _rewrite_answer(ref, "getFundingAccounts", lambda body: {
        **body, "data": [{k: v for k, v in a.items() if k != "settlesTo"} for a in body["data"]]})


@mutant("payment-reasons-one-missing", reqs=["DISC-PAYMENT-REASONS"],
        doc="GET /payment-reasons leaves one of the 18 listed values out.")
def payment_reasons_one_missing(ref: Reference) -> None:
    _rewrite_answer(ref, "listPaymentReasons", lambda body: {**body, "data": body["data"][:-1]})
