"""Webhook endpoints: sandbox registration and delivery log (API key), management (dashboard / operator).

API routes (Endpoints > Sandbox webhooks, Webhook endpoint management): a test key registers a sandbox
endpoint (`events` is the checkout-payment opt-in list; the `whsec_` secret is in the 201 answer only) and
reads its deliveries (the 50 newest, a bare array sorted by `createdAt` then `id`, no payload; 403
`DEVELOPER_FEATURE_DISABLED` when the organization's `developer` feature is off; a live key gets 400
`LIVE_MODE_UNSUPPORTED` from the pipeline, a 400 as the row's `BAD_REQUEST`). The list of endpoints and the
management deliveries list accept an API key; every other management route is dashboard-session only and
answers an API key 403 `FORBIDDEN` (as `routes/keys.py` does for key rotation).

The dashboard actions are operator routes (`OPERATOR_ROUTES`, mounted by `operator.py`): register, pause or
resume (resuming clears health), rotate the secret (the old one keeps signing for 24 hours), delete, replay
one delivery (fresh retry ladder, same event id) and bulk replay (a window, up to 1,000, oldest first); and,
for the back office, seeding copies of a delivery (a long history, cheaply).
"""

from __future__ import annotations

import base64
import json
import secrets
import sqlite3
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.requests import Request

from .. import ids
from ..clock import iso
from ..errors import ApiError
from ..events import EVENT_TYPES
from ..operation import Call, Operation, Reply
from ..orgs import get_org
from ..validate import Checker, check

if TYPE_CHECKING:
    from ..reference import Reference

ROTATION_OVERLAP = timedelta(hours=24)


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


def _settings(c: Checker) -> tuple[str | None, list[str]]:
    url = c.string("url", required=True, max_len=2000)
    if url is not None and (urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc):
        c.fail("url", "must be an http(s) URL")
    events = c.obj.get("events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) and e in EVENT_TYPES for e in events):
        c.fail("events", "must be a list of event types")
        events = []
    c.done()
    return url, sorted(set(events))


def create_endpoint(ref: Reference, org_id: str, mode: str, url: str, events: list[str]) -> dict[str, Any]:
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


def find_endpoint(ref: Reference, org_id: str, mode: str | None, endpoint_id: str) -> sqlite3.Row:
    sql = "SELECT * FROM webhook_endpoints WHERE id = ? AND org_id = ? AND deleted_at IS NULL"
    row = ref.store.one(sql + (" AND mode = ?" if mode else ""), (endpoint_id, org_id, *([mode] if mode else [])))
    if row is None:
        raise ApiError("NOT_FOUND", "No such webhook endpoint in this organization.")
    return row


def recent_deliveries(ref: Reference, endpoint_id: str) -> list[dict[str, Any]]:
    """The 50 newest attempts, as a bare array sorted by `createdAt` then `id`."""
    rows = ref.store.all("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at DESC, id DESC"
                         " LIMIT ?", (endpoint_id, ref.events.delivery_log))
    return sorted((delivery_json(r) for r in rows), key=lambda d: (d["createdAt"], d["id"]))


# ---------------------------------------------------------------- API routes


def register_sandbox(call: Call) -> Reply:
    url, events = _settings(check(call.json()))
    assert url is not None
    body = create_endpoint(call.ref, call.org_id, call.mode, url, events)
    return Reply(201, body, body["id"])


def _developer_tools(call: Call) -> None:
    org = get_org(call.ref.store, call.org_id)
    if org is None or "developer" not in org.features:
        raise ApiError("DEVELOPER_FEATURE_DISABLED")


def list_sandbox_deliveries(call: Call) -> Reply:
    _developer_tools(call)
    row = find_endpoint(call.ref, call.org_id, call.mode, call.params["endpointId"])
    return Reply(200, recent_deliveries(call.ref, row["id"]))


def list_endpoints(call: Call) -> Reply:
    rows = call.ref.store.all("SELECT * FROM webhook_endpoints WHERE org_id = ? AND mode = ? AND deleted_at IS NULL"
                              " ORDER BY seq", (call.org_id, call.mode))
    return Reply(200, {"data": [endpoint_json(r) for r in rows]})


def list_deliveries(call: Call) -> Reply:
    row = find_endpoint(call.ref, call.org_id, call.mode, call.params["endpointId"])
    return Reply(200, recent_deliveries(call.ref, row["id"]))


def dashboard_only(call: Call) -> Reply:
    raise ApiError("FORBIDDEN", "Managing webhook endpoints needs a signed-in dashboard session, not an API key.")


SBX = "/payments/organizations/{orgId}/sandbox/webhook-endpoints"
MGMT = "/organizations/{orgId}/webhook-endpoints"
OPERATIONS = [
    Operation("createSandboxWebhookEndpoint", "POST", SBX, register_sandbox, takes_body=True, sandbox_only=True,
              audit="webhook_endpoint.create"),
    Operation("listSandboxWebhookDeliveries", "GET", SBX + "/{endpointId}/deliveries", list_sandbox_deliveries,
              sandbox_only=True),
    Operation("listWebhookEndpoints", "GET", MGMT, list_endpoints),
    Operation("listWebhookEndpointDeliveries", "GET", MGMT + "/{endpointId}/deliveries", list_deliveries),
    Operation("createWebhookEndpoint", "POST", MGMT, dashboard_only, audit="webhook_endpoint.create"),
    Operation("deleteWebhookEndpoint", "DELETE", MGMT + "/{endpointId}", dashboard_only,
              audit="webhook_endpoint.delete"),
    Operation("setWebhookEndpointEnabled", "POST", MGMT + "/{endpointId}/enabled", dashboard_only,
              audit="webhook_endpoint.update"),
    Operation("rotateWebhookEndpointSecret", "POST", MGMT + "/{endpointId}/rotate-secret", dashboard_only,
              audit="webhook_endpoint.rotate_secret"),
    Operation("replayWebhookDelivery", "POST", MGMT + "/{endpointId}/deliveries/{deliveryId}/replay", dashboard_only,
              audit="webhook_delivery.replay"),
    Operation("replayWebhookDeliveries", "POST", MGMT + "/{endpointId}/deliveries/replay", dashboard_only,
              audit="webhook_delivery.replay"),
]


# ---------------------------------------------------------------- operator (dashboard) routes


def _mode(body: dict[str, Any]) -> str:
    mode = body.get("mode", "test")
    if mode not in ("test", "live"):
        raise ApiError("VALIDATION_ERROR", errors=[{"field": "mode", "reason": "test or live"}])
    return str(mode)


def op_register(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = request.path_params["orgId"]
    mode = _mode(body)
    url, events = _settings(Checker({k: v for k, v in body.items() if k != "mode"}))
    assert url is not None
    return 201, create_endpoint(ref, org_id, mode, url, events)


def op_delete(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    row = find_endpoint(ref, request.path_params["orgId"], None, request.path_params["endpointId"])
    ref.store.run("UPDATE webhook_endpoints SET deleted_at = ? WHERE id = ?",
                  (iso(ref.clock.now(row["org_id"])), row["id"]))
    return 200, {"id": row["id"], "deleted": True}


def op_enabled(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """Pause or resume without losing the secret; resuming clears health (failures, disable reason)."""
    c = Checker(body)
    enabled = c.boolean("enabled", required=True)
    c.done()
    row = find_endpoint(ref, request.path_params["orgId"], None, request.path_params["endpointId"])
    if enabled:
        ref.events.resume(row["id"], ref.clock.now(row["org_id"]))
    else:
        ref.store.run("UPDATE webhook_endpoints SET enabled = 0 WHERE id = ?", (row["id"],))
    return 200, endpoint_json(find_endpoint(ref, row["org_id"], None, row["id"]))


def op_rotate(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """A new secret, returned once; the old one keeps signing (a second signature) for 24 hours."""
    row = find_endpoint(ref, request.path_params["orgId"], None, request.path_params["endpointId"])
    until, secret = iso(ref.clock.now(row["org_id"]) + ROTATION_OVERLAP), new_secret()
    ref.store.run("UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_valid_until = ?"
                  " WHERE id = ?", (secret, row["secret"], until, row["id"]))
    return 200, {**endpoint_json(find_endpoint(ref, row["org_id"], None, row["id"])), "secret": secret,
                 "previousValidUntil": until}


def op_replay_one(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    row = find_endpoint(ref, request.path_params["orgId"], None, request.path_params["endpointId"])
    delivery = ref.store.one("SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?",
                             (request.path_params["deliveryId"], row["id"]))
    if delivery is None:
        raise ApiError("NOT_FOUND", "No such delivery for this endpoint.")
    ref.events.requeue(delivery, ref.clock.now(row["org_id"]))
    fresh = ref.store.one("SELECT * FROM webhook_deliveries WHERE id = ?", (delivery["id"],))
    assert fresh is not None
    return 202, delivery_json(fresh)


def op_replay_bulk(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """Deliveries created in [from, to], `failed` (failed or dead; the default) or `all`; oldest first."""
    c = Checker(body)
    start, end = c.instant("from", required=True), c.instant("to", required=True)
    which = c.string("status", choices=("failed", "all")) or "failed"
    c.done()
    assert start is not None and end is not None
    row = find_endpoint(ref, request.path_params["orgId"], None, request.path_params["endpointId"])
    statuses = ref.events.replayable[which]
    rows = ref.store.all(
        "SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND created_at >= ? AND created_at <= ?"
        f" AND status IN ({','.join('?' * len(statuses))}) ORDER BY created_at, seq LIMIT ?",
        (row["id"], iso(start), iso(end), *statuses, ref.events.bulk_replay_max))
    now = ref.clock.now(row["org_id"])
    for delivery in rows:
        ref.events.requeue(delivery, now)
    return 202, {"requeued": len(rows)}


def op_seed_deliveries(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """Back office: `count` copies of the endpoint's newest delivery (same event, status and instants), so a
    delivery history longer than bulk replay's 1,000 is reachable without causing 1,000 events."""
    c = Checker(body)
    count = c.integer("count", required=True, low=1, high=5000)
    c.done()
    row = find_endpoint(ref, request.path_params["orgId"], None, request.path_params["endpointId"])
    newest = ref.store.one("SELECT id FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT 1",
                           (row["id"],))
    if newest is None:
        raise ApiError("CONFLICT", "The endpoint has no delivery to copy yet.")
    for _ in range(count or 0):
        ref.store.run(
            "INSERT INTO webhook_deliveries (id, endpoint_id, org_id, mode, event_id, event_type, status, attempts,"
            " next_attempt_at, last_attempt_at, last_error, created_at, updated_at) SELECT ?, endpoint_id, org_id,"
            " mode, event_id, event_type, status, attempts, next_attempt_at, last_attempt_at, last_error, created_at,"
            " updated_at FROM webhook_deliveries WHERE id = ?", (ids.new_id("whd"), newest["id"]))
    return 201, {"seeded": count}


OPERATOR_ROUTES = [
    ("/orgs/{orgId}/webhook-endpoints", op_register, "POST"),
    ("/orgs/{orgId}/webhook-endpoints/{endpointId}", op_delete, "DELETE"),
    ("/orgs/{orgId}/webhook-endpoints/{endpointId}/enabled", op_enabled, "POST"),
    ("/orgs/{orgId}/webhook-endpoints/{endpointId}/rotate-secret", op_rotate, "POST"),
    ("/orgs/{orgId}/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/replay", op_replay_one, "POST"),
    ("/orgs/{orgId}/webhook-endpoints/{endpointId}/deliveries/replay", op_replay_bulk, "POST"),
    ("/orgs/{orgId}/webhook-endpoints/{endpointId}/deliveries/seed", op_seed_deliveries, "POST"),
]
