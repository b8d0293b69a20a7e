"""Balance, balance history, balance transactions and sandbox funding (prefix `/payments/organizations/{orgId}`).

The history is ordered by settlement time, oldest first (a held cursor moves forward in time); balance
transactions are newest first with the row id as cursor, as the spec describes. What each shows: `balances.py`.
"""

from __future__ import annotations

from typing import Any

from ..resources import balances, ledger
from ..resources.balances import SANDBOX_CURRENCY
from ..core.errors import ApiError
from ..core.money import fmt
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_id_newest_first, page
from ..core.validate import check


def get_balance(call: Call) -> Reply:
    return Reply(200, balances.summary(call.ref.store, call.org_id, call.mode))


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


def balance_history(call: Call) -> Reply:
    store = call.ref.store
    balances.check_history_size(store, call.org_id, call.mode)
    q = call.query
    limit = q.limit(default=100, low=1, high=500, clamp=True)
    cursor, since = q.get("cursor"), q.instant("since")
    if cursor is not None and since is not None:
        raise ApiError("VALIDATION_ERROR", "Send cursor or since, not both.",
                       errors=[{"field": "cursor", "reason": "not with since"},
                               {"field": "since", "reason": "not with cursor"}])
    scope = f"history:{call.org_id}:{call.mode}"
    after = int(call.ref.cursors.decode(scope, cursor)) if cursor is not None else 0
    rows = balances.history_rows(store, call.org_id, call.mode, after, since, limit + 1)
    note = balances.withheld_because(store, call.org_id, call.mode)
    entries = [balances.history_entry(r, note is not None) for r in rows[:limit]]
    body: dict[str, Any] = {"entries": entries, "hasMore": len(rows) > limit}
    if note is not None:
        body["note"] = note
    if len(rows) > limit:
        body["nextCursor"] = call.ref.cursors.encode(scope, rows[limit - 1]["id"])
    return Reply(200, body)


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
        return Reply(200, page(call, [], hasMore=False))
    rows, next_cursor = by_id_newest_first(call, table="balance_transactions", where=where, args=args, limit=limit)
    rendered = [balances.transaction_json(r) for r in rows]
    return Reply(200, page(call, rendered, next_cursor, hasMore=next_cursor is not None))


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("getBalance", "GET", P + "/balance", get_balance),
    Operation("getBalanceHistory", "GET", P + "/balance/history", balance_history),
    Operation("listBalanceTransactions", "GET", P + "/balance_transactions", balance_transactions),
    Operation("fundSandbox", "POST", P + "/sandbox/funding", fund_sandbox, idempotency="required",
              takes_body=True, sandbox_only=True),
]
