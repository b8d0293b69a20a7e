"""The request id: one per request, created on first use and kept in the ASGI scope's state.

Every response carries it as `x-request-id` and every error body as `requestId`; keeping it on the
scope means the route, the error handlers and the catch-all for unexpected exceptions all agree.
"""

from __future__ import annotations

from starlette.requests import Request

from . import ids


def request_id_of(request: Request) -> str:
    rid = getattr(request.state, "request_id", None)
    if rid is None:
        rid = ids.request_id()
        request.state.request_id = rid
    return rid
