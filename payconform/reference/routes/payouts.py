"""Payouts over the API: create, cancel, read, list, look up by reference (the rules: `payouts.py`).

Two dependencies the operator can break (fault `timeout`): the payment network a new payout is handed to
(`payoutNetwork`: the outcome is unknown, 500 PAYOUT_OUTCOME_UNKNOWN, the key kept) and the network read
behind a lookup by reference (`ordersNetwork`: 503 ORDERS_TEMPORARILY_UNAVAILABLE, never a partial list).
"""

from __future__ import annotations

from typing import Any

from ..resources import payouts
from ..resources.funding import NETWORK as PAYOUT_NETWORK
from ..resources.payouts import ORDERS_NETWORK
from ..core.errors import ApiError, field_error
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_seq, page
from ..resources.payout_view import payout_json


def create_payout(call: Call) -> Reply:
    reply = payouts.make_payout(call)
    if reply.status == 201 and call.ref.faults.take(call.org_id, PAYOUT_NETWORK, "timeout") is not None:
        raise ApiError("PAYOUT_OUTCOME_UNKNOWN", "The payment network did not answer: the payout may exist. "
                       "Look it up by reference before acting, never under a new key.")
    return reply


def get_payout(call: Call) -> Reply:
    return Reply(200, payout_json(payouts.find(call, call.params["payoutId"])))


def cancel_payout(call: Call) -> Reply:
    row = payouts.cancel(call, call.params["payoutId"])
    return Reply(200, payout_json(row), row["id"])


def _page(call: Call, rows: list[Any], next_cursor: str | None) -> Reply:
    return Reply(200, page(call, [payout_json(call.ref.lifecycle.settle(call, r)) for r in rows], next_cursor))


def find_by_reference(call: Call) -> Reply:
    """Payouts with that caller reference, newest first, cursor-paged like the payout list."""
    q = call.query
    reference = q.get("reference")
    if not reference:
        raise field_error("reference", "required")
    if call.ref.faults.take(call.org_id, ORDERS_NETWORK, "timeout") is not None:
        raise ApiError("ORDERS_TEMPORARILY_UNAVAILABLE", "The network read did not answer; try again.")
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="payouts", scope=f"orders:{call.org_id}:{call.mode}:{reference}",
        where="org_id = ? AND mode = ? AND reference = ?", params=(call.org_id, call.mode, reference),
        limit=q.limit(default=20, low=1, high=100), cursor=q.get("cursor"),
    )
    return _page(call, rows, next_cursor)


def list_payouts(call: Call) -> Reply:
    q = call.query
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="payouts", scope=f"payouts:{call.org_id}:{call.mode}",
        where="org_id = ? AND mode = ?", params=(call.org_id, call.mode),
        limit=q.limit(default=20, low=1, high=100), cursor=q.get("cursor"),
    )
    return _page(call, rows, next_cursor)


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("createPayout", "POST", P + "/payouts", create_payout, idempotency="required", money_write=True,
              takes_body=True, audit="payout.create"),
    Operation("cancelPayout", "POST", P + "/payouts/{payoutId}/cancel", cancel_payout, idempotency="required",
              audit="payout.cancel"),
    Operation("listPayouts", "GET", P + "/payouts", list_payouts),
    Operation("getPayout", "GET", P + "/payouts/{payoutId}", get_payout),
    Operation("getOrder", "GET", P + "/orders/{payoutId}", get_payout),
    Operation("listOrders", "GET", P + "/orders", find_by_reference),
]
