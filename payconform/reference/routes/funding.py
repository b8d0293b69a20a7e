"""Funding a self-funded payout: `POST /payouts/{payoutId}/funding/confirm` (`confirmPayoutFunding`).

The sandbox stands in for the chain read: the last four digits of the EVM-shaped `transactionHash` pick the
outcome (`0001` does not fund this payout, `0002` is not yet verifiable, anything else is a good transfer).
A refused confirmation records nothing and leaves the payout fundable; one transfer funds exactly one
payout. A funded payout starts its sandbox timeline at the funding instant (`lifecycle.py`).
"""

from __future__ import annotations

import re

from ..clock import iso
from ..errors import ApiError, field_error
from ..operation import Call, Operation, Reply
from ..validate import check
from .payouts import awaiting_funds, find, payout_json

HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")
SANDBOX_OUTCOMES = {"0001": "FUNDING_TRANSACTION_INVALID", "0002": "FUNDING_NOT_YET_VERIFIABLE"}


def confirm_funding(call: Call) -> Reply:
    c = check(call.json())
    tx_hash = c.string("transactionHash", required=True, max_len=66)
    c.done()
    if tx_hash is None or not HASH.fullmatch(tx_hash):
        raise field_error("transactionHash", "an EVM transaction hash: 0x and 64 hex digits")
    row = find(call, call.params["payoutId"])
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
    call.ref.store.run("UPDATE payouts SET funding_hash = ?, funded_at = ? WHERE id = ?",
                       (tx_hash, iso(call.now), row["id"]))
    call.ref.lifecycle.record(call, row["id"], "payout.funded", "pending", "pending", call.now)
    return Reply(200, payout_json(find(call, row["id"])), row["id"])


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("confirmPayoutFunding", "POST", P + "/payouts/{payoutId}/funding/confirm", confirm_funding,
              idempotency="required", money_write=True, takes_body=True, audit="payout.funding_confirm"),
]
