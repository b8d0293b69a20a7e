"""Authentication > Mode A rule 6: "A key cannot accept provider terms, manage the team, issue keys, approve or
reject a held payout, or register, pause, re-sign or replay a webhook endpoint."

Tested on the routes the profile marks `auth: dashboard` (webhook endpoint management and key rotation; the
spec documents no route for terms, team, key issuing or approval decisions, so none is invented): each,
called with an API key on real ids of the key's own organization (a sandbox endpoint with one delivery, the
key itself), is refused with 401 or 403, and the endpoints and their deliveries read the same afterwards.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from payconform.client import Api
from payconform.contract import Contract
from payconform.expect import expect, expect_status
from payconform.placeholders import fill

from .._support.answers import DASHBOARD_REFUSALS
from .._support.payouts import create_payout
from .._support.profile import success


def _dashboard_ops(contract: Contract) -> list[str]:
    return sorted(op_id for op_id, op in contract.profile["operations"].items()
                  if str(op.get("auth", "")).lower() == "dashboard")


def _state(api: Api, endpoint_id: str) -> tuple[Any, Any]:
    """The endpoint list and the endpoint's deliveries, as the API key reads them."""
    endpoints = api.op("listWebhookEndpoints")
    deliveries = api.op("listWebhookEndpointDeliveries", endpointId=endpoint_id)
    for ex in (endpoints, deliveries):
        expect_status(ex, 200, "reading webhook endpoints and deliveries with an API key")
    return endpoints.json, deliveries.json


def _delivered(api: Api, endpoint_id: str, clock: Any) -> str:
    """The id of a delivery to the endpoint (a payout's `payout.pending`, flushed by a zero clock advance)."""
    clock.advance(api.org_id, 0)
    rows = api.op("listWebhookEndpointDeliveries", endpointId=endpoint_id).json
    expect(isinstance(rows, list) and rows and isinstance(rows[0], dict) and rows[0].get("id"),
           f"after a payout the endpoint's deliveries read {rows!r}, not one delivery with an `id`")
    return str(rows[0]["id"])


@pytest.mark.req("AUTH-KEY-CANNOT-PRIVILEGED")
@pytest.mark.needs("operator", "clock", "webhook_receiver")
def test_key_cannot_call_dashboard_routes(fresh_org, operator, clock, contract: Contract, unique,
                                          webhook_receiver) -> None:
    """Every dashboard-only route of the profile with an API key: 401 or 403, and nothing changed."""
    org = fresh_org()
    key = operator.issue_key(org.org_id, mode="test", scopes=["read", "write"])
    api = org.api.with_credential(key["key"])
    registered = api.op("createSandboxWebhookEndpoint", json={"url": webhook_receiver.url, "events": []})
    expect_status(registered, success(contract, "createSandboxWebhookEndpoint"),
                  "registering a sandbox endpoint with the test key")
    endpoint_id = registered.json["id"]
    create_payout(api, contract, unique)
    ids = {"orgId": org.org_id, "endpointId": endpoint_id, "deliveryId": _delivered(api, endpoint_id, clock),
           "apiKeyId": str(key["id"])}
    before = _state(api, endpoint_id)
    for op_id in _dashboard_ops(contract):
        op = contract.operation(op_id)
        params = {name: ids[name] for name in re.findall(r"\{(\w+)\}", op["path"]) if name != "orgId"}
        body = fill(op.get("body") or {}, {"webhook_url": webhook_receiver.url})
        ex = api.op(op_id, json=body, **params)
        expect_status(ex, DASHBOARD_REFUSALS, f"{op_id} ({op['method']} {op['path']}) with an API key: dashboard only "
                      "(the refusal's status is not shown)")
    after = _state(api, endpoint_id)
    expect(after == before, "the refused dashboard calls changed the endpoints or their deliveries: before"
           f" {before!r}, after {after!r}")
