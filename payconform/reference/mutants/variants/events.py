"""Tolerated variants of the Events part: event data shapes, retries, delivery order and the feed's pages.

The whole suite must pass under each of them.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import httpx

from ..registry import variant
from ..rewrites import data_rows, rewrite_events, rewrite_replies

if TYPE_CHECKING:
    from ...core.operation import Reply
    from ...reference import Reference


PADDED = re.compile(r"^-?[0-9]+\.[0-9]+$")


def _unpadded(value: Any) -> Any:
    """Decimal strings without trailing zeros ("150.00" -> "150", "50.50" -> "50.5")."""
    if isinstance(value, dict):
        return {k: _unpadded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unpadded(v) for v in value]
    if isinstance(value, str) and PADDED.match(value):
        return format(Decimal(value).normalize(), "f")
    return value


def _newest_first(reply: Reply) -> Reply:
    if isinstance(reply.body, list):
        reply.body.sort(key=lambda r: (r.get("createdAt"), r.get("id")), reverse=True)
    return reply


def _without_url(reply: Reply) -> Reply:
    for row in data_rows(reply):
        row.pop("url", None)
    return reply


def _unordered(reply: Reply) -> Reply:
    """The rows in a fixed order of their ids' digests: neither oldest nor newest first."""
    if isinstance(reply.body, list):
        reply.body.sort(key=lambda r: hashlib.sha256(str(r.get("id")).encode()).hexdigest()
                        if isinstance(r, dict) else "")
    return reply


def _with_base_units(data: dict[str, Any]) -> dict[str, Any]:
    amount = data.get("amount")
    if isinstance(amount, str):
        places = -Decimal(amount).as_tuple().exponent
        data = {**data, "amountBase": str(int(Decimal(amount).scaleb(int(places)))), "decimals": places}
    return data


FEED_PAGE = 5  # events a page of the variant's feed: shorter than the profile's page (`listEvents.page.size`)


@variant("checkout-decimals-unpadded",
         doc="Checkout payment events write amounts as decimal strings without trailing zeros ('150', '50.5'): "
             "'Webhook bodies for checkout payments use decimal strings'; the scale is not fixed.")
def checkout_decimals_unpadded(ref: Reference) -> None:
    rewrite_events(ref, _unpadded, "checkout_payment.")


@variant("batch-events-nested",
         doc="`payout_batch.*` events carry the run under `data.batch` (`{batch: {id, status, counts, ...}}`): "
             "'Body shapes of `payout_batch.*`, `checkout_payment.*` and `webhook_endpoint.disabled`: not shown.'")
def batch_events_nested(ref: Reference) -> None:
    rewrite_events(ref, lambda data: {"batch": data}, "payout_batch.")


@variant("checkout-events-nested",
         doc="`checkout_payment.*` events carry the payment under `data.payment` (`{payment: {...}}`): 'Body shapes "
             "of `payout_batch.*`, `checkout_payment.*` and `webhook_endpoint.disabled`: not shown.'")
def checkout_events_nested(ref: Reference) -> None:
    rewrite_events(ref, lambda data: {"payment": data}, "checkout_payment.")


@variant("retries-six-from-first",
         doc="A failing delivery follows the six-attempt schedule with '+N' counted from the first attempt (t = 0, "
             "1, 5, 30, 120, 360 min), then is dead: 'An alternative schedule of six attempts (immediately, then "
             "+1 min, +5 min, +30 min, +2 h, +6 h) is also described; which one applies: not shown'.")
def retries_six_from_first(ref: Reference) -> None:
    ref.dispatcher.ladder = (60, 240, 1500, 5400, 14400)  # the gaps between those instants


@variant("bulk-replay-failed-means-dead",
         doc="Bulk replay with `status: failed` picks dead deliveries only, not those awaiting a retry: delivery "
             "statuses are not shown, and 'status (`failed`, default, or `all`)' does not say which count as failed.")
def bulk_replay_failed_means_dead(ref: Reference) -> None:
    ref.events.replayable["failed"] = ("dead",)


@variant("deliveries-newest-first",
         doc="Both delivery lists are sorted by `createdAt` then `id`, newest first: 'The 50 newest attempts as a "
             "bare array sorted by `createdAt` then `id`' gives no direction.")
def deliveries_newest_first(ref: Reference) -> None:
    for op_id in ("listWebhookEndpointDeliveries", "listSandboxWebhookDeliveries"):
        rewrite_replies(ref, op_id, _newest_first)


@variant("endpoint-list-without-url",
         doc="The endpoint list's rows carry no `url`: Resources > Webhook endpoint and delivery names an endpoint's "
             "fields as 'Endpoint: `id`, `events` (opt-in list), signing secret (...), health fields "
             "`consecutiveFailures`, `lastSuccessAt`, `lastFailureAt`, `disabledReason`', no URL among them.")
def endpoint_list_without_url(ref: Reference) -> None:
    rewrite_replies(ref, "listWebhookEndpoints", _without_url)


@variant("sandbox-deliveries-unordered",
         doc="The sandbox delivery log lists its attempts in no order of `createdAt` (a fixed order of their ids' "
             "digests): its row is 'GET | `/{endpointId}/deliveries` | Recent delivery attempts "
             "(`listSandboxWebhookDeliveries`)', with no order; only the management route's 'The 50 newest attempts "
             "as a bare array sorted by `createdAt` then `id`' gives one.")
def sandbox_deliveries_unordered(ref: Reference) -> None:
    rewrite_replies(ref, "listSandboxWebhookDeliveries", _unordered)


@variant("checkout-events-with-base-units",
         doc="Checkout payment events carry the base-unit amount (`amountBase`, `decimals`) beside the decimal "
             "string: 'Webhook bodies for checkout payments use decimal strings' does not forbid more fields, and "
             "'Additions are backwards compatible and safe to ignore' (Versioning 2).")
def checkout_events_with_base_units(ref: Reference) -> None:
    rewrite_events(ref, _with_base_units, "checkout_payment.")


@variant("duplicate-deliveries",
         doc="Every accepted delivery is sent a second time (same `whk-id` and body, signed anew), the copy after the "
             "endpoint's next delivery when there is one, so a duplicate arrives after a later event: 'Delivery is "
             "at least once, offered in `sequence` order per endpoint but possibly reordered by retries. Receivers "
             "dedupe on `whk-id`'.")
def duplicate_deliveries(ref: Reference) -> None:
    dispatcher = ref.dispatcher
    held: dict[str, sqlite3.Row] = {}  # endpoint id -> its last accepted delivery, whose copy is not sent yet

    async def send_copy(client: httpx.AsyncClient, delivery: sqlite3.Row) -> None:
        endpoint, body, headers = dispatcher.request(delivery)
        try:
            await client.post(endpoint["url"], content=body, headers=headers)
        except httpx.HTTPError:
            pass  # a lost copy is a delivery that happened once

    async def after_attempt(client: httpx.AsyncClient, delivery: sqlite3.Row) -> None:
        earlier = held.pop(delivery["endpoint_id"], None)
        if earlier is not None:
            await send_copy(client, earlier)
        now = ref.store.one("SELECT * FROM webhook_deliveries WHERE id = ?", (delivery["id"],))
        if now is not None and now["status"] == "succeeded":
            held[delivery["endpoint_id"]] = now

    async def end_of_run(client: httpx.AsyncClient) -> None:
        for endpoint_id in list(held):
            copy = held.pop(endpoint_id, None)  # another run, overlapping this one, may have sent it meanwhile
            if copy is not None:
                await send_copy(client, copy)

    dispatcher.after_attempt = after_attempt
    dispatcher.end_of_run = end_of_run


@variant("feed-pages-of-five",
         doc="The event feed answers at most 5 events a page (read on with `since`): 'GET | `/events` | Event feed; "
             "`since` and `type` filters' shows no page size.")
def feed_pages_of_five(ref: Reference) -> None:
    events, feed = ref.events, ref.events.feed
    events.feed = lambda org_id, mode, since, types, limit: feed(org_id, mode, since, types, min(limit, FEED_PAGE))
