"""Mutants of the Conventions and the error body (request id, `retryable`, unknown routes, organization ids,
organization scoping, instants)."""

from __future__ import annotations

import uuid
from datetime import datetime
from email.utils import format_datetime
from typing import TYPE_CHECKING, Any

from ..errors import ApiError
from ..operation import Call, Reply
from ..responses import Outgoing
from ..products import product_json
from . import mutant, variant
from .auth import Authenticate, around_authenticate

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..auth import Principal
    from ..reference import Reference


@mutant("request-id-body-differs", reqs=["CONV-REQUEST-ID-BODY"],
        doc="Error bodies carry a requestId different from the x-request-id header.")
def _(ref: Reference) -> None:
    def differ(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict):
            out.body["requestId"] = out.request_id + "-body"

    ref.response_filters.append(differ)


@mutant("request-id-header-missing", reqs=["CONV-REQUEST-ID-HEADER"],
        doc="Successful responses have no x-request-id header.")
def _(ref: Reference) -> None:
    def drop(out: Outgoing) -> None:
        if out.status < 400:
            out.headers.pop("x-request-id", None)

    ref.response_filters.append(drop)


@mutant("error-body-retryable", reqs=["ERRBODY-NO-RETRYABLE"],
        doc="Error bodies carry a `retryable` field, which the spec says does not exist.")
def _(ref: Reference) -> None:
    def add(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict):
            out.body["retryable"] = out.status >= 500 or out.status == 429

    ref.response_filters.append(add)


@mutant("unknown-route-not-found", reqs=["ERR-ROUTE-NOT-FOUND"],
        doc="An unknown route answers 404 NOT_FOUND instead of ROUTE_NOT_FOUND.")
def _(ref: Reference) -> None:
    ref.route_not_found = lambda method, path: ApiError("NOT_FOUND", "Not found.")  # type: ignore[method-assign]


@mutant("org-ids-uuid", reqs=["CONV-ORGID-OPAQUE"],
        doc="Organizations get UUIDs (with hyphens) instead of CUID-shaped ids.")
def _(ref: Reference) -> None:
    ref.new_org_id = lambda: str(uuid.uuid4())


@mutant("org-alias-server-error", reqs=["CONV-ORGID-NO-ALIAS"],
        doc="`org_<orgId>` in a path is neither refused nor resolved: it answers 500 INTERNAL. (An `org_`-prefixed "
            "id as issued cannot be tried: the harness refuses such a target before any test runs.)")
def _(ref: Reference) -> None:
    @around_authenticate(ref)
    def _(original: Authenticate, request: Request) -> Principal:
        if str(request.path_params.get("orgId", "")).startswith("org_"):
            raise ApiError("INTERNAL", "Could not resolve the organization.")
        return original(request)


@variant("org-alias-resolved",
         doc="`org_<orgId>` in a path addresses the organization too: 'Not an `org_`-prefixed alias' describes the "
             "id to pass, it does not forbid a server from also resolving an alias.")
def _(ref: Reference) -> None:
    @around_authenticate(ref)
    def _(original: Authenticate, request: Request) -> Principal:
        params = request.path_params
        if str(params.get("orgId", "")).startswith("org_"):
            params["orgId"] = params["orgId"].removeprefix("org_")
        return original(request)


@mutant("product-read-across-orgs", reqs=["CONV-ORG-SCOPED"],
        doc="A product id of another organization reads under this organization's `{orgId}`.")
def _(ref: Reference) -> None:
    def wrap(original: Any) -> Any:
        def handler(call: Call) -> Reply:
            row = ref.store.one("SELECT * FROM products WHERE id = ? AND deleted_at IS NULL",
                                (call.params["productId"],))
            return Reply(200, product_json(row)) if row is not None else original(call)
        return handler

    ref.wrap_handler("getCheckoutProduct", wrap)


def _http_date(value: Any) -> Any:
    try:
        return format_datetime(datetime.fromisoformat(value), usegmt=True)
    except (TypeError, ValueError):
        return value


@mutant("instants-http-dates", reqs=["CONV-INSTANT-ISO8601"],
        doc="Instants in answers are HTTP dates (`Sun, 22 Nov 2026 15:00:00 GMT`) instead of ISO 8601.")
def _(ref: Reference) -> None:
    def rewrite(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: _http_date(v) if k.endswith("At") and isinstance(v, str) else rewrite(v)
                    for k, v in value.items()}
        if isinstance(value, list):
            return [rewrite(v) for v in value]
        return value

    def dates(out: Outgoing) -> None:
        if not out.is_error:
            out.body = rewrite(out.body)

    ref.response_filters.append(dates)
