"""Lookups the Checkout mutants of several parts share."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ...core.operation import Call

if TYPE_CHECKING:
    from ...reference import Reference


def set_op(ref: Reference, op_id: str, **fields: Any) -> None:
    ref.operations[op_id] = dataclasses.replace(ref.operations[op_id], **fields)


def link_row(ref: Reference, call: Call) -> Any:
    return ref.store.one("SELECT * FROM links WHERE id = ?", (call.params.get("linkId"),))


def payment_row(ref: Reference, call: Call) -> Any:
    return ref.store.one("SELECT * FROM checkout_payments WHERE id = ?", (call.params.get("paymentId"),))
