"""Mutants of authentication and authorization (indistinguishable 401s, wrong organization, scopes, what a key
may and may not do)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..auth import KEY_FORMAT
from ..errors import ApiError
from ..operation import Reply
from . import mutant

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..auth import Principal
    from ..operation import Operation
    from ..reference import Reference


Authenticate = Callable[["Request"], "Principal"]


def around_authenticate(ref: Reference) -> Callable[[Callable[[Authenticate, Request], Principal]], None]:
    """Decorator: `f(original, request)` replaces this server's `ref.auth.authenticate`."""
    def install(wrapper: Callable[[Authenticate, Request], Principal]) -> None:
        original = ref.auth.authenticate
        ref.auth.authenticate = lambda request: wrapper(original, request)  # type: ignore[method-assign]
    return install


@mutant("revoked-key-distinct-type", reqs=["AUTH-REVOKED-KEY", "AUTH-INDISTINGUISHABLE"],
        doc="A revoked key answers 401 KEY_REVOKED instead of the same UNAUTHORIZED as an unknown key.")
def _(ref: Reference) -> None:
    @around_authenticate(ref)
    def _(original: Authenticate, request: Request) -> Principal:
        key = ref.auth.find_key(request.headers.get("x-api-key"))
        if key is not None and key.revoked:
            raise ApiError("KEY_REVOKED", "This API key was revoked.", status=401)
        return original(request)


@mutant("wrong-secret-distinct-detail", reqs=["AUTH-INDISTINGUISHABLE"],
        doc="A well-formed key whose public id exists but whose secret is wrong answers UNAUTHORIZED with a detail "
            "that differs from an unknown key's, telling which public ids exist.")
def _(ref: Reference) -> None:
    @around_authenticate(ref)
    def _(original: Authenticate, request: Request) -> Principal:
        try:
            return original(request)
        except ApiError as err:
            match = KEY_FORMAT.fullmatch(request.headers.get("x-api-key") or "")
            if err.type == "UNAUTHORIZED" and match is not None and ref.store.one(
                    "SELECT 1 FROM api_keys WHERE public_id = ?", (match.group(2),)) is not None:
                err.detail = "The API key's secret is wrong."
            raise


@mutant("wrong-org-404", reqs=["AUTH-WRONG-ORG-FORBIDDEN"],
        doc="A key used on another organization's path answers 404 NOT_FOUND instead of 403 FORBIDDEN.")
def _(ref: Reference) -> None:
    original = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        if principal.org_id != org_id:
            raise ApiError("NOT_FOUND", "No such organization.")
        original(principal, org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("key-refusals-403-on-writes", reqs=["AUTH-COMMON-401"],
        doc="On writes, a revoked, expired or pinned key is refused with 403 (same type) instead of 401.")
def _(ref: Reference) -> None:
    @around_authenticate(ref)
    def _(original: Authenticate, request: Request) -> Principal:
        try:
            return original(request)
        except ApiError as err:
            if err.status == 401 and request.method != "GET":
                err.status = 403
            raise


@mutant("api-key-writes-need-signature", reqs=["AUTH-NOTHING-SIGNED"],
        doc="A write with an API key and no signature is refused 401 SIGNATURE_REQUIRED: the key is not enough.")
def _(ref: Reference) -> None:
    @around_authenticate(ref)
    def _(original: Authenticate, request: Request) -> Principal:
        principal = original(request)
        if request.method != "GET" and "x-svc-signature" not in request.headers:
            raise ApiError("SIGNATURE_REQUIRED", "Sign this request.", status=401)
        return principal


@mutant("scopes-checked-on-first-request-only", reqs=["AUTH-SCOPES-ENFORCED"],
        doc="A key's scopes are enforced on its first request only; later requests may do anything.")
def _(ref: Reference) -> None:
    original = ref.auth.authorize
    seen: set[str] = set()
    every_scope = frozenset({"read", "write", "crypto_payouts", "refunds"})

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        if principal.key_id in seen:
            principal = dataclasses.replace(principal, scopes=every_scope)
        seen.add(principal.key_id)
        original(principal, org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("refunds-scope-not-enough", reqs=["AUTH-REFUNDS-SCOPE"],
        doc="A key with `refunds` and `write` is refused the refund route (INSUFFICIENT_SCOPE) like any other key.")
def _(ref: Reference) -> None:
    _needs_scope(ref, "refundCheckoutPayment", "admin")


@mutant("approval-queue-needs-write", reqs=["AUTH-KEY-MAY-READ"],
        doc="Reading the approval queue needs the `write` scope: a read-only key gets INSUFFICIENT_SCOPE.")
def _(ref: Reference) -> None:
    _needs_scope(ref, "listPayoutApprovals", "write")


@mutant("api-key-replays-deliveries", reqs=["AUTH-KEY-CANNOT-PRIVILEGED"],
        doc="An API key may bulk-replay a webhook endpoint's deliveries (202) instead of being refused.")
def _(ref: Reference) -> None:
    ref.wrap_handler("replayWebhookDeliveries", lambda original: lambda call: Reply(202, {"requeued": 0}))


def _needs_scope(ref: Reference, op_id: str, scope: str) -> None:
    op = ref.operations[op_id]
    ref.operations[op_id] = dataclasses.replace(op, scopes=(*op.scopes, scope))
