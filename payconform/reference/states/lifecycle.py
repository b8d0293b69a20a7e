"""The payout lifecycle in the sandbox, driven by the organization's clock.

A payout's scenario is chosen at creation by four characters (the profile's `sandbox.payout_scenarios`):
the last four of the recipient's account identifier, or, where the deployment's choices say
`amount_minor_suffix`, the last four digits of the sourceAmount in minor units. `0002` skips
`processing`, `0003` fails with `account_invalid`, `0004` completes and is then returned by the bank,
`0005` is rejected by compliance (failed, no money back: it stays debited); any other goes pending ->
processing -> completed. Each scenario is a timeline of steps, in seconds after the payout started to
move (its creation, or its funding for a self-funded payout), at the deployment's dwell times. Nothing
runs in the background: every read first `settle`s the payout, applying the steps that are due on that
organization's clock, in order, so a payout only ever moves forward and a test that advances the clock sees
the same history as one that waits.

Every state change is written to `payout_transitions` (event name, from, to, instant) and, in the same
transaction, as its `payout.*` event (`data` the flat payout after the change); the dispatcher settles due
payouts too (`background.py`), so events fire without a read. `timelines` is an instance attribute: mutants
patch one server only.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Protocol

from ..choices import DEFAULT as DEFAULT_CHOICES
from ..choices import SelectBy, Timeline
from ..resources import ledger
from ..core.clock import iso
from ..events.events import EVENT_TYPES, Events
from ..core.operation import Call, StoreServer
from ..resources.payout_view import payout_json

ACCOUNT_FIELDS = ("accountNumber", "iban", "address")
DEFAULT = "default"


class LifecycleServer(StoreServer, Protocol):
    """What a payout's status changes reach: its row and the event store that announces them."""

    events: Events


@dataclass(frozen=True)
class Step:
    """One move of a timeline: at `after` seconds, enter `status` (announced as `event`)."""

    after: float
    event: str
    status: str
    failure_code: str | None = None
    funds_returned: bool | None = None
    completes: bool = False


def timelines(t: Timeline) -> dict[str, tuple[Step, ...]]:
    """Each scenario's steps for a deployment's dwell times."""
    processing = Step(t.processing, "payout.processing", "processing")
    completed = Step(t.final, "payout.completed", "completed", completes=True)
    return {
        DEFAULT: (processing, completed),
        "0002": (completed,),
        "0003": (processing, Step(t.final, "payout.failed", "failed", "account_invalid", True)),
        "0004": (processing, completed, Step(t.returned, "payout.returned", "failed", "returned_by_bank", True)),
        "0005": (processing, Step(t.final, "payout.failed", "failed", "compliance_rejected", False)),
    }


PROCESSING, COMPLETED = timelines(DEFAULT_CHOICES.timeline)[DEFAULT]  # the default steps mutants build on


def scenario_tail(select_by: SelectBy, details_json: str, amount: Decimal) -> str:
    """The four characters that pick a sandbox outcome: the account identifier's last four, or the last four
    digits of the amount in minor units (100.03 -> 10003 -> "0003")."""
    if select_by == "amount_minor_suffix":
        return f"{int(amount * 100) % 10_000:04d}"
    details = json.loads(details_json)
    account = next((details[f] for f in ACCOUNT_FIELDS if isinstance(details.get(f), str)), "")
    return account[-4:]


class Lifecycle:
    def __init__(self, timeline: Timeline, select_by: SelectBy) -> None:
        self.timelines: dict[str, tuple[Step, ...]] = timelines(timeline)
        self.select_by: SelectBy = select_by

    def scenario(self, details_json: str, amount: Decimal) -> str:
        """The sandbox scenario of a payout of `amount` to a payment method with these details."""
        tail = scenario_tail(self.select_by, details_json, amount)
        return tail if tail in self.timelines else DEFAULT

    def record(self, call: Call[LifecycleServer], payout_id: str, event: str, from_status: str | None, to_status: str,
               at: datetime) -> None:
        """One state change and, for the event types of the spec, its event (the payout as it now stands)."""
        call.ref.store.run(
            "INSERT INTO payout_transitions (payout_id, org_id, mode, event, from_status, to_status, at)"
            " VALUES (?,?,?,?,?,?,?)", (payout_id, call.org_id, call.mode, event, from_status, to_status, iso(at)))
        if event in EVENT_TYPES:
            row = call.ref.store.one("SELECT * FROM payouts WHERE id = ?", (payout_id,))
            assert row is not None
            call.ref.events.record(call.org_id, call.mode, event, payout_json(row), at)

    def started(self, row: sqlite3.Row) -> datetime | None:
        """When the payout started to move: creation, or funding for a self-funded payout (None: waiting)."""
        if row["status"] == "canceled":
            return None
        if row["requires_funding"]:
            return datetime.fromisoformat(row["funded_at"]) if row["funded_at"] else None
        return datetime.fromisoformat(row["created_at"])

    def settle(self, call: Call[LifecycleServer], row: sqlite3.Row) -> sqlite3.Row:
        """Apply every step of the payout's timeline that is due on the organization's clock; the fresh row."""
        start = self.started(row)
        if start is None:
            return row
        steps = self.timelines.get(row["scenario"], self.timelines[DEFAULT])
        position, status = row["step"], row["status"]
        while position < len(steps) and start + timedelta(seconds=steps[position].after) <= call.now:
            step = steps[position]
            at = start + timedelta(seconds=step.after)
            self._apply(call, row, step, position + 1, at)
            self.record(call, row["id"], step.event, status, step.status, at)
            position, status = position + 1, step.status
        if position == row["step"]:
            return row
        fresh = call.ref.store.one("SELECT * FROM payouts WHERE id = ?", (row["id"],))
        assert fresh is not None
        return fresh

    def _apply(self, call: Call[LifecycleServer], row: sqlite3.Row, step: Step, position: int, at: datetime) -> None:
        store = call.ref.store
        store.run("UPDATE payouts SET status = ?, step = ? WHERE id = ?", (step.status, position, row["id"]))
        if step.completes:
            store.run("UPDATE payouts SET completed_at = ? WHERE id = ?", (iso(at), row["id"]))
        if step.failure_code is not None:
            store.run("UPDATE payouts SET failure_code = ?, funds_returned = ? WHERE id = ?",
                      (step.failure_code, int(bool(step.funds_returned)), row["id"]))
        if step.funds_returned and not row["requires_funding"]:
            ledger.post(call, type="payout_return", amount=Decimal(row["source_amount"]),
                        currency=row["source_currency"], order_id=row["id"])
