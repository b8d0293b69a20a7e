"""The event store: every state change writes one event, in the same SQLite transaction as the change.

Use from any handler that changes state (Events: "Every state change writes one event in the same
transaction as the change"):

    call.ref.events.record(call.org_id, call.mode, "payout.completed", payout_json(row), call.now)

inside the handler's transaction (every handler runs in `ref.store.tx()`, and `Lifecycle.settle` runs inside
the read that settles the payout), so the event and the change commit or roll back together. `data` is the
payload, built once by the caller and stored verbatim: the feed and every delivery return that object.
`record` also queues one delivery per webhook endpoint the event routes to (payout, batch, approval and
endpoint events to every enabled endpoint; checkout-payment events only where listed in `events`); the
dispatcher (`dispatcher.py`) sends them.

`sequence` is the feed cursor: a server-wide, strictly increasing integer, sent as a decimal string.
Webhook endpoints and deliveries live here too because routing is part of recording.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import Any

from ..core import ids
from ..core.clock import iso
from ..core.store import Store, dumps

EVENT_TYPES: tuple[str, ...] = (
    "payout.pending", "payout.processing", "payout.completed", "payout.failed", "payout.returned",
    "payout.canceled",
    "payout_approval.pending", "payout_approval.approved", "payout_approval.rejected", "payout_approval.expired",
    "payout_approval.executed", "payout_approval.execution_failed",
    "payout_batch.awaiting_confirmation", "payout_batch.completed", "payout_batch.canceled", "payout_batch.failed",
    "checkout_payment.paid", "checkout_payment.failed", "checkout_payment.refunded", "checkout_payment.reversed",
    "checkout_payment.partially_refunded",
    "webhook_endpoint.disabled",
)
OPT_IN_PREFIX = "checkout_payment."
API_VERSION = 1
BACKFILL = timedelta(minutes=10)
DELIVERY_LOG = 50  # Limits: the delivery list holds the 50 newest attempts
BULK_REPLAY_MAX = 1000  # Limits: bulk replay up to 1,000

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL, mode TEXT NOT NULL,
    type TEXT NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_org ON events (org_id, mode, seq);
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL, mode TEXT NOT NULL,
    url TEXT NOT NULL, events TEXT NOT NULL, secret TEXT NOT NULL, previous_secret TEXT,
    previous_valid_until TEXT, enabled INTEGER NOT NULL DEFAULT 1, disabled_reason TEXT,
    consecutive_failures INTEGER NOT NULL DEFAULT 0, last_success_at TEXT, last_failure_at TEXT,
    health_since TEXT NOT NULL, created_at TEXT NOT NULL, deleted_at TEXT);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, endpoint_id TEXT NOT NULL,
    org_id TEXT NOT NULL, mode TEXT NOT NULL, event_id TEXT NOT NULL, event_type TEXT NOT NULL,
    status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at TEXT, last_attempt_at TEXT,
    last_error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
"""


def event_json(row: sqlite3.Row) -> dict[str, Any]:
    """The event envelope, identical in the feed and in every delivery of the event."""
    return {
        "id": row["id"],
        "sequence": str(row["seq"]),
        "type": row["type"],
        "createdAt": row["created_at"],
        "apiVersion": API_VERSION,
        "livemode": row["mode"] == "live",
        "data": json.loads(row["data"]),
    }


ACTIVE = "deleted_at IS NULL AND enabled = 1 AND disabled_reason IS NULL"
REPLAYABLE = {"failed": ("failed", "dead"), "all": ("pending", "failed", "dead", "succeeded")}


class Events:
    """Recording, routing and reading events, and the endpoint and delivery rows.

    Patch points for mutants (attributes of this instance): `envelope`, `routes_to`, `feed`, `record`,
    `active` (the SQL condition of an endpoint that receives deliveries), `replayable` (delivery statuses a
    bulk replay picks per `status` value), `requeue`, `resume`, `queue`, `backfill`, `delivery_log`,
    `bulk_replay_max`.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.store.conn.executescript(SCHEMA)
        self.envelope = event_json
        self.backfill = BACKFILL
        self.active = ACTIVE
        self.replayable = dict(REPLAYABLE)
        self.delivery_log = DELIVERY_LOG
        self.bulk_replay_max = BULK_REPLAY_MAX

    def record(self, org_id: str, mode: str, type_: str, data: dict[str, Any], now: datetime) -> str:
        """Write one event and queue its deliveries; call inside the transaction of the change. Its id."""
        event_id = ids.new_id("evt")
        created = iso(now)
        self.store.run("INSERT INTO events (id, org_id, mode, type, data, created_at) VALUES (?,?,?,?,?,?)",
                       (event_id, org_id, mode, type_, dumps(data), created))
        for endpoint in self.active_endpoints(org_id, mode):
            if self.routes_to(endpoint, type_):
                self.queue(endpoint["id"], org_id, mode, event_id, type_, created)
        return event_id

    def routes_to(self, endpoint: sqlite3.Row, type_: str) -> bool:
        """Checkout-payment events are opt-in; every other event goes to every endpoint."""
        return not type_.startswith(OPT_IN_PREFIX) or type_ in json.loads(endpoint["events"])

    def active_endpoints(self, org_id: str, mode: str) -> list[sqlite3.Row]:
        """Endpoints that receive deliveries: not deleted, not paused, not auto-disabled."""
        return self.store.all(
            f"SELECT * FROM webhook_endpoints WHERE org_id = ? AND mode = ? AND {self.active} ORDER BY seq",
            (org_id, mode))

    def queue(self, endpoint_id: str, org_id: str, mode: str, event_id: str, type_: str, due: str) -> None:
        self.store.run(
            "INSERT INTO webhook_deliveries (id, endpoint_id, org_id, mode, event_id, event_type, status,"
            " next_attempt_at, created_at, updated_at) VALUES (?,?,?,?,?,?,'pending',?,?,?)",
            (ids.new_id("whd"), endpoint_id, org_id, mode, event_id, type_, due, due, due))

    def backfill_endpoint(self, endpoint: sqlite3.Row, now: datetime) -> None:
        """A new endpoint receives the routed events recorded up to `backfill` before its creation."""
        rows = self.store.all(
            "SELECT * FROM events WHERE org_id = ? AND mode = ? AND created_at >= ? ORDER BY seq",
            (endpoint["org_id"], endpoint["mode"], iso(now - self.backfill)))
        for row in rows:
            if self.routes_to(endpoint, row["type"]):
                self.queue(endpoint["id"], row["org_id"], row["mode"], row["id"], row["type"], iso(now))

    def feed(self, org_id: str, mode: str, since: int | None, types: list[str] | None,
             limit: int) -> list[sqlite3.Row]:
        """Events strictly after `since`, oldest first, optionally of the given types."""
        sql = "SELECT * FROM events WHERE org_id = ? AND mode = ? AND seq > ?"
        params: list[Any] = [org_id, mode, since if since is not None else 0]
        if types:
            sql += f" AND type IN ({','.join('?' * len(types))})"
            params += types
        return self.store.all(sql + " ORDER BY seq LIMIT ?", (*params, limit))

    def get(self, event_id: str) -> sqlite3.Row | None:
        return self.store.one("SELECT * FROM events WHERE id = ?", (event_id,))

    def requeue(self, delivery: sqlite3.Row, now: datetime) -> None:
        """Replay: the same event to the same endpoint with a fresh retry ladder (attempts reset, due now)."""
        self.store.run("UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?,"
                       " updated_at = ? WHERE id = ?", (iso(now), iso(now), delivery["id"]))

    def resume(self, endpoint_id: str, now: datetime) -> None:
        """Resume a paused or disabled endpoint; resuming clears health (failures, disable reason)."""
        self.store.run(
            "UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, consecutive_failures = 0,"
            " last_failure_at = NULL, health_since = ? WHERE id = ?", (iso(now), endpoint_id))
