"""Mutants of the Endpoints part about the paging and order of the ledger lists.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.operation import Call, Reply
from ..patching import Handler, around
from ..registry import mutant
from ..support.ledger import BTX, ID_CURSOR, LISTS, lists, with_query

if TYPE_CHECKING:
    from ...reference import Reference


def _reverse_pages(ref: Reference, op_id: str) -> None:
    @around(ref, op_id)
    def handler(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body[LISTS[op_id]].reverse()
        return reply


@mutant("btx-cursor-inclusive", reqs=["BTX-CURSOR-OLDER"],
        doc="`cursor=<id>` lists the row with that id too, not only strictly older rows.")
def btx_cursor_inclusive(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        cursor = call.query_params.get("cursor")
        return original(with_query(call, cursor=str(int(cursor) + 1)) if cursor and cursor.isdigit() else call)


@mutant("btx-oldest-first", reqs=["BTX-NEWEST-FIRST"],
        doc="Balance transactions are listed oldest first within each page.")
def btx_oldest_first(ref: Reference) -> None:
    _reverse_pages(ref, "listBalanceTransactions")


@mutant("audit-oldest-first", reqs=["AUDIT-NEWEST-FIRST"],
        doc="Audit events are listed oldest first within each page.")
def audit_oldest_first(ref: Reference) -> None:
    _reverse_pages(ref, "listAuditEvents")


@mutant("history-out-of-settlement-order", reqs=["HIST-ORDER-SETTLEMENT"],
        doc="Balance history pages swap their first two entries, breaking the settlement-time order.")
def history_out_of_settlement_order(ref: Reference) -> None:
    @around(ref, "getBalanceHistory")
    def get_balance_history(original: Handler, call: Call) -> Reply:
        reply = original(call)
        entries = reply.body["entries"]
        if len(entries) > 1:
            entries[0], entries[1] = entries[1], entries[0]
        return reply


@mutant("history-ordered-by-creation", reqs=["HIST-ORDER-SETTLEMENT"],
        doc="Balance history pages are ordered by when each entry's order was created (a deposit's creation, "
            "not its completion), not by settlement time.")
def history_ordered_by_creation(ref: Reference) -> None:
    @around(ref, "getBalanceHistory")
    def get_balance_history(original: Handler, call: Call) -> Reply:
        reply = original(call)

        def created(entry: dict) -> str:
            deposit = call.ref.store.one("SELECT created_at FROM deposits WHERE id = ?", (entry.get("orderId"),))
            return deposit["created_at"] if deposit is not None else entry["createdAt"]

        reply.body["entries"].sort(key=created)
        return reply


@mutant("paging-offset-cursor", reqs=["BTX-CURSOR-OLDER", "AUDIT-NEWEST-FIRST"],
        doc="Balance transactions and audit events page by offset instead of by row id: a row written while a "
            "cursor is held shifts the list and the next page repeats a row.")
def paging_offset_cursor(ref: Reference) -> None:
    for op_id in lists(ref, ID_CURSOR):
        @around(ref, op_id)
        def handler(original: Handler, call: Call, op_id: str = op_id) -> Reply:
            offset = int(call.query_params.get("cursor") or 0)
            limit = int(call.query_params.get("limit") or 50)
            reply = original(with_query(call, cursor=None, limit=str(min(100, offset + limit))))
            more = reply.body.pop("nextCursor", None)
            reply.body["data"] = reply.body["data"][offset:offset + limit]
            if more:
                reply.body["nextCursor"] = str(offset + limit)
            return reply
