"""Mutants of events, webhook deliveries and the event feed (Events; Resources > Event envelope, Webhook
endpoint and delivery; Endpoints > Sandbox webhooks, Webhook endpoint management; States > Webhook endpoint).

They patch this server's `ref.events` (envelope, feed, recording, routing SQL, replay), `ref.dispatcher`
(signing, headers, retry ladder, auto-disable) or wrap an operation's handler.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ApiError
from ..operation import Call, Reply
from ..routes.webhooks import new_secret
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference

Handler = Callable[[Call], Reply]
DELIVERY_LISTS = ("listSandboxWebhookDeliveries", "listWebhookEndpointDeliveries")


def _envelope(ref: Reference, change: Callable[[dict[str, Any]], None]) -> None:
    """Every event object (feed and deliveries) goes through `change`."""
    original = ref.events.envelope

    def envelope(row: Any) -> dict[str, Any]:
        body = original(row)
        change(body)
        return body

    ref.events.envelope = envelope


def _rewrite(ref: Reference, op_ids: tuple[str, ...], change: Callable[[Any], Any]) -> None:
    """The reply body of the given operations goes through `change`."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            return dataclasses.replace(reply, body=change(reply.body))
        return handler

    for op_id in op_ids:
        ref.wrap_handler(op_id, wrap)


def _headers(ref: Reference, change: Callable[[dict[str, str]], None]) -> None:
    original = ref.dispatcher.headers

    def headers(*args: Any) -> dict[str, str]:
        out = original(*args)
        change(out)
        return out

    ref.dispatcher.headers = headers


# ---------------------------------------------------------------- delivery headers and signature


@mutant("events-signature-over-reserialized-body", reqs=["EVT-SIGNED-CONTENT", "EVT-HEADER-SIGNATURE",
                                                         "EVT-STANDARD-WEBHOOKS"],
        doc="The signature is computed over the parsed and re-serialized body, not the bytes sent.")
def _(ref: Reference) -> None:
    ref.dispatcher.signed_content = lambda msg_id, ts, body: f"{msg_id}.{ts}.{json.dumps(json.loads(body))}".encode()


@mutant("events-whk-id-differs", reqs=["EVT-HEADER-ID", "EVT-ID"],
        doc="`whk-id` carries a per-attempt message id instead of the event id.")
def _(ref: Reference) -> None:
    _headers(ref, lambda h: h.update({"whk-id": "msg_" + h["whk-id"][::-1]}))


@mutant("events-stale-timestamp", reqs=["EVT-HEADER-TIMESTAMP"],
        doc="`whk-timestamp` is ten minutes old when the attempt is signed.")
def _(ref: Reference) -> None:
    ref.dispatcher.timestamp = lambda: str(int(time.time()) - 600)


@mutant("events-version-header-differs", reqs=["EVT-HEADER-VERSION"],
        doc="`Svc-Webhook-Version` says 2 while the body's `apiVersion` is 1.")
def _(ref: Reference) -> None:
    _headers(ref, lambda h: h.update({"Svc-Webhook-Version": "2"}))


@mutant("events-api-version-string", reqs=["EVT-API-VERSION", "VER-WEBHOOK-API-VERSION"],
        doc="`apiVersion` is the string \"1\" instead of the integer 1.")
def _(ref: Reference) -> None:
    _envelope(ref, lambda e: e.update({"apiVersion": "1"}))


# ---------------------------------------------------------------- envelope


@mutant("events-livemode-true", reqs=["EVT-LIVEMODE", "EVT-SANDBOX-LIVEMODE"],
        doc="Sandbox events carry `livemode: true`.")
def _(ref: Reference) -> None:
    _envelope(ref, lambda e: e.update({"livemode": True}))


@mutant("events-sequence-integer", reqs=["EVT-SEQUENCE"], doc="`sequence` is a JSON number, not a decimal string.")
def _(ref: Reference) -> None:
    _envelope(ref, lambda e: e.update({"sequence": int(e["sequence"])}))


@mutant("events-created-at-naive", reqs=["EVT-CREATED-AT"], doc="`createdAt` has no timezone.")
def _(ref: Reference) -> None:
    _envelope(ref, lambda e: e.update({"createdAt": e["createdAt"].rstrip("Z")}))


# ---------------------------------------------------------------- recording


def _record(ref: Reference, change: Callable[[Callable[..., str], str, str, str, dict, Any], str]) -> None:
    original = ref.events.record

    def record(org_id: str, mode: str, type_: str, data: dict[str, Any], now: Any) -> str:
        return change(original, org_id, mode, type_, data, now)

    ref.events.record = record


@mutant("events-payout-pending-missing", reqs=["EVT-PAYOUT-PENDING", "EVT-ONE-PER-CHANGE"],
        doc="Creating a payout records no `payout.pending` event.")
def _(ref: Reference) -> None:
    _record(ref, lambda rec, o, m, t, d, n: "" if t == "payout.pending" else rec(o, m, t, d, n))


@mutant("events-payout-pending-twice", reqs=["EVT-ONE-PER-CHANGE"],
        doc="Creating a payout records `payout.pending` twice.")
def _(ref: Reference) -> None:
    _record(ref, lambda rec, o, m, t, d, n: (rec(o, m, t, d, n), rec(o, m, t, d, n))[0] if t == "payout.pending"
            else rec(o, m, t, d, n))


@mutant("events-payout-data-missing-fields", reqs=["EVT-DATA-PAYOUT"],
        doc="`data` of payout events lacks `fee` and `rate` (not the flat WebhookPayout).")
def _(ref: Reference) -> None:
    _record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, {k: v for k, v in d.items() if k not in ("fee", "rate")}, n)
            if t.startswith("payout.") else rec(o, m, t, d, n))


# ---------------------------------------------------------------- feed


@mutant("events-feed-since-inclusive", reqs=["FEED-SINCE"], doc="`since` returns the event of that sequence too.")
def _(ref: Reference) -> None:
    original = ref.events.feed
    ref.events.feed = lambda org, mode, since, types, limit: original(org, mode, since - 1 if since else since,
                                                                      types, limit)


@mutant("events-feed-type-ignored", reqs=["FEED-TYPE-FILTER"], doc="The feed ignores `type`.")
def _(ref: Reference) -> None:
    original = ref.events.feed
    ref.events.feed = lambda org, mode, since, types, limit: original(org, mode, since, None, limit)


@mutant("events-feed-data-rebuilt", reqs=["FEED-SAME-OBJECTS", "EVT-DATA-IMMUTABLE"],
        doc="The feed returns `data` rebuilt without the caller's `reference`, not the object delivered.")
def _(ref: Reference) -> None:
    def change(body: dict[str, Any]) -> dict[str, Any]:
        for event in body["data"]:
            if isinstance(event["data"], dict):
                event["data"].pop("reference", None)
        return body

    _rewrite(ref, ("listEvents",), change)


@mutant("events-feed-drops-undelivered", reqs=["FEED-IS-RECORD"],
        doc="The feed leaves out events whose deliveries are dead.")
def _(ref: Reference) -> None:
    original = ref.events.feed

    def feed(org: str, mode: str, since: int | None, types: list[str] | None, limit: int) -> list[Any]:
        dead = {r["event_id"] for r in ref.store.all("SELECT event_id FROM webhook_deliveries WHERE status = 'dead'")}
        return [row for row in original(org, mode, since, types, limit) if row["id"] not in dead]

    ref.events.feed = feed


@mutant("events-feed-missing", reqs=["FEED-ROUTE"], doc="GET /events is not routed.")
def _(ref: Reference) -> None:
    def handler(call: Call) -> Reply:
        raise ref.route_not_found("GET", call.path)

    ref.operations["listEvents"] = dataclasses.replace(ref.operations["listEvents"], handler=handler)


# ---------------------------------------------------------------- delivery and retries


@mutant("webhooks-retry-too-soon", reqs=["WH-RETRY-SCHEDULE"], doc="Retries come after 20 s instead of the ladder.")
def _(ref: Reference) -> None:
    ref.dispatcher.ladder = (20,) * 9


@mutant("webhooks-no-retry", reqs=["WH-2XX-SUCCESS"], doc="A failed attempt is never retried.")
def _(ref: Reference) -> None:
    ref.dispatcher.ladder = ()


@mutant("webhooks-dead-retried", reqs=["WH-DEAD-DELIVERY"], doc="After the ninth retry the delivery goes on daily.")
def _(ref: Reference) -> None:
    ref.dispatcher.ladder = (*ref.dispatcher.ladder, *(86400,) * 30)


@mutant("webhooks-dead-dropped", reqs=["WH-DEAD-DELIVERY"], doc="Dead deliveries disappear from the delivery log.")
def _(ref: Reference) -> None:
    _rewrite(ref, DELIVERY_LISTS, lambda rows: [r for r in rows if r["status"] != "dead"])


@mutant("webhooks-delivery-no-last-error", reqs=["WH-DELIVERY-FIELDS"], doc="Delivery rows omit `lastError`.")
def _(ref: Reference) -> None:
    _rewrite(ref, DELIVERY_LISTS, lambda rows: [{k: v for k, v in r.items() if k != "lastError"} for r in rows])


@mutant("webhooks-replay-new-event-id", reqs=["WH-REPLAY-ONE"],
        doc="A replay re-sends the event under a new event id.")
def _(ref: Reference) -> None:
    original = ref.events.requeue

    def requeue(delivery: Any, now: Any) -> None:
        event = ref.events.get(delivery["event_id"])
        fresh = ref.events.record(event["org_id"], event["mode"], event["type"], json.loads(event["data"]), now)
        ref.store.run("DELETE FROM webhook_deliveries WHERE event_id = ?", (fresh,))
        ref.store.run("UPDATE webhook_deliveries SET event_id = ? WHERE id = ?", (fresh, delivery["id"]))
        original(delivery, now)

    ref.events.requeue = requeue


@mutant("webhooks-bulk-replay-dead-only", reqs=["WH-REPLAY-BULK"],
        doc="Bulk replay with `status: failed` picks dead deliveries only, not failed ones awaiting a retry.")
def _(ref: Reference) -> None:
    ref.events.replayable["failed"] = ("dead",)


@mutant("webhooks-rotation-single-signature", reqs=["WH-ROTATE-SECRET"],
        doc="After rotation only the new secret signs; the old one is dropped at once.")
def _(ref: Reference) -> None:
    ref.dispatcher.secrets_for = lambda endpoint, now: [endpoint["secret"]]


@mutant("webhooks-never-auto-disabled", reqs=["WH-AUTO-DISABLE"],
        doc="An endpoint with dead deliveries and five quiet days stays enabled.")
def _(ref: Reference) -> None:
    ref.dispatcher.disable_unhealthy = lambda org_id: None


@mutant("webhooks-disabled-not-announced", reqs=["EVT-ENDPOINT-DISABLED", "WH-DISABLED-EVENT-OTHERS"],
        doc="Disabling an endpoint sends no `webhook_endpoint.disabled` to the others.")
def _(ref: Reference) -> None:
    ref.dispatcher.announce = lambda endpoint, now: None


@mutant("webhooks-disabled-still-sent", reqs=["WH-DISABLED-EVENTS-RECORDED"],
        doc="A disabled endpoint keeps receiving deliveries.")
def _(ref: Reference) -> None:
    ref.events.active = "deleted_at IS NULL AND enabled = 1"


@mutant("webhooks-resume-keeps-health", reqs=["WH-RESUME-CLEARS-HEALTH", "WH-ENABLED"],
        doc="Resuming re-enables the endpoint but keeps its failure count and disable reason.")
def _(ref: Reference) -> None:
    ref.events.resume = lambda endpoint_id, now: ref.store.run(
        "UPDATE webhook_endpoints SET enabled = 1 WHERE id = ?", (endpoint_id,))


@mutant("webhooks-pause-ignored", reqs=["WH-ENABLED-PAUSED"], doc="A paused endpoint keeps receiving deliveries.")
def _(ref: Reference) -> None:
    ref.events.active = "deleted_at IS NULL AND disabled_reason IS NULL"


@mutant("webhooks-resume-new-secret", reqs=["WH-ENABLED"], doc="Resuming an endpoint replaces its signing secret.")
def _(ref: Reference) -> None:
    original = ref.events.resume

    def resume(endpoint_id: str, now: Any) -> None:
        original(endpoint_id, now)
        ref.store.run("UPDATE webhook_endpoints SET secret = ? WHERE id = ?", (new_secret(), endpoint_id))

    ref.events.resume = resume


@mutant("webhooks-delete-ignored", reqs=["WH-DELETE"], doc="Deleting an endpoint changes nothing.")
def _(ref: Reference) -> None:
    ref.events.active = ref.events.active.replace("deleted_at IS NULL AND ", "")
    _rewrite(ref, ("listWebhookEndpoints",), lambda body: {**body, "data": body["data"] + [
        {"id": r["id"], "url": r["url"]} for r in ref.store.all("SELECT * FROM webhook_endpoints WHERE deleted_at"
                                                              " IS NOT NULL")]})


@mutant("webhooks-payout-events-opt-in", reqs=["EVT-ROUTING-DEFAULT"],
        doc="Payout events go only to endpoints that list them in `events`.")
def _(ref: Reference) -> None:
    ref.events.routes_to = lambda endpoint, type_: type_ in json.loads(endpoint["events"])


# ---------------------------------------------------------------- endpoints and deliveries over the API


@mutant("webhooks-register-refused", reqs=["WH-SBX-REGISTER", "WH-TEST-KEY-SANDBOX-PATH"],
        doc="A test key cannot register a sandbox endpoint.")
def _(ref: Reference) -> None:
    def handler(call: Call) -> Reply:
        raise ApiError("FORBIDDEN", "Registering endpoints needs the dashboard.")

    ref.operations["createSandboxWebhookEndpoint"] = dataclasses.replace(
        ref.operations["createSandboxWebhookEndpoint"], handler=handler)


@mutant("webhooks-secret-listed", reqs=["WH-SECRET-FORMAT"], doc="The endpoint list shows each signing secret.")
def _(ref: Reference) -> None:
    def change(body: dict[str, Any]) -> dict[str, Any]:
        for row in body["data"]:
            found = ref.store.one("SELECT secret FROM webhook_endpoints WHERE id = ?", (row["id"],))
            row["secret"] = found["secret"] if found else None
        return body

    _rewrite(ref, ("listWebhookEndpoints",), change)


@mutant("webhooks-list-missing-health", reqs=["WH-ENDPOINT-FIELDS"], doc="Listed endpoints omit their health fields.")
def _(ref: Reference) -> None:
    health = ("consecutiveFailures", "lastSuccessAt", "lastFailureAt", "disabledReason")
    _rewrite(ref, ("listWebhookEndpoints",),
             lambda body: {**body, "data": [{k: v for k, v in r.items() if k not in health} for r in body["data"]]})


@mutant("webhooks-list-empty", reqs=["WH-LIST"], doc="The endpoint list is always empty.")
def _(ref: Reference) -> None:
    _rewrite(ref, ("listWebhookEndpoints",), lambda body: {**body, "data": []})


@mutant("webhooks-deliveries-with-payload", reqs=["WH-DELIVERY-NO-PAYLOAD"], doc="Delivery rows carry the payload.")
def _(ref: Reference) -> None:
    def change(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            event = ref.events.get(row["eventId"])
            row["data"] = json.loads(event["data"]) if event else None
        return rows

    _rewrite(ref, DELIVERY_LISTS, change)


@mutant("webhooks-deliveries-newest-first", reqs=["WH-DELIVERIES-LIST"],
        doc="Deliveries are sorted newest first instead of by `createdAt` then `id`.")
def _(ref: Reference) -> None:
    _rewrite(ref, DELIVERY_LISTS, lambda rows: sorted(rows, key=lambda r: (r["createdAt"], r["id"]), reverse=True))


@mutant("webhooks-sandbox-deliveries-empty", reqs=["WH-SBX-DELIVERIES"], doc="The sandbox delivery log is empty.")
def _(ref: Reference) -> None:
    _rewrite(ref, ("listSandboxWebhookDeliveries",), lambda rows: [])


@mutant("webhooks-management-accepts-api-key", reqs=["WH-MGMT-DASHBOARD-ONLY"],
        doc="Dashboard-only management routes answer an API key 200.")
def _(ref: Reference) -> None:
    for op_id in ("createWebhookEndpoint", "deleteWebhookEndpoint", "setWebhookEndpointEnabled",
                  "rotateWebhookEndpointSecret", "replayWebhookDelivery", "replayWebhookDeliveries"):
        ref.operations[op_id] = dataclasses.replace(ref.operations[op_id], handler=lambda call: Reply(200, {}))


@mutant("webhooks-developer-tools-ignored", reqs=["WH-SBX-DEVELOPER-DISABLED"],
        doc="Sandbox deliveries are listed although the organization's developer tools are off.")
def _(ref: Reference) -> None:
    op = ref.operations["listSandboxWebhookDeliveries"]
    ref.operations[op.op_id] = dataclasses.replace(op, handler=ref.operations["listWebhookEndpointDeliveries"].handler)


@mutant("webhooks-sandbox-deliveries-live-key", reqs=["WH-SBX-DELIVERIES-LIVE-KEY"],
        doc="The sandbox delivery log accepts a live key (and answers 404 for the sandbox endpoint).")
def _(ref: Reference) -> None:
    op = ref.operations["listSandboxWebhookDeliveries"]
    ref.operations[op.op_id] = dataclasses.replace(op, sandbox_only=False)
