"""Mutants of payout approvals: the policy (threshold, velocity cap), the 24-hour expiry, the decisions
and the queue read with an API key. Each patches this server's `ref.approvals` or wraps an approval read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import ApiError
from ..operation import Call, Reply
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference

Handler = Callable[[Call], Reply]
QUEUE = ("listPayoutApprovals", "getPayoutApproval")


def rewrite_approvals(ref: Reference, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Every approval the queue reads answer goes through `change`."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            body = reply.body
            if isinstance(body.get("data"), list):
                body = {**body, "data": [change(dict(a)) for a in body["data"]]}
            else:
                body = change(dict(body))
            return dataclasses.replace(reply, body=body)
        return handler

    for op_id in QUEUE:
        ref.wrap_handler(op_id, wrap)


def on_decide(ref: Reference, change: Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]] | None]) -> None:
    """Route every recorded decision through `change(status, fields)`; None drops the decision."""
    original = ref.approvals.decide

    def decide(store: Any, row: Any, status: str, now: Any, **fields: Any) -> None:
        changed = change(status, fields)
        if changed is not None:
            original(store, row, changed[0], now, **changed[1])

    ref.approvals.decide = decide  # type: ignore[method-assign]


def without_policy(ref: Reference, op_id: str) -> None:
    """While `op_id`'s handler runs no approval threshold or velocity cap applies; other routes keep them."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            applies = ref.approvals.applies
            ref.approvals.applies = lambda call, amount: False  # type: ignore[method-assign]
            try:
                return original(call)
            finally:
                ref.approvals.applies = applies  # type: ignore[method-assign]
        return handler

    ref.wrap_handler(op_id, wrap)


@mutant("approval-threshold-ignored", reqs=["PAYOUT-T-CREATE-APPROVAL", "APPROVAL-T-PENDING"],
        doc="A payout at the approval threshold is created at once instead of being held (202).")
def _(ref: Reference) -> None:
    ref.approvals.default_threshold = None


@mutant("velocity-cap-ignored", reqs=["PAYOUT-CREATE"],
        doc="The organization's velocity cap is not enforced; only the amount threshold holds payouts.")
def _(ref: Reference) -> None:
    original = ref.approvals.policy
    ref.approvals.policy = lambda store, org_id, mode: (original(store, org_id, mode)[0], None, None)  # type: ignore[method-assign]


@mutant("approval-expires-after-48-hours", reqs=["APPROVAL-T-EXPIRED", "APPROVAL-EXPIRY-LIMIT", "APPROVAL-EXPIRES-AT"],
        doc="Undecided approvals expire 48 hours after creation instead of 24.")
def _(ref: Reference) -> None:
    ref.approvals.lifetime = timedelta(hours=48)


@mutant("approval-expires-early", reqs=["APPROVAL-T-EXPIRED", "APPROVAL-EXPIRY-LIMIT"],
        doc="Undecided approvals expire after 23 hours, before the 24 the spec gives.")
def _(ref: Reference) -> None:
    ref.approvals.lifetime = timedelta(hours=23)


@mutant("approval-approve-ignored", reqs=["APPROVAL-T-APPROVED"],
        doc="Approving a held payout leaves the approval pending.")
def _(ref: Reference) -> None:
    on_decide(ref, lambda status, fields: None if status != "rejected" else (status, fields))


@mutant("approval-approved-never-executed", reqs=["APPROVAL-T-EXECUTED"],
        doc="An approved payout's approval stays `approved`; it never reads `executed`.")
def _(ref: Reference) -> None:
    on_decide(ref, lambda status, fields: ("approved", fields) if status == "executed" else (status, fields))


@mutant("approval-executed-without-payout-id", reqs=["APPROVAL-T-EXECUTED"],
        doc="An executed approval does not carry the `payoutId` that joins it to its payout.")
def _(ref: Reference) -> None:
    rewrite_approvals(ref, lambda a: {k: v for k, v in a.items() if k != "payoutId"})


@mutant("approval-reject-ignored", reqs=["APPROVAL-T-REJECTED"],
        doc="Rejecting a held payout leaves the approval pending.")
def _(ref: Reference) -> None:
    on_decide(ref, lambda status, fields: None if status == "rejected" else (status, fields))


@mutant("approval-execution-failed-without-error", reqs=["APPROVAL-T-EXECUTION-FAILED"],
        doc="A failed execution is recorded without the refusal's error `type`.")
def _(ref: Reference) -> None:
    on_decide(ref, lambda status, fields: (status, {**fields, "error_type": None}))


@mutant("approval-fields-missing", reqs=["APPROVAL-FIELDS"],
        doc="Approvals are read without `requiredApprovals` and `approvals`.")
def _(ref: Reference) -> None:
    rewrite_approvals(ref, lambda a: {k: v for k, v in a.items() if k not in ("requiredApprovals", "approvals")})


@mutant("approval-queue-dashboard-only", reqs=["APPROVAL-QUEUE-READABLE"],
        doc="The approval queue refuses API keys (403 FORBIDDEN), as if reading it were a dashboard action.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            raise ApiError("FORBIDDEN", "The approval queue is read in the dashboard.")
        return handler

    for op_id in QUEUE:
        ref.wrap_handler(op_id, wrap)


@mutant("approval-queue-first-only", reqs=["APPROVAL-LIST"],
        doc="The approval queue lists only its newest approval, whatever the `limit`.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            return dataclasses.replace(reply, body={**reply.body, "data": reply.body["data"][:1]})
        return handler

    ref.wrap_handler("listPayoutApprovals", wrap)


@mutant("approval-read-returns-newest", reqs=["APPROVAL-READ"],
        doc="GET /payouts/approvals/{approvalId} answers the organization's newest approval, whatever the id.")
def _(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            newest = ref.store.one("SELECT id FROM payout_approvals WHERE org_id = ? AND mode = ?"
                                   " ORDER BY rowid DESC LIMIT 1", (call.org_id, call.mode))
            if newest is not None:
                call.params["approvalId"] = newest["id"]
            return original(call)
        return handler

    ref.wrap_handler("getPayoutApproval", wrap)
