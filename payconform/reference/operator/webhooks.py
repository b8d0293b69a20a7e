"""The dashboard's webhook endpoint actions the operator API stands for (the rules: `webhook_endpoints.py`).

Register, pause or resume, rotate the secret, delete, replay one delivery or a window of them; and, for the
back office, seed copies of a delivery. Each route runs the organization's due deliveries before answering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from ..events import webhook_endpoints as endpoints
from ..core.errors import ApiError
from ..core.validate import Checker
from .endpoint import OperatorRoute

if TYPE_CHECKING:
    import sqlite3

    from .server import OperatorServer


def _mode(body: dict[str, Any]) -> str:
    mode = body.get("mode", "test")
    if mode not in ("test", "live"):
        raise ApiError("VALIDATION_ERROR", errors=[{"field": "mode", "reason": "test or live"}])
    return str(mode)


def _endpoint(ref: OperatorServer, request: Request) -> sqlite3.Row:
    return endpoints.find_endpoint(ref, request.path_params["orgId"], None, request.path_params["endpointId"])


def register(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = request.path_params["orgId"]
    mode = _mode(body)
    url, events = endpoints.read_settings(Checker({k: v for k, v in body.items() if k != "mode"}))
    return 201, endpoints.create_endpoint(ref, org_id, mode, url, events)


def delete(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    row = _endpoint(ref, request)
    endpoints.delete_endpoint(ref, row)
    return 200, {"id": row["id"], "deleted": True}


def set_enabled(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    c = Checker(body)
    enabled = c.boolean("enabled", required=True)
    c.done()
    return 200, endpoints.endpoint_json(endpoints.set_enabled(ref, _endpoint(ref, request), bool(enabled)))


def rotate(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    return 200, endpoints.rotate_secret(ref, _endpoint(ref, request))


def replay_one(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    delivery = endpoints.replay_one(ref, _endpoint(ref, request), request.path_params["deliveryId"])
    return 202, endpoints.delivery_json(delivery)


def replay_bulk(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """Deliveries created in [from, to], `failed` (failed or dead; the default) or `all`; oldest first."""
    c = Checker(body)
    start, end = c.instant("from", required=True), c.instant("to", required=True)
    which = c.string("status", choices=("failed", "all")) or "failed"
    c.done()
    assert start is not None and end is not None
    return 202, {"requeued": endpoints.replay_window(ref, _endpoint(ref, request), start, end, which)}


def seed_deliveries(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    c = Checker(body)
    count = c.integer("count", required=True, low=1, high=5000)
    c.done()
    endpoints.seed_deliveries(ref, _endpoint(ref, request), count or 0)
    return 201, {"seeded": count}


E = "/orgs/{orgId}/webhook-endpoints"
ROUTES = [
    OperatorRoute(E, register, "POST", dispatch=True),
    OperatorRoute(E + "/{endpointId}", delete, "DELETE", dispatch=True),
    OperatorRoute(E + "/{endpointId}/enabled", set_enabled, "POST", dispatch=True),
    OperatorRoute(E + "/{endpointId}/rotate-secret", rotate, "POST", dispatch=True),
    OperatorRoute(E + "/{endpointId}/deliveries/{deliveryId}/replay", replay_one, "POST", dispatch=True),
    OperatorRoute(E + "/{endpointId}/deliveries/replay", replay_bulk, "POST", dispatch=True),
    OperatorRoute(E + "/{endpointId}/deliveries/seed", seed_deliveries, "POST", dispatch=True),
]
