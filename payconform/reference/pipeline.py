"""The order every API call goes through, around the route's handler.

IP ceiling -> authenticate (401; Mode B signed requests in `signing.py`, which may answer the 202
challenge) -> per-credential rate limit (429) -> organization and scope checks
(403 / live-mode 400) -> idempotency (replay, conflicts, duplicate guard) -> injected faults -> the
handler in one database transaction. A refusal at any step stops there: nothing later runs. Audited
operations write one audit row per call once the caller is known to belong to the organization.

Every step is looked up on the Reference at call time (`ref.auth.authenticate`, `ref.idempotency.run`,
`ref.operations[op_id]`, ...), so a mutant that replaces an instance attribute changes the behaviour.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from starlette.requests import Request
from starlette.responses import Response

from .core.audit import AuditLog
from .authentication.auth import Auth
from .core.clock import Clock
from .core.errors import ApiError
from .core.faults import Faults
from .core.incoming import client_host, read_body
from .core.operation import Call, Operation, Reply
from .limits.ratelimit import RateLimiter
from .core.requestid import request_id_of

if TYPE_CHECKING:
    from .authentication.auth import Principal
    from .conventions.idempotency import Idempotency, Settle
    from .authentication.signing import Signing
    from .core.store import Store

log = logging.getLogger("payconform.reference")


class PipelineServer(Protocol):
    """What the pipeline reaches around a handler, each looked up at call time (mutants replace them)."""

    operations: Mapping[str, Operation]
    store: Store
    clock: Clock
    auth: Auth
    signing: Signing
    ratelimit: RateLimiter
    idempotency: Idempotency
    faults: Faults
    audit: AuditLog

    def respond(self, request: Request, status: int, body: Any, headers: dict[str, str] | None = None,
                *, is_error: bool = False) -> Response: ...

    def error_response(self, request: Request, err: ApiError) -> Response: ...


async def handle(ref: PipelineServer, op_id: str, request: Request) -> Response:
    """Run one API call and turn its outcome (reply or error) into the response."""
    try:
        reply = await _run(ref, op_id, request)
    except ApiError as err:
        return ref.error_response(request, err)
    return ref.respond(request, reply.status, reply.body)


def as_api_error(exc: BaseException, what: str, request_id: str) -> ApiError:
    """Anything unexpected becomes 500 INTERNAL with the error body; the traceback goes to the log only."""
    if isinstance(exc, ApiError):
        return exc
    log.error("unhandled error in %s (request %s)", what, request_id, exc_info=exc)
    return ApiError("INTERNAL", "An unexpected error occurred; nothing was recorded.")


async def _run(ref: PipelineServer, op_id: str, request: Request) -> Reply:
    op = ref.operations[op_id]
    rid = request_id_of(request)
    ref.ratelimit.check_ip(client_host(request))
    principal = await _principal(ref, op, request)
    org_id = request.path_params.get("orgId", principal.org_id)
    call = Call(
        ref=ref, op=op, request_id=rid, principal=principal, org_id=org_id, path=request.url.path,
        params=dict(request.path_params), query_params=request.query_params, headers=request.headers,
        raw_body=b"", now=ref.clock.now(principal.org_id),
    )
    audited = op.audit is not None and principal.org_id == org_id
    try:
        ref.auth.authorize(principal, org_id, op)
        if op.takes_body:
            call.raw_body = await read_body(request)
        reply = await ref.idempotency.run(call, lambda settle=None: _execute(ref, call, settle))
    except Exception as exc:
        err = as_api_error(exc, op_id, rid)
        if audited:
            _audit(ref, call, "refused", err.type, None)
        raise err from None
    if audited and not reply.replayed:
        _audit(ref, call, "succeeded", None, reply.resource_id)
    return reply


async def _principal(ref: PipelineServer, op: Operation, request: Request) -> Principal:
    """Who calls: the credential (401s), then its rate limits; on a route authorized by a bearer token in its
    path instead (a hosted payout link), whom the token acts for (`op.bearer` applies that route's limit)."""
    if op.bearer is not None:
        return op.bearer(ref, request)
    signed = ref.signing.applies(request)  # Mode B: the key header names a signing key
    principal = await ref.signing.authenticate(request) if signed else ref.auth.authenticate(request)
    ref.ratelimit.check_key(principal)
    ref.ratelimit.check_operation(principal, op.op_id)
    return principal


async def _execute(ref: PipelineServer, call: Call[PipelineServer], settle: Settle | None = None) -> Reply:
    """The handler in one transaction; ``settle`` records its outcome for the idempotency key in that same
    transaction (a refusal that keeps its writes included), so the writes and the key commit together."""
    await ref.faults.before_handler(call.org_id, call.op.op_id)
    with ref.store.tx():
        try:
            reply = call.op.handler(call)
        except ApiError as err:
            if settle is not None and err.keeps_writes:
                settle(err)
            raise
        ref.faults.before_commit(call.org_id, call.op.op_id)
        if settle is not None:
            settle(reply)
    ref.faults.after_handler(call.org_id, call.op.op_id)
    return reply


def _audit(ref: PipelineServer, call: Call[PipelineServer], outcome: str, error_type: str | None,
           resource_id: str | None) -> None:
    path_ids = [v for k, v in call.params.items() if k != "orgId"]
    ref.audit.record(
        org_id=call.org_id, mode=call.mode, action=call.op.audit or "", request_id=call.request_id,
        resource_id=resource_id or (path_ids[0] if path_ids else None), outcome=outcome,
        error_type=error_type, api_key_prefix=call.principal.prefix,
    )
