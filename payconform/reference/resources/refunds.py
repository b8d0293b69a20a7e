"""Refunds and disputes of checkout payments.

A partial refund keeps `status: paid`; the last one makes it `refunded`. Every refusal is found before
anything is written, so the money stays where it was, and is checked in the Errors table's order. One refund
at a time: a refund call still running in the organization (held by an operator `delay` fault) makes another
one answer REFUND_IN_PROGRESS. A dispute is opened by the operator (`open_dispute`).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..core import ids
from ..core.clock import iso
from ..core.errors import ApiError
from ..core.operation import Call, StoreServer
from .payments import PaymentServer, find_payment, record, transition

REFUND_PROCESSOR = "refundProcessor"  # operator fault pseudo-operation: the processor a refund is sent to


def refusal(call: Call[PaymentServer], row: sqlite3.Row, amount: int | None) -> ApiError | None:
    """Why this refund cannot happen, checked in the Errors table's order, or None."""
    if row["disputed"]:
        return ApiError("REFUND_DISPUTED", "A dispute decides this payment; a loss arrives as a chargeback.")
    if row["status"] != "paid":
        return ApiError("REFUND_NOT_ALLOWED", f"A {row['status']} payment cannot be refunded.")
    if call.ref.checkout.refund_in_flight(call):
        return ApiError("REFUND_IN_PROGRESS", "Another refund is in progress; one refund at a time.")
    remaining = row["amount_base"] - row["refunded_base"]
    if amount is not None and amount > remaining:
        return ApiError("REFUND_EXCEEDS_REMAINING", f"At most {remaining} base units remain refundable.")
    return None


def refund(call: Call[PaymentServer], payment_id: str, amount: int | None) -> tuple[sqlite3.Row, str, int]:
    """Refund `amount` base units (None: the rest): the payment, the refund's id and the amount refunded."""
    row = find_payment(call, payment_id)
    refused = refusal(call, row, amount)
    if refused is not None:
        raise refused
    piece = amount if amount is not None else row["amount_base"] - row["refunded_base"]
    refund_id = ids.new_id("rfd")
    call.ref.store.run("INSERT INTO checkout_refunds (id, payment_id, amount_base, created_at) VALUES (?,?,?,?)",
                       (refund_id, row["id"], piece, iso(call.now)))
    call.ref.store.run("UPDATE checkout_payments SET refunded_base = refunded_base + ?, updated_at = ? WHERE id = ?",
                       (piece, iso(call.now), row["id"]))
    if row["refunded_base"] + piece >= row["amount_base"]:
        transition(call, row, ("paid",), "refunded", "checkout_payment.refunded", "refund", call.now)
    else:
        record(call, row["id"], "paid", "paid", "checkout_payment.partially_refunded", "refund", call.now)
    fresh = call.ref.store.one("SELECT * FROM checkout_payments WHERE id = ?", (row["id"],))
    assert fresh is not None
    return fresh, refund_id, piece


def open_dispute(ref: StoreServer, org_id: str, payment_id: str) -> dict[str, Any] | None:
    """The card holder disputes the payment; refunds answer REFUND_DISPUTED from now on. None: no such payment."""
    row = ref.store.one("SELECT id FROM checkout_payments WHERE id = ? AND org_id = ?", (payment_id, org_id))
    if row is None:
        return None
    ref.store.run("UPDATE checkout_payments SET disputed = 1 WHERE id = ?", (payment_id,))
    return {"paymentId": payment_id, "disputed": True}
