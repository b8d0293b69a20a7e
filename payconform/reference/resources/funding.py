"""Funding a self-funded payout: where money to pay from is held, the instructions, the confirmation.

The sandbox stands in for the chain read: the last four digits of the EVM-shaped `transactionHash` pick the
outcome (`0001` does not fund this payout, `0002` is not yet verifiable, anything else is a good transfer).
A refused confirmation records nothing and leaves the payout fundable; one transfer funds exactly one
payout. A funded payout starts its sandbox timeline at the funding instant (`lifecycle.py`). The funded
payout is handed to the payment network (the operator fault pseudo-operation `payoutNetwork`): when the
network does not answer (`timeout`), the outcome is unknown, 500 PAYOUT_OUTCOME_UNKNOWN, and the key is kept.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from typing import Any, Protocol

from ..core.clock import iso
from ..core.errors import ApiError
from ..core.faults import Faults
from ..core.operation import Call
from .payout_view import awaiting_funds
from .payouts import PayoutServer, find

HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")
SANDBOX_OUTCOMES = {"0001": "FUNDING_TRANSACTION_INVALID", "0002": "FUNDING_NOT_YET_VERIFIABLE"}
NETWORK = "payoutNetwork"  # operator fault pseudo-operation: the payment network a funded payout is handed to


class FundingServer(PayoutServer, Protocol):
    """What a confirmation reaches besides the payout: the injected faults of the payment network."""

    faults: Faults


def funding_accounts() -> list[dict[str, Any]]:
    """Where money to pay from is held: the provider-held balance (sandbox top-ups) and the own wallet."""
    return [
        {"id": "fa_provider_usd", "settlesTo": "provider_balance", "currency": "USD"},
        {"id": "fa_wallet_evm", "settlesTo": "wallet", "currencies": ["USDC", "USDT"]},
    ]


def instructions(call: Call[PayoutServer], payout_id: str) -> dict[str, Any]:
    """The funding instructions of a self-funded payout: send `amount` of `token` to `depositAddress`."""
    row = find(call, payout_id)
    if not row["requires_funding"]:
        raise ApiError("FUNDING_NOT_APPLICABLE")
    method = call.ref.store.one("SELECT details FROM payment_methods WHERE destination_account_id = ?",
                                (row["destination_account_id"],))
    assert method is not None
    return {
        "payoutId": row["id"],
        "awaitingFunds": awaiting_funds(row),
        "token": row["destination_currency"],
        "chain": json.loads(method["details"]).get("chain"),
        "amount": row["source_amount"],
        "depositAddress": "0x" + hashlib.sha256(row["id"].encode()).hexdigest()[:40],
    }


def confirm(call: Call[FundingServer], payout_id: str, tx_hash: str) -> sqlite3.Row:
    """Fund the payout with the transfer `tx_hash` (a well-formed hash), or refuse; the payout."""
    row = find(call, payout_id)
    if not row["requires_funding"]:
        raise ApiError("FUNDING_NOT_APPLICABLE")
    if not awaiting_funds(row):
        raise ApiError("PAYOUT_NOT_FUNDABLE", f"Payout {row['id']} is {row['status']} and takes no funding.")
    tx_hash = tx_hash.lower()
    used = call.ref.store.one("SELECT id FROM payouts WHERE funding_hash = ?", (tx_hash,))
    if used is not None:
        raise ApiError("FUNDING_TRANSACTION_ALREADY_USED", f"This transaction already funded payout {used['id']}.")
    outcome = SANDBOX_OUTCOMES.get(tx_hash[-4:])
    if outcome is not None:
        raise ApiError(outcome)
    if call.ref.faults.take(call.org_id, NETWORK, "timeout") is not None:
        raise ApiError("PAYOUT_OUTCOME_UNKNOWN", "The payment network did not answer: the payout may be funded. "
                       "Read the order before confirming again, never under a new key.")
    call.ref.store.run("UPDATE payouts SET funding_hash = ?, funded_at = ? WHERE id = ?",
                       (tx_hash, iso(call.now), row["id"]))
    call.ref.lifecycle.record(call, row["id"], "payout.funded", "pending", "pending", call.now)
    return find(call, row["id"])
