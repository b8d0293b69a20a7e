"""The operator API (`/_operator`): what the dashboard and back office do and an API key cannot.

Organizations and their flags, API keys (issue, revoke, rotate) and signing keys (register, rotate; the key
handlers live in `keys_operator.py`), each organization's clock, injected faults, the dashboard's webhook
endpoint actions (handlers in `routes/webhooks.py`) and a health check. A clock advance and a webhook replay
run the organization's due webhook deliveries before answering, so a test sees them at once. Every
route but `/health` needs header `x-operator-token` (compared in constant time).
Key management is audited with `actorUserId` set. Operator answers bypass the response filters:
mutants and variants change the API under test, not the test infrastructure.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import ledger
from .audit import OPERATOR_USER_ID
from .batches import RUN as BATCH_RUN
from .checkout import PSEUDO_OPERATIONS
from .clock import iso
from .errors import ERRORS, ApiError
from .faults import KINDS, Fault
from .keys_operator import (
    api_key_json,
    key_settings,
    register_signing_key,
    rotate_api_key,
    rotate_signing_key,
)
from .keys_operator import org_of as _org
from .ledger_operator import OPERATOR_ROUTES as LEDGER_ROUTES
from .operation import parse_json
from .operator_audit import AUDITED, OperatorAudit
from .orgs import FLAGS, create_org, get_org, update_org
from .pipeline import as_api_error
from .requestid import request_id_of
from .routes import approvals, refunds, webhooks
from .validate import Checker, require_object

if TYPE_CHECKING:
    from .reference import Reference

OperatorHandler = Callable[["Reference", Request, dict[str, Any]], tuple[int, Any]]
DEFAULT_FEATURES = ["developer", "mass_payouts"]


def _flags(c: Checker) -> tuple[dict[str, bool], list[str] | None]:
    flags = {name: value for name in FLAGS if (value := c.boolean(name)) is not None}
    features = c.obj.get("features")
    if features is not None and not (isinstance(features, list) and all(isinstance(f, str) for f in features)):
        c.fail("features", "must be a list of strings")
        features = None
    return flags, features


def create_organization(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    c = Checker(body)
    flags, features = _flags(c)
    c.done()
    defaults = {"verified": True, "payments_enabled": True, "suspended": False}
    org = create_org(ref.store, {**defaults, **flags}, DEFAULT_FEATURES if features is None else features,
                     ref.clock.wall(), ref.new_org_id)
    return 201, org.to_json()


def update_organization(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = _org(ref, request)
    c = Checker(body)
    flags, features = _flags(c)
    c.done()
    update_org(ref.store, org_id, flags, features)
    org = get_org(ref.store, org_id)
    assert org is not None
    return 200, org.to_json()


def issue_key(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """Scopes `crypto_payouts` and `refunds` only alongside `write`; expiry default 1 year, at most 2
    (the rules are attributes of `ref.auth`, read by `key_settings`)."""
    org_id = _org(ref, request)
    now = ref.clock.now(org_id)
    c = Checker(body)
    mode, scopes, expiry, pinned = key_settings(ref, c, now)
    c.done()
    key, raw = ref.auth.issue(org_id, mode, scopes, expiry, pinned, now)
    ref.audit.record(org_id=org_id, mode=key.mode, action="api_key.create", resource_id=key.id,
                     request_id=request_id_of(request), outcome="succeeded", actor_user_id=OPERATOR_USER_ID)
    return 201, api_key_json(key, raw)


def revoke_key(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = _org(ref, request)
    key = ref.auth.revoke(org_id, request.path_params["keyId"], ref.clock.now(org_id))
    if key is None:
        raise ApiError("NOT_FOUND", "No such key in this organization.")
    ref.audit.record(org_id=org_id, mode=key.mode, action="api_key.revoke", resource_id=key.id,
                     request_id=request_id_of(request), outcome="succeeded", actor_user_id=OPERATOR_USER_ID)
    return 200, {"id": key.id, "revoked": True}


def advance_clock(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = _org(ref, request)
    seconds = body.get("advance_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= 10 * 365 * 86400:
        raise ApiError("VALIDATION_ERROR", errors=[{"field": "advance_seconds", "reason": "a number of seconds >= 0"}])
    return 200, {"now": iso(ref.clock.advance(org_id, float(seconds)))}


def add_fault(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    c = Checker(body)
    org_id = c.string("org_id", required=True)
    operation = c.string("operation", required=True, choices=(*ref.operations, *PSEUDO_OPERATIONS, BATCH_RUN))
    kind = c.string("kind", required=True, choices=KINDS)
    count = c.integer("count", low=1, high=1000)
    seconds = body.get("seconds", 0)
    valid_seconds = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 < seconds <= 60
    if kind == "delay" and not valid_seconds:
        c.fail("seconds", "a delay of 0-60 seconds")
    status = c.integer("status", low=400, high=599)
    error_type = c.string("type", required=kind == "error", max_len=64)
    if error_type is not None and error_type not in ERRORS and status is None:
        c.fail("status", "required for an error type the spec does not list")
    c.done()
    if org_id is not None and get_org(ref.store, org_id) is None:
        raise ApiError("NOT_FOUND", "No such organization.")
    fault = ref.faults.add(Fault("", org_id or "", operation or "", kind or "", count or 1, float(seconds),
                                 status, error_type))
    return 201, {"id": fault.id, "org_id": fault.org_id, "operation": fault.operation, "kind": fault.kind,
                 "count": fault.remaining}


def seed_orders(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """The organization holds `count` more orders (sandbox mode), so balance history's size limit is reachable."""
    org_id = _org(ref, request)
    c = Checker(body)
    count = c.integer("count", required=True, low=0, high=10_000_000)
    c.done()
    ledger.seed_orders(ref.store, org_id, "test", count or 0)
    return 200, {"orgId": org_id, "seededOrders": count}


def open_dispute(ref: Reference, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """The card holder disputes a checkout payment (refunds then answer REFUND_DISPUTED)."""
    answer = refunds.open_dispute(ref, _org(ref, request), request.path_params["paymentId"])
    if answer is None:
        raise ApiError("NOT_FOUND", "No such payment in this organization.")
    return 200, answer


def _guarded(ref: Reference, handler: OperatorHandler, dispatch: bool = False,
             audit: OperatorAudit | None = None) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        authorized = False
        try:
            token = request.headers.get("x-operator-token", "")
            if not hmac.compare_digest(token.encode(), ref.config.operator_token.encode()):
                raise ApiError("UNAUTHORIZED", "A valid x-operator-token header is required.")
            authorized = True
            raw = await request.body()
            body = require_object(parse_json(raw)) if raw.strip() else {}
            with ref.store.tx():
                status, answer = handler(ref, request, body)
            if dispatch:
                await ref.dispatcher.run(request.path_params["orgId"])
        except Exception as exc:
            err = as_api_error(exc, request.url.path, request_id_of(request))
            if audit is not None and authorized:
                audit.refused(ref, request, err)
            return ref.error_response(request, err)
        if audit is not None:
            audit.succeeded(ref, request, answer)
        return ref.respond(request, status, answer)

    return endpoint


async def _health(request: Request) -> Response:
    ref: Reference = request.app.state.reference
    return ref.respond(request, 200, {"ok": True})


def routes(ref: Reference) -> list[Route]:
    def route(path: str, handler: OperatorHandler, method: str, dispatch: bool = False) -> Route:
        return Route("/_operator" + path, _guarded(ref, handler, dispatch, AUDITED.get(path)), methods=[method])

    return [
        Route("/_operator/health", _health, methods=["GET"]),
        route("/orgs", create_organization, "POST"),
        route("/orgs/{orgId}", update_organization, "PATCH"),
        route("/orgs/{orgId}/keys", issue_key, "POST"),
        route("/orgs/{orgId}/keys/{keyId}/revoke", revoke_key, "POST"),
        route("/orgs/{orgId}/keys/{keyId}/rotate", rotate_api_key, "POST"),
        route("/orgs/{orgId}/signing-keys", register_signing_key, "POST"),
        route("/orgs/{orgId}/signing-keys/{keyId}/rotate", rotate_signing_key, "POST"),
        route("/orgs/{orgId}/clock", advance_clock, "POST", dispatch=True),
        route("/orgs/{orgId}/approvals/{approvalId}/approve", approvals.approve, "POST"),
        route("/orgs/{orgId}/approvals/{approvalId}/reject", approvals.reject, "POST"),
        route("/orgs/{orgId}/approval-policy", approvals.set_policy, "PUT"),
        route("/faults", add_fault, "POST"),
        route("/orgs/{orgId}/orders/seed", seed_orders, "POST"),
        route("/orgs/{orgId}/checkout/payments/{paymentId}/dispute", open_dispute, "POST"),
        *(route(path, handler, method, dispatch=True) for path, handler, method in webhooks.OPERATOR_ROUTES),
        *(route(path, handler, method) for path, handler, method in LEDGER_ROUTES),
    ]

