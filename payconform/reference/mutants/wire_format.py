"""Mutants of the Conventions: the fixed prefix, the JSON wire format, request ids, organization and other
ids, money as decimal strings, instants with a timezone.

Most are response filters (`ref.response_filters`): they change one thing on the way out.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator

from starlette.datastructures import QueryParams

from ..operation import Call, Reply
from ..reference import API_PREFIX
from ..responses import Outgoing
from . import mutant

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Receive, Scope, Send

    from ..auth import Principal
    from ..errors import ApiError
    from ..operation import Operation
    from ..reference import Reference

Handler = Callable[[Call], Reply]


def objects(value: Any) -> Iterator[dict]:
    """Every JSON object inside ``value``, outermost first."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from objects(item)


def wrap_handlers(ref: Reference, wrap: Callable[[Handler], Handler], only: Callable[[Operation], bool]) -> None:
    """Wrap the handler of every operation ``only`` selects."""
    for op_id, op in list(ref.operations.items()):
        if only(op):
            ref.wrap_handler(op_id, wrap)


@mutant("api-served-outside-prefix", reqs=["CONV-PREFIX"],
        doc="The API also answers without the /business/api/v1 prefix: a route's path sent to the host root is served.")
def _(ref: Reference) -> None:
    original = ref.error_response

    def error_response(request: Request, err: ApiError) -> Response:
        if err.type != "ROUTE_NOT_FOUND" or request.url.path.startswith(API_PREFIX + "/"):
            return original(request, err)

        async def serve_under_prefix(scope: Scope, receive: Receive, send: Send) -> None:
            rerouted = {**scope, "path": API_PREFIX + scope["path"],
                        "raw_path": API_PREFIX.encode() + scope.get("raw_path", b"")}
            await scope["app"](rerouted, receive, send)

        return serve_under_prefix  # type: ignore[return-value]

    ref.error_response = error_response  # type: ignore[method-assign]


@mutant("error-content-type-text-plain", reqs=["CONV-JSON-CONTENT-TYPE"],
        doc="Error answers carry `content-type: text/plain` (the body is still JSON).")
def _(ref: Reference) -> None:
    def text_plain(out: Outgoing) -> None:
        if out.is_error:
            out.headers["content-type"] = "text/plain; charset=utf-8"

    ref.response_filters.append(text_plain)


@mutant("success-content-type-text-plain", reqs=["CONV-JSON-CONTENT-TYPE"],
        doc="Successful answers carry `content-type: text/plain` (the body is still JSON).")
def _(ref: Reference) -> None:
    def text_plain(out: Outgoing) -> None:
        if not out.is_error:
            out.headers["content-type"] = "text/plain; charset=utf-8"

    ref.response_filters.append(text_plain)


@mutant("malformed-json-500", reqs=["CONV-JSON-CONTENT-TYPE"],
        doc="A request body that is not JSON escapes as an unhandled exception: 500 INTERNAL instead of a 4xx.")
def _(ref: Reference) -> None:
    def wrap(handler: Handler) -> Handler:
        def run(call: Call) -> Reply:
            json.loads(call.raw_body)
            return handler(call)
        return run

    wrap_handlers(ref, wrap, lambda op: op.takes_body)


@mutant("request-id-header-missing-on-errors", reqs=["CONV-REQUEST-ID-HEADER"],
        doc="Error answers have no x-request-id header (the body still carries requestId).")
def _(ref: Reference) -> None:
    def drop(out: Outgoing) -> None:
        if out.is_error:
            out.headers.pop("x-request-id", None)

    ref.response_filters.append(drop)


@mutant("request-id-constant", reqs=["CONV-REQUEST-ID-HEADER"],
        doc="Every answer carries the same request id (header and error body agree), so it names no request.")
def _(ref: Reference) -> None:
    def constant(out: Outgoing) -> None:
        out.headers["x-request-id"] = "req_00000000"
        if out.is_error and isinstance(out.body, dict):
            out.body["requestId"] = "req_00000000"

    ref.response_filters.append(constant)


@mutant("org-id-needs-alias", reqs=["CONV-ORGID-UNCHANGED"],
        doc="Organization-scoped paths want an `org_`-prefixed alias: the id as issued is refused with 403 FORBIDDEN.")
def _(ref: Reference) -> None:
    original = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        original(principal, org_id.removeprefix("org_") if org_id.startswith("org_") else "org_" + org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("ids-returned-uppercased", reqs=["CONV-IDS-OPAQUE"],
        doc="Answers carry the resource `id` upper-cased, so the id as returned does not find the resource again.")
def _(ref: Reference) -> None:
    def upper(out: Outgoing) -> None:
        if not out.is_error and isinstance(out.body, dict) and isinstance(out.body.get("id"), str):
            out.body["id"] = out.body["id"].upper()

    ref.response_filters.append(upper)


def _timezone_less(value: str) -> bool:
    try:
        return "T" in value and datetime.fromisoformat(value).tzinfo is None
    except ValueError:
        return False


@mutant("naive-instants-accepted", reqs=["CONV-INSTANT-TIMEZONE"],
        doc="An instant filter without a timezone is accepted and read as UTC instead of 400 VALIDATION_ERROR.")
def _(ref: Reference) -> None:
    def wrap(handler: Handler) -> Handler:
        def run(call: Call) -> Reply:
            call.query_params = QueryParams(
                [(k, v + "Z" if _timezone_less(v) else v) for k, v in call.query_params.multi_items()])
            return handler(call)
        return run

    wrap_handlers(ref, wrap, lambda op: True)


@mutant("unit-amount-as-number", reqs=["CONV-MONEY-DECIMAL-STRING", "PROD-FIELDS"],
        doc="Products answer `unitAmount` as a JSON number (150.0) instead of a decimal string.")
def _(ref: Reference) -> None:
    def as_number(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "archived" in obj and isinstance(obj.get("unitAmount"), str):
                obj["unitAmount"] = float(obj["unitAmount"])

    ref.response_filters.append(as_number)


@mutant("balance-figures-as-numbers", reqs=["CONV-MONEY-DECIMAL-STRING"],
        doc="GET balance answers its figures as JSON numbers instead of decimal strings.")
def _(ref: Reference) -> None:
    def as_numbers(out: Outgoing) -> None:
        if not out.is_error and isinstance(out.body, dict) and "balances" in out.body:
            for obj in objects([out.body["balances"], out.body.get("provider")]):
                if isinstance(obj.get("amount"), str):
                    obj["amount"] = float(obj["amount"])

    ref.response_filters.append(as_numbers)


@mutant("payout-amounts-as-numbers", reqs=["CONV-MONEY-DECIMAL-STRING"],
        doc="Payouts answer `sourceAmount` and `destinationAmount` as JSON numbers instead of decimal strings.")
def _(ref: Reference) -> None:
    def as_numbers(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "payoutId" in obj:
                for name in ("sourceAmount", "destinationAmount"):
                    if isinstance(obj.get(name), str):
                        obj[name] = float(obj[name])

    ref.response_filters.append(as_numbers)
