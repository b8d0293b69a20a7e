"""The approval queue over the API (`listPayoutApprovals`, `getPayoutApproval`: readable with an API key)
and the dashboard decisions the operator API stands for (approve, reject, the organization's policy).

Approving executes the held request as the key that sent it would have: the payout is created then
(`executed`, `payoutId`), or the refusal is recorded (`execution_failed`, `error.type`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request

from ..approvals import PENDING, approval_json, kept_request
from ..audit import OPERATOR_USER_ID
from ..auth import Principal
from ..errors import ApiError
from ..keys_operator import org_of
from ..money import parse_decimal
from ..operation import Call, Operation, Reply
from ..paging import by_seq
from ..requestid import request_id_of
from ..validate import Checker
from .payouts import make_payout

if TYPE_CHECKING:
    from ..reference import Reference


def list_approvals(call: Call) -> Reply:
    q = call.query
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="payout_approvals", scope=f"approvals:{call.org_id}:{call.mode}",
        where="org_id = ? AND mode = ?", params=(call.org_id, call.mode),
        limit=q.limit(default=20, low=1, high=100), cursor=q.get("cursor"),
    )
    find = call.ref.approvals.find
    body: dict[str, Any] = {"data": [approval_json(find(call.ref.store, call.org_id, call.mode, r["id"], call.now))
                                     for r in rows]}
    if next_cursor:
        body["nextCursor"] = next_cursor
    return Reply(200, body)


def get_approval(call: Call) -> Reply:
    row = call.ref.approvals.find(call.ref.store, call.org_id, call.mode, call.params["approvalId"], call.now)
    if row is None:
        raise ApiError("NOT_FOUND", "No such approval in this organization.")
    return Reply(200, approval_json(row))


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("listPayoutApprovals", "GET", P + "/payouts/approvals", list_approvals),
    Operation("getPayoutApproval", "GET", P + "/payouts/approvals/{approvalId}", get_approval),
]


# -- operator (dashboard) -------------------------------------------------------------------------------

def _pending(ref: Reference, request: Request) -> tuple[str, Any]:
    org_id, approval_id = org_of(ref, request), request.path_params["approvalId"]
    now = ref.clock.now(org_id)
    row = None
    for mode in ("test", "live"):
        row = row or ref.approvals.find(ref.store, org_id, mode, approval_id, now)
    if row is None:
        raise ApiError("NOT_FOUND", "No such approval in this organization.")
    if row["status"] != PENDING:
        raise ApiError("CONFLICT", f"The approval is {row['status']}; only a pending approval can be decided.")
    return org_id, row


def execute(ref: Reference, request: Request, org_id: str, row: Any) -> None:
    """Run the held request now, as the key that sent it; record `executed` or `execution_failed`."""
    raw, scopes = kept_request(row)
    now = ref.clock.now(org_id)
    call = Call(ref=ref, op=ref.operations["createPayout"], request_id=request_id_of(request),
                principal=Principal(key_id="approval", org_id=org_id, mode=row["mode"], prefix="", scopes=scopes),
                org_id=org_id, path=request.url.path, params={"orgId": org_id}, query_params=QueryParams(""),
                headers=Headers(), raw_body=raw, now=now)
    try:
        reply = make_payout(call, approved=True)
    except ApiError as err:
        ref.approvals.decide(ref.store, row, "execution_failed", now, error_type=err.type,
                             approvals=row["approvals"] + 1)
        return
    ref.approvals.decide(ref.store, row, "executed", now, payout_id=reply.body["payoutId"],
                         approvals=row["approvals"] + 1)


def _audit(ref: Reference, request: Request, org_id: str, row: Any, action: str) -> None:
    ref.audit.record(org_id=org_id, mode=row["mode"], action=action, resource_id=row["id"],
                     request_id=request_id_of(request), outcome="succeeded", actor_user_id=OPERATOR_USER_ID)


def approve(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id, row = _pending(ref, request)
    _audit(ref, request, org_id, row, "payout_approval.approve")
    ref.approvals.decide(ref.store, row, "approved", ref.clock.now(org_id), approvals=row["approvals"] + 1)
    if row["kind"] == "payout":  # an approved batch stays `approved`: its confirm then creates the payouts
        execute(ref, request, org_id, row)
    return 200, approval_json(ref.approvals.find(ref.store, org_id, row["mode"], row["id"], ref.clock.now(org_id)))


def reject(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id, row = _pending(ref, request)
    _audit(ref, request, org_id, row, "payout_approval.reject")
    ref.approvals.decide(ref.store, row, "rejected", ref.clock.now(org_id))
    return 200, approval_json(ref.approvals.find(ref.store, org_id, row["mode"], row["id"], ref.clock.now(org_id)))


def set_policy(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{threshold: "5000.00" | null, velocity_cap: {count, window_seconds} | null, mode?: "test"}`."""
    org_id = org_of(ref, request)
    c = Checker(body)
    mode = c.string("mode", choices=("test", "live")) or "test"
    threshold = body.get("threshold")
    amount: Decimal | None = parse_decimal(threshold) if threshold is not None else None
    if threshold is not None and (amount is None or amount <= 0):
        c.fail("threshold", "a positive decimal string or null")
    cap = c.nested("velocity_cap")
    count = cap.integer("count", required=True, low=1, high=100000) if cap else None
    window = cap.integer("window_seconds", required=True, low=1, high=10 * 86400) if cap else None
    c.done()
    ref.approvals.set_policy(ref.store, org_id, mode, amount, count, window)
    return 200, {"orgId": org_id, "mode": mode, "threshold": threshold,
                 "velocity_cap": {"count": count, "window_seconds": window} if cap else None}
