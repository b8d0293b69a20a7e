"""The API's routes, one module per area; each exposes OPERATIONS (a list of Operation)."""

from __future__ import annotations

from ..core.operation import Operation
from . import (
    approvals,
    audit,
    balance,
    batches,
    events,
    funding,
    keys,
    links,
    payments,
    payout_links,
    payouts,
    policy,
    pricing,
    products,
    recipients,
    refunds,
    webhooks,
)

AREAS = (recipients, products, links, payments, refunds, payouts, pricing, funding, approvals, batches, policy,
         balance, audit, keys, events, webhooks, payout_links)


def all_operations() -> list[Operation]:
    ops = [op for area in AREAS for op in area.OPERATIONS]
    seen: set[str] = set()
    for op in ops:
        if op.op_id in seen:
            raise ValueError(f"duplicate operation id {op.op_id}")
        seen.add(op.op_id)
    return ops
