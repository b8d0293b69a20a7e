"""Mutants of the Resources: the error body's fields, the recipient and its methods, the checkout product."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable

from starlette.responses import PlainTextResponse

from ..requestid import request_id_of
from ..responses import Outgoing
from . import mutant
from .wire_format import objects

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..errors import ApiError
    from ..operation import Call, Reply
    from ..reference import Reference


def _error_filter(ref: Reference, change: Callable[[dict], Any]) -> None:
    """Apply ``change(body)`` to every error body on its way out."""
    def apply(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict):
            change(out.body)

    ref.response_filters.append(apply)


@mutant("error-status-as-string", reqs=["ERRBODY-STATUS-MATCHES"],
        doc="Error bodies carry `status` as a string (\"404\") instead of an integer.")
def _(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.update(status=str(body["status"])))


@mutant("error-detail-null", reqs=["ERRBODY-SHAPE"], doc="Error bodies carry `detail: null` instead of a string.")
def _(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.update(detail=None))


@mutant("error-type-lowercase", reqs=["ERRBODY-TYPE-BRANCH"],
        doc="Error bodies carry the `type` in lower case (`not_found`), which is no documented type.")
def _(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.update(type=str(body["type"]).lower()))


@mutant("error-resolution-object", reqs=["ERRBODY-RESOLUTION"],
        doc="Error bodies carry `resolution` as an object instead of a string.")
def _(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.update(resolution={"action": "fix the request and retry"}))


@mutant("validation-errors-missing", reqs=["ERRBODY-ERRORS-FIELDS"],
        doc="VALIDATION_ERROR bodies carry no `errors` array naming the fields that failed.")
def _(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.pop("errors", None) if body.get("type") == "VALIDATION_ERROR" else None)


@mutant("unknown-route-plain-text", reqs=["ERRBODY-ALL-FAILURES"],
        doc="An unknown route answers a framework's plain-text `404 Not Found` instead of the error body.")
def _(ref: Reference) -> None:
    original = ref.error_response

    def error_response(request: Request, err: ApiError) -> Response:
        if err.type != "ROUTE_NOT_FOUND":
            return original(request, err)
        return PlainTextResponse("Not Found", status_code=404, headers={"x-request-id": request_id_of(request)})

    ref.error_response = error_response  # type: ignore[method-assign]


@mutant("recipient-type-uppercase", reqs=["RCP-FIELDS"],
        doc="Recipients answer `type` upper-cased (`INDIVIDUAL`) instead of `individual` or `business`.")
def _(ref: Reference) -> None:
    def upper(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "paymentMethods" in obj and isinstance(obj.get("type"), str):
                obj["type"] = obj["type"].upper()

    ref.response_filters.append(upper)


@mutant("method-kind-bank", reqs=["RCP-METHOD-FIELDS"],
        doc="A recipient's `paymentMethods[].kind` is answered as `bank` instead of `fiat` or `crypto`.")
def _(ref: Reference) -> None:
    def bank(out: Outgoing) -> None:
        for obj in objects(out.body):
            for method in obj.get("paymentMethods") or []:
                method["kind"] = "bank"

    ref.response_filters.append(bank)


@mutant("method-details-kind-bank", reqs=["RCP-METHOD-DETAILS-KIND"],
        doc="A method's details read answers `kind: bank` instead of `fiat` or `crypto`.")
def _(ref: Reference) -> None:
    def wrap(handler: Callable[[Call], Reply]) -> Callable[[Call], Reply]:
        def run(call: Call) -> Reply:
            reply = handler(call)
            return dataclasses.replace(reply, body={**reply.body, "kind": "bank"})
        return run

    ref.wrap_handler("getBeneficiaryMethodDetails", wrap)


@mutant("product-archived-as-string", reqs=["PROD-FIELDS"],
        doc="Products answer `archived` as a string (\"false\") instead of a boolean.")
def _(ref: Reference) -> None:
    def as_string(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "unitAmount" in obj and isinstance(obj.get("archived"), bool):
                obj["archived"] = str(obj["archived"]).lower()

    ref.response_filters.append(as_string)
