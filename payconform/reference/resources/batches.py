"""Payout batches (runs): lines validated on the organization's clock, held for confirm or cancel, then
each valid line created as a payout of its own.

The sandbox timeline (the profile's `sandbox.batch`, the spec shows none): a run is `received` when created,
`validating` `validating_after` seconds later and `awaiting_confirmation` `validated_after` seconds after
creation, when every line is checked as a payout instruction would be (its fields, a positive amount, a
payable destination in its currency): a line that fails is `invalid` with `errors[]`, the others `valid`.
Every read settles the run first, like the payout lifecycle (so does `background.settle_due`, without a read).

Confirm (only from `awaiting_confirmation`, and only once an approval the run needed is `approved`) creates
every valid line through the payout creation code (`payouts.place`), so each has its own lifecycle and
`payout.*` events; a line the creation refuses is `create_failed` with `errors[]` naming the refusal's type.
The run then ends `completed`. An operator fault on the pseudo-operation `payoutBatchRun` breaks the run
instead: `failed`, and no payout. Cancel works before creation starts; the lines are then `canceled`.

Each status the spec gives an event records it (`payout_batch.*`, the run as read, `counts` included) in the
transaction of the change. Patch points for mutants (attributes of this instance): `validating_after`,
`validated_after`, `confirmable`, `cancelable`, `events`, `enabled`, `duplicate_of`, `needs_approval`,
`check_line`, `counts`, `settle`, `enter`, `approval_pending`, `run`, `cancel` (the flows `start`, `confirm` and
`withdraw` call them through the instance).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from ..core import ids
from ..core.clock import iso
from ..core.errors import ApiError
from ..events.events import Events
from ..core.faults import Faults
from ..core.money import fmt, parse_decimal
from ..core.operation import Call
from ..core.orgs import get_org
from .payouts import PayoutServer, place, read_order, vet
from ..core.store import Store, dumps

RECEIVED, VALIDATING, AWAITING = "received", "validating", "awaiting_confirmation"
CANCELED, COMPLETED, FAILED = "canceled", "completed", "failed"
VALID, INVALID, CREATED, CREATE_FAILED = "valid", "invalid", "created", "create_failed"
ITEM_STATUSES = frozenset({RECEIVED, VALID, INVALID, CREATED, CREATE_FAILED, CANCELED})
RUN = "payoutBatchRun"  # operator fault pseudo-operation: the run itself breaks
EVENTS = {AWAITING: "payout_batch.awaiting_confirmation", COMPLETED: "payout_batch.completed",
          CANCELED: "payout_batch.canceled", FAILED: "payout_batch.failed"}


class BatchServer(PayoutServer, Protocol):
    """What a batch reaches besides placing payouts: the event store and the injected run faults."""

    events: Events
    faults: Faults


def batch_json(row: sqlite3.Row, counts: dict[str, int]) -> dict[str, Any]:
    """A run: the fields the spec names (`status`, `externalReferenceId`, `counts`) and the profile's `id`."""
    body: dict[str, Any] = {
        "id": row["id"],
        "externalReferenceId": row["external_reference_id"],
        "status": row["status"],
        "counts": counts,
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }
    if row["approval_id"]:
        body["approvalId"] = row["approval_id"]
    return body


def item_json(row: sqlite3.Row) -> dict[str, Any]:
    """A line: its position, status, `errors[]` when it failed, the payout made from it, and its reference."""
    line = json.loads(row["body"])
    body: dict[str, Any] = {"id": row["id"], "line": row["line"], "status": row["status"]}
    if isinstance(line, dict) and isinstance(line.get("reference"), str):
        body["reference"] = line["reference"]
    if row["errors"]:
        body["errors"] = json.loads(row["errors"])
    if row["payout_id"]:
        body["payoutId"] = row["payout_id"]
    return body


def _line_total(lines: list[Any]) -> Decimal:
    """The sum of the lines' well-formed positive amounts (what an approval of the run is for)."""
    total = Decimal(0)
    for line in lines:
        amount = parse_decimal(line.get("sourceAmount")) if isinstance(line, dict) else None
        if amount is not None and amount > 0:
            total += amount
    return total


class Batches:
    def __init__(self) -> None:
        self.validating_after = 10.0
        self.validated_after = 20.0
        self.confirmable: tuple[str, ...] = (AWAITING,)
        self.cancelable: tuple[str, ...] = (RECEIVED, VALIDATING, AWAITING)
        self.events: dict[str, str] = dict(EVENTS)

    # -- rules -----------------------------------------------------------------------------------------

    def enabled(self, store: Store, org_id: str) -> bool:
        """Batches are on unless the organization opted out (its `mass_payouts` feature off)."""
        org = get_org(store, org_id)
        return org is not None and "mass_payouts" in org.features

    def duplicate_of(self, call: Call[BatchServer], external_reference_id: str) -> sqlite3.Row | None:
        return call.ref.store.one(
            "SELECT * FROM payout_batches WHERE org_id = ? AND mode = ? AND external_reference_id = ?",
            (call.org_id, call.mode, external_reference_id))

    def needs_approval(self, call: Call[BatchServer], total: Decimal) -> bool:
        """The organization's approval policy applies to the run's total."""
        return call.ref.approvals.applies(call, total)

    def check_line(self, call: Call[BatchServer], line: Any) -> list[dict[str, str]]:
        """Why a line cannot become a payout (empty when it can): its fields, then `vet` (amount, destination)."""
        try:
            vet(call, read_order(line))
        except ApiError as err:
            return err.errors or [{"type": err.type, "reason": err.detail}]
        return []

    def counts(self, store: Store, batch_id: str) -> dict[str, int]:
        rows = store.all("SELECT status, COUNT(*) AS n FROM payout_batch_items WHERE batch_id = ? GROUP BY status",
                         (batch_id,))
        by_status = {r["status"]: r["n"] for r in rows}
        return {"total": sum(by_status.values()), "invalid": by_status.get(INVALID, 0),
                "created": by_status.get(CREATED, 0), "createFailed": by_status.get(CREATE_FAILED, 0)}

    # -- the run ---------------------------------------------------------------------------------------

    def create(self, call: Call[BatchServer], external_reference_id: str, lines: list[Any]) -> sqlite3.Row:
        """A new run, `received`, its lines kept as sent; an approval opened when the policy applies."""
        batch_id, now = ids.new_id("pb"), iso(call.now)
        total = _line_total(lines)
        approval_id = None
        if self.needs_approval(call, total):
            approval_id = call.ref.approvals.open(call, kind="batch", amount=Decimal(fmt(total)), currency="USD",
                                                  destination_account_id=None)
        call.ref.store.run(
            "INSERT INTO payout_batches (id, org_id, mode, external_reference_id, status, approval_id, created_at,"
            " updated_at) VALUES (?,?,?,?,?,?,?,?)",
            (batch_id, call.org_id, call.mode, external_reference_id, RECEIVED, approval_id, now, now))
        for index, line in enumerate(lines):
            call.ref.store.run(
                "INSERT INTO payout_batch_items (id, batch_id, line, body, status) VALUES (?,?,?,?,?)",
                (ids.new_id("pbi"), batch_id, index, dumps(line), RECEIVED))
        return self.row(call.ref.store, batch_id)

    def row(self, store: Store, batch_id: str) -> sqlite3.Row:
        row = store.one("SELECT * FROM payout_batches WHERE id = ?", (batch_id,))
        assert row is not None
        return row

    def find(self, call: Call[BatchServer], batch_id: str) -> sqlite3.Row:
        """The run of this organization, settled on its clock; BATCH_NOT_FOUND otherwise."""
        row = call.ref.store.one("SELECT * FROM payout_batches WHERE id = ? AND org_id = ? AND mode = ?",
                                 (batch_id, call.org_id, call.mode))
        if row is None:
            raise ApiError("BATCH_NOT_FOUND")
        return self.settle(call, row)

    def json(self, call: Call[BatchServer], row: sqlite3.Row) -> dict[str, Any]:
        return batch_json(row, self.counts(call.ref.store, row["id"]))

    def settle(self, call: Call[BatchServer], row: sqlite3.Row) -> sqlite3.Row:
        """Apply the timeline steps that are due on the organization's clock, in order."""
        created = datetime.fromisoformat(row["created_at"])
        if row["status"] == RECEIVED and call.now >= created + timedelta(seconds=self.validating_after):
            row = self.enter(call, row, VALIDATING, created + timedelta(seconds=self.validating_after))
        if row["status"] == VALIDATING and call.now >= created + timedelta(seconds=self.validated_after):
            self._validate(call, row)
            row = self.enter(call, row, AWAITING, created + timedelta(seconds=self.validated_after))
        return row

    def _validate(self, call: Call[BatchServer], row: sqlite3.Row) -> None:
        for item in call.ref.store.all("SELECT * FROM payout_batch_items WHERE batch_id = ? AND status = ?",
                                       (row["id"], RECEIVED)):
            errors = self.check_line(call, json.loads(item["body"]))
            call.ref.store.run("UPDATE payout_batch_items SET status = ?, errors = ? WHERE id = ?",
                               (INVALID if errors else VALID, dumps(errors) if errors else None, item["id"]))

    def enter(self, call: Call[BatchServer], row: sqlite3.Row, status: str, at: datetime) -> sqlite3.Row:
        """Enter `status` at `at`, recording its event (if the spec gives it one) with the run as data."""
        call.ref.store.run("UPDATE payout_batches SET status = ?, updated_at = ? WHERE id = ?",
                           (status, iso(at), row["id"]))
        fresh = self.row(call.ref.store, row["id"])
        event = self.events.get(status)
        if event is not None:
            call.ref.events.record(call.org_id, call.mode, event, self.json(call, fresh), at)
        return fresh

    def approval_pending(self, call: Call[BatchServer], row: sqlite3.Row) -> bool:
        """The run needed approvers and they have not (yet) said yes: pending, rejected or expired."""
        if not row["approval_id"]:
            return False
        approval = call.ref.approvals.find(call.ref.store, call.org_id, call.mode, row["approval_id"], call.now)
        return approval is None or approval["status"] != "approved"

    def run(self, call: Call[BatchServer], row: sqlite3.Row) -> sqlite3.Row:
        """Creation: every valid line becomes a payout (or `create_failed`), then the run is `completed`."""
        if call.ref.faults.take(call.org_id, RUN, "error") is not None:
            call.ref.store.run("UPDATE payout_batch_items SET status = ? WHERE batch_id = ? AND status = ?",
                               (CANCELED, row["id"], VALID))
            return self.enter(call, row, FAILED, call.now)
        for item in call.ref.store.all("SELECT * FROM payout_batch_items WHERE batch_id = ? AND status = ?"
                                       " ORDER BY line", (row["id"], VALID)):
            try:
                reply = place(call, read_order(json.loads(item["body"])), approved=True)
            except ApiError as err:
                call.ref.store.run("UPDATE payout_batch_items SET status = ?, errors = ? WHERE id = ?",
                                   (CREATE_FAILED, dumps([{"type": err.type, "reason": err.detail}]), item["id"]))
                continue
            call.ref.store.run("UPDATE payout_batch_items SET status = ?, payout_id = ? WHERE id = ?",
                               (CREATED, reply.body["payoutId"], item["id"]))
        return self.enter(call, row, COMPLETED, call.now)

    def start(self, call: Call[BatchServer], external_reference_id: str, lines: list[Any]) -> sqlite3.Row:
        """A new run, unless `externalReferenceId` is taken: PAYOUT_BATCH_DUPLICATE_REFERENCE naming that run."""
        original = self.duplicate_of(call, external_reference_id)
        if original is not None:
            raise ApiError("PAYOUT_BATCH_DUPLICATE_REFERENCE", originalBatchId=original["id"])
        return self.create(call, external_reference_id, lines)

    def confirm(self, call: Call[BatchServer], row: sqlite3.Row) -> sqlite3.Row:
        """Creation begins only from a confirmable status and once any approval the run needed is given."""
        if row["status"] not in self.confirmable:
            raise ApiError("PAYOUT_BATCH_NOT_CONFIRMABLE", f"The batch is {row['status']}, not awaiting_confirmation.")
        if self.approval_pending(call, row):
            raise ApiError("PAYOUT_BATCH_AWAITING_APPROVAL", approvalId=row["approval_id"])
        return self.run(call, row)

    def withdraw(self, call: Call[BatchServer], row: sqlite3.Row) -> sqlite3.Row:
        """Cancel on request: a canceled run stays as it is; otherwise only from a cancelable status."""
        if row["status"] == CANCELED:
            return row
        if row["status"] not in self.cancelable:
            raise ApiError("PAYOUT_BATCH_NOT_CANCELABLE", f"The batch is {row['status']}; creation has started.")
        return self.cancel(call, row)

    def cancel(self, call: Call[BatchServer], row: sqlite3.Row) -> sqlite3.Row:
        """Stop the run before creation: the lines not yet judged invalid are `canceled`; no payout exists."""
        call.ref.store.run("UPDATE payout_batch_items SET status = ? WHERE batch_id = ? AND status IN (?, ?)",
                           (CANCELED, row["id"], RECEIVED, VALID))
        return self.enter(call, row, CANCELED, call.now)
