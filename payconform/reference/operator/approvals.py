"""The dashboard decisions on payout approvals the operator API stands for: approve, reject, set the policy.

Approving executes the held request as the key that sent it would have (`payouts.execute_approved`): the payout is
created then (`executed`, `payoutId`), or the refusal is recorded (`execution_failed`, `error.type`). An
approved batch stays `approved`: its confirm then creates the payouts.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from ..resources.approvals import PENDING, approval_json
from ..core.errors import ApiError
from ..core.money import parse_decimal
from ..resources.payouts import execute_approved
from ..core.requestid import request_id_of
from ..core.validate import Checker
from .audit import record
from .endpoint import OperatorRoute, org_of

if TYPE_CHECKING:
    from .server import OperatorServer


def _pending(ref: OperatorServer, request: Request) -> tuple[str, Any]:
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


def _answer(ref: OperatorServer, org_id: str, row: Any) -> tuple[int, Any]:
    return 200, approval_json(ref.approvals.find(ref.store, org_id, row["mode"], row["id"], ref.clock.now(org_id)))


def approve(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id, row = _pending(ref, request)
    record(ref, request, org_id, row["mode"], "payout_approval.approve", row["id"])
    ref.approvals.decide(ref.store, row, "approved", ref.clock.now(org_id), approvals=row["approvals"] + 1)
    if row["kind"] == "payout":
        execute_approved(ref, org_id, row, request_id_of(request), request.url.path)
    return _answer(ref, org_id, row)


def reject(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id, row = _pending(ref, request)
    record(ref, request, org_id, row["mode"], "payout_approval.reject", row["id"])
    ref.approvals.decide(ref.store, row, "rejected", ref.clock.now(org_id))
    return _answer(ref, org_id, row)


def set_policy(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
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


ROUTES = [
    OperatorRoute("/orgs/{orgId}/approvals/{approvalId}/approve", approve, "POST"),
    OperatorRoute("/orgs/{orgId}/approvals/{approvalId}/reject", reject, "POST"),
    OperatorRoute("/orgs/{orgId}/approval-policy", set_policy, "PUT"),
]
