"""State changes that fall due with time, applied without a request: payout timelines, the `.02` and `.04`
checkout payment timelines, approval expiry and the validation of payout batches.

Reads apply them lazily (`lifecycle.py`, `payments.py`, `approvals.py`); a conforming service also
announces them when nobody reads, so the dispatcher (every 15 seconds and after each operator clock
advance) and the event feed call `settle_due` first. Each change records its event through the same code
as a read, in one transaction with the change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from starlette.datastructures import Headers, QueryParams

from ..authentication.auth import Principal
from ..resources.batches import Batches, BatchServer
from ..states.checkout import CHARGEBACK, SETTLES
from ..core.clock import Clock
from ..states.lifecycle import DEFAULT
from ..core.operation import Call, Operation
from ..resources.payments import PaymentServer, run_timeline

if TYPE_CHECKING:
    import sqlite3


class BackgroundServer(PaymentServer, BatchServer, Protocol):
    """What applying due changes reaches: the owner of every timeline, the clock, and the operations."""

    clock: Clock
    batches: Batches
    operations: Mapping[str, Operation]


def system_call(ref: BackgroundServer, org_id: str, mode: str) -> Call[BackgroundServer]:
    """A call on behalf of the service itself (no key), at the organization's current instant."""
    return Call(ref=ref, op=ref.operations["getPayout"], request_id="background",
                principal=Principal(key_id="background", org_id=org_id, mode=mode, prefix="", scopes=frozenset()),
                org_id=org_id, path="", params={"orgId": org_id}, query_params=QueryParams(""), headers=Headers(),
                raw_body=b"", now=ref.clock.now(org_id))


def _rows(ref: BackgroundServer, sql: str, org_id: str | None, params: tuple = ()) -> list[sqlite3.Row]:
    if org_id is not None:
        return ref.store.all(sql + " AND org_id = ?", (*params, org_id))
    return ref.store.all(sql, params)


def settle_due(ref: BackgroundServer, org_id: str | None = None) -> None:
    """Apply every due step (of one organization, or all) inside one transaction."""
    calls: dict[tuple[str, str], Call[BackgroundServer]] = {}

    def call_for(row: sqlite3.Row) -> Call[BackgroundServer]:
        key = (row["org_id"], row["mode"])
        if key not in calls:
            calls[key] = system_call(ref, *key)
        return calls[key]

    with ref.store.tx():
        timelines = ref.lifecycle.timelines
        for row in _rows(ref, "SELECT * FROM payouts WHERE status IN ('pending', 'processing', 'completed')", org_id):
            if row["step"] < len(timelines.get(row["scenario"], timelines[DEFAULT])):
                ref.lifecycle.settle(call_for(row), row)
        for row in _rows(ref, "SELECT * FROM checkout_payments WHERE scenario IN (?, ?) AND status IN"
                              " ('pending', 'paid')", org_id, (SETTLES, CHARGEBACK)):
            run_timeline(call_for(row), row)
        for row in _rows(ref, "SELECT * FROM payout_approvals WHERE status = 'pending'", org_id):
            ref.approvals.find(ref.store, row["org_id"], row["mode"], row["id"], call_for(row).now)
        for row in _rows(ref, "SELECT * FROM payout_batches WHERE status IN ('received', 'validating')", org_id):
            ref.batches.settle(call_for(row), row)
