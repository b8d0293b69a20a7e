"""Mutants of the Resources part for events, webhook endpoints and deliveries.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..registry import mutant
from ..support.events import DELIVERY_LISTS, on_record, rewrite_event_data, rewrite_webhook_replies

if TYPE_CHECKING:
    from ...reference import Reference


def _envelope(ref: Reference, change: Callable[[dict[str, Any]], None]) -> None:
    """Every event object (feed and deliveries) goes through `change`."""
    original = ref.events.envelope

    def envelope(row: Any) -> dict[str, Any]:
        body = original(row)
        change(body)
        return body

    ref.events.envelope = envelope


@mutant("events-api-version-string", reqs=["EVT-API-VERSION", "VER-WEBHOOK-API-VERSION"],
        doc="`apiVersion` is the string \"1\" instead of the integer 1.")
def events_api_version_string(ref: Reference) -> None:
    _envelope(ref, lambda e: e.update({"apiVersion": "1"}))


@mutant("ver-webhook-version-header-missing", reqs=["VER-WEBHOOK-API-VERSION"],
        doc="Deliveries carry `apiVersion: 1` in the body but no `Svc-Webhook-Version` header to branch on.")
def ver_webhook_version_header_missing(ref: Reference) -> None:
    original = ref.dispatcher.headers

    def headers(*args: Any) -> dict[str, str]:
        return {k: v for k, v in original(*args).items() if k.lower() != "svc-webhook-version"}

    ref.dispatcher.headers = headers


@mutant("events-livemode-true", reqs=["EVT-LIVEMODE", "EVT-SANDBOX-LIVEMODE"],
        doc="Sandbox events carry `livemode: true`.")
def events_livemode_true(ref: Reference) -> None:
    _envelope(ref, lambda e: e.update({"livemode": True}))


@mutant("events-sequence-integer", reqs=["EVT-SEQUENCE"], doc="`sequence` is a JSON number, not a decimal string.")
def events_sequence_integer(ref: Reference) -> None:
    _envelope(ref, lambda e: e.update({"sequence": int(e["sequence"])}))


@mutant("events-created-at-naive", reqs=["EVT-CREATED-AT"], doc="`createdAt` has no timezone.")
def events_created_at_naive(ref: Reference) -> None:
    _envelope(ref, lambda e: e.update({"createdAt": e["createdAt"].rstrip("Z")}))


@mutant("webhooks-delivery-no-last-error", reqs=["WH-DELIVERY-FIELDS"], doc="Delivery rows omit `lastError`.")
def webhooks_delivery_no_last_error(ref: Reference) -> None:
    rewrite_webhook_replies(ref, DELIVERY_LISTS,
                            lambda rows: [{k: v for k, v in r.items() if k != "lastError"} for r in rows])


@mutant("webhooks-secret-listed", reqs=["WH-SECRET-FORMAT"], doc="The endpoint list shows each signing secret.")
def webhooks_secret_listed(ref: Reference) -> None:
    def change(body: dict[str, Any]) -> dict[str, Any]:
        for row in body["data"]:
            found = ref.store.one("SELECT secret FROM webhook_endpoints WHERE id = ?", (row["id"],))
            row["secret"] = found["secret"] if found else None
        return body

    rewrite_webhook_replies(ref, ("listWebhookEndpoints",), change)


@mutant("webhooks-secret-unprefixed", reqs=["WH-SECRET-FORMAT"],
        doc="Registration shows the signing secret as bare base64, without its `whsec_` prefix.")
def webhooks_secret_unprefixed(ref: Reference) -> None:
    def change(answer: dict[str, Any]) -> dict[str, Any]:
        secret = answer.get("secret")
        return {**answer, "secret": secret.removeprefix("whsec_")} if isinstance(secret, str) else answer

    rewrite_webhook_replies(ref, ("createSandboxWebhookEndpoint",), change)


@mutant("webhooks-list-missing-health", reqs=["WH-ENDPOINT-FIELDS"], doc="Listed endpoints omit their health fields.")
def webhooks_list_missing_health(ref: Reference) -> None:
    health = ("consecutiveFailures", "lastSuccessAt", "lastFailureAt", "disabledReason")
    rewrite_webhook_replies(ref, ("listWebhookEndpoints",),
             lambda body: {**body, "data": [{k: v for k, v in r.items() if k not in health} for r in body["data"]]})


@mutant("webhooks-list-success-unrecorded", reqs=["WH-ENDPOINT-FIELDS"],
        doc="Listed endpoints keep `lastSuccessAt` null after accepting a delivery: only failures reach the health.")
def webhooks_list_success_unrecorded(ref: Reference) -> None:
    rewrite_webhook_replies(ref, ("listWebhookEndpoints",),
                            lambda body: {**body, "data": [{**r, "lastSuccessAt": None} for r in body["data"]]})


@mutant("webhooks-deliveries-with-payload", reqs=["WH-DELIVERY-NO-PAYLOAD"], doc="Delivery rows carry the payload.")
def webhooks_deliveries_with_payload(ref: Reference) -> None:
    def change(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            event = ref.events.get(row["eventId"])
            row["data"] = json.loads(event["data"]) if event else None
        return rows

    rewrite_webhook_replies(ref, DELIVERY_LISTS, change)


@mutant("events-partial-refund-total-is-piece", reqs=["PAY-WEBHOOK-PARTIAL-REFUND"],
        doc="`checkout_payment.partially_refunded` carries the piece as `refunded`, not the running total.")
def events_partial_refund_total_is_piece(ref: Reference) -> None:
    rewrite_event_data(ref, "checkout_payment.partially_refunded", lambda d: {**d, "refunded": d["refund"]})


@mutant("events-partial-refund-piece-is-total", reqs=["PAY-WEBHOOK-PARTIAL-REFUND"],
        doc="`checkout_payment.partially_refunded` carries the running total as `refund`, not the piece.")
def events_partial_refund_piece_is_total(ref: Reference) -> None:
    rewrite_event_data(ref, "checkout_payment.partially_refunded", lambda d: {**d, "refund": d["refunded"]})


@mutant("events-checkout-amounts-in-base-units", reqs=["PAY-WEBHOOK-DECIMAL"],
        doc="Checkout payment events carry amounts in base units (`15000`), not decimal strings.")
def events_checkout_amounts_in_base_units(ref: Reference) -> None:
    def base_units(data: dict[str, Any]) -> dict[str, Any]:
        return {k: str(int(v.replace(".", ""))) if k in ("amount", "refunded", "refund") else v for k, v in data.items()}

    on_record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, base_units(d) if t.startswith("checkout_payment.") else d,
                                                  n))
