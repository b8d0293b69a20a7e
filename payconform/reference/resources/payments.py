"""Checkout payments (States > Checkout payment): the state machine, the sandbox timeline, forced outcomes.

Every status change goes through `transition`, guarded by the status it may leave, and is written to
`checkout_payment_transitions` and recorded as its `checkout_payment.*` event in the same transaction.
The sandbox timeline (`.02` settles, `.04` is charged back) is applied lazily on each read (and by the
dispatcher, `background.py`) at the instant it was due on the organization's clock, through the same guarded
transition as a forced outcome, so a forced chargeback and the timeline together move a payment once.

Reads use base units: `amountBase` and `refundedBase` are integer strings beside `decimals`.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from ..core import ids
from ..states.checkout import CHARGEBACK, SETTLES
from ..core.clock import iso
from ..core.errors import ApiError
from ..events.events import Events
from .links import LinkServer, find_link
from ..core.operation import Call


class PaymentServer(LinkServer, Protocol):
    """What a checkout payment reaches besides its link: the event store that announces its changes."""

    events: Events


def transition(call: Call[PaymentServer], row: sqlite3.Row, leaves: tuple[str, ...], to: str, event: str, trigger: str,
               at: datetime) -> bool:
    """Move the payment to `to` if its current status is one of `leaves`; False (nothing written) otherwise."""
    current = call.ref.store.one("SELECT status FROM checkout_payments WHERE id = ?", (row["id"],))
    if current is None or current["status"] not in leaves:
        return False
    call.ref.store.run("UPDATE checkout_payments SET status = ?, updated_at = ? WHERE id = ?", (to, iso(at), row["id"]))
    record(call, row["id"], current["status"], to, event, trigger, at)
    return True


def record(call: Call[PaymentServer], payment_id: str, from_status: str | None, to: str, event: str, trigger: str,
           at: datetime) -> None:
    """Write one transition and record its event, in the transaction of the change."""
    call.ref.store.run(
        "INSERT INTO checkout_payment_transitions (payment_id, org_id, mode, from_status, to_status, event, trigger,"
        " created_at) VALUES (?,?,?,?,?,?,?,?)",
        (payment_id, call.org_id, call.mode, from_status, to, event, trigger, iso(at)),
    )
    call.ref.events.record(call.org_id, call.mode, event, event_data(call, payment_id, to, event), at)


def event_data(call: Call[PaymentServer], payment_id: str, status: str, event: str) -> dict[str, Any]:
    """`data` of `checkout_payment.*` (its shape is not shown): amounts as decimal strings beside `currency`;
    `refunded` the running total; on a partial refund `refund` the piece just refunded."""
    row = call.ref.store.one("SELECT * FROM checkout_payments WHERE id = ?", (payment_id,))
    assert row is not None
    places = row["decimals"]

    def decimal(base: int) -> str:
        return f"{Decimal(base).scaleb(-places):.{places}f}"

    refunded = row["amount_base"] if status == "refunded" else row["refunded_base"]
    data: dict[str, Any] = {
        "paymentId": row["id"], "linkId": row["link_id"], "reference": row["reference"],
        "clientReferenceId": row["client_reference_id"], "status": status, "currency": row["currency"],
        "amount": decimal(row["amount_base"]), "refunded": decimal(refunded),
    }
    if event == "checkout_payment.partially_refunded":
        piece = call.ref.store.one("SELECT amount_base FROM checkout_refunds WHERE payment_id = ? ORDER BY seq DESC"
                                   " LIMIT 1", (payment_id,))
        assert piece is not None
        data["refund"] = decimal(piece["amount_base"])
    return data


def run_timeline(call: Call[PaymentServer], row: sqlite3.Row) -> sqlite3.Row:
    """Apply the sandbox steps that are due by now, each at the instant it was due."""
    rules = call.ref.checkout
    created = datetime.fromisoformat(row["created_at"])
    if row["scenario"] == SETTLES:
        due = created + timedelta(seconds=rules.settle_seconds)
        if call.now >= due:
            transition(call, row, ("pending",), "paid", "checkout_payment.paid", "timeline", due)
    if row["scenario"] == CHARGEBACK:
        due = created + timedelta(seconds=rules.chargeback_seconds)
        if call.now >= due:
            transition(call, row, ("paid",), "reversed", "checkout_payment.reversed", "timeline", due)
    return call.ref.store.one("SELECT * FROM checkout_payments WHERE id = ?", (row["id"],))  # type: ignore[return-value]


def payment_json(call: Call[PaymentServer], row: sqlite3.Row) -> dict[str, Any]:
    refunds = call.ref.store.all("SELECT * FROM checkout_refunds WHERE payment_id = ? ORDER BY seq", (row["id"],))
    return {
        "id": row["id"],
        "linkId": row["link_id"],
        "reference": row["reference"],
        "clientReferenceId": row["client_reference_id"],
        "amountBase": str(row["amount_base"]),
        "refundedBase": str(row["refunded_base"]),
        "decimals": row["decimals"],
        "currency": row["currency"],
        "status": row["status"],
        "refunds": [{"id": r["id"], "amountBase": str(r["amount_base"]), "createdAt": r["created_at"]}
                    for r in refunds],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


def find_payment(call: Call[PaymentServer], payment_id: str, *, by_reference: bool = False) -> sqlite3.Row:
    """By id; with `by_reference`, a payment reference too (409 when it names payments on several links)."""
    row = call.ref.store.one("SELECT * FROM checkout_payments WHERE id = ? AND org_id = ? AND mode = ?",
                             (payment_id, call.org_id, call.mode))
    if row is None and by_reference:
        rows = call.ref.store.all("SELECT * FROM checkout_payments WHERE reference = ? AND org_id = ? AND mode = ?",
                                  (payment_id, call.org_id, call.mode))
        if len(rows) > 1:
            raise ApiError("CONFLICT", "This reference names payments on more than one link; pass the payment id.")
        row = rows[0] if rows else None
    if row is None:
        raise ApiError("NOT_FOUND", "No such payment in this organization.")
    return run_timeline(call, row)


def simulate(call: Call[PaymentServer], link_id: str, reference: str, client_reference: str | None) -> sqlite3.Row:
    """A sandbox payment on a sent link; `reference` deduplicates (the same reference answers that payment)."""
    link = find_link(call, link_id)
    existing = call.ref.store.one("SELECT * FROM checkout_payments WHERE link_id = ? AND reference = ?",
                                  (link["id"], reference))
    if existing is not None:
        return run_timeline(call, existing)
    if link["status"] == "expired":
        raise ApiError("LINK_EXPIRED", "The link has expired and cannot take a payment.")
    if link["status"] != "sent":
        raise ApiError("BAD_REQUEST", f"A {link['status']} link cannot take a payment.")
    rules = call.ref.checkout
    taken = call.ref.store.one("SELECT COUNT(*) AS n FROM checkout_payments WHERE link_id = ?", (link["id"],))
    if taken["n"] >= rules.max_simulated_payments:
        raise ApiError("BAD_REQUEST", f"The link already has {rules.max_simulated_payments} simulated payments,"
                                      " the maximum.")
    amount_base = int(Decimal(link["total_amount"]).scaleb(rules.decimals))
    scenario = rules.scenario(amount_base)
    status = rules.initial_status(scenario)
    payment_id, now = ids.new_id("pay"), iso(call.now)
    call.ref.store.run(
        "INSERT INTO checkout_payments (id, org_id, mode, link_id, reference, client_reference_id, amount_base,"
        " decimals, currency, status, scenario, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (payment_id, call.org_id, call.mode, link["id"], reference, client_reference, amount_base, rules.decimals,
         link["currency"], status, scenario, now, now),
    )
    if status == "paid":
        record(call, payment_id, None, status, "checkout_payment.paid", "simulate", call.now)
    row = call.ref.store.one("SELECT * FROM checkout_payments WHERE id = ?", (payment_id,))
    assert row is not None
    return row


def force(call: Call[PaymentServer], payment_id: str, action: str) -> tuple[sqlite3.Row, bool]:
    """`chargeback`, `refund` or `fail` by payment id or reference: the payment, and whether it moved (the
    status it is in may refuse the action)."""
    row = find_payment(call, payment_id, by_reference=True)
    leaves, to, event = call.ref.checkout.forced[action]
    moved = transition(call, row, leaves, to, event, "forced", call.now)
    if moved and action == "refund":
        remaining = row["amount_base"] - row["refunded_base"]
        call.ref.store.run("INSERT INTO checkout_refunds (id, payment_id, amount_base, created_at) VALUES (?,?,?,?)",
                           (ids.new_id("rfd"), row["id"], remaining, iso(call.now)))
        call.ref.store.run("UPDATE checkout_payments SET refunded_base = amount_base WHERE id = ?", (row["id"],))
    fresh = call.ref.store.one("SELECT * FROM checkout_payments WHERE id = ?", (row["id"],))
    assert fresh is not None
    return fresh, moved


def settle_link(call: Call[PaymentServer], link_id: str) -> None:
    """Apply the due timeline steps of every payment on the link (before a list of them is read)."""
    for row in call.ref.store.all("SELECT * FROM checkout_payments WHERE link_id = ?", (link_id,)):
        run_timeline(call, row)


def payments_limit(raw: str | None) -> int:
    """1-100, default 20; above 100 becomes 100; zero, negative or non-numeric becomes 20; never a 400."""
    try:
        value = int(raw) if raw is not None else 20
    except ValueError:
        return 20
    return 20 if value <= 0 else min(value, 100)
