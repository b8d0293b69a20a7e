"""Mutants of cursor paging (Conventions, row Paging) and of the order and cursor rules of the ledger lists.

Each wraps the handlers of the list operations on this server instance and rewrites the page they return
(or the cursor they are given), so one mutant breaks one paging rule on every list at once.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import TYPE_CHECKING, Any

from starlette.datastructures import QueryParams

from ..errors import ApiError
from ..operation import Call, Reply
from . import mutant
from .recipients import Handler, around

if TYPE_CHECKING:
    from ..reference import Reference

# list operation -> the key of its items; history pages forward in time (`id > p`), the others backwards
LISTS = {"getBalanceHistory": "entries", "listBalanceTransactions": "data", "listAuditEvents": "data",
         "listBeneficiaries": "data", "listCheckoutProducts": "data", "listCheckoutLinks": "data",
         "listCheckoutPayments": "data", "listPayouts": "data", "listPayoutApprovals": "data",
         "listPayoutBatches": "data", "listPayoutBatchItems": "data", "listOrders": "data"}
ASCENDING = {"getBalanceHistory", "listPayoutBatchItems"}
ID_CURSOR = {"listBalanceTransactions", "listAuditEvents"}  # the cursor is the row id itself


def _lists(ref: Reference, names: Any = LISTS) -> list[str]:
    return [op_id for op_id in names if op_id in ref.operations]


def _with_query(call: Call, **changes: str | None) -> Call:
    """The same call with query parameters replaced (None removes one)."""
    items = [(k, v) for k, v in call.query_params.multi_items() if k not in changes]
    items += [(k, v) for k, v in changes.items() if v is not None]
    return dataclasses.replace(call, query_params=QueryParams(items))


def _shift(ref: Reference, op_id: str, cursor: str, step: int) -> str:
    """The cursor `step` rows further back towards the start of the list."""
    if op_id in ID_CURSOR:
        return str(int(cursor) + step)
    data, _ = cursor.rsplit(".", 1)
    payload = json.loads(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
    return ref.cursors.encode(payload["s"], payload["p"] + (-step if op_id in ASCENDING else step))


@mutant("paging-repeats-boundary-row", reqs=["CONV-PAGING-CURSOR-OPAQUE"],
        doc="Off by one at the page boundary: `nextCursor` points one row back, so the last row of a page is "
            "the first row of the next.")
def _(ref: Reference) -> None:
    for op_id in _lists(ref):
        @around(ref, op_id)
        def _(original: Handler, call: Call, op_id: str = op_id) -> Reply:
            reply = original(call)
            if isinstance(reply.body, dict) and reply.body.get("nextCursor"):
                reply.body["nextCursor"] = _shift(ref, op_id, reply.body["nextCursor"], 1)
            return reply


@mutant("paging-cursor-never-ends", reqs=["CONV-PAGING-LAST-PAGE-NO-CURSOR"],
        doc="`nextCursor` is present on the last page too (the cursor just sent, or a placeholder on a first page).")
def _(ref: Reference) -> None:
    for op_id in _lists(ref):
        @around(ref, op_id)
        def _(original: Handler, call: Call) -> Reply:
            reply = original(call)
            if isinstance(reply.body, dict) and not reply.body.get("nextCursor"):
                reply.body["nextCursor"] = call.query_params.get("cursor") or "end"
            return reply


@mutant("paging-bad-cursor-restarts", reqs=["HIST-INVALID-QUERY", "BTX-INVALID-QUERY", "AUDIT-INVALID-QUERY"],
        doc="A cursor not issued for this organization's list silently restarts the list at its first page.")
def _(ref: Reference) -> None:
    for op_id in _lists(ref):
        @around(ref, op_id)
        def _(original: Handler, call: Call) -> Reply:
            try:
                return original(call)
            except ApiError as err:
                if not any(e.get("field") == "cursor" for e in err.errors or []):
                    raise
                return original(_with_query(call, cursor=None))


def _reverse_pages(ref: Reference, op_id: str) -> None:
    @around(ref, op_id)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body[LISTS[op_id]].reverse()
        return reply


@mutant("btx-oldest-first", reqs=["BTX-NEWEST-FIRST"],
        doc="Balance transactions are listed oldest first within each page.")
def _(ref: Reference) -> None:
    _reverse_pages(ref, "listBalanceTransactions")


@mutant("audit-oldest-first", reqs=["AUDIT-NEWEST-FIRST"],
        doc="Audit events are listed oldest first within each page.")
def _(ref: Reference) -> None:
    _reverse_pages(ref, "listAuditEvents")


@mutant("history-out-of-settlement-order", reqs=["HIST-ORDER-SETTLEMENT"],
        doc="Balance history pages swap their first two entries, breaking the settlement-time order.")
def _(ref: Reference) -> None:
    @around(ref, "getBalanceHistory")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        entries = reply.body["entries"]
        if len(entries) > 1:
            entries[0], entries[1] = entries[1], entries[0]
        return reply


@mutant("paging-offset-cursor", reqs=["BTX-CURSOR-OLDER", "AUDIT-NEWEST-FIRST"],
        doc="Balance transactions and audit events page by offset instead of by row id: a row written while a "
            "cursor is held shifts the list and the next page repeats a row.")
def _(ref: Reference) -> None:
    for op_id in _lists(ref, ID_CURSOR):
        @around(ref, op_id)
        def _(original: Handler, call: Call, op_id: str = op_id) -> Reply:
            offset = int(call.query_params.get("cursor") or 0)
            limit = int(call.query_params.get("limit") or 50)
            reply = original(_with_query(call, cursor=None, limit=str(min(100, offset + limit))))
            more = reply.body.pop("nextCursor", None)
            reply.body["data"] = reply.body["data"][offset:offset + limit]
            if more:
                reply.body["nextCursor"] = str(offset + limit)
            return reply
