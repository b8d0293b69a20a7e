"""The API's routes, one module per area; each exposes OPERATIONS (a list of Operation)."""

from __future__ import annotations

from ..operation import Operation
from . import audit, balance, keys, links, payouts, products, recipients

AREAS = (recipients, products, links, payouts, balance, audit, keys)


def all_operations() -> list[Operation]:
    ops = [op for area in AREAS for op in area.OPERATIONS]
    seen: set[str] = set()
    for op in ops:
        if op.op_id in seen:
            raise ValueError(f"duplicate operation id {op.op_id}")
        seen.add(op.op_id)
    return ops
