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
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..auth import KeyRecord
from ..clock import iso
from ..errors import ApiError
from ..events import EVENT_TYPES
from ..operation import Call, Reply
from ..webhook_endpoints import delivery_json, new_secret
from . import mutant
from .recipients import Handler, around

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


@mutant("webhooks-bulk-replay-not-resent", reqs=["WH-REPLAY-BULK"],
        doc="Bulk replay answers `{requeued}` with the count but re-fires nothing.")
def _(ref: Reference) -> None:
    ref.events.requeue = lambda delivery, now: None  # type: ignore[method-assign]


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


def _newest_then_oldest(rows: list) -> list:
    ordered = sorted(rows, key=lambda r: (r["createdAt"], r["id"]))
    return ordered[-1:] + ordered[:-1]


@mutant("webhooks-deliveries-unsorted", reqs=["WH-DELIVERIES-LIST"],
        doc="Deliveries list the newest attempt first and the rest oldest first: sorted by `createdAt` then `id` "
            "in neither direction.")
def _(ref: Reference) -> None:
    _rewrite(ref, DELIVERY_LISTS, _newest_then_oldest)


@mutant("webhooks-sandbox-deliveries-empty", reqs=["WH-SBX-DELIVERIES"], doc="The sandbox delivery log is empty.")
def _(ref: Reference) -> None:
    _rewrite(ref, ("listSandboxWebhookDeliveries",), lambda rows: [])


@mutant("webhooks-management-accepts-api-key", reqs=["WH-MGMT-DASHBOARD-ONLY"],
        doc="Dashboard-only management routes answer an API key 200.")
def _(ref: Reference) -> None:
    for op_id in ("createWebhookEndpoint", "deleteWebhookEndpoint", "setWebhookEndpointEnabled",
                  "rotateWebhookEndpointSecret", "replayWebhookDelivery", "replayWebhookDeliveries"):
        ref.operations[op_id] = dataclasses.replace(ref.operations[op_id], handler=lambda call: Reply(200, {}))


@mutant("webhooks-developer-tools-ignored", reqs=["WH-SBX-DEVELOPER-DISABLED", "ERR-DEVELOPER-FEATURE-DISABLED"],
        doc="Sandbox deliveries are listed although the organization's developer tools are off.")
def _(ref: Reference) -> None:
    op = ref.operations["listSandboxWebhookDeliveries"]
    ref.operations[op.op_id] = dataclasses.replace(op, handler=ref.operations["listWebhookEndpointDeliveries"].handler)


@mutant("webhooks-sandbox-deliveries-live-key", reqs=["WH-SBX-DELIVERIES-LIVE-KEY"],
        doc="The sandbox delivery log accepts a live key (and answers 404 for the sandbox endpoint).")
def _(ref: Reference) -> None:
    op = ref.operations["listSandboxWebhookDeliveries"]
    ref.operations[op.op_id] = dataclasses.replace(op, sandbox_only=False)


# ---------------------------------------------------------------- the event types, driven through the domain


def _drop(ref: Reference, *types: str) -> None:
    """Events of `types` are never recorded."""
    _record(ref, lambda rec, o, m, t, d, n: "" if t in types else rec(o, m, t, d, n))


def _data(ref: Reference, type_: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """`data` of events of `type_` goes through `change` before it is stored."""
    _record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, change(dict(d)) if t == type_ else d, n))


@mutant("events-payout-processing-missing", reqs=["EVT-PAYOUT-PROCESSING"],
        doc="A payout the network picks up moves to `processing` without a `payout.processing` event.")
def _(ref: Reference) -> None:
    _drop(ref, "payout.processing")


@mutant("events-payout-completed-missing", reqs=["EVT-PAYOUT-COMPLETED"],
        doc="A paid payout records no `payout.completed`.")
def _(ref: Reference) -> None:
    _drop(ref, "payout.completed")


@mutant("events-payout-failed-no-failure-code", reqs=["EVT-PAYOUT-FAILED"],
        doc="`payout.failed` carries no `failureCode`.")
def _(ref: Reference) -> None:
    _data(ref, "payout.failed", lambda d: {k: v for k, v in d.items() if k != "failureCode"})


@mutant("events-payout-returned-as-failed", reqs=["EVT-PAYOUT-RETURNED"],
        doc="A bank return is announced as `payout.failed` instead of `payout.returned`.")
def _(ref: Reference) -> None:
    _record(ref, lambda rec, o, m, t, d, n: rec(o, m, "payout.failed" if t == "payout.returned" else t, d, n))


@mutant("events-payout-canceled-missing", reqs=["EVT-PAYOUT-CANCELED"], doc="Canceling a payout records no event.")
def _(ref: Reference) -> None:
    _drop(ref, "payout.canceled")


@mutant("events-approval-pending-missing", reqs=["EVT-APPROVAL-PENDING"],
        doc="A payout held for approvers records no `payout_approval.pending`.")
def _(ref: Reference) -> None:
    _drop(ref, "payout_approval.pending")


@mutant("events-approval-decisions-missing", reqs=["EVT-APPROVAL-APPROVED", "EVT-APPROVAL-REJECTED",
                                                  "EVT-APPROVAL-EXPIRED"],
        doc="Approving, rejecting and expiring an approval change its status without an event.")
def _(ref: Reference) -> None:
    _drop(ref, "payout_approval.approved", "payout_approval.rejected", "payout_approval.expired")


@mutant("events-approval-executed-no-payout-id", reqs=["EVT-APPROVAL-EXECUTED"],
        doc="`payout_approval.executed` does not carry the `payoutId` of the payout made.")
def _(ref: Reference) -> None:
    _data(ref, "payout_approval.executed",
          lambda d: {"approval": {k: v for k, v in d["approval"].items() if k != "payoutId"}})


@mutant("events-approval-execution-failed-no-error", reqs=["EVT-APPROVAL-EXECUTION-FAILED"],
        doc="`payout_approval.execution_failed` does not carry `approval.error`.")
def _(ref: Reference) -> None:
    _data(ref, "payout_approval.execution_failed",
          lambda d: {"approval": {k: v for k, v in d["approval"].items() if k != "error"}})


@mutant("events-approval-data-flat", reqs=["EVT-DATA-APPROVAL"],
        doc="`payout_approval.*` carry the approval's fields flat in `data`, not under `approval`.")
def _(ref: Reference) -> None:
    _record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, d["approval"] if t.startswith("payout_approval.") else d, n))


@mutant("events-checkout-paid-missing", reqs=["EVT-CHECKOUT-PAID"], doc="A paid checkout payment is not announced.")
def _(ref: Reference) -> None:
    _drop(ref, "checkout_payment.paid")


@mutant("events-checkout-outcomes-missing", reqs=["EVT-CHECKOUT-FAILED", "EVT-CHECKOUT-REFUNDED",
                                                 "EVT-CHECKOUT-REVERSED"],
        doc="A failed, refunded or charged-back checkout payment is not announced.")
def _(ref: Reference) -> None:
    _drop(ref, "checkout_payment.failed", "checkout_payment.refunded", "checkout_payment.reversed")


@mutant("events-partial-refund-missing", reqs=["EVT-CHECKOUT-PARTIALLY-REFUNDED"],
        doc="A partial refund is not announced.")
def _(ref: Reference) -> None:
    _drop(ref, "checkout_payment.partially_refunded")


@mutant("events-partial-refund-total-is-piece", reqs=["PAY-WEBHOOK-PARTIAL-REFUND"],
        doc="`checkout_payment.partially_refunded` carries the piece as `refunded`, not the running total.")
def _(ref: Reference) -> None:
    _data(ref, "checkout_payment.partially_refunded", lambda d: {**d, "refunded": d["refund"]})


@mutant("events-checkout-amounts-in-base-units", reqs=["PAY-WEBHOOK-DECIMAL"],
        doc="Checkout payment events carry amounts in base units (`15000`), not decimal strings.")
def _(ref: Reference) -> None:
    def base_units(data: dict[str, Any]) -> dict[str, Any]:
        return {k: str(int(v.replace(".", ""))) if k in ("amount", "refunded", "refund") else v for k, v in data.items()}

    _record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, base_units(d) if t.startswith("checkout_payment.") else d, n))


@mutant("events-type-renamed", reqs=["EVT-TYPES-22", "EVT-TYPE"],
        doc="A completed payout is announced as `payout.succeeded`, a type outside the 22.")
def _(ref: Reference) -> None:
    _record(ref, lambda rec, o, m, t, d, n: rec(o, m, "payout.succeeded" if t == "payout.completed" else t, d, n))


@mutant("events-network-status-words", reqs=["EVT-NO-NETWORK-NAMES"],
        doc="`payout.processing` carries the network's status word `IN_TRANSIT` as `status`.")
def _(ref: Reference) -> None:
    _data(ref, "payout.processing", lambda d: {**d, "status": "IN_TRANSIT"})


@mutant("events-fee-as-string", reqs=["CONV-MONEY-FEE-OBJECT"],
        doc="Payout events carry `fee` as a decimal string instead of `{amount, currency}`.")
def _(ref: Reference) -> None:
    _record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, {**d, "fee": d["fee"]["amount"]} if t.startswith("payout.")
                                                else d, n))


@mutant("events-dispute-announced", reqs=["EVT-NOT-ANNOUNCED"],
        doc="An open dispute is announced at once as `checkout_payment.reversed`.")
def _(ref: Reference) -> None:
    original, announced = ref.dispatcher.settle_due, set()

    def settle_due(org_id: str | None) -> None:
        original(org_id)
        with ref.store.tx():
            for row in ref.store.all("SELECT * FROM checkout_payments WHERE disputed = 1"):
                if row["id"] not in announced:
                    announced.add(row["id"])
                    ref.events.record(row["org_id"], row["mode"], "checkout_payment.reversed",
                                      {"paymentId": row["id"], "status": "disputed"}, ref.clock.now(row["org_id"]))

    ref.dispatcher.settle_due = settle_due


# ---------------------------------------------------------------- routing and delivery


@mutant("events-checkout-not-opt-in", reqs=["EVT-ROUTING-CHECKOUT-OPT-IN"],
        doc="Checkout-payment events go to every endpoint, opted in or not.")
def _(ref: Reference) -> None:
    ref.events.routes_to = lambda endpoint, type_: True


@mutant("webhooks-no-backfill", reqs=["EVT-BACKFILL"], doc="A new endpoint receives no event recorded before it.")
def _(ref: Reference) -> None:
    ref.events.backfill = timedelta(0)


@mutant("webhooks-register-ignores-events", reqs=["WH-REGISTER"],
        doc="Registration drops the `events` opt-in list: checkout-payment events never reach the endpoint.")
def _(ref: Reference) -> None:
    original = ref.events.backfill_endpoint

    def backfill_endpoint(endpoint: Any, now: Any) -> None:
        ref.store.run("UPDATE webhook_endpoints SET events = '[]' WHERE id = ?", (endpoint["id"],))
        original(endpoint, now)

    ref.events.backfill_endpoint = backfill_endpoint


@mutant("webhooks-dispatch-order-reversed", reqs=["WH-AT-LEAST-ONCE"],
        doc="Due deliveries are sent newest first, against `sequence` order.")
def _(ref: Reference) -> None:
    original = ref.dispatcher._due
    ref.dispatcher._due = lambda org_id: list(reversed(original(org_id)))  # type: ignore[method-assign]


@mutant("webhooks-processing-not-delivered", reqs=["PAYOUT-EVENTS-AT-LEAST-ONCE"],
        doc="`payout.processing` is recorded in the feed but never queued for delivery.")
def _(ref: Reference) -> None:
    original = ref.events.queue

    def queue(endpoint_id: str, org_id: str, mode: str, event_id: str, type_: str, due: str) -> None:
        if type_ != "payout.processing":
            original(endpoint_id, org_id, mode, event_id, type_, due)

    ref.events.queue = queue  # type: ignore[method-assign]


@mutant("webhooks-first-attempt-delayed", reqs=["WH-DISPATCH-15S"],
        doc="The first attempt of a delivery is due a minute after the event, not within 15 seconds.")
def _(ref: Reference) -> None:
    original = ref.events.queue

    def queue(endpoint_id: str, org_id: str, mode: str, event_id: str, type_: str, due: str) -> None:
        original(endpoint_id, org_id, mode, event_id, type_, iso(datetime.fromisoformat(due) + timedelta(seconds=60)))

    ref.events.queue = queue  # type: ignore[method-assign]


@mutant("webhooks-third-retry-early", reqs=["WH-RETRY-SCHEDULE"],
        doc="The third retry comes 7.5 minutes after the second, under both described gaps (15 and 30 minutes).")
def _(ref: Reference) -> None:
    ladder = list(ref.dispatcher.ladder)
    ladder[2] = 450
    ref.dispatcher.ladder = tuple(ladder)


@mutant("webhooks-seven-attempts", reqs=["WH-RETRY-SCHEDULE-ALT"],
        doc="A failing delivery is dead after seven attempts, which fits neither schedule.")
def _(ref: Reference) -> None:
    ref.dispatcher.ladder = ref.dispatcher.ladder[:6]


@mutant("webhooks-rotation-overlap-one-hour", reqs=["ROT-WEBHOOK-SECRET-OVERLAP"],
        doc="After rotation the old secret signs for one hour, not 24.")
def _(ref: Reference) -> None:
    original = ref.dispatcher.secrets_for

    def secrets_for(endpoint: Any, now: datetime) -> list[str]:
        keys = original(endpoint, now)
        until = endpoint["previous_valid_until"]
        if until and datetime.fromisoformat(until) - now < timedelta(hours=23):
            return keys[:1]
        return keys

    ref.dispatcher.secrets_for = secrets_for


@mutant("webhooks-delivery-log-unbounded", reqs=["WH-DELIVERY-LOG-LIMIT"],
        doc="The delivery list returns every attempt, not the 50 newest.")
def _(ref: Reference) -> None:
    ref.events.delivery_log = 100_000


@mutant("webhooks-delivery-log-oldest", reqs=["WH-DELIVERY-LOG-LIMIT"],
        doc="Both delivery lists hold the 50 oldest attempts, not the 50 newest.")
def _(ref: Reference) -> None:
    @around(ref, "listSandboxWebhookDeliveries", "listWebhookEndpointDeliveries")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        rows = ref.store.all("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at, id LIMIT ?",
                             (call.params["endpointId"], ref.events.delivery_log))
        return dataclasses.replace(reply, body=[delivery_json(r) for r in rows])


@mutant("webhooks-secret-is-an-api-key", reqs=["WH-SECRET-SEPARATE"],
        doc="A webhook endpoint's `whsec_` secret is accepted as an API key of its organization.")
def _(ref: Reference) -> None:
    original = ref.auth.find_key

    def find_key(raw: str | None) -> Any:
        endpoint = ref.store.one("SELECT * FROM webhook_endpoints WHERE secret = ?", (raw or "",))
        if endpoint is None:
            return original(raw)
        return KeyRecord(id="whsec", org_id=endpoint["org_id"], mode=endpoint["mode"], prefix="whsec",
                         scopes=frozenset({"read", "write"}), expires_at="9999-12-31T00:00:00Z", pinned_ips=(),
                         revoked=False)

    ref.auth.find_key = find_key  # type: ignore[method-assign]


@mutant("webhooks-sandbox-events-enum-old", reqs=["VER-SANDBOX-EVENTS-ENUM"],
        doc="Sandbox registration refuses the approval types and `checkout_payment.partially_refunded` in `events`.")
def _(ref: Reference) -> None:
    added = {"checkout_payment.partially_refunded"} | {t for t in EVENT_TYPES if t.startswith("payout_approval.")}

    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            body = call.json()
            if isinstance(body, dict) and added & set(body.get("events") or []):
                raise ApiError("VALIDATION_ERROR", errors=[{"field": "events", "reason": "unknown event type"}])
            return original(call)
        return handler

    ref.wrap_handler("createSandboxWebhookEndpoint", wrap)


@mutant("webhooks-bulk-replay-unbounded", reqs=["WH-BULK-REPLAY-LIMIT"],
        doc="Bulk replay requeues every matching delivery, beyond 1,000.")
def _(ref: Reference) -> None:
    ref.events.bulk_replay_max = 100_000
