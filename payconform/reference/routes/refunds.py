"""Refunds of checkout payments: POST `/checkout/organizations/{orgId}/payments/{paymentId}/refund`.

Needs the `refunds` scope beside `write`, and is the one checkout call Endpoints rule 2 does not gate.
The body's optional `amount` (the profile's choice of name) is in base units like `amountBase`; omitted,
it refunds the rest. The rules: `refunds.py`. When the card processor does not answer a refund (operator fault
`timeout` on `refundProcessor`), its outcome is unknown: 502 REFUND_OUTCOME_UNKNOWN, the key kept.
"""

from __future__ import annotations

import re
from typing import Any

from ..resources import refunds
from ..core.errors import ApiError
from ..core.operation import Call, Operation, Reply
from ..resources.payments import payment_json
from ..resources.refunds import REFUND_PROCESSOR
from ..core.validate import check

BASE_UNITS = re.compile(r"^[0-9]{1,15}$")


def _amount(call: Call) -> int | None:
    c = check(call.json() if call.raw_body.strip() else {})
    raw = c.string("amount", pattern=BASE_UNITS, max_len=15)
    c.done()
    if raw is not None and int(raw) <= 0:
        raise ApiError("BAD_REQUEST", "A refund amount must be positive.")
    return int(raw) if raw is not None else None


def refund_payment(call: Call) -> Reply:
    row, refund_id, piece = refunds.refund(call, call.params["paymentId"], _amount(call))
    if call.ref.faults.take(call.org_id, REFUND_PROCESSOR, "timeout") is not None:
        raise ApiError("REFUND_OUTCOME_UNKNOWN", "The card processor did not answer: the refund may have gone "
                       "through. Do not resend.")
    body: dict[str, Any] = payment_json(call, row)
    body["refund"] = {"id": refund_id, "amountBase": str(piece)}
    return Reply(200, body, row["id"])


P = "/checkout/organizations/{orgId}/payments/{paymentId}/refund"
OPERATIONS = [
    Operation("refundCheckoutPayment", "POST", P, refund_payment, idempotency="required", takes_body=True,
              scopes=("refunds",), payments_gate=False),
]
