"""Mutants of the Events part about deliveries: headers, signatures, routing, retries and dead deliveries.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ...core.clock import iso
from ..registry import mutant
from ..support.events import DELIVERY_LISTS, rewrite_webhook_replies

if TYPE_CHECKING:
    from ...reference import Reference


def _headers(ref: Reference, change: Callable[[dict[str, str]], None]) -> None:
    original = ref.dispatcher.headers

    def headers(*args: Any) -> dict[str, str]:
        out = original(*args)
        change(out)
        return out

    ref.dispatcher.headers = headers


@mutant("events-signature-over-reserialized-body", reqs=["EVT-SIGNED-CONTENT", "EVT-HEADER-SIGNATURE",
                                                         "EVT-STANDARD-WEBHOOKS"],
        doc="The signature is computed over the parsed and re-serialized body, not the bytes sent.")
def events_signature_over_reserialized_body(ref: Reference) -> None:
    ref.dispatcher.signed_content = lambda msg_id, ts, body: f"{msg_id}.{ts}.{json.dumps(json.loads(body))}".encode()


@mutant("events-whk-id-differs", reqs=["EVT-HEADER-ID", "EVT-ID"],
        doc="`whk-id` carries a per-attempt message id instead of the event id.")
def events_whk_id_differs(ref: Reference) -> None:
    _headers(ref, lambda h: h.update({"whk-id": "msg_" + h["whk-id"][::-1]}))


@mutant("events-id-per-attempt", reqs=["EVT-HEADER-ID"],
        doc="Each retry carries a new event id, in `whk-id` and body `id` alike: the id is not stable across retries.")
def events_id_per_attempt(ref: Reference) -> None:
    attempts: dict[str, int] = {}
    serialize = ref.dispatcher.serialize

    def renamed(envelope: dict[str, Any]) -> bytes:
        if attempts.get(envelope["id"]):
            envelope["id"] = f"{envelope['id']}_{attempts[envelope['id']] + 1}"  # headers and signature read it after
        return serialize(envelope)

    async def counted(client: Any, delivery: Any) -> None:
        attempts[delivery["event_id"]] = attempts.get(delivery["event_id"], 0) + 1

    ref.dispatcher.serialize = renamed
    ref.dispatcher.after_attempt = counted


@mutant("events-feed-row-id-differs", reqs=["EVT-ID"],
        doc="The feed lists each event under its own row id (`row_<sequence>`), not the event id delivered.")
def events_feed_row_id_differs(ref: Reference) -> None:
    rewrite_webhook_replies(ref, ("listEvents",), lambda body: {
        **body, "data": [{**row, "id": f"row_{row['sequence']}"} for row in body["data"]]})


@mutant("events-signatures-comma-joined", reqs=["EVT-HEADER-SIGNATURE"],
        doc="During a secret rotation the two `v1,<base64>` values of `whk-signature` are joined by a comma, not a space.")
def events_signatures_comma_joined(ref: Reference) -> None:
    _headers(ref, lambda h: h.update({"whk-signature": ",".join(h["whk-signature"].split())}))


@mutant("events-stale-timestamp", reqs=["EVT-HEADER-TIMESTAMP"],
        doc="`whk-timestamp` is ten minutes old when the attempt is signed.")
def events_stale_timestamp(ref: Reference) -> None:
    ref.dispatcher.timestamp = lambda: str(int(time.time()) - 600)


@mutant("events-version-header-differs", reqs=["EVT-HEADER-VERSION"],
        doc="`Svc-Webhook-Version` says 2 while the body's `apiVersion` is 1.")
def events_version_header_differs(ref: Reference) -> None:
    _headers(ref, lambda h: h.update({"Svc-Webhook-Version": "2"}))


@mutant("webhooks-retry-too-soon", reqs=["WH-RETRY-SCHEDULE"], doc="Retries come after 20 s instead of the ladder.")
def webhooks_retry_too_soon(ref: Reference) -> None:
    ref.dispatcher.ladder = (20,) * 9


@mutant("webhooks-no-retry", reqs=["WH-2XX-SUCCESS"], doc="A failed attempt is never retried.")
def webhooks_no_retry(ref: Reference) -> None:
    ref.dispatcher.ladder = ()


@mutant("webhooks-only-200-succeeds", reqs=["WH-2XX-SUCCESS"],
        doc="Only a 200 counts as success: a delivery answered 204 is retried.")
def webhooks_only_200_succeeds(ref: Reference) -> None:
    ref.dispatcher.is_success = lambda status: status == 200


@mutant("webhooks-4xx-not-retried", reqs=["WH-2XX-SUCCESS"],
        doc="A 4xx answer counts as delivered: only 5xx answers and timeouts are retried.")
def webhooks_4xx_not_retried(ref: Reference) -> None:
    ref.dispatcher.is_success = lambda status: 200 <= status < 300 or 400 <= status < 500


@mutant("webhooks-dead-retried", reqs=["WH-DEAD-DELIVERY"], doc="After the ninth retry the delivery goes on daily.")
def webhooks_dead_retried(ref: Reference) -> None:
    ref.dispatcher.ladder = (*ref.dispatcher.ladder, *(86400,) * 30)


@mutant("webhooks-dead-dropped", reqs=["WH-DEAD-DELIVERY"], doc="Dead deliveries disappear from the delivery log.")
def webhooks_dead_dropped(ref: Reference) -> None:
    rewrite_webhook_replies(ref, DELIVERY_LISTS, lambda rows: [r for r in rows if r["status"] != "dead"])


@mutant("webhooks-disabled-not-announced", reqs=["EVT-ENDPOINT-DISABLED", "WH-DISABLED-EVENT-OTHERS"],
        doc="Disabling an endpoint sends no `webhook_endpoint.disabled` to the others.")
def webhooks_disabled_not_announced(ref: Reference) -> None:
    ref.dispatcher.announce = lambda endpoint, now: None


@mutant("webhooks-disabled-sent-to-none", reqs=["EVT-ENDPOINT-DISABLED"],
        doc="`webhook_endpoint.disabled` is recorded in the feed but queued for no endpoint, the others included.")
def webhooks_disabled_sent_to_none(ref: Reference) -> None:
    original = ref.events.routes_to
    ref.events.routes_to = lambda endpoint, type_: type_ != "webhook_endpoint.disabled" and original(endpoint, type_)


@mutant("webhooks-payout-events-opt-in", reqs=["EVT-ROUTING-DEFAULT"],
        doc="Payout events go only to endpoints that list them in `events`.")
def webhooks_payout_events_opt_in(ref: Reference) -> None:
    ref.events.routes_to = lambda endpoint, type_: type_ in json.loads(endpoint["events"])


def _opt_in_too(ref: Reference, prefix: str) -> None:
    """Events whose type starts with `prefix` go, like checkout-payment ones, only to endpoints listing them."""
    original = ref.events.routes_to
    ref.events.routes_to = lambda endpoint, type_: original(endpoint, type_) and (
        not type_.startswith(prefix) or type_ in json.loads(endpoint["events"]))


@mutant("events-approval-events-opt-in", reqs=["EVT-ROUTING-DEFAULT"],
        doc="Approval events, like checkout-payment ones, go only to endpoints that list them in `events`.")
def events_approval_events_opt_in(ref: Reference) -> None:
    _opt_in_too(ref, "payout_approval.")


@mutant("events-batch-events-opt-in", reqs=["EVT-ROUTING-DEFAULT"],
        doc="Batch events, like checkout-payment ones, go only to endpoints that list them in `events`.")
def events_batch_events_opt_in(ref: Reference) -> None:
    _opt_in_too(ref, "payout_batch.")


@mutant("events-checkout-not-opt-in", reqs=["EVT-ROUTING-CHECKOUT-OPT-IN"],
        doc="Checkout-payment events go to every endpoint, opted in or not.")
def events_checkout_not_opt_in(ref: Reference) -> None:
    ref.events.routes_to = lambda endpoint, type_: True


@mutant("webhooks-no-backfill", reqs=["EVT-BACKFILL"], doc="A new endpoint receives no event recorded before it.")
def webhooks_no_backfill(ref: Reference) -> None:
    ref.events.backfill = timedelta(0)


@mutant("webhooks-dispatch-order-reversed", reqs=["WH-AT-LEAST-ONCE"],
        doc="Due deliveries are sent newest first, against `sequence` order.")
def webhooks_dispatch_order_reversed(ref: Reference) -> None:
    original = ref.dispatcher.due
    ref.dispatcher.due = lambda org_id: list(reversed(original(org_id)))  # type: ignore[method-assign]


@mutant("webhooks-first-attempt-delayed", reqs=["WH-DISPATCH-15S"],
        doc="The first attempt of a delivery is due a minute after the event, not within 15 seconds.")
def webhooks_first_attempt_delayed(ref: Reference) -> None:
    original = ref.events.queue

    def queue(endpoint_id: str, org_id: str, mode: str, event_id: str, type_: str, due: str) -> None:
        original(endpoint_id, org_id, mode, event_id, type_, iso(datetime.fromisoformat(due) + timedelta(seconds=60)))

    ref.events.queue = queue  # type: ignore[method-assign]


@mutant("webhooks-third-retry-early", reqs=["WH-RETRY-SCHEDULE"],
        doc="The third retry comes 7.5 minutes after the second, under both described gaps (15 and 30 minutes).")
def webhooks_third_retry_early(ref: Reference) -> None:
    ladder = list(ref.dispatcher.ladder)
    ladder[2] = 450
    ref.dispatcher.ladder = tuple(ladder)


@mutant("webhooks-seven-attempts", reqs=["WH-RETRY-SCHEDULE-ALT"],
        doc="A failing delivery is dead after seven attempts, which fits neither schedule.")
def webhooks_seven_attempts(ref: Reference) -> None:
    ref.dispatcher.ladder = ref.dispatcher.ladder[:6]


@mutant("webhooks-six-attempts-on-the-ladder", reqs=["WH-RETRY-SCHEDULE-ALT"],
        doc="A failing delivery is dead after six attempts spaced as the ladder's first five retries (1, 5, 15, 60,"
            " 180 min), which fits neither schedule.")
def webhooks_six_attempts_on_the_ladder(ref: Reference) -> None:
    ref.dispatcher.ladder = ref.dispatcher.ladder[:5]
