"""Endpoints > Sandbox webhooks, Webhook endpoint management; Resources > Webhook endpoint and delivery.

Registration with a test key returns a `whsec_` secret once, and the endpoint then receives deliveries; the
list of endpoints and the deliveries are readable with an API key (the management route's as a bare array of the
newest attempts, sorted by `createdAt` then `id`; the sandbox route's "Recent delivery attempts" where the profile
says, in any order; neither with the payload); every other management route refuses an API key and changes
nothing.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

import pytest

from payconform.suite import Contract, Delivery, Kind, Mailbox, Needs, expect, expect_error, expect_status, run_contract

from .._support.answers import DASHBOARD_REFUSALS, member
from .._support.deliveries import (about, endpoints_listed, member_of, record_pauses, register, reused, verified,
                                  wait_for)
from .._support.events import event_types
from .._support.instants import is_utc_instant
from .._support.payouts import create_payout
from .._support.profile import items, success

EARLIEST = datetime.min.replace(tzinfo=timezone.utc)
ENDPOINT_FIELDS = ("id", "events", "consecutiveFailures")
# null until set, so present as null or left out (the spec lists the health fields, never "always present")
NULLABLE_HEALTH = ("lastSuccessAt", "lastFailureAt", "disabledReason")


def _endpoints(api: Any) -> dict[str, dict[str, Any]]:
    return endpoints_listed(api, run_contract())[0]


@pytest.mark.req("WH-SBX-REGISTER", "WH-SECRET-FORMAT", "WH-LIST", "WH-ENDPOINT-FIELDS", "WH-TEST-KEY-SANDBOX-PATH")
@pytest.mark.needs("api_key", "profile", "webhook_receiver")
def test_register_returns_the_secret_once(api, contract: Contract, unique, webhook_receiver: Mailbox,
                                          flusher) -> None:
    """Registered with the test key under the sandbox path: the secret comes once and the list shows the
    endpoint without it; then the endpoint is an endpoint like any other ("A test key can register an endpoint
    and read its deliveries under the sandbox path"): the event of a payout made afterwards reaches it, signed
    with that secret, the list then shows its `lastSuccessAt`, and the same key reads the attempt under the
    sandbox path."""
    endpoint, secret = register(api, contract, webhook_receiver, ["checkout_payment.paid"])
    listed = _endpoints(api).get(endpoint["id"])
    expect(listed is not None, f"the registered endpoint {endpoint['id']} is not in the list")
    assert listed is not None
    missing = [f for f in ENDPOINT_FIELDS if f not in listed]
    expect(not missing, f"the listed endpoint lacks {missing} (the null health fields {list(NULLABLE_HEALTH)} may "
                        "be left out; these may not)")
    expect(secret not in repr(listed), "the endpoint list shows the signing secret again")
    expect(listed.get("events") == ["checkout_payment.paid"], f"`events` reads {listed.get('events')!r}")
    payout_id = create_payout(api, contract, unique).json["payoutId"]
    seen = wait_for(webhook_receiver, lambda ds: any(about(d, "payoutId", payout_id) for d in ds), flusher(api.org_id),
                    f"the event of payout {payout_id}, made after the test key registered the endpoint")
    verified(next(d for d in seen if about(d, "payoutId", payout_id)), secret)
    success_at = _listed_after_success(api, endpoint["id"]).get("lastSuccessAt")
    expect(is_utc_instant(success_at), "WH-ENDPOINT-FIELDS: the endpoint's health fields include `lastSuccessAt`, "
           f"but after it accepted a delivery the list reads `lastSuccessAt: {success_at!r}`, not an instant")
    ex = api.op("listSandboxWebhookDeliveries", endpointId=endpoint["id"])
    expect_status(ex, 200, "reading the registered endpoint's deliveries under the sandbox path with the test key")
    expect(items(contract, "listSandboxWebhookDeliveries", ex),
           "the sandbox delivery log lists no attempt of an endpoint that received a delivery (rows read where the "
           "profile's `page.items` says)", ex)


def _listed_after_success(api: Any, endpoint_id: str) -> dict[str, Any]:
    """The endpoint as listed once an accepted delivery shows in its health (read again while it does not,
    within `RECORD_WAIT`: `record_pauses`)."""
    listed = _endpoints(api).get(endpoint_id) or {}
    for pause in record_pauses():
        if listed.get("lastSuccessAt"):
            break
        time.sleep(pause)
        listed = _endpoints(api).get(endpoint_id) or {}
    return listed


def _instant(value: object) -> datetime:
    """A `createdAt` as an instant, so that '...01.5Z' and '...01.25Z' compare by time (unreadable: the earliest)."""
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else EARLIEST
    except ValueError:
        parsed = EARLIEST
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


@pytest.mark.req("WH-SBX-DELIVERIES", "WH-DELIVERIES-LIST", "WH-DELIVERY-NO-PAYLOAD")
@pytest.mark.needs("api_key", "profile", "webhook_receiver")
def test_deliveries_are_a_sorted_bare_array_without_payload(api, contract: Contract, unique, webhook_receiver: Mailbox,
                                                            webhook_server, flusher) -> None:
    endpoint, _, box = reused(api, contract, webhook_server)
    ids = [create_payout(api, contract, unique).json["payoutId"] for _ in range(3)]
    wait_for(box, lambda ds: all(any(about(d, "payoutId", i) for d in ds) for i in ids),
             flusher(api.org_id), "the events of three payouts")
    for op_id in ("listSandboxWebhookDeliveries", "listWebhookEndpointDeliveries"):
        ex = api.op(op_id, endpointId=endpoint["id"])
        expect_status(ex, 200, f"reading the deliveries ({op_id})")
        if op_id == "listSandboxWebhookDeliveries":  # "Recent delivery attempts": shape and order not shown, so the
            rows = items(contract, op_id, ex)  # rows are where the profile says, in any order
            expect(len(rows) >= 3, f"{op_id} lists {len(rows)} attempts after three payouts' events arrived (rows "
                                   "read where the profile's `page.items` says; their order is not judged)", ex)
        else:  # "The 50 newest attempts as a bare array sorted by `createdAt` then `id`"
            rows = ex.json
            expect(isinstance(rows, list) and len(rows) >= 3, f"{op_id} answered {type(rows).__name__}, not the array",
                   ex)
            keys = [(_instant(r.get("createdAt")), str(r.get("id"))) for r in rows]
            expect(keys in (sorted(keys), sorted(keys, reverse=True)),
                   f"{op_id} is not sorted by createdAt then id, in either direction (the spec gives none): "
                   f"{[(str(r.get('createdAt')), r.get('id')) for r in rows[:5]]}", ex)
        expect(len(rows) <= 50, f"{op_id} answered {len(rows)} attempts, more than the 50 newest", ex)
        payload = [r for r in rows if isinstance(r, dict) and ("data" in r or "payload" in r or "body" in r)]
        expect(not payload, f"{op_id} returns the payload of a delivery: {payload[:1]}", ex)


def _failed_rows(api: Any, contract: Contract,
                 endpoint_id: str) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """The sandbox delivery log, its rows where the profile's `listSandboxWebhookDeliveries.page.items` says (in
    any order: the sandbox route shows none): (the answer, its rows, those carrying a `lastError`)."""
    ex = api.op("listSandboxWebhookDeliveries", endpointId=endpoint_id)
    expect_status(ex, 200, "reading the deliveries")
    rows = [r for r in items(contract, "listSandboxWebhookDeliveries", ex) if isinstance(r, dict)]
    return ex, rows, [r for r in rows if r.get("lastError")]


def _past_the_log(rows: list[dict[str, Any]], answered: list[Delivery]) -> bool:
    """Whether every row the log shows was created after each event answered 503 (an event without a readable
    `createdAt` counts as older): the log shows recent rows only, so on a busy organization the failed attempts
    may have left it before it was read, and their absence says nothing."""
    shown = [_instant(r.get("createdAt")) for r in rows]
    return bool(shown) and all(_instant(member_of(d, "createdAt")) < min(shown) for d in answered)


def _newest(rows: list[dict[str, Any]], n: int = 5) -> list[dict[str, Any]]:
    """The `n` newest rows by `createdAt` then `id`, oldest of them first (for a failure message)."""
    return sorted(rows, key=lambda r: (_instant(r.get("createdAt")), str(r.get("id"))))[-n:]


@pytest.mark.req("WH-DELIVERY-FIELDS")
@pytest.mark.needs("api_key", "profile", "webhook_receiver")
def test_a_failed_attempt_is_listed_with_its_last_error(api, contract: Contract, unique, webhook_receiver: Mailbox,
                                                        webhook_server, flusher) -> None:
    """Once the endpoint has caught up (a payout's event arrived), it answers 503 to every delivery until one
    has been answered so (a second payout makes one come); read at once (the log holds the 50 newest), the
    delivery log shows a row with a `lastError`, of one of the 22 `eventType`s, and every row has `id`, `status`
    and `createdAt`. The next-retry field's name is not given: not read. The failed attempts are retried on the
    ladder, to later tests' mailboxes, which find theirs by what they made."""
    endpoint, _, box = reused(api, contract, webhook_server)
    flush, caught_up = flusher(api.org_id), create_payout(api, contract, unique).json["payoutId"]
    wait_for(box, lambda ds: any(about(d, "payoutId", caught_up) for d in ds), flush, f"the event of payout {caught_up}")
    box.fail_next(10**6, status=503)
    try:
        payout_id = create_payout(api, contract, unique).json["payoutId"]
        answered = [d for d in wait_for(box, lambda ds: any(d.answered == 503 for d in ds), flush,
                                        f"a delivery after payout {payout_id} was created (to answer 503)")
                    if d.answered == 503]
        ex, rows, failed = _failed_rows(api, contract, endpoint["id"])
        for pause in record_pauses():
            if failed or _past_the_log(rows, answered):
                break
            time.sleep(pause)
            ex, rows, failed = _failed_rows(api, contract, endpoint["id"])
    finally:
        box.answer()
    if not failed and _past_the_log(rows, answered):
        Needs(Kind.TARGET, f"a quieter organization: the {len(rows)} rows of the delivery log were all created after "
                           f"the {len(answered)} events answered 503, so their failed attempts are no longer "
                           "shown").skip()
    expect(failed, "no delivery in the log carries a `lastError` after attempts were answered 503: "
                   f"{[{k: r.get(k) for k in ('eventType', 'status', 'lastError')} for r in _newest(rows)]}", ex)
    odd = [r.get("eventType") for r in failed if r.get("eventType") not in event_types()]
    expect(not odd, f"failed deliveries carry `eventType` {odd}, not types of the 22", ex)
    lacking = [r for r in rows if not all(isinstance(r.get(k), str) and r.get(k) for k in ("id", "status", "createdAt"))]
    expect(not lacking, f"a delivery row lacks `id`, `status` or `createdAt`: {lacking[:2]}", ex)


@pytest.mark.req("WH-MGMT-DASHBOARD-ONLY")
@pytest.mark.needs("api_key", "webhook_receiver")
@pytest.mark.parametrize("op_id", ["createWebhookEndpoint", "deleteWebhookEndpoint", "setWebhookEndpointEnabled",
                                   "rotateWebhookEndpointSecret", "replayWebhookDeliveries"])
def test_management_routes_refuse_an_api_key(api, contract: Contract, webhook_receiver: Mailbox, webhook_server,
                                             op_id: str) -> None:
    endpoint, _, box = reused(api, contract, webhook_server)
    if op_id == "createWebhookEndpoint":
        ex = api.op(op_id, json={"url": box.url, "events": []})
    else:
        ex = api.op(op_id, endpointId=endpoint["id"], json=contract.operation(op_id).get("body"))
    expect(ex.status in DASHBOARD_REFUSALS, f"{op_id} with an API key answered {ex.status}, not a refusal "
           f"{sorted(DASHBOARD_REFUSALS)} (dashboard-session only; the status is not shown)", ex)
    listed = _endpoints(api)
    mine = listed.get(endpoint["id"])
    url = (mine or {}).get("url")
    if url is None:  # Resources names no URL field of an endpoint: without one, only that the endpoint stays is judged
        expect(mine is not None, f"{op_id} refused with an API key still changed the endpoints: endpoint "
                                 f"{endpoint['id']} is no longer listed (judged by that alone: a row without `url` "
                                 "cannot show a second endpoint at the test's URL)")
        return
    at_url = [i for i, e in listed.items() if e.get("url") == url]
    expect(at_url == [endpoint["id"]], f"{op_id} refused with an API key still changed the endpoints: the endpoints "
                                       f"listed at the test's `url` {url} are {at_url}, not only {endpoint['id']}")


@pytest.mark.req("WH-MGMT-DASHBOARD-ONLY")
@pytest.mark.needs("api_key", "webhook_receiver")
def test_readable_routes_accept_an_api_key(api, contract: Contract, webhook_server) -> None:
    """"All except the two API-key-readable routes are dashboard-session only": those two, the list of endpoints
    and an endpoint's deliveries (GET /{id}/deliveries), answer an API key 200."""
    endpoint, _, _ = reused(api, contract, webhook_server)
    expect(endpoint["id"] in _endpoints(api), f"the endpoint list read with an API key lacks {endpoint['id']}")
    ex = api.op("listWebhookEndpointDeliveries", endpointId=endpoint["id"])
    expect_status(ex, 200, "an endpoint's deliveries, one of 'the two API-key-readable routes', read with an API key")


@pytest.mark.smoke
@pytest.mark.req("WH-SBX-DEVELOPER-DISABLED", "ERR-DEVELOPER-FEATURE-DISABLED")
@pytest.mark.needs("api_key", "operator")
def test_deliveries_refused_without_developer_tools(fresh_org, operator, contract: Contract,
                                                    webhook_receiver: Mailbox) -> None:
    org = fresh_org()
    endpoint, _ = register(org.api, contract, webhook_receiver)
    operator.update_org(org.org_id, features=["mass_payouts"])
    ex = org.api.op("listSandboxWebhookDeliveries", endpointId=endpoint["id"])
    expect_error(ex, 403, "DEVELOPER_FEATURE_DISABLED")


@pytest.mark.req("POLICY-FEATURES-DEVELOPER")
@pytest.mark.needs("api_key", "webhook_receiver")
def test_policy_lists_developer_exactly_when_deliveries_are_served(api, contract: Contract, webhook_receiver: Mailbox,
                                                                    webhook_server) -> None:
    """On the target's own organization, whichever way its developer tools are set: while `features` of GET
    /policy lists `developer`, the sandbox deliveries route serves; while it does not, that route refuses with
    403 `DEVELOPER_FEATURE_DISABLED` ("when developer tools are off"), if an endpoint can be registered at all."""
    policy = api.op("getPolicy")
    expect_status(policy, 200, "GET /policy")
    features = member(policy, "features")
    expect(isinstance(features, list), f"`features` is {features!r}, not a list", policy)
    if "developer" in features:
        endpoint, _, _ = reused(api, contract, webhook_server)
        expect_status(api.op("listSandboxWebhookDeliveries", endpointId=endpoint["id"]), 200,
                      "reading the sandbox deliveries while GET /policy lists `developer`")
        return
    ex = api.op("createSandboxWebhookEndpoint", json={"url": webhook_receiver.url, "events": []})
    if ex.status in success(contract, "createSandboxWebhookEndpoint") and isinstance(ex.json, dict):
        expect_error(api.op("listSandboxWebhookDeliveries", endpointId=ex.json.get("id")), 403,
                     "DEVELOPER_FEATURE_DISABLED", "reading sandbox deliveries while GET /policy does not list "
                     f"`developer` (`features`: {features!r})")


@pytest.mark.req("WH-SBX-DELIVERIES-LIVE-KEY")
@pytest.mark.needs("api_key", "live_key", "webhook_receiver")
def test_deliveries_refuse_a_live_key(api, api_as, contract: Contract, webhook_receiver: Mailbox,
                                      webhook_server) -> None:
    endpoint, _, _ = reused(api, contract, webhook_server)
    live = api_as("live_key")
    ex = live.op("listSandboxWebhookDeliveries", endpointId=endpoint["id"])
    expect_error(ex, 400, {"BAD_REQUEST", "LIVE_MODE_UNSUPPORTED"})


@pytest.mark.req("WH-SECRET-SEPARATE")
@pytest.mark.needs("api_key", "webhook_receiver")
def test_a_webhook_secret_is_not_an_api_key(api, contract: Contract, webhook_receiver: Mailbox, webhook_server) -> None:
    _, secret, _ = reused(api, contract, webhook_server)
    ex = api.op("listWebhookEndpoints", credential=secret)
    expect_error(ex, 401, "UNAUTHORIZED")


@pytest.mark.req("VER-SANDBOX-EVENTS-ENUM")
@pytest.mark.needs("api_key", "webhook_receiver")
def test_registration_takes_the_added_event_types(api, contract: Contract, webhook_receiver: Mailbox) -> None:
    """Versioning 7: the approval types and `checkout_payment.partially_refunded` are values of `events`."""
    added = sorted({t for t in event_types() if t.startswith("payout_approval.")}
                   | {"checkout_payment.partially_refunded"})
    endpoint, _ = register(api, contract, webhook_receiver, added)
    listed = _endpoints(api).get(endpoint["id"]) or {}
    expect(sorted(listed.get("events") or []) == added, f"`events` reads {listed.get('events')!r}, not {added}")
