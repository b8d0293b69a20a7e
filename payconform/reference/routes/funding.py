"""Funding a self-funded payout over the API: `confirmPayoutFunding` (the rules: `funding.py`)."""

from __future__ import annotations

from ..resources import funding
from ..core.errors import field_error
from ..core.operation import Call, Operation, Reply
from ..resources.payout_view import payout_json
from ..core.validate import check


def confirm_funding(call: Call) -> Reply:
    c = check(call.json())
    tx_hash = c.string("transactionHash", required=True, max_len=66)
    c.done()
    if tx_hash is None or not funding.HASH.fullmatch(tx_hash):
        raise field_error("transactionHash", "an EVM transaction hash: 0x and 64 hex digits")
    row = funding.confirm(call, call.params["payoutId"], tx_hash)
    return Reply(200, payout_json(row), row["id"])


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("confirmPayoutFunding", "POST", P + "/payouts/{payoutId}/funding/confirm", confirm_funding,
              idempotency="required", money_write=True, takes_body=True, audit="payout.funding_confirm"),
]
