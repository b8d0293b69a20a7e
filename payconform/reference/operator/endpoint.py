"""How an operator route runs: the token, the JSON body, one transaction, dispatching, the refusal audit.

Every route but `/health` needs header `x-operator-token` (compared in constant time). A handler takes the
server, the request and the body (an object, `{}` when empty) and answers `(status, JSON)`; it runs in
one database transaction. Routes marked `dispatch` run the organization's due webhook deliveries before
answering, so a test sees them at once. Operator answers bypass the response filters (`ref.respond`):
mutants and variants change the API under test, not the test infrastructure.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from ..core.errors import ApiError
from ..core.operation import parse_json
from ..core.orgs import get_org
from ..pipeline import as_api_error
from ..core.requestid import request_id_of
from ..core.validate import require_object
from .audit import OperatorAudit

if TYPE_CHECKING:
    from .server import OperatorServer

OperatorHandler = Callable[["OperatorServer", Request, dict[str, Any]], tuple[int, Any]]


@dataclass(frozen=True)
class OperatorRoute:
    path: str  # below OPERATOR_PREFIX
    handler: OperatorHandler
    method: str
    dispatch: bool = False  # run the organization's due deliveries before answering


def org_of(ref: OperatorServer, request: Request) -> str:
    """The `{orgId}` of an operator path, which must name an organization."""
    org_id = request.path_params["orgId"]
    if get_org(ref.store, org_id) is None:
        raise ApiError("NOT_FOUND", "No such organization.")
    return org_id


def guarded(ref: OperatorServer, route: OperatorRoute,
            audit: OperatorAudit | None) -> Callable[[Request], Awaitable[Response]]:
    """The Starlette endpoint of one operator route."""
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
                status, answer = route.handler(ref, request, body)
            if route.dispatch:
                await ref.dispatcher.flush(request.path_params["orgId"])
        except Exception as exc:
            err = as_api_error(exc, request.url.path, request_id_of(request))
            if audit is not None and authorized:
                audit.refused(ref, request, err)
            return ref.error_response(request, err)
        if audit is not None:
            audit.succeeded(ref, request, answer)
        return ref.respond(request, status, answer)

    return endpoint


async def health(request: Request) -> Response:
    ref: OperatorServer = request.app.state.reference
    return ref.respond(request, 200, {"ok": True})
