"""Balances and the append-only balance transactions that explain them.

Every movement (sandbox funding in, payouts out, later returns and holds) writes one balance
transaction with the running `balanceAfter`, in the same transaction as the change it records.
"""

from __future__ import annotations

from decimal import Decimal

from .clock import iso
from .money import fmt
from .operation import Call
from .store import Store

TRANSACTION_TYPES = frozenset({"funding", "payout", "payout_return", "hold", "hold_release", "adjustment"})


def balance(store: Store, org_id: str, mode: str, currency: str) -> Decimal:
    row = store.one(
        "SELECT amount FROM balances WHERE org_id = ? AND mode = ? AND currency = ?", (org_id, mode, currency)
    )
    return Decimal(row["amount"]) if row else Decimal(0)


def post(call: Call, *, type: str, amount: Decimal, currency: str, order_id: str | None = None) -> Decimal:
    """Move `amount` (signed) in or out of the balance; returns the balance after it."""
    store = call.ref.store
    after = balance(store, call.org_id, call.mode, currency) + amount
    store.run(
        "INSERT INTO balances (org_id, mode, currency, amount) VALUES (?,?,?,?)"
        " ON CONFLICT (org_id, mode, currency) DO UPDATE SET amount = excluded.amount",
        (call.org_id, call.mode, currency, fmt(after)),
    )
    fee = Decimal(0)
    store.run(
        "INSERT INTO balance_transactions (org_id, mode, type, amount, currency, fee, net, balance_after,"
        " order_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (call.org_id, call.mode, type, fmt(amount), currency, fmt(fee), fmt(amount - fee), fmt(after),
         order_id, iso(call.now)),
    )
    return after


HISTORY_MAX_ORDERS = 100_000
SEEDED_ORDERS = ("CREATE TABLE IF NOT EXISTS seeded_orders (org_id TEXT NOT NULL, mode TEXT NOT NULL,"
                 " count INTEGER NOT NULL, PRIMARY KEY (org_id, mode))")


def seed_orders(store: Store, org_id: str, mode: str, count: int) -> None:
    """Operator: the organization holds `count` orders besides its payouts, without writing them one by one
    (so the balance history's 100,000-order limit can be reached cheaply)."""
    store.run(SEEDED_ORDERS)
    store.run("INSERT INTO seeded_orders (org_id, mode, count) VALUES (?,?,?)"
              " ON CONFLICT (org_id, mode) DO UPDATE SET count = excluded.count", (org_id, mode, count))


def order_count(store: Store, org_id: str, mode: str) -> int:
    """The organization's orders: its payouts plus any the operator seeded."""
    store.run(SEEDED_ORDERS)
    seeded = store.one("SELECT count FROM seeded_orders WHERE org_id = ? AND mode = ?", (org_id, mode))
    payouts = store.one("SELECT COUNT(*) AS n FROM payouts WHERE org_id = ? AND mode = ?", (org_id, mode))
    return (seeded["count"] if seeded else 0) + (payouts["n"] if payouts else 0)
