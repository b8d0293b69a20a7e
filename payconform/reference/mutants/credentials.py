"""Mutants of API-key credentials (Resources > API key; Authentication > Mode A; Endpoints rule 1): the key
header and format, the 401s, revocation, the 403s, scopes, expiry, pinning and the sandbox of a test key.

Each wraps `ref.auth.authenticate`, `ref.auth.authorize`, `ref.auth.find_key` or `ref.auth.issue` of this
server instance, or changes one of the key-issuing rules on `ref.auth`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, NoReturn

from ..auth import KEY_FORMAT, SCOPES, KeyRecord, Principal, _record, unauthorized
from ..errors import ApiError, field_error
from ..operation import WRITE_METHODS
from ..orgs import get_org
from . import mutant

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..operation import Call, Operation, Reply
    from ..reference import Reference

Authenticate = Callable[["Request"], Principal]
Authorize = Callable[[Principal, str, "Operation"], None]


def _principal(key: KeyRecord) -> Principal:
    return Principal(key.id, key.org_id, key.mode, key.prefix, key.scopes)


def _key_row(ref: Reference, public_id: str) -> KeyRecord | None:
    row = ref.store.one("SELECT * FROM api_keys WHERE public_id = ?", (public_id,))
    return _record(row) if row is not None else None


def _on_auth_error(ref: Reference, handle: Callable[[Request, ApiError], Principal]) -> None:
    """`authenticate` answers `handle(request, err)` instead of raising `err`."""
    original: Authenticate = ref.auth.authenticate

    def authenticate(request: Request) -> Principal:
        try:
            return original(request)
        except ApiError as err:
            return handle(request, err)

    ref.auth.authenticate = authenticate  # type: ignore[method-assign]


def _on_authz_error(ref: Reference, handle: Callable[[Principal, str, Operation, ApiError], None]) -> None:
    """`authorize` calls `handle(principal, org_id, op, err)` instead of raising `err`."""
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        try:
            original(principal, org_id, op)
        except ApiError as err:
            handle(principal, org_id, op, err)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


def _reraise(err: ApiError) -> NoReturn:
    raise err


# -- the key header and its format ------------------------------------------------------------------


class _BearerRequest:
    """The request as `authenticate` reads it, with `x-api-key` taken from `Authorization: Bearer`."""

    def __init__(self, request: Request) -> None:
        bearer = request.headers.get("authorization", "")
        self.headers = {"x-api-key": bearer[7:]} if bearer.lower().startswith("bearer ") else {}
        self.client = request.client


@mutant("api-key-header-ignored", reqs=["AUTH-KEY-HEADER"],
        doc="The key is read from `Authorization: Bearer` only; a key in `x-api-key` answers UNAUTHORIZED.")
def _(ref: Reference) -> None:
    original: Authenticate = ref.auth.authenticate
    ref.auth.authenticate = lambda request: original(_BearerRequest(request))  # type: ignore[method-assign,arg-type]


@mutant("key-format-padded-secret", reqs=["KEY-FORMAT"],
        doc="Keys are issued with a padded 44-character secret (`=` appended), not a 43-character base64url one.")
def _(ref: Reference) -> None:
    issue, find_key = ref.auth.issue, ref.auth.find_key

    def padded(*args: object, **kwargs: object) -> tuple[KeyRecord, str]:
        key, raw = issue(*args, **kwargs)  # type: ignore[arg-type]
        return key, raw + "="

    def find(raw: str | None) -> KeyRecord | None:
        return find_key(raw[:-1] if raw and raw.endswith("=") else raw)

    ref.auth.issue = padded  # type: ignore[method-assign]
    ref.auth.find_key = find  # type: ignore[method-assign]


@mutant("key-prefix-ignored", reqs=["KEY-PREFIX-IN-CREDENTIAL"],
        doc="A key is found by its public id and secret alone: without its `svc_test_` prefix, or with the other "
            "mode's prefix, it still authenticates.")
def _(ref: Reference) -> None:
    find_key = ref.auth.find_key
    loose = re.compile(r"^(?:svc_(?:test|live)_)?([0-9a-f]{32})_([A-Za-z0-9_-]{43})$")

    def find(raw: str | None) -> KeyRecord | None:
        match = loose.match(raw or "")
        key = _key_row(ref, match.group(1)) if match else None
        return find_key(f"{key.prefix}_{match.group(2)}") if key and match else find_key(raw)

    ref.auth.find_key = find  # type: ignore[method-assign]


# -- the 401s ---------------------------------------------------------------------------------------


@mutant("missing-key-403", reqs=["AUTH-MISSING-KEY", "ERR-UNAUTHORIZED"],
        doc="A request without `x-api-key` answers 403 FORBIDDEN instead of 401 UNAUTHORIZED.")
def _(ref: Reference) -> None:
    def handle(request: Request, err: ApiError) -> Principal:
        if "x-api-key" not in request.headers:
            raise ApiError("FORBIDDEN", "An API key is required.")
        raise err

    _on_auth_error(ref, handle)


@mutant("malformed-key-400", reqs=["AUTH-MALFORMED-KEY", "ERR-UNAUTHORIZED"],
        doc="A key that is not in the documented format answers 400 VALIDATION_ERROR instead of 401 UNAUTHORIZED.")
def _(ref: Reference) -> None:
    def handle(request: Request, err: ApiError) -> Principal:
        raw = request.headers.get("x-api-key")
        if raw is not None and not KEY_FORMAT.fullmatch(raw):
            raise field_error("x-api-key", "not a key of the documented format")
        raise err

    _on_auth_error(ref, handle)


@mutant("unknown-key-forbidden", reqs=["AUTH-UNKNOWN-KEY"],
        doc="A well-formed key that names no key answers 403 FORBIDDEN instead of 401 UNAUTHORIZED.")
def _(ref: Reference) -> None:
    def handle(request: Request, err: ApiError) -> Principal:
        raw = request.headers.get("x-api-key") or ""
        if err.type == "UNAUTHORIZED" and KEY_FORMAT.fullmatch(raw) and ref.auth.find_key(raw) is None:
            raise ApiError("FORBIDDEN", "No such API key.")
        raise err

    _on_auth_error(ref, handle)


@mutant("key-secret-not-verified", reqs=["AUTH-INCOMPLETE-KEY", "AUTH-WRONG-KEY"],
        doc="A key is found by its prefix and public id; a missing, truncated or wrong secret is not checked.")
def _(ref: Reference) -> None:
    find_key = ref.auth.find_key
    public = re.compile(r"^svc_(test|live)_([0-9a-f]{32})")

    def find(raw: str | None) -> KeyRecord | None:
        match = public.match(raw or "")
        return find_key(raw) or (_key_row(ref, match.group(2)) if match else None)

    ref.auth.find_key = find  # type: ignore[method-assign]


@mutant("revocation-cached", reqs=["AUTH-REVOCATION-IMMEDIATE"],
        doc="A key once accepted is cached and keeps working after its revocation.")
def _(ref: Reference) -> None:
    find_key = ref.auth.find_key
    cache: dict[str, KeyRecord] = {}

    def find(raw: str | None) -> KeyRecord | None:
        if raw in cache:
            return cache[raw]
        key = find_key(raw)
        if raw and key is not None and not key.revoked:
            cache[raw] = key
        return key

    ref.auth.find_key = find  # type: ignore[method-assign]


@mutant("expired-key-unauthorized", reqs=["AUTH-KEY-EXPIRED", "ERR-KEY-EXPIRED"],
        doc="An expired key answers 401 UNAUTHORIZED instead of KEY_EXPIRED.")
def _(ref: Reference) -> None:
    _on_auth_error(ref, lambda request, err: _reraise(unauthorized() if err.type == "KEY_EXPIRED" else err))


@mutant("pinning-ignored", reqs=["AUTH-KEY-IP-PINNED", "ERR-KEY-IP-NOT-ALLOWED", "KEY-PINNING"],
        doc="A pinned key works from any address.")
def _(ref: Reference) -> None:
    def handle(request: Request, err: ApiError) -> Principal:
        key = ref.auth.find_key(request.headers.get("x-api-key"))
        if err.type == "KEY_IP_NOT_ALLOWED" and key is not None:
            return _principal(key)
        raise err

    _on_auth_error(ref, handle)


@mutant("pinned-key-refused-everywhere", reqs=["KEY-PINNING"],
        doc="A pinned key answers KEY_IP_NOT_ALLOWED even from an address on its allowlist.")
def _(ref: Reference) -> None:
    original: Authenticate = ref.auth.authenticate

    def authenticate(request: Request) -> Principal:
        principal = original(request)
        key = ref.auth.find_key(request.headers.get("x-api-key"))
        if key is not None and key.pinned_ips:
            raise ApiError("KEY_IP_NOT_ALLOWED")
        return principal

    ref.auth.authenticate = authenticate  # type: ignore[method-assign]


# -- the 403s ---------------------------------------------------------------------------------------


@mutant("wrong-org-unauthorized", reqs=["AUTH-WRONG-ORG-FORBIDDEN", "ERR-FORBIDDEN"],
        doc="A key used on another organization's path answers 401 UNAUTHORIZED instead of 403 FORBIDDEN.")
def _(ref: Reference) -> None:
    def handle(principal: Principal, org_id: str, op: Operation, err: ApiError) -> None:
        raise unauthorized() if principal.org_id != org_id else err

    _on_authz_error(ref, handle)


@mutant("suspended-org-works", reqs=["AUTH-ACCOUNT-BLOCKED", "ERR-ACCOUNT-BLOCKED"],
        doc="The keys of a suspended organization keep working instead of answering ACCOUNT_BLOCKED.")
def _(ref: Reference) -> None:
    _on_authz_error(ref, lambda principal, org_id, op, err: None if err.type == "ACCOUNT_BLOCKED" else _reraise(err))


@mutant("live-key-writes-unverified-org", reqs=["AUTH-LIVE-UNAPPROVED-WRITE", "ERR-LIVE-KEY-ORG-NOT-APPROVED"],
        doc="A live key writes to an organization whose verification is not approved.")
def _(ref: Reference) -> None:
    _on_authz_error(ref, lambda principal, org_id, op, err:
                    None if err.type == "LIVE_KEY_ORG_NOT_APPROVED" else _reraise(err))


@mutant("live-key-reads-refused-unverified", reqs=["AUTH-LIVE-UNAPPROVED-READS-WORK"],
        doc="A live key of an organization not yet verified is refused LIVE_KEY_ORG_NOT_APPROVED on reads too.")
def _(ref: Reference) -> None:
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        original(principal, org_id, op)
        org = get_org(ref.store, org_id)
        if principal.mode == "live" and org is not None and not org.verified:
            raise ApiError("LIVE_KEY_ORG_NOT_APPROVED")

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("read-only-key-may-write", reqs=["AUTH-READ-ONLY-NO-SPEND", "AUTH-COMMON-403", "ERR-INSUFFICIENT-SCOPE",
                                         "KEY-SCOPES"],
        doc="A read-only key writes and spends: the `write` scope is not checked.")
def _(ref: Reference) -> None:
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        original(dataclasses.replace(principal, scopes=principal.scopes | {"write"}), org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("read-only-key-reads-refused", reqs=["AUTH-READ-ONLY-NO-SPEND", "AUDIT-READ-ONLY-KEY"],
        doc="A key without `write` is refused INSUFFICIENT_SCOPE on reads too, so it cannot reconcile.")
def _(ref: Reference) -> None:
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        if "write" not in principal.scopes:
            raise ApiError("INSUFFICIENT_SCOPE", "This key lacks the write scope.")
        original(principal, org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


_refusal: ContextVar[ApiError | None] = ContextVar("refusal", default=None)  # the request's postponed refusal


def _run_then_refuse(ref: Reference, *, at_home: bool = False) -> None:
    """`idempotency.run` runs the call, then raises the refusal postponed for this request, if any; `at_home`
    runs it in the key's own organization instead of the one in the path."""
    run = ref.idempotency.run

    async def run_then_refuse(call: Call, execute: Callable) -> Reply:  # type: ignore[type-arg]
        refused = _refusal.get()
        if refused is not None and at_home:
            call.org_id = call.principal.org_id
        reply = await run(call, execute)
        if refused is not None:
            raise refused
        return reply

    ref.idempotency.run = run_then_refuse  # type: ignore[method-assign]


@mutant("refused-write-runs", reqs=["AUTH-REFUSED-NOTHING-RAN"],
        doc="A write refused with a 401 or 403 runs its handler anyway; the refusal is answered afterwards.")
def _(ref: Reference) -> None:
    authenticate: Authenticate = ref.auth.authenticate

    def lenient_authenticate(request: Request) -> Principal:
        _refusal.set(None)
        try:
            return authenticate(request)
        except ApiError as err:
            if request.method not in WRITE_METHODS:
                raise
            _refusal.set(err)
            return Principal("", request.path_params["orgId"], "test", "", frozenset(SCOPES))

    def postpone(principal: Principal, org_id: str, op: Operation, err: ApiError) -> None:
        if not op.is_write or err.status != 403:
            raise err
        _refusal.set(_refusal.get() or err)

    ref.auth.authenticate = lenient_authenticate  # type: ignore[method-assign]
    _on_authz_error(ref, postpone)
    _run_then_refuse(ref)


@mutant("wrong-org-write-runs-at-home", reqs=["AUTH-REFUSED-NOTHING-RAN"],
        doc="A write addressed to another organization runs in the key's own organization, then answers 403 "
            "FORBIDDEN.")
def _(ref: Reference) -> None:
    authorize: Authorize = ref.auth.authorize

    def lenient_authorize(principal: Principal, org_id: str, op: Operation) -> None:
        _refusal.set(None)
        if not op.is_write or principal.org_id == org_id:
            return authorize(principal, org_id, op)
        try:
            authorize(principal, org_id, op)
        except ApiError as err:
            _refusal.set(err)
        return authorize(principal, principal.org_id, op)

    ref.auth.authorize = lenient_authorize  # type: ignore[method-assign]
    _run_then_refuse(ref, at_home=True)


# -- scopes, expiry and the sandbox -----------------------------------------------------------------


def _scope_grants_write(ref: Reference, scope: str) -> None:
    """Issuing accepts `scope` without `write`, and a key holding `scope` may write."""
    ref.auth.write_only_scopes = ref.auth.write_only_scopes - {scope}
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        scopes = principal.scopes | {"write"} if scope in principal.scopes else principal.scopes
        original(dataclasses.replace(principal, scopes=scopes), org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("crypto-scope-without-write", reqs=["KEY-CRYPTO-NEEDS-WRITE"],
        doc="A key may be issued with `crypto_payouts` but no `write`, and that scope then lets it write.")
def _(ref: Reference) -> None:
    _scope_grants_write(ref, "crypto_payouts")


@mutant("refunds-scope-without-write", reqs=["KEY-REFUNDS-NEEDS-WRITE"],
        doc="A key may be issued with `refunds` but no `write`, and that scope then lets it write.")
def _(ref: Reference) -> None:
    _scope_grants_write(ref, "refunds")


@mutant("key-default-expiry-two-years", reqs=["KEY-EXPIRY-DEFAULT", "KEY-EXPIRY-LIMIT"],
        doc="A key issued without an expiry lives two years instead of one.")
def _(ref: Reference) -> None:
    ref.auth.default_expiry_years = 2


@mutant("key-expiry-max-unchecked", reqs=["KEY-EXPIRY-MAX", "KEY-EXPIRY-LIMIT"],
        doc="A key may be issued to expire ten years from now; the two-year maximum is not enforced.")
def _(ref: Reference) -> None:
    ref.auth.max_expiry_years = 10


@mutant("test-live-data-mixed", reqs=["AUTH-TEST-KEY-SANDBOX"],
        doc="A live key works on the sandbox's data: test and live data of an organization are not separated.")
def _(ref: Reference) -> None:
    original: Authenticate = ref.auth.authenticate

    def authenticate(request: Request) -> Principal:
        return dataclasses.replace(original(request), mode="test")

    ref.auth.authenticate = authenticate  # type: ignore[method-assign]
