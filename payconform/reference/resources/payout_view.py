"""The payout as the API answers it and as its `payout.*` events carry it.

A module of its own because the lifecycle records events with it and the payout rules answer with it:
both import it, so neither has to import the other.
"""

from __future__ import annotations

import sqlite3
from typing import Any


def awaiting_funds(row: sqlite3.Row) -> bool:
    """A self-funded payout whose funding has not been confirmed: the only payout that can be canceled."""
    return bool(row["requires_funding"]) and row["funded_at"] is None and row["status"] == "pending"


def payout_json(row: sqlite3.Row) -> dict[str, Any]:
    """The `WebhookPayout` fields (plus `paymentReason`); `failureCode` on failed and returned payouts,
    `fundsReturned` on failed, returned and canceled ones."""
    body: dict[str, Any] = {
        "payoutId": row["id"],
        "status": row["status"],
        "requiresFunding": awaiting_funds(row),
        "sourceCurrency": row["source_currency"],
        "sourceAmount": row["source_amount"],
        "destinationCurrency": row["destination_currency"],
        "destinationAmount": row["destination_amount"],
        "destinationAccountId": row["destination_account_id"],
        "fee": {"currency": row["fee_currency"], "amount": row["fee_amount"]},
        "rate": row["rate"],
        "reference": row["reference"],
        "endUser": {"id": row["recipient_id"]},
        "endUserId": row["recipient_id"],
        "paymentReason": row["payment_reason"],
        "createdAt": row["created_at"],
        "completedAt": row["completed_at"],
    }
    if row["failure_code"] is not None:
        body["failureCode"] = row["failure_code"]
    if row["funds_returned"] is not None:
        body["fundsReturned"] = bool(row["funds_returned"])
    return body
