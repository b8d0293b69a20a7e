"""Webhook endpoints and their delivery log: registration, health, secret rotation, replay.

A test key registers a sandbox endpoint over the API; the dashboard (the operator API) registers, pauses or
resumes (resuming clears health), rotates the secret (the old one keeps signing for 24 hours), deletes,
replays one delivery (fresh retry ladder, same event id) or a window of them (up to 1,000, oldest first); the
back office seeds copies of a delivery (a long history, cheaply). A secret is shown once: at creation and at
each rotation. Deliveries themselves are the event store's and the dispatcher's (`events.py`, `dispatcher.py`).
"""

from __future__ import annotations

import base64
import json
import secrets
import sqlite3
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from ..core import ids
from ..core.clock import Clock, iso
from ..core.errors import ApiError
from .events import EVENT_TYPES, Events
from ..core.operation import Call, StoreServer
from ..core.orgs import get_org
from ..core.validate import Checker

if TYPE_CHECKING:
    from .dispatcher import Dispatcher

ROTATION_OVERLAP = timedelta(hours=24)


class WebhookServer(StoreServer, Protocol):
    """What the endpoint actions reach: the clock, the event store and the dispatcher that sends deliveries."""

    clock: Clock
    events: Events
    dispatcher: Dispatcher


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def endpoint_json(row: sqlite3.Row) -> dict[str, Any]:
    """An endpoint with its health; never its secret (shown once, at creation and at each rotation)."""
    return {
        "id": row["id"],
        "url": row["url"],
        "events": json.loads(row["events"]),
        "enabled": bool(row["enabled"]) and row["disabled_reason"] is None,
        "consecutiveFailures": row["consecutive_failures"],
        "lastSuccessAt": row["last_success_at"],
        "lastFailureAt": row["last_failure_at"],
        "disabledReason": row["disabled_reason"],
        "createdAt": row["created_at"],
    }


def delivery_json(row: sqlite3.Row) -> dict[str, Any]:
    """One delivery of one event to one endpoint; no payload (the event is in the feed)."""
    return {
        "id": row["id"],
        "endpointId": row["endpoint_id"],
        "eventId": row["event_id"],
        "eventType": row["event_type"],
        "status": row["status"],
        "attempts": row["attempts"],
        "nextRetryAt": row["next_attempt_at"],
        "lastAttemptAt": row["last_attempt_at"],
        "lastError": row["last_error"],
        "createdAt": row["created_at"],
    }


def read_settings(c: Checker) -> tuple[str, list[str]]:
    """`url` (http or https) and `events` (the checkout-payment opt-in list) of a registration, the same over
    the API and the dashboard; every failed field in one 400."""
    url = c.string("url", required=True, max_len=2000)
    if url is not None and (urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc):
        c.fail("url", "must be an http(s) URL")
    events = c.obj.get("events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) and e in EVENT_TYPES for e in events):
        c.fail("events", "must be a list of event types")
        events = []
    c.done()
    assert url is not None
    return url, sorted(set(events))


def create_endpoint(ref: WebhookServer, org_id: str, mode: str, url: str, events: list[str]) -> dict[str, Any]:
    """Register an endpoint, queue the events of the last 10 minutes to it; the answer carries the secret."""
    now = ref.clock.now(org_id)
    endpoint_id, secret = ids.new_id("we"), new_secret()
    ref.store.run(
        "INSERT INTO webhook_endpoints (id, org_id, mode, url, events, secret, health_since, created_at)"
        " VALUES (?,?,?,?,?,?,?,?)", (endpoint_id, org_id, mode, url, json.dumps(events), secret, iso(now), iso(now)))
    row = find_endpoint(ref, org_id, mode, endpoint_id)
    ref.events.backfill_endpoint(row, now)
    ref.dispatcher.ensure_running()
    return {**endpoint_json(row), "secret": secret}


def find_endpoint(ref: WebhookServer, org_id: str, mode: str | None, endpoint_id: str) -> sqlite3.Row:
    """The endpoint of this organization (and mode, unless None: the dashboard sees both); 404 otherwise."""
    sql = "SELECT * FROM webhook_endpoints WHERE id = ? AND org_id = ? AND deleted_at IS NULL"
    row = ref.store.one(sql + (" AND mode = ?" if mode else ""), (endpoint_id, org_id, *([mode] if mode else [])))
    if row is None:
        raise ApiError("NOT_FOUND", "No such webhook endpoint in this organization.")
    return row


def active_endpoints(ref: WebhookServer, org_id: str, mode: str) -> list[sqlite3.Row]:
    return ref.store.all("SELECT * FROM webhook_endpoints WHERE org_id = ? AND mode = ? AND deleted_at IS NULL"
                         " ORDER BY seq", (org_id, mode))


def recent_deliveries(ref: WebhookServer, endpoint_id: str) -> list[dict[str, Any]]:
    """The 50 newest attempts, as a bare array sorted by `createdAt` then `id`."""
    rows = ref.store.all("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at DESC, id DESC"
                         " LIMIT ?", (endpoint_id, ref.events.delivery_log))
    return sorted((delivery_json(r) for r in rows), key=lambda d: (d["createdAt"], d["id"]))


def check_developer_tools(call: Call[StoreServer]) -> None:
    """The sandbox delivery log is a developer tool: 403 when the organization's `developer` feature is off."""
    org = get_org(call.ref.store, call.org_id)
    if org is None or "developer" not in org.features:
        raise ApiError("DEVELOPER_FEATURE_DISABLED")


def delete_endpoint(ref: WebhookServer, row: sqlite3.Row) -> None:
    ref.store.run("UPDATE webhook_endpoints SET deleted_at = ? WHERE id = ?",
                  (iso(ref.clock.now(row["org_id"])), row["id"]))


def set_enabled(ref: WebhookServer, row: sqlite3.Row, enabled: bool) -> sqlite3.Row:
    """Pause or resume without losing the secret; resuming clears health (failures, disable reason)."""
    if enabled:
        ref.events.resume(row["id"], ref.clock.now(row["org_id"]))
    else:
        ref.store.run("UPDATE webhook_endpoints SET enabled = 0 WHERE id = ?", (row["id"],))
    return find_endpoint(ref, row["org_id"], None, row["id"])


def rotate_secret(ref: WebhookServer, row: sqlite3.Row) -> dict[str, Any]:
    """A new secret, returned once; the old one keeps signing (a second signature) for 24 hours."""
    until, secret = iso(ref.clock.now(row["org_id"]) + ROTATION_OVERLAP), new_secret()
    ref.store.run("UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_valid_until = ?"
                  " WHERE id = ?", (secret, row["secret"], until, row["id"]))
    return {**endpoint_json(find_endpoint(ref, row["org_id"], None, row["id"])), "secret": secret,
            "previousValidUntil": until}


def replay_one(ref: WebhookServer, row: sqlite3.Row, delivery_id: str) -> sqlite3.Row:
    """Queue one delivery of the endpoint again on a fresh retry ladder; the delivery."""
    delivery = ref.store.one("SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?",
                             (delivery_id, row["id"]))
    if delivery is None:
        raise ApiError("NOT_FOUND", "No such delivery for this endpoint.")
    ref.events.requeue(delivery, ref.clock.now(row["org_id"]))
    fresh = ref.store.one("SELECT * FROM webhook_deliveries WHERE id = ?", (delivery["id"],))
    assert fresh is not None
    return fresh


def replay_window(ref: WebhookServer, row: sqlite3.Row, start: datetime, end: datetime, which: str) -> int:
    """Queue again the deliveries created in [start, end], `failed` (failed or dead) or `all`, oldest first, up
    to the bulk limit; how many."""
    statuses = ref.events.replayable[which]
    rows = ref.store.all(
        "SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND created_at >= ? AND created_at <= ?"
        f" AND status IN ({','.join('?' * len(statuses))}) ORDER BY created_at, seq LIMIT ?",
        (row["id"], iso(start), iso(end), *statuses, ref.events.bulk_replay_max))
    now = ref.clock.now(row["org_id"])
    for delivery in rows:
        ref.events.requeue(delivery, now)
    return len(rows)


def seed_deliveries(ref: WebhookServer, row: sqlite3.Row, count: int) -> None:
    """Back office: `count` copies of the endpoint's newest delivery (same event, status and instants), so a
    delivery history longer than bulk replay's 1,000 is reachable without causing 1,000 events."""
    newest = ref.store.one("SELECT id FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT 1",
                           (row["id"],))
    if newest is None:
        raise ApiError("CONFLICT", "The endpoint has no delivery to copy yet.")
    for _ in range(count):
        ref.store.run(
            "INSERT INTO webhook_deliveries (id, endpoint_id, org_id, mode, event_id, event_type, status, attempts,"
            " next_attempt_at, last_attempt_at, last_error, created_at, updated_at) SELECT ?, endpoint_id, org_id,"
            " mode, event_id, event_type, status, attempts, next_attempt_at, last_attempt_at, last_error, created_at,"
            " updated_at FROM webhook_deliveries WHERE id = ?", (ids.new_id("whd"), newest["id"]))
