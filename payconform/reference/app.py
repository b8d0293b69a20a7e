"""Build the Starlette application of one Reference: API routes, operator routes, error handlers, and the
deployment's own OpenAPI document at `/openapi.json` (outside the API prefix, no credential)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from . import openapi, operator
from .core.errors import ApiError
from .core.exchange_log import OPERATION
from .core.incoming import client_host
from .pipeline import handle
from .reference import API_PREFIX, OPERATOR_PREFIX, Reference
from .routes import public_page


def _literal_first(path: str) -> tuple[int, ...]:
    """Sort key: at the first differing segment a literal beats a `{param}`.

    So `/payouts/batches` is tried before `/payouts/{payoutId}`.
    """
    return tuple(1 if seg.startswith("{") else 0 for seg in path.strip("/").split("/"))


def _endpoint(ref: Reference, op_id: str):  # noqa: ANN202 - a Starlette endpoint
    async def endpoint(request: Request) -> Response:
        request.scope[OPERATION] = op_id  # for the exchange log: the router matched this operation
        return await handle(ref, op_id, request)

    endpoint.__name__ = op_id
    return endpoint


def build_app(ref: Reference) -> Starlette:
    ops = sorted(ref.operations.values(), key=lambda op: _literal_first(op.path))
    routes: list[BaseRoute] = [
        Route(API_PREFIX + op.path, _endpoint(ref, op.op_id), methods=[op.method]) for op in ops
    ]
    routes += operator.routes(ref)
    routes += public_page.routes(ref)  # the checkout link pages at `shareUrl`, outside the API prefix

    async def openapi_document(request: Request) -> Response:
        return JSONResponse(openapi.document(ref.operations, ref.choices, API_PREFIX))

    routes.append(Route("/openapi.json", openapi_document, methods=["GET"]))

    async def not_found(request: Request, exc: Exception) -> Response:
        """404 and 405 from the router: no route matches this path and method."""
        try:
            if not request.url.path.startswith(OPERATOR_PREFIX):
                ref.ratelimit.check_ip(client_host(request))
            err = ref.route_not_found(request.method, request.url.path)
        except ApiError as refused:
            err = refused
        return ref.error_response(request, err)

    async def unexpected(request: Request, exc: Exception) -> Response:
        """Last resort outside the pipeline; Starlette re-raises afterwards, so the server logs the traceback."""
        return ref.error_response(request, ApiError("INTERNAL", "An unexpected error occurred."))

    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found, Exception: unexpected})
    app.router.redirect_slashes = False
    app.state.reference = ref
    return app
