"""The ledger list operations and the rewrites of their rows and queries that the mutants of several
parts share.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from starlette.datastructures import QueryParams

from ...core.clock import iso, parse_instant
from ...core.operation import Call, Reply
from ..patching import Handler, around

if TYPE_CHECKING:
    from ...reference import Reference


HISTORY, BTX, AUDIT = "getBalanceHistory", "listBalanceTransactions", "listAuditEvents"


def limit_asked(call: Call) -> int | None:
    raw = call.query_params.get("limit")
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def rewrite_balance(ref: Reference, change: Any) -> None:
    @around(ref, "getBalance")
    def get_balance(original: Handler, call: Call) -> Reply:
        reply = original(call)
        change(reply.body)
        return reply


def rewrite_entries(ref: Reference, change: Any) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        reply = original(call)
        change(reply.body)
        return reply


def unlisted(ref: Reference, types: tuple[str, ...]) -> None:
    """Balance transactions leave out the rows of these types."""
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body["data"] = [row for row in reply.body["data"] if row["type"] not in types]
        return reply


# list operation -> the key of its items; history pages forward in time (`id > p`), the others backwards
LISTS = {"getBalanceHistory": "entries", "listBalanceTransactions": "data", "listAuditEvents": "data",
         "listBeneficiaries": "data", "listCheckoutProducts": "data", "listCheckoutLinks": "data",
         "listCheckoutPayments": "data", "listPayouts": "data", "listPayoutApprovals": "data",
         "listPayoutBatches": "data", "listPayoutBatchItems": "data", "listOrders": "data"}


ID_CURSOR = {"listBalanceTransactions", "listAuditEvents"}  # the cursor is the row id itself


def lists(ref: Reference, names: Any = LISTS) -> list[str]:
    return [op_id for op_id in names if op_id in ref.operations]


def with_query(call: Call, **changes: str | None) -> Call:
    """The same call with query parameters replaced (None removes one)."""
    items = [(k, v) for k, v in call.query_params.multi_items() if k not in changes]
    items += [(k, v) for k, v in changes.items() if v is not None]
    return dataclasses.replace(call, query_params=QueryParams(items))


def bound_moved_back(ref: Reference, op_id: str, param: str) -> None:
    """The instant `param` of `op_id` is read a millisecond earlier: a row exactly at an exclusive bound gets in,
    or one exactly at an inclusive bound is left out."""
    @around(ref, op_id)
    def moved(original: Handler, call: Call) -> Reply:
        at = parse_instant(call.query_params.get(param) or "")
        return original(with_query(call, **{param: iso(at - timedelta(milliseconds=1))}) if at else call)
