"""Balances and the append-only balance transactions that explain them.

Every movement (sandbox funding in, completed deposits, payouts out, later returns, holds) writes one
balance transaction with the running `balanceAfter`, in the same transaction as the change it records.
`balances` keeps the provider-held figure; a hold reserves money without moving it, so rows carry the
available running figure (provider-held less what holds reserve). Per-organization ledger states the
operator sets (an unreadable source, rows not yet loaded, movements on untracked networks) are flags.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from ..core.clock import iso
from ..core.ids import new_id
from ..core.money import fmt
from ..core.operation import Call, StoreServer
from ..core.store import Store

TRANSACTION_TYPES = frozenset({"funding", "payout", "payout_return", "hold", "hold_release", "adjustment"})
HOLD_TYPES = ("hold", "hold_release")
UNTRACKED, UNLOADED = "untracked_movements", "rows_unloaded"


def balance(store: Store, org_id: str, mode: str, currency: str) -> Decimal:
    row = store.one(
        "SELECT amount FROM balances WHERE org_id = ? AND mode = ? AND currency = ?", (org_id, mode, currency)
    )
    return Decimal(row["amount"]) if row else Decimal(0)


def reserved(store: Store, org_id: str, mode: str, currency: str) -> Decimal:
    """What open holds reserve (hold rows are negative, their releases positive)."""
    rows = store.all(f"SELECT amount FROM balance_transactions WHERE org_id = ? AND mode = ? AND currency = ?"
                     f" AND type IN ({','.join('?' * len(HOLD_TYPES))})", (org_id, mode, currency, *HOLD_TYPES))
    return -sum((Decimal(r["amount"]) for r in rows), Decimal(0))


def post(call: Call[StoreServer], *, type: str, amount: Decimal, currency: str, order_id: str | None = None) -> Decimal:
    """Move `amount` (signed) in or out of the balance; returns the balance after it."""
    return write(call.ref.store, call.org_id, call.mode, call.now, type=type, amount=amount, currency=currency,
                 order_id=order_id)


def write(store: Store, org_id: str, mode: str, now: datetime, *, type: str, amount: Decimal, currency: str,
          order_id: str | None = None) -> Decimal:
    """One balance transaction; a hold or its release changes what is available, not the provider figure."""
    provider = balance(store, org_id, mode, currency)
    if type not in HOLD_TYPES:
        provider += amount
        store.run(
            "INSERT INTO balances (org_id, mode, currency, amount) VALUES (?,?,?,?)"
            " ON CONFLICT (org_id, mode, currency) DO UPDATE SET amount = excluded.amount",
            (org_id, mode, currency, fmt(provider)),
        )
    after = provider - reserved(store, org_id, mode, currency) + (amount if type in HOLD_TYPES else Decimal(0))
    fee = Decimal(0)
    store.run(
        "INSERT INTO balance_transactions (org_id, mode, type, amount, currency, fee, net, balance_after,"
        " order_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (org_id, mode, type, fmt(amount), currency, fmt(fee), fmt(amount - fee), fmt(after), order_id, iso(now)),
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


def flag(store: Store, org_id: str, mode: str, name: str) -> str | None:
    row = store.one("SELECT value FROM ledger_flags WHERE org_id = ? AND mode = ? AND name = ?", (org_id, mode, name))
    return row["value"] if row else None


def set_flag(store: Store, org_id: str, mode: str, name: str, value: str | None) -> None:
    """Set (or, with None, clear) one ledger state of the organization."""
    if value is None:
        store.run("DELETE FROM ledger_flags WHERE org_id = ? AND mode = ? AND name = ?", (org_id, mode, name))
        return
    store.run("INSERT INTO ledger_flags (org_id, mode, name, value) VALUES (?,?,?,?)"
              " ON CONFLICT (org_id, mode, name) DO UPDATE SET value = excluded.value", (org_id, mode, name, value))


def unreadable_sources(store: Store, org_id: str, mode: str) -> list[str]:
    rows = store.all("SELECT name FROM ledger_flags WHERE org_id = ? AND mode = ? AND name LIKE 'unreadable:%'"
                     " ORDER BY name", (org_id, mode))
    return [r["name"].split(":", 1)[1] for r in rows]


def wallet(store: Store, org_id: str, mode: str) -> list[dict[str, str]]:
    """The own wallet: one figure per chain and token, at face value (the operator sets them)."""
    rows = store.all("SELECT name, value FROM ledger_flags WHERE org_id = ? AND mode = ? AND name LIKE 'wallet:%'"
                     " ORDER BY name", (org_id, mode))
    return [dict(zip(("chain", "currency"), r["name"].split(":")[1:], strict=True), amount=r["value"]) for r in rows]


def create_deposit(store: Store, org_id: str, mode: str, now: datetime, amount: Decimal, currency: str) -> str:
    """A deposit to the funding account, pending: it moves nothing until it completes."""
    deposit_id = new_id("dep")
    store.run("INSERT INTO deposits (id, org_id, mode, amount, currency, status, created_at) VALUES (?,?,?,?,?,?,?)",
              (deposit_id, org_id, mode, fmt(amount), currency, "pending", iso(now)))
    return deposit_id


def complete_deposit(store: Store, org_id: str, deposit_id: str, now: datetime) -> bool:
    """The pending deposit completes: funding in. False when there is no such pending deposit."""
    row = store.one("SELECT * FROM deposits WHERE id = ? AND org_id = ? AND status = 'pending'", (deposit_id, org_id))
    if row is None:
        return False
    store.run("UPDATE deposits SET status = 'completed', completed_at = ? WHERE id = ?", (iso(now), deposit_id))
    write(store, org_id, row["mode"], now, type="funding", amount=Decimal(row["amount"]), currency=row["currency"],
          order_id=deposit_id)
    return True
