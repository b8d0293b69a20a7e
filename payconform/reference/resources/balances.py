"""What the balance reads show: the balance figure, the history's entries, the balance transactions.

All three come from the same append-only `balance_transactions` rows (`ledger.py`), so they always agree.
`balanceAfter` is withheld from the history once the running total no longer reconciles with the balance
(untracked movements, holds).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from decimal import Decimal
from typing import Any

from . import ledger
from ..core.clock import iso
from ..core.errors import ApiError
from ..core.money import fmt, fmt_exact
from ..core.store import Store

SANDBOX_CURRENCY = "USD"
# ledger row type -> history (type, status); a failed or returned payout's money coming back is a `reversal`
HISTORY_ENTRY = {"funding": ("funding", "COMPLETED"), "payout": ("payout", "DEBITED"),
                 "payout_return": ("reversal", "RETURNED")}
UNTRACKED_NOTE = ("balanceAfter is withheld: movements on a network whose balance is not tracked happened, so the"
                  " running total no longer reconciles with GET balance.")
HOLD_NOTE = ("balanceAfter is withheld: a hold reserves part of the balance (see the balance transactions), so"
             " the running total does not reconcile with GET balance.")


def summary(store: Store, org_id: str, mode: str) -> dict[str, Any]:
    """`balances` sums the readable sources per currency (wallet tokens at face value); an unreadable source
    is named in `unavailable` and left out of `balances`, which is then a floor.
    `available` is the provider figure less what holds reserve (the holds are balance transactions)."""
    amount = ledger.balance(store, org_id, mode, SANDBOX_CURRENCY)
    held = ledger.reserved(store, org_id, mode, SANDBOX_CURRENCY)
    unavailable = ledger.unreadable_sources(store, org_id, mode)
    figure = [] if "provider" in unavailable else [{"currency": SANDBOX_CURRENCY, "amount": fmt(amount)}]
    own = [] if "wallet" in unavailable else ledger.wallet(store, org_id, mode)
    totals: dict[str, Decimal] = {}
    for source in (*figure, *own):
        totals[source["currency"]] = totals.get(source["currency"], Decimal(0)) + Decimal(source["amount"])
    body: dict[str, Any] = {
        "balances": [{"currency": currency, "amount": fmt_exact(total)} for currency, total in totals.items()],
        "provider": figure,
        "wallet": own,
        "ledger": [{"currency": SANDBOX_CURRENCY, "amount": fmt(amount), "reserved": fmt(held)}],
        "unavailable": unavailable,
    }
    if figure:
        body["available"] = [{"currency": SANDBOX_CURRENCY, "amount": fmt(amount - held)}]
    return body


def withheld_because(store: Store, org_id: str, mode: str) -> str | None:
    """Why `balanceAfter` cannot be published (the running total does not reconcile with GET balance), or None."""
    if ledger.flag(store, org_id, mode, ledger.UNTRACKED) is not None:
        return UNTRACKED_NOTE
    if ledger.reserved(store, org_id, mode, SANDBOX_CURRENCY):
        return HOLD_NOTE
    return None


def check_history_size(store: Store, org_id: str, mode: str) -> None:
    """HISTORY_TOO_LARGE for an organization with more orders than the history is built from."""
    if ledger.order_count(store, org_id, mode) > ledger.HISTORY_MAX_ORDERS:
        raise ApiError("HISTORY_TOO_LARGE")


def history_rows(store: Store, org_id: str, mode: str, after: int, since: datetime | None,
                 limit: int) -> list[sqlite3.Row]:
    """Up to `limit` history rows after row id `after` (and settled after `since`), oldest first."""
    sql = ("SELECT * FROM balance_transactions WHERE org_id = ? AND mode = ? AND id > ?"
           f" AND type IN ({','.join('?' * len(HISTORY_ENTRY))})"
           + (" AND created_at > ?" if since else "") + " ORDER BY id LIMIT ?")
    args: list[Any] = [org_id, mode, after, *HISTORY_ENTRY]
    return store.all(sql, (*args, *([iso(since)] if since else []), limit))


def history_entry(row: sqlite3.Row, withheld: bool) -> dict[str, Any]:
    kind, status = HISTORY_ENTRY[row["type"]]
    entry = {"id": str(row["id"]), "type": kind, "status": status, "amount": row["amount"],
             "currency": row["currency"], "balanceAfter": row["balance_after"], "orderId": row["order_id"],
             "createdAt": row["created_at"]}
    if withheld:
        del entry["balanceAfter"]
    return entry


def transaction_json(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": str(row["id"]), "type": row["type"], "amount": row["amount"], "currency": row["currency"],
            "fee": {"amount": row["fee"], "currency": row["currency"]}, "net": row["net"],
            "balanceAfter": row["balance_after"], "orderId": row["order_id"],
            "createdAt": row["created_at"]}
