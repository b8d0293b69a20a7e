"""Tolerated variants of authentication: readings of the challenge flow and of sandbox routes the spec allows."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..auth import KEY_FORMAT
from ..errors import ApiError
from ..responses import Outgoing
from . import variant
from .rewrites import rewrite_refusals

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..auth import Principal
    from ..operation import Call, Reply
    from ..reference import Handler, Reference

CHALLENGE_FIELDS = ("type", "requestId", "payloadToSign")


@variant("challenge-minimal-body",
         doc="The 202 challenge body is exactly the three fields Mode B rule 4 shows: 'a request sent without a "
             "signature answers `202` with body `{type: SIGNATURE_CHALLENGE, requestId, payloadToSign}`' (no "
             "`status`, no `detail`: the 202 is not an error answer).")
def _(ref: Reference) -> None:
    def minimal(out: Outgoing) -> None:
        if out.status == 202 and isinstance(out.body, dict) and out.body.get("type") == "SIGNATURE_CHALLENGE":
            out.body = {name: out.body[name] for name in CHALLENGE_FIELDS if name in out.body}

    ref.response_filters.append(minimal)


@variant("sandbox-scenarios-live-ok",
         doc="A live key reads GET /sandbox/scenarios: the route is 'Table of amount-driven sandbox outcomes', not "
             "marked 'Sandbox only' as the two simulate routes are; only 'Sandbox-only routes refuse a live key'.")
def _(ref: Reference) -> None:
    op = ref.operations["getSandboxScenarios"]
    ref.operations["getSandboxScenarios"] = dataclasses.replace(op, sandbox_only=False)


@variant("sandbox-deliveries-live-bad-request",
         doc="A live key on the sandbox delivery log is refused with 400 BAD_REQUEST, as that route's row says ('400 "
             "`BAD_REQUEST` for a live key'), rather than LIVE_MODE_UNSUPPORTED ('Sandbox-only routes refuse a live "
             "key with `LIVE_MODE_UNSUPPORTED`').")
def _(ref: Reference) -> None:
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
def _(ref: Reference) -> None:
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
def _(ref: Reference) -> None:
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
def _(ref: Reference) -> None:
    authenticate = ref.signing.authenticate

    async def empty_is_absent(request: Request) -> Principal:
        if request.headers.get("x-svc-signature", "missing").strip() == "":
            request.scope["headers"] = [(k, v) for k, v in request.scope["headers"] if k.lower() != b"x-svc-signature"]
            request.__dict__.pop("_headers", None)  # starlette caches the parsed headers
        return await authenticate(request)

    ref.signing.authenticate = empty_is_absent  # type: ignore[method-assign]
