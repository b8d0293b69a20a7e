"""Mutants of the Conventions and the error body (request id, `retryable`, unknown routes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ApiError
from ..responses import Outgoing
from . import mutant

if TYPE_CHECKING:
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
