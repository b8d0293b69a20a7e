"""The approval queue over the API (`listPayoutApprovals`, `getPayoutApproval`: readable with an API key).

Deciding is the dashboard's (`operator/approvals.py`); the rules are `approvals.py`.
"""

from __future__ import annotations


from ..resources.approvals import approval_json
from ..core.errors import ApiError
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_seq, page


def list_approvals(call: Call) -> Reply:
    q = call.query
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="payout_approvals", scope=f"approvals:{call.org_id}:{call.mode}",
        where="org_id = ? AND mode = ?", params=(call.org_id, call.mode),
        limit=q.limit(default=20, low=1, high=100), cursor=q.get("cursor"),
    )
    find = call.ref.approvals.find
    rendered = [approval_json(find(call.ref.store, call.org_id, call.mode, r["id"], call.now)) for r in rows]
    return Reply(200, page(call, rendered, next_cursor))


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
