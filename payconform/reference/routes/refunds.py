"""Refunds of checkout payments: POST `/checkout/organizations/{orgId}/payments/{paymentId}/refund`.

Needs the `refunds` scope beside `write`, and is the one checkout call Endpoints rule 2 does not gate.
The body's optional `amount` (the profile's choice of name) is in base units like `amountBase`; omitted,
it refunds the rest. A partial refund keeps `status: paid`; the last one makes it `refunded`. Every
refusal is raised before anything is written, so the money stays where it was. One refund at a time: a
refund call still running in the organization (held by an operator `delay` fault) makes another one
answer REFUND_IN_PROGRESS. A dispute is opened by the operator (`open_dispute`).
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from .. import ids
from ..clock import iso
from ..errors import ApiError
from ..operation import Call, Operation, Reply
from ..validate import check
from .payments import find_payment, payment_json, record, transition

BASE_UNITS = re.compile(r"^[0-9]{1,15}$")


def _amount(call: Call) -> int | None:
    c = check(call.json() if call.raw_body.strip() else {})
    raw = c.string("amount", pattern=BASE_UNITS, max_len=15)
    c.done()
    if raw is not None and int(raw) <= 0:
        raise ApiError("BAD_REQUEST", "A refund amount must be positive.")
    return int(raw) if raw is not None else None


def refusal(call: Call, row: sqlite3.Row, amount: int | None) -> ApiError | None:
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


def refund_payment(call: Call) -> Reply:
    amount = _amount(call)
    row = find_payment(call, call.params["paymentId"])
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
    body: dict[str, Any] = payment_json(call, fresh)  # type: ignore[arg-type]
    body["refund"] = {"id": refund_id, "amountBase": str(piece)}
    return Reply(200, body, row["id"])


def open_dispute(ref: Any, org_id: str, payment_id: str) -> dict[str, Any] | None:
    """Operator: the card holder disputes the payment; refunds answer REFUND_DISPUTED from now on."""
    row = ref.store.one("SELECT id FROM checkout_payments WHERE id = ? AND org_id = ?", (payment_id, org_id))
    if row is None:
        return None
    ref.store.run("UPDATE checkout_payments SET disputed = 1 WHERE id = ?", (payment_id,))
    return {"paymentId": payment_id, "disputed": True}


P = "/checkout/organizations/{orgId}/payments/{paymentId}/refund"
OPERATIONS = [
    Operation("refundCheckoutPayment", "POST", P, refund_payment, idempotency="required", takes_body=True,
              scopes=("refunds",), payments_gate=False),
]
