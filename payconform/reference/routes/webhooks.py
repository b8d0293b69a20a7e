"""Webhook endpoints over the API: sandbox registration and delivery log, management reads and refusals.

Endpoints > Sandbox webhooks, Webhook endpoint management: a test key registers a sandbox endpoint (`events`
is the checkout-payment opt-in list; the `whsec_` secret is in the 201 answer only) and reads its deliveries
(the 50 newest, a bare array sorted by `createdAt` then `id`, no payload; 403 `DEVELOPER_FEATURE_DISABLED`
when the organization's `developer` feature is off; a live key gets 400 `LIVE_MODE_UNSUPPORTED` from the
pipeline, a 400 as the row's `BAD_REQUEST`). The list of endpoints and the management deliveries list accept
an API key; every other management route is dashboard-session only and answers an API key 403 `FORBIDDEN`
(as `routes/keys.py` does for key rotation). The dashboard's actions are operator routes
(`operator/webhooks.py`); the rules are `webhook_endpoints.py`.
"""

from __future__ import annotations

from ..core.errors import ApiError
from ..conventions.paging import page
from ..core.operation import Call, Operation, Reply
from ..core.validate import check
from ..events.webhook_endpoints import (
    active_endpoints,
    check_developer_tools,
    create_endpoint,
    endpoint_json,
    find_endpoint,
    read_settings,
    recent_deliveries,
)


def register_sandbox(call: Call) -> Reply:
    url, events = read_settings(check(call.json()))
    body = create_endpoint(call.ref, call.org_id, call.mode, url, events)
    return Reply(201, body, body["id"])


def list_sandbox_deliveries(call: Call) -> Reply:
    check_developer_tools(call)
    row = find_endpoint(call.ref, call.org_id, call.mode, call.params["endpointId"])
    return Reply(200, recent_deliveries(call.ref, row["id"]))


def list_endpoints(call: Call) -> Reply:
    return Reply(200, page(call, [endpoint_json(r) for r in active_endpoints(call.ref, call.org_id, call.mode)]))


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
