"""Balance, balance history, balance transactions and sandbox funding (prefix `/payments/organizations/{orgId}`).

All three reads come from the same append-only `balance_transactions` rows, so they always agree. The
history is ordered by settlement time, oldest first (a held cursor moves forward in time); balance
transactions are newest first with the row id as cursor, as the spec describes.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from typing import Any

from .. import ledger
from ..clock import iso
from ..errors import ApiError
from ..money import fmt
from ..operation import Call, Operation, Reply
from ..paging import by_id_newest_first
from ..validate import check

SANDBOX_CURRENCY = "USD"
# ledger row type -> history (type, status); a failed or returned payout's money coming back is a `reversal`
HISTORY_ENTRY = {"funding": ("funding", "COMPLETED"), "payout": ("payout", "DEBITED"),
                 "payout_return": ("reversal", "RETURNED")}


def get_balance(call: Call) -> Reply:
    """`balances` sums the readable sources per currency (wallet tokens at face value); an unreadable source
    is named in `unavailable` and left out of `balances`, which is then a floor.
    `available` is the provider figure less what holds reserve (the holds are balance transactions)."""
    store = call.ref.store
    amount = ledger.balance(store, call.org_id, call.mode, SANDBOX_CURRENCY)
    held = ledger.reserved(store, call.org_id, call.mode, SANDBOX_CURRENCY)
    unavailable = ledger.unreadable_sources(store, call.org_id, call.mode)
    figure = [] if "provider" in unavailable else [{"currency": SANDBOX_CURRENCY, "amount": fmt(amount)}]
    own = [] if "wallet" in unavailable else ledger.wallet(store, call.org_id, call.mode)
    totals: dict[str, Decimal] = {}
    for source in (*figure, *own):
        totals[source["currency"]] = totals.get(source["currency"], Decimal(0)) + Decimal(source["amount"])
    body: dict[str, Any] = {
        "balances": [{"currency": currency, "amount": fmt(total)} for currency, total in totals.items()],
        "provider": figure,
        "wallet": own,
        "ledger": [{"currency": SANDBOX_CURRENCY, "amount": fmt(amount), "reserved": fmt(held)}],
        "unavailable": unavailable,
    }
    if figure:
        body["available"] = [{"currency": SANDBOX_CURRENCY, "amount": fmt(amount - held)}]
    return Reply(200, body)


def fund_sandbox(call: Call) -> Reply:
    c = check(call.json())
    amount = c.amount("amount", required=True)
    currency = c.string("currency", required=True, choices=(SANDBOX_CURRENCY,))
    c.done()
    assert amount is not None and currency is not None
    if amount <= 0:
        raise ApiError("BAD_REQUEST", "amount must be positive.")
    after = ledger.post(call, type="funding", amount=amount, currency=currency)
    return Reply(200, {"balance": {"currency": currency, "amount": fmt(after)}})


UNTRACKED_NOTE = ("balanceAfter is withheld: movements on a network whose balance is not tracked happened, so the"
                  " running total no longer reconciles with GET balance.")
HOLD_NOTE = ("balanceAfter is withheld: a hold reserves part of the balance (see the balance transactions), so"
             " the running total does not reconcile with GET balance.")


def _withheld_because(call: Call) -> str | None:
    """Why `balanceAfter` cannot be published (the running total does not reconcile with GET balance), or None."""
    store = call.ref.store
    if ledger.flag(store, call.org_id, call.mode, ledger.UNTRACKED) is not None:
        return UNTRACKED_NOTE
    if ledger.reserved(store, call.org_id, call.mode, SANDBOX_CURRENCY):
        return HOLD_NOTE
    return None


def _history_entry(row: sqlite3.Row, withheld: bool) -> dict[str, Any]:
    kind, status = HISTORY_ENTRY[row["type"]]
    entry = {"id": str(row["id"]), "type": kind, "status": status, "amount": row["amount"],
             "currency": row["currency"], "balanceAfter": row["balance_after"], "orderId": row["order_id"],
             "createdAt": row["created_at"]}
    if withheld:
        del entry["balanceAfter"]
    return entry


def balance_history(call: Call) -> Reply:
    if ledger.order_count(call.ref.store, call.org_id, call.mode) > ledger.HISTORY_MAX_ORDERS:
        raise ApiError("HISTORY_TOO_LARGE")
    q = call.query
    limit = q.limit(default=100, low=1, high=500, clamp=True)
    cursor, since = q.get("cursor"), q.instant("since")
    if cursor is not None and since is not None:
        raise ApiError("VALIDATION_ERROR", "Send cursor or since, not both.",
                       errors=[{"field": "cursor", "reason": "not with since"},
                               {"field": "since", "reason": "not with cursor"}])
    scope = f"history:{call.org_id}:{call.mode}"
    after = int(call.ref.cursors.decode(scope, cursor)) if cursor is not None else 0
    sql = ("SELECT * FROM balance_transactions WHERE org_id = ? AND mode = ? AND id > ?"
           f" AND type IN ({','.join('?' * len(HISTORY_ENTRY))})"
           + (" AND created_at > ?" if since else "") + " ORDER BY id LIMIT ?")
    args: list[Any] = [call.org_id, call.mode, after, *HISTORY_ENTRY]
    rows = call.ref.store.all(sql, (*args, *([iso(since)] if since else []), limit + 1))
    note = _withheld_because(call)
    entries = [_history_entry(r, note is not None) for r in rows[:limit]]
    body: dict[str, Any] = {"entries": entries, "hasMore": len(rows) > limit}
    if note is not None:
        body["note"] = note
    if len(rows) > limit:
        body["nextCursor"] = call.ref.cursors.encode(scope, rows[limit - 1]["id"])
    return Reply(200, body)


def _transaction(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": str(row["id"]), "type": row["type"], "amount": row["amount"], "currency": row["currency"],
            "fee": {"amount": row["fee"], "currency": row["currency"]}, "net": row["net"],
            "balanceAfter": row["balance_after"], "orderId": row["order_id"],
            "createdAt": row["created_at"]}


def balance_transactions(call: Call) -> Reply:
    q = call.query
    limit = q.limit(default=100, low=1, high=100)
    where: list[str] = []
    args: list[Any] = []
    types = q.csv("type", ledger.TRANSACTION_TYPES)
    if types:
        where.append(f"type IN ({','.join('?' * len(types))})")
        args += types
    for name, clause in (("orderId", "order_id = ?"), ("currency", "currency = ?")):
        value = q.get(name)
        if value is not None:
            where.append(clause)
            args.append(value)
    if ledger.flag(call.ref.store, call.org_id, call.mode, ledger.UNLOADED) is not None:
        return Reply(200, {"data": [], "hasMore": False})
    rows, next_cursor = by_id_newest_first(call, table="balance_transactions", where=where, args=args, limit=limit)
    body: dict[str, Any] = {"data": [_transaction(r) for r in rows], "hasMore": next_cursor is not None}
    if next_cursor:
        body["nextCursor"] = next_cursor
    return Reply(200, body)


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("getBalance", "GET", P + "/balance", get_balance),
    Operation("getBalanceHistory", "GET", P + "/balance/history", balance_history),
    Operation("listBalanceTransactions", "GET", P + "/balance_transactions", balance_transactions),
    Operation("fundSandbox", "POST", P + "/sandbox/funding", fund_sandbox, idempotency="required",
              takes_body=True, sandbox_only=True),
]
