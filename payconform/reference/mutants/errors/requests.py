"""Mutants of the Errors part for errors any request can meet: bad requests, scopes, idempotency and
rate limits.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.responses import PlainTextResponse

from ...authentication.auth import KEY_FORMAT, KeyRecord, Principal
from ...core.errors import ApiError, field_error
from ...core.operation import Call, Reply
from ...core.requestid import request_id_of
from ...core.responses import Outgoing
from ..patching import Handler, around
from ..registry import mutant
from ..support.requests import Execute, key_row, on_429, on_auth_error

if TYPE_CHECKING:
    from ...reference import Reference
    from starlette.requests import Request
    from starlette.responses import Response


@mutant("unknown-route-not-found", reqs=["ERR-ROUTE-NOT-FOUND"],
        doc="An unknown route answers 404 NOT_FOUND instead of ROUTE_NOT_FOUND.")
def unknown_route_not_found(ref: Reference) -> None:
    ref.route_not_found = lambda method, path: ApiError("NOT_FOUND", "Not found.")  # type: ignore[method-assign]


@mutant("unknown-order-route-not-found", reqs=["ERR-ROUTE-NOT-FOUND"],
        doc="An unknown payout id on GET /orders/{payoutId} answers 404 ROUTE_NOT_FOUND instead of NOT_FOUND, as if "
            "the route did not match.")
def unknown_order_route_not_found(ref: Reference) -> None:
    @around(ref, "getOrder")
    def get_order(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "NOT_FOUND":
                raise
            raise ApiError("ROUTE_NOT_FOUND") from None


@mutant("missing-key-403", reqs=["AUTH-MISSING-KEY", "ERR-UNAUTHORIZED"],
        doc="A request without `x-api-key` answers 403 FORBIDDEN instead of 401 UNAUTHORIZED.")
def missing_key_403(ref: Reference) -> None:
    def handle(request: Request, err: ApiError) -> Principal:
        if "x-api-key" not in request.headers:
            raise ApiError("FORBIDDEN", "An API key is required.")
        raise err

    on_auth_error(ref, handle)


@mutant("malformed-key-400", reqs=["AUTH-MALFORMED-KEY", "ERR-UNAUTHORIZED"],
        doc="A key that is not in the documented format answers 400 VALIDATION_ERROR instead of 401 UNAUTHORIZED.")
def malformed_key_400(ref: Reference) -> None:
    def handle(request: Request, err: ApiError) -> Principal:
        raw = request.headers.get("x-api-key")
        if raw is not None and not KEY_FORMAT.fullmatch(raw):
            raise field_error("x-api-key", "not a key of the documented format")
        raise err

    on_auth_error(ref, handle)


@mutant("key-secret-not-verified", reqs=["AUTH-INCOMPLETE-KEY", "AUTH-WRONG-KEY"],
        doc="A key is found by its prefix and public id; a missing, truncated or wrong secret is not checked.")
def key_secret_not_verified(ref: Reference) -> None:
    find_key = ref.auth.find_key
    public = re.compile(r"^svc_(test|live)_([0-9a-f]{32})")

    def find(raw: str | None) -> KeyRecord | None:
        match = public.match(raw or "")
        return find_key(raw) or (key_row(ref, match.group(2)) if match else None)

    ref.auth.find_key = find  # type: ignore[method-assign]


@mutant("fuzz-validation-error-422", reqs=["ERR-VALIDATION-ERROR"],
        doc="A recipient PATCH with invalid fields answers 422 VALIDATION_ERROR (an undocumented status) instead of 400.")
def fuzz_validation_error_422(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def update_beneficiary(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "VALIDATION_ERROR":
                raise ApiError(err.type, err.detail, status=422, errors=err.errors) from None
            raise


@mutant("internal-keeps-key", reqs=["IDEM-500-RELEASES", "ERR-INTERNAL"],
        doc="A 500 INTERNAL answer keeps the key: the same request sent again replays the 500 instead of running.")
def internal_keeps_key(ref: Reference) -> None:
    kept = ("PAYOUT_OUTCOME_UNKNOWN", "REFUND_OUTCOME_UNKNOWN", "INTERNAL")
    ref.idempotency.releases = lambda err: err.type not in kept  # type: ignore[method-assign]


@mutant("idem-conflict-generic-type", reqs=["ERR-IDEMPOTENCY-KEY-CONFLICT"],
        doc="The same key with another body answers 409 CONFLICT instead of IDEMPOTENCY_KEY_CONFLICT.")
def idem_conflict_generic_type(ref: Reference) -> None:
    def generic(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == "IDEMPOTENCY_KEY_CONFLICT":
            out.body["type"] = "CONFLICT"

    ref.response_filters.append(generic)


@mutant("idem-unavailable-executes", reqs=["IDEM-UNAVAILABLE", "ERR-IDEMPOTENCY-UNAVAILABLE"],
        doc="When the key cannot be recorded the request runs anyway, then answers 503 IDEMPOTENCY_UNAVAILABLE.")
def idem_unavailable_executes(ref: Reference) -> None:
    run = ref.idempotency.run

    async def run_then_refuse(call: Call, execute: Execute) -> Reply:
        if call.op.idempotency != "none" and ref.faults.take(call.org_id, call.op.op_id, "idempotency_unavailable"):
            await execute()
            raise ApiError("IDEMPOTENCY_UNAVAILABLE")
        return await run(call, execute)

    ref.idempotency.run = run_then_refuse  # type: ignore[method-assign]


@mutant("outcome-unknown-releases-key", reqs=["IDEM-OUTCOME-UNKNOWN", "ERR-PAYOUT-OUTCOME-UNKNOWN"],
        doc="PAYOUT_OUTCOME_UNKNOWN releases the key like any error: the replay pays.")
def outcome_unknown_releases_key(ref: Reference) -> None:
    ref.idempotency.releases = lambda err: True  # type: ignore[method-assign]


@mutant("outcome-unknown-replays-500", reqs=["IDEM-OUTCOME-UNKNOWN", "ERR-PAYOUT-OUTCOME-UNKNOWN"],
        doc="A kept PAYOUT_OUTCOME_UNKNOWN key replays the original 500 instead of answering 409.")
def outcome_unknown_replays_500(ref: Reference) -> None:
    def as_first_answered(out: Outgoing) -> None:
        if out.status == 409 and isinstance(out.body, dict) and out.body.get("type") == "PAYOUT_OUTCOME_UNKNOWN":
            out.status = out.body["status"] = 500

    ref.response_filters.append(as_first_answered)


@mutant("rate-limited-generic-type", reqs=["ERR-RATE-LIMITED"],
        doc="A request over the limit answers 429 with type TOO_MANY_REQUESTS, not RATE_LIMITED.")
def rate_limited_generic_type(ref: Reference) -> None:
    on_429(ref, lambda out: out.body.update({"type": "TOO_MANY_REQUESTS"}))


@mutant("unknown-route-plain-text", reqs=["ERRBODY-ALL-FAILURES"],
        doc="An unknown route answers a framework's plain-text `404 Not Found` instead of the error body.")
def unknown_route_plain_text(ref: Reference) -> None:
    original = ref.error_response

    def error_response(request: Request, err: ApiError) -> Response:
        if err.type != "ROUTE_NOT_FOUND":
            return original(request, err)
        return PlainTextResponse("Not Found", status_code=404, headers={"x-request-id": request_id_of(request)})

    ref.error_response = error_response  # type: ignore[method-assign]


@mutant("link-in-flight-as-request-in-progress", reqs=["ERR-CONFLICT"],
        doc="A publish or edit of a link while another publish of it is in flight answers 409 "
            "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS instead of CONFLICT.")
def link_in_flight_as_request_in_progress(ref: Reference) -> None:
    def refused_as_in_progress(detected: Callable[[Call, str], bool]) -> Callable[[Call, str], bool]:
        def in_progress(call: Call, link_id: str) -> bool:
            if detected(call, link_id):
                raise ApiError("IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS", "A request for this link is still running.")
            return False
        return in_progress

    rules = ref.checkout
    rules.publish_in_flight = refused_as_in_progress(rules.publish_in_flight)  # type: ignore[method-assign]
    rules.publish_running = refused_as_in_progress(rules.publish_running)  # type: ignore[method-assign]


@mutant("processor-timeout-is-503", reqs=["ERR-INTERNAL"],
        doc="A publish the card processor did not answer answers 503 INTERNAL, as if card payments were not set "
            "up, instead of 500.")
def processor_timeout_is_503(ref: Reference) -> None:
    call_processor = ref.checkout.call_processor

    def as_503(call: Call, link_id: str, total: str) -> None:
        try:
            call_processor(call, link_id, total)
        except ApiError as err:
            if err.type == "INTERNAL" and err.status == 500:
                raise ApiError(err.type, err.detail, status=503) from None
            raise

    ref.checkout.call_processor = as_503  # type: ignore[method-assign]
