"""Authentication > Mode A rule 6: "A key cannot accept provider terms, manage the team, issue keys, approve or
reject a held payout, or register, pause, re-sign or replay a webhook endpoint."

Tested on the routes the profile marks `auth: dashboard` (webhook endpoint management and key rotation; the
spec documents no route for terms, team, key issuing or approval decisions, so none is invented): each,
called with an API key on real ids of the key's own organization (a sandbox endpoint of the test's with one
delivery; the key itself where the operator issues it), is refused (401, 403, 404 or 405: the status is not
shown), and the test's endpoint reads the same afterwards, and so does its delivery while the route still lists it
among the 50 newest attempts. It runs on the target's own organization.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from payconform.suite import Api, Contract, Mailbox, expect, expect_status, fill, holds

from .._support.answers import DASHBOARD_REFUSALS
from .._support.deliveries import about, parsed, record_pauses, register, wait_for
from .._support.payouts import create_payout
from .._support.profile import items
from .._support.reach import dispatch


# an endpoint's fields a dashboard call changes: its registration (`url`, `events`), "enabled or paused", and
# `disabledReason`; its health (failures, last success) moves with every delivery
SETTINGS = ("url", "events", "enabled", "disabledReason")


def _dashboard_ops(contract: Contract) -> list[str]:
    return sorted(op_id for op_id, op in contract.profile["operations"].items()
                  if str(op.get("auth", "")).lower() == "dashboard")


def _state(api: Api, contract: Contract, endpoint_id: str, delivery_id: str) -> tuple[Any, Any]:
    """The test's endpoint's settings as the API key lists them and its delivery's row, or None once the row
    has left the listing: on the target's own organization other workers' endpoints and deliveries come and go,
    their events reach the test's endpoint too (its health figures move) and the route lists "the 50 newest
    attempts" only, so only the test's own rows and the settings a dashboard call changes are compared."""
    endpoints = expect_status(api.op("listWebhookEndpoints"), 200, "listing webhook endpoints with an API key")
    deliveries = expect_status(api.op("listWebhookEndpointDeliveries", endpointId=endpoint_id), 200,
                               "listing the endpoint's deliveries with an API key")
    mine = [e for e in items(contract, "listWebhookEndpoints", endpoints) if e.get("id") == endpoint_id]
    expect(len(mine) == 1, f"the endpoint list holds {len(mine)} endpoints of id {endpoint_id}", endpoints)
    expect(isinstance(deliveries.json, list), "the endpoint's deliveries are not a bare array", deliveries)
    row = next((r for r in deliveries.json if isinstance(r, dict) and r.get("id") == delivery_id), None)
    return {k: v for k, v in mine[0].items() if k in SETTINGS}, row


def _settled(api: Api, contract: Contract, endpoint_id: str, delivery_id: str) -> tuple[Any, Any]:
    """`_state` once two reads in a row agree: the delivery reached the mailbox, but the service records the
    attempt once its answer is in, which a busy one may take seconds to do (read at growing intervals)."""
    state = _state(api, contract, endpoint_id, delivery_id)
    for pause in record_pauses():
        time.sleep(pause)
        state, last = _state(api, contract, endpoint_id, delivery_id), state
        if state == last:
            break
    return state


def _delivered(request: pytest.FixtureRequest, api: Api, endpoint_id: str, box: Mailbox, payout_id: str) -> str:
    """The id of the endpoint's delivery of an event about the test's payout, once it reached the mailbox
    (within the dispatch bound, or at once where an operator clock runs the dispatcher): the row naming the
    event's `id`, else the last row listed (a row's fields are not shown; other workers' events reach it too)."""
    flush, patience = dispatch(request, api.org_id)
    seen = wait_for(box, lambda ds: any(about(d, "payoutId", payout_id) for d in ds), flush,
                    f"an event about payout {payout_id}", timeout=patience)
    event_id = str(parsed(next(d for d in seen if about(d, "payoutId", payout_id))).get("id"))
    ex = api.op("listWebhookEndpointDeliveries", endpointId=endpoint_id)
    rows = [r for r in (ex.json if isinstance(ex.json, list) else []) if isinstance(r, dict) and r.get("id")]
    expect(bool(rows), f"the endpoint's deliveries read {ex.json!r}, not one delivery with an `id`", ex)
    return str(next((r for r in rows if holds(r, event_id)), rows[-1])["id"])


def _key(request: pytest.FixtureRequest, api: Api) -> tuple[Api, str | None]:
    """The caller and its key id: a key the operator issues, where there is one; else the run's key, whose id
    an API key cannot learn (key rotation is then left to ROT-API-KEY-REFUSED's test)."""
    try:
        operator = request.getfixturevalue("operator")
    except pytest.skip.Exception:
        return api, None
    key = operator.issue_key(api.org_id, mode="test", scopes=["read", "write"])
    return api.with_credential(key["key"]), str(key["id"])


@pytest.mark.req("AUTH-KEY-CANNOT-PRIVILEGED", "WH-MGMT-DASHBOARD-ONLY")
@pytest.mark.needs("webhook_receiver")
def test_key_cannot_call_dashboard_routes(request: pytest.FixtureRequest, api: Api, contract: Contract, unique,
                                          webhook_receiver: Mailbox) -> None:
    """Every dashboard-only route of the profile with an API key: refused (401, 403, 404 or 405: the status is
    not shown), and nothing changed. Among them the replay of one delivery, on a real delivery: with a made-up
    id a server accepting the key would answer 404 too (WH-MGMT-DASHBOARD-ONLY's own test calls the routes that need no delivery)."""
    caller, key_id = _key(request, api)
    endpoint_id = register(caller, contract, webhook_receiver)[0]["id"]
    payout_id = create_payout(caller, contract, unique).json["payoutId"]
    ids = {"endpointId": endpoint_id, "deliveryId": _delivered(request, caller, endpoint_id, webhook_receiver,
                                                                payout_id), "apiKeyId": key_id}
    before = _settled(caller, contract, endpoint_id, ids["deliveryId"])
    for op_id in _dashboard_ops(contract):
        op = contract.operation(op_id)
        names = [name for name in re.findall(r"\{(\w+)\}", op["path"]) if name != "orgId"]
        if any(ids.get(name) is None for name in names):
            continue
        body = fill(op.get("body") or {}, {"webhook_url": webhook_receiver.url})
        ex = caller.op(op_id, json=body, **{name: ids[name] for name in names})
        expect_status(ex, DASHBOARD_REFUSALS, f"{op_id} ({op['method']} {op['path']}) with an API key: dashboard only "
                      "(the refusal's status is not shown)")
    after = _state(caller, contract, endpoint_id, ids["deliveryId"])
    expect(after[0] == before[0], "the refused dashboard calls changed the test's endpoint: before"
           f" {before[0]!r}, after {after[0]!r}")
    if before[1] is not None and after[1] is not None:  # else newer attempts pushed it out of the 50 listed
        expect(after[1] == before[1], f"the refused dashboard calls changed delivery {ids['deliveryId']}: before"
               f" {before[1]!r}, after {after[1]!r}")
