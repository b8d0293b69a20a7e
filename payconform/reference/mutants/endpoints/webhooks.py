"""Mutants of the Endpoints part for webhook endpoints, the event feed routes and sandbox deliveries.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...core.clock import iso
from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ...events.webhook_endpoints import ROTATION_OVERLAP
from ..patching import Handler, around, body
from ..registry import mutant
from ..support.events import DELIVERY_LISTS, rewrite_webhook_replies

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ...reference import Reference


def _newest_then_oldest(rows: list) -> list:
    ordered = sorted(rows, key=lambda r: (r["createdAt"], r["id"]))
    return ordered[-1:] + ordered[:-1]


@mutant("events-feed-missing", reqs=["FEED-ROUTE"], doc="GET /events is not routed.")
def events_feed_missing(ref: Reference) -> None:
    def handler(call: Call) -> Reply:
        raise ref.route_not_found("GET", call.path)

    ref.operations["listEvents"] = dataclasses.replace(ref.operations["listEvents"], handler=handler)


@mutant("webhooks-replay-new-event-id", reqs=["WH-REPLAY-ONE"],
        doc="A replay re-sends the event under a new event id.")
def webhooks_replay_new_event_id(ref: Reference) -> None:
    original = ref.events.requeue

    def requeue(delivery: Any, now: Any) -> None:
        event = ref.events.get(delivery["event_id"])
        fresh = ref.events.record(event["org_id"], event["mode"], event["type"], json.loads(event["data"]), now)
        ref.store.run("DELETE FROM webhook_deliveries WHERE event_id = ?", (fresh,))
        ref.store.run("UPDATE webhook_deliveries SET event_id = ? WHERE id = ?", (fresh, delivery["id"]))
        original(delivery, now)

    ref.events.requeue = requeue


@mutant("webhooks-bulk-replay-not-resent", reqs=["WH-REPLAY-BULK"],
        doc="Bulk replay answers `{requeued}` with the count but re-fires nothing.")
def webhooks_bulk_replay_not_resent(ref: Reference) -> None:
    ref.events.requeue = lambda delivery, now: None  # type: ignore[method-assign]


@mutant("webhooks-bulk-replay-failed-means-all", reqs=["WH-REPLAY-BULK"],
        doc="Bulk replay with `status: failed` (the default) requeues every delivery in the window, delivered ones "
            "too, as `all` does.")
def webhooks_bulk_replay_failed_means_all(ref: Reference) -> None:
    ref.events.replayable["failed"] = ref.events.replayable["all"]


@mutant("webhooks-rotation-single-signature", reqs=["WH-ROTATE-SECRET"],
        doc="After rotation only the new secret signs; the old one is dropped at once.")
def webhooks_rotation_single_signature(ref: Reference) -> None:
    ref.dispatcher.secrets_for = lambda endpoint, now: [endpoint["secret"]]


@mutant("webhooks-rotation-old-secret-kept", reqs=["WH-ROTATE-SECRET"],
        doc="After rotation the old secret keeps signing beside the new one for good, past the 24 hours.")
def webhooks_rotation_old_secret_kept(ref: Reference) -> None:
    ref.dispatcher.secrets_for = lambda endpoint, now: [endpoint["secret"]] + (
        [endpoint["previous_secret"]] if endpoint["previous_secret"] else [])


@mutant("webhooks-rotation-deadline-is-rotation-time", reqs=["WH-ROTATE-SECRET"],
        doc="Rotation answers `previousValidUntil` as the moment of rotation, though the old secret signs for 24 "
            "hours more.")
def webhooks_rotation_deadline_is_rotation_time(ref: Reference) -> None:
    respond = ref.respond

    def answer(request: Request, status: int, body: Any, headers: dict[str, str] | None = None,
               *, is_error: bool = False) -> Response:
        if request.url.path.endswith("/rotate-secret") and isinstance(body, dict) and body.get("previousValidUntil"):
            until = datetime.fromisoformat(body["previousValidUntil"]) - ROTATION_OVERLAP
            body = {**body, "previousValidUntil": iso(until)}
        return respond(request, status, body, headers, is_error=is_error)

    ref.respond = answer  # type: ignore[method-assign]


@mutant("webhooks-rotation-secret-listed", reqs=["WH-ROTATE-SECRET"],
        doc="After rotation the endpoint list shows the new secret: it is returned again, not once.")
def webhooks_rotation_secret_listed(ref: Reference) -> None:
    def with_secrets(body: Any) -> Any:
        rotated = {r["id"]: r["secret"] for r in ref.store.all(
            "SELECT id, secret FROM webhook_endpoints WHERE previous_secret IS NOT NULL")}
        return {**body, "data": [{**row, "secret": rotated[row["id"]]} if row.get("id") in rotated else row
                                 for row in body["data"]]}

    rewrite_webhook_replies(ref, ("listWebhookEndpoints",), with_secrets)


@mutant("webhooks-delete-ignored", reqs=["WH-DELETE"], doc="Deleting an endpoint changes nothing.")
def webhooks_delete_ignored(ref: Reference) -> None:
    ref.events.active = ref.events.active.replace("deleted_at IS NULL AND ", "")
    rewrite_webhook_replies(ref, ("listWebhookEndpoints",), lambda body: {**body, "data": body["data"] + [
        {"id": r["id"], "url": r["url"]} for r in ref.store.all("SELECT * FROM webhook_endpoints WHERE deleted_at"
                                                              " IS NOT NULL")]})


@mutant("webhooks-register-refused", reqs=["WH-SBX-REGISTER", "WH-TEST-KEY-SANDBOX-PATH"],
        doc="A test key cannot register a sandbox endpoint.")
def webhooks_register_refused(ref: Reference) -> None:
    def handler(call: Call) -> Reply:
        raise ApiError("FORBIDDEN", "Registering endpoints needs the dashboard.")

    ref.operations["createSandboxWebhookEndpoint"] = dataclasses.replace(
        ref.operations["createSandboxWebhookEndpoint"], handler=handler)


@mutant("webhooks-sandbox-register-drops-events", reqs=["WH-SBX-REGISTER"],
        doc="Sandbox registration ignores `events`: the endpoint is registered (201) opted in to nothing.")
def webhooks_sandbox_register_drops_events(ref: Reference) -> None:
    @around(ref, "createSandboxWebhookEndpoint")
    def create_sandbox_webhook_endpoint(original: Handler, call: Call) -> Reply:
        body(call).pop("events", None)
        return original(call)


@mutant("webhooks-sandbox-endpoint-never-sent", reqs=["WH-TEST-KEY-SANDBOX-PATH"],
        doc="An endpoint a test key registers under the sandbox path is answered 201 with its secret, but no "
            "delivery is ever queued for it (an endpoint the dashboard registers is served).")
def webhooks_sandbox_endpoint_never_sent(ref: Reference) -> None:
    muted: set[str] = set()

    @around(ref, "createSandboxWebhookEndpoint")
    def create_sandbox_webhook_endpoint(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if isinstance(reply.body, dict) and isinstance(reply.body.get("id"), str):
            muted.add(reply.body["id"])
            ref.store.run("DELETE FROM webhook_deliveries WHERE endpoint_id = ?", (reply.body["id"],))
        return reply

    queue = ref.events.queue

    def queue_unless_muted(endpoint_id: str, org_id: str, mode: str, event_id: str, type_: str, due: str) -> None:
        if endpoint_id not in muted:
            queue(endpoint_id, org_id, mode, event_id, type_, due)

    ref.events.queue = queue_unless_muted  # type: ignore[method-assign]


@mutant("webhooks-list-empty", reqs=["WH-LIST"], doc="The endpoint list is always empty.")
def webhooks_list_empty(ref: Reference) -> None:
    rewrite_webhook_replies(ref, ("listWebhookEndpoints",), lambda body: {**body, "data": []})


@mutant("webhooks-deliveries-unsorted", reqs=["WH-DELIVERIES-LIST"],
        doc="Deliveries list the newest attempt first and the rest oldest first: sorted by `createdAt` then `id` "
            "in neither direction.")
def webhooks_deliveries_unsorted(ref: Reference) -> None:
    rewrite_webhook_replies(ref, DELIVERY_LISTS, _newest_then_oldest)


@mutant("webhooks-sandbox-deliveries-empty", reqs=["WH-SBX-DELIVERIES"], doc="The sandbox delivery log is empty.")
def webhooks_sandbox_deliveries_empty(ref: Reference) -> None:
    rewrite_webhook_replies(ref, ("listSandboxWebhookDeliveries",), lambda rows: [])


@mutant("webhooks-management-accepts-api-key", reqs=["WH-MGMT-DASHBOARD-ONLY"],
        doc="Dashboard-only management routes answer an API key 200.")
def webhooks_management_accepts_api_key(ref: Reference) -> None:
    for op_id in ("createWebhookEndpoint", "deleteWebhookEndpoint", "setWebhookEndpointEnabled",
                  "rotateWebhookEndpointSecret", "replayWebhookDelivery", "replayWebhookDeliveries"):
        ref.operations[op_id] = dataclasses.replace(ref.operations[op_id], handler=lambda call: Reply(200, {}))


@mutant("webhooks-replay-one-accepts-api-key", reqs=["WH-MGMT-DASHBOARD-ONLY"],
        doc="Replaying one delivery, alone of the management routes, answers an API key 200.")
def webhooks_replay_one_accepts_api_key(ref: Reference) -> None:
    op = ref.operations["replayWebhookDelivery"]
    ref.operations[op.op_id] = dataclasses.replace(op, handler=lambda call: Reply(200, {}))


@mutant("webhooks-deliveries-refuse-api-key", reqs=["WH-MGMT-DASHBOARD-ONLY"],
        doc="GET /{id}/deliveries, one of the two API-key-readable routes, refuses an API key (403) like the "
            "dashboard-only ones.")
def webhooks_deliveries_refuse_api_key(ref: Reference) -> None:
    def handler(call: Call) -> Reply:
        raise ApiError("FORBIDDEN", "Managing webhook endpoints needs a signed-in dashboard session.")

    op = ref.operations["listWebhookEndpointDeliveries"]
    ref.operations[op.op_id] = dataclasses.replace(op, handler=handler)


@mutant("webhooks-developer-tools-ignored", reqs=["WH-SBX-DEVELOPER-DISABLED", "ERR-DEVELOPER-FEATURE-DISABLED"],
        doc="Sandbox deliveries are listed although the organization's developer tools are off.")
def webhooks_developer_tools_ignored(ref: Reference) -> None:
    op = ref.operations["listSandboxWebhookDeliveries"]
    ref.operations[op.op_id] = dataclasses.replace(op, handler=ref.operations["listWebhookEndpointDeliveries"].handler)


@mutant("webhooks-sandbox-deliveries-live-key", reqs=["WH-SBX-DELIVERIES-LIVE-KEY"],
        doc="The sandbox delivery log accepts a live key (and answers 404 for the sandbox endpoint).")
def webhooks_sandbox_deliveries_live_key(ref: Reference) -> None:
    op = ref.operations["listSandboxWebhookDeliveries"]
    ref.operations[op.op_id] = dataclasses.replace(op, sandbox_only=False)


@mutant("webhooks-register-ignores-events", reqs=["WH-REGISTER"],
        doc="Registration drops the `events` opt-in list: checkout-payment events never reach the endpoint.")
def webhooks_register_ignores_events(ref: Reference) -> None:
    original = ref.events.backfill_endpoint

    def backfill_endpoint(endpoint: Any, now: Any) -> None:
        ref.store.run("UPDATE webhook_endpoints SET events = '[]' WHERE id = ?", (endpoint["id"],))
        original(endpoint, now)

    ref.events.backfill_endpoint = backfill_endpoint
