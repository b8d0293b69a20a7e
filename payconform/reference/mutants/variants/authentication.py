"""Tolerated variants of the Authentication part: challenges, key refusals and signature headers.

The whole suite must pass under each of them.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ...authentication.auth import KEY_FORMAT
from ...core.errors import ApiError
from ...core.responses import Outgoing
from ..patching import Handler
from ..registry import variant
from ..rewrites import rewrite_refusals

if TYPE_CHECKING:
    from ...authentication.auth import Principal
    from ...core.operation import Call, Reply
    from ...reference import Reference
    from starlette.requests import Request


OTHER_STATUSES = {"SIGNATURE_REQUIRED": 400, "SIGNATURE_INVALID": 403, "SIGNATURE_REPLAYED": 409,
                  "SIGNATURE_TIMESTAMP_SKEW": 400}


CHALLENGE_FIELDS = ("type", "requestId", "payloadToSign")


@variant("signature-statuses-vary",
         doc="The signature errors other than the 202 challenge answer 400, 403 or 409 instead of 401 (their "
             "statuses are not shown in the spec).")
def signature_statuses_vary(ref: Reference) -> None:
    def restatus(out: Outgoing) -> None:
        status = OTHER_STATUSES.get(out.body.get("type")) if out.is_error and isinstance(out.body, dict) else None
        if status is not None:
            out.status = out.body["status"] = status

    ref.response_filters.append(restatus)


@variant("challenge-minimal-body",
         doc="The 202 challenge body is exactly the three fields Mode B rule 4 shows: 'a request sent without a "
             "signature answers `202` with body `{type: SIGNATURE_CHALLENGE, requestId, payloadToSign}`' (no "
             "`status`, no `detail`: the 202 is not an error answer).")
def challenge_minimal_body(ref: Reference) -> None:
    def minimal(out: Outgoing) -> None:
        if out.status == 202 and isinstance(out.body, dict) and out.body.get("type") == "SIGNATURE_CHALLENGE":
            out.body = {name: out.body[name] for name in CHALLENGE_FIELDS if name in out.body}

    ref.response_filters.append(minimal)


@variant("sandbox-scenarios-live-ok",
         doc="A live key reads GET /sandbox/scenarios: the route is 'Table of amount-driven sandbox outcomes', not "
             "marked 'Sandbox only' as the two simulate routes are; only 'Sandbox-only routes refuse a live key'.")
def sandbox_scenarios_live_ok(ref: Reference) -> None:
    op = ref.operations["getSandboxScenarios"]
    ref.operations["getSandboxScenarios"] = dataclasses.replace(op, sandbox_only=False)


@variant("sandbox-deliveries-live-bad-request",
         doc="A live key on the sandbox delivery log is refused with 400 BAD_REQUEST, as that route's row says ('400 "
             "`BAD_REQUEST` for a live key'), rather than LIVE_MODE_UNSUPPORTED ('Sandbox-only routes refuse a live "
             "key with `LIVE_MODE_UNSUPPORTED`').")
def sandbox_deliveries_live_bad_request(ref: Reference) -> None:
    op_id = "listSandboxWebhookDeliveries"
    ref.operations[op_id] = dataclasses.replace(ref.operations[op_id], sandbox_only=False)

    def wrap(handler: Handler) -> Handler:
        def deliveries(call: Call) -> Reply:
            if call.mode == "live":
                raise ApiError("BAD_REQUEST", "The sandbox delivery log takes a test key.")
            return handler(call)
        return deliveries

    ref.wrap_handler(op_id, wrap)


@variant("malformed-key-own-detail",
         doc="A key that fails the format check (no `svc_test_`/`svc_live_` prefix, wrong lengths, no secret) answers "
             "UNAUTHORIZED with its own `detail`: only 'Unknown, revoked or wrong keys' are 'deliberately "
             "indistinguishable'; UNAUTHORIZED covers 'Key missing, malformed, unknown, revoked or incomplete'.")
def malformed_key_own_detail(ref: Reference) -> None:
    authenticate = ref.auth.authenticate

    def own_detail(request: Request) -> Principal:
        try:
            return authenticate(request)
        except ApiError as err:
            raw = request.headers.get("x-api-key")
            if err.type == "UNAUTHORIZED" and raw and not KEY_FORMAT.fullmatch(raw):
                err.detail = "The API key is malformed or incomplete."
            raise

    ref.auth.authenticate = own_detail  # type: ignore[method-assign]


@variant("dashboard-routes-404-for-keys",
         doc="Dashboard-session-only routes answer an API key 404 ROUTE_NOT_FOUND (no such route for a key), not 403: "
             "'All except the two API-key-readable routes are dashboard-session only'; the refusal's status is not "
             "shown.")
def dashboard_routes_404_for_keys(ref: Reference) -> None:
    def not_for_keys(call: Call, err: ApiError) -> ApiError | None:
        if err.type == "FORBIDDEN" and "dashboard session" in err.detail:
            return ref.route_not_found(call.op.method, call.path)
        return None

    for op_id in list(ref.operations):
        rewrite_refusals(ref, op_id, not_for_keys)


@variant("empty-signature-is-unsigned",
         doc="An `X-Svc-Signature` header with an empty value counts as no signature, so the request gets the "
             "challenge: 'a request sent without a signature answers `202` with body `{type: SIGNATURE_CHALLENGE, "
             "requestId, payloadToSign}` ... nothing ran' (Mode B rule 4); an empty header carries no signature.")
def empty_signature_is_unsigned(ref: Reference) -> None:
    authenticate = ref.signing.authenticate

    async def empty_is_absent(request: Request) -> Principal:
        if request.headers.get("x-svc-signature", "missing").strip() == "":
            request.scope["headers"] = [(k, v) for k, v in request.scope["headers"] if k.lower() != b"x-svc-signature"]
            request.__dict__.pop("_headers", None)  # starlette caches the parsed headers
        return await authenticate(request)

    ref.signing.authenticate = empty_is_absent  # type: ignore[method-assign]
