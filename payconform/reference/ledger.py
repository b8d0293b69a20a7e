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
    return Decimal(row["amount"]) if row else Decimal("0")


def post(call: Call, *, type: str, amount: Decimal, currency: str, order_id: str | None = None) -> Decimal:
    """Move `amount` (signed) in or out of the balance; returns the balance after it."""
    store = call.ref.store
    after = balance(store, call.org_id, call.mode, currency) + amount
    store.run(
        "INSERT INTO balances (org_id, mode, currency, amount) VALUES (?,?,?,?)"
        " ON CONFLICT (org_id, mode, currency) DO UPDATE SET amount = excluded.amount",
        (call.org_id, call.mode, currency, fmt(after)),
    )
    fee = Decimal("0")
    store.run(
        "INSERT INTO balance_transactions (org_id, mode, type, amount, currency, fee, net, balance_after,"
        " order_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (call.org_id, call.mode, type, fmt(amount), currency, fmt(fee), fmt(amount - fee), fmt(after),
         order_id, iso(call.now)),
    )
    return after
