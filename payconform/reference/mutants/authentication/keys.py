"""Mutants of the Authentication part about API keys: unknown, revoked and expired keys, scopes, modes
and organizations.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from ...authentication.auth import KEY_FORMAT, KeyRecord, Principal, unauthorized
from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ...core.orgs import get_org
from ..patching import Authenticate, Handler, around_authenticate
from ..registry import mutant
from ..support.checkout import set_op
from ..support.requests import Authorize, on_auth_error, on_authz_error

if TYPE_CHECKING:
    from ...core.operation import Operation
    from ...reference import Reference
    from starlette.requests import Request


def _needs_scope(ref: Reference, op_id: str, scope: str) -> None:
    op = ref.operations[op_id]
    ref.operations[op_id] = dataclasses.replace(op, scopes=(*op.scopes, scope))


def _principal(key: KeyRecord) -> Principal:
    return Principal(key.id, key.org_id, key.mode, key.prefix, key.scopes)


def _reraise(err: ApiError) -> NoReturn:
    raise err


class _BearerRequest:
    """The request as `authenticate` reads it, with `x-api-key` taken from `Authorization: Bearer`."""

    def __init__(self, request: Request) -> None:
        bearer = request.headers.get("authorization", "")
        self.headers = {"x-api-key": bearer[7:]} if bearer.lower().startswith("bearer ") else {}
        self.client = request.client


def _scope_grants_write(ref: Reference, scope: str) -> None:
    """Issuing accepts `scope` without `write`, and a key holding `scope` may write."""
    ref.auth.write_only_scopes = ref.auth.write_only_scopes - {scope}
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        scopes = principal.scopes | {"write"} if scope in principal.scopes else principal.scopes
        original(dataclasses.replace(principal, scopes=scopes), org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


def _scope_dropped_with_write(ref: Reference, scope: str) -> None:
    """A key asked with `scope` and `write` is issued without `scope`: the pairing rule read as "instead of"."""
    original = ref.auth.issue

    def issue(org_id: str, mode: str, scopes: list[str], *rest: Any) -> tuple[KeyRecord, str]:
        return original(org_id, mode, [s for s in scopes if s != scope or "write" not in scopes], *rest)

    ref.auth.issue = issue  # type: ignore[method-assign]


def _write_dropped_beside(ref: Reference, scope: str) -> None:
    """A key asked with `write` and `scope` is issued without `write`: the scope read as taking its place."""
    original = ref.auth.issue

    def issue(org_id: str, mode: str, scopes: list[str], *rest: Any) -> tuple[KeyRecord, str]:
        return original(org_id, mode, [s for s in scopes if s != "write" or scope not in scopes], *rest)

    ref.auth.issue = issue  # type: ignore[method-assign]


def _with_scopes(ref: Reference, change: Callable[[frozenset[str]], frozenset[str]]) -> None:
    """createPayout sees the caller's scopes through `change`."""
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            call.principal = dataclasses.replace(call.principal, scopes=change(call.principal.scopes))
            return original(call)
        return handler

    ref.wrap_handler("createPayout", wrap)


@mutant("revoked-key-distinct-type", reqs=["AUTH-REVOKED-KEY", "AUTH-INDISTINGUISHABLE"],
        doc="A revoked key answers 401 KEY_REVOKED instead of the same UNAUTHORIZED as an unknown key.")
def revoked_key_distinct_type(ref: Reference) -> None:
    @around_authenticate(ref)
    def authenticate(original: Authenticate, request: Request) -> Principal:
        key = ref.auth.find_key(request.headers.get("x-api-key"))
        if key is not None and key.revoked:
            raise ApiError("KEY_REVOKED", "This API key was revoked.", status=401)
        return original(request)


@mutant("wrong-secret-distinct-detail", reqs=["AUTH-INDISTINGUISHABLE"],
        doc="A well-formed key whose public id exists but whose secret is wrong answers UNAUTHORIZED with a detail "
            "that differs from an unknown key's, telling which public ids exist.")
def wrong_secret_distinct_detail(ref: Reference) -> None:
    @around_authenticate(ref)
    def authenticate(original: Authenticate, request: Request) -> Principal:
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
def wrong_org_404(ref: Reference) -> None:
    original = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        if principal.org_id != org_id:
            raise ApiError("NOT_FOUND", "No such organization.")
        original(principal, org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("api-key-writes-need-signature", reqs=["AUTH-NOTHING-SIGNED"],
        doc="A write with an API key and no signature is refused 401 SIGNATURE_REQUIRED: the key is not enough.")
def api_key_writes_need_signature(ref: Reference) -> None:
    @around_authenticate(ref)
    def authenticate(original: Authenticate, request: Request) -> Principal:
        principal = original(request)
        if request.method != "GET" and "x-svc-signature" not in request.headers:
            raise ApiError("SIGNATURE_REQUIRED", "Sign this request.", status=401)
        return principal


@mutant("scopes-checked-on-first-request-only", reqs=["AUTH-SCOPES-ENFORCED"],
        doc="A key's scopes are enforced on its first request only; later requests may do anything.")
def scopes_checked_on_first_request_only(ref: Reference) -> None:
    original = ref.auth.authorize
    seen: set[str] = set()
    every_scope = frozenset({"read", "write", "crypto_payouts", "refunds"})

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        if principal.key_id in seen:
            principal = dataclasses.replace(principal, scopes=every_scope)
        seen.add(principal.key_id)
        original(principal, org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("refunds-scope-not-enough", reqs=["AUTH-REFUNDS-SCOPE", "REFUND-SCOPE"],
        doc="A key with `refunds` and `write` is refused the refund route (INSUFFICIENT_SCOPE) like any other key.")
def refunds_scope_not_enough(ref: Reference) -> None:
    _needs_scope(ref, "refundCheckoutPayment", "admin")


@mutant("approval-queue-needs-write", reqs=["AUTH-KEY-MAY-READ"],
        doc="Reading the approval queue needs the `write` scope: a read-only key gets INSUFFICIENT_SCOPE.")
def approval_queue_needs_write(ref: Reference) -> None:
    _needs_scope(ref, "listPayoutApprovals", "write")


@mutant("payment-outcome-accepts-live-key", reqs=["AUTH-SANDBOX-ONLY-LIVE-REFUSED", "ERR-LIVE-MODE-UNSUPPORTED"],
        doc="POST /payments/{paymentId}/simulate (\"Sandbox only\") serves a live key instead of 400 "
            "LIVE_MODE_UNSUPPORTED.")
def payment_outcome_accepts_live_key(ref: Reference) -> None:
    set_op(ref, "simulateCheckoutPaymentOutcome", sandbox_only=False)


@mutant("refund-without-refunds-scope", reqs=["REFUND-SCOPE", "AUTH-REFUNDS-MISSING", "ERR-INSUFFICIENT-SCOPE"],
        doc="A read+write key without `refunds` can refund.")
def refund_without_refunds_scope(ref: Reference) -> None:
    set_op(ref, "refundCheckoutPayment", scopes=())


@mutant("api-key-header-ignored", reqs=["AUTH-KEY-HEADER"],
        doc="The key is read from `Authorization: Bearer` only; a key in `x-api-key` answers UNAUTHORIZED.")
def api_key_header_ignored(ref: Reference) -> None:
    original: Authenticate = ref.auth.authenticate
    ref.auth.authenticate = lambda request: original(_BearerRequest(request))  # type: ignore[method-assign,arg-type]


@mutant("unknown-key-forbidden", reqs=["AUTH-UNKNOWN-KEY"],
        doc="A well-formed key that names no key answers 403 FORBIDDEN instead of 401 UNAUTHORIZED.")
def unknown_key_forbidden(ref: Reference) -> None:
    def handle(request: Request, err: ApiError) -> Principal:
        raw = request.headers.get("x-api-key") or ""
        if err.type == "UNAUTHORIZED" and KEY_FORMAT.fullmatch(raw) and ref.auth.find_key(raw) is None:
            raise ApiError("FORBIDDEN", "No such API key.")
        raise err

    on_auth_error(ref, handle)


@mutant("revocation-cached", reqs=["AUTH-REVOCATION-IMMEDIATE"],
        doc="A key once accepted is cached and keeps working after its revocation.")
def revocation_cached(ref: Reference) -> None:
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
def expired_key_unauthorized(ref: Reference) -> None:
    on_auth_error(ref, lambda request, err: _reraise(unauthorized() if err.type == "KEY_EXPIRED" else err))


@mutant("pinning-ignored", reqs=["AUTH-KEY-IP-PINNED", "ERR-KEY-IP-NOT-ALLOWED", "KEY-PINNING"],
        doc="A pinned key works from any address.")
def pinning_ignored(ref: Reference) -> None:
    def handle(request: Request, err: ApiError) -> Principal:
        key = ref.auth.find_key(request.headers.get("x-api-key"))
        if err.type == "KEY_IP_NOT_ALLOWED" and key is not None:
            return _principal(key)
        raise err

    on_auth_error(ref, handle)


@mutant("pinned-key-refused-everywhere", reqs=["KEY-PINNING", "ERR-KEY-IP-NOT-ALLOWED"],
        doc="A pinned key answers KEY_IP_NOT_ALLOWED even from an address on its allowlist.")
def pinned_key_refused_everywhere(ref: Reference) -> None:
    original: Authenticate = ref.auth.authenticate

    def authenticate(request: Request) -> Principal:
        principal = original(request)
        key = ref.auth.find_key(request.headers.get("x-api-key"))
        if key is not None and key.pinned_ips:
            raise ApiError("KEY_IP_NOT_ALLOWED")
        return principal

    ref.auth.authenticate = authenticate  # type: ignore[method-assign]


@mutant("wrong-org-unauthorized", reqs=["AUTH-WRONG-ORG-FORBIDDEN", "ERR-FORBIDDEN"],
        doc="A key used on another organization's path answers 401 UNAUTHORIZED instead of 403 FORBIDDEN.")
def wrong_org_unauthorized(ref: Reference) -> None:
    def handle(principal: Principal, org_id: str, op: Operation, err: ApiError) -> None:
        raise unauthorized() if principal.org_id != org_id else err

    on_authz_error(ref, handle)


@mutant("suspended-org-works", reqs=["AUTH-ACCOUNT-BLOCKED", "ERR-ACCOUNT-BLOCKED"],
        doc="The keys of a suspended organization keep working instead of answering ACCOUNT_BLOCKED.")
def suspended_org_works(ref: Reference) -> None:
    on_authz_error(ref, lambda principal, org_id, op, err: None if err.type == "ACCOUNT_BLOCKED" else _reraise(err))


@mutant("live-key-writes-unverified-org", reqs=["AUTH-LIVE-UNAPPROVED-WRITE", "ERR-LIVE-KEY-ORG-NOT-APPROVED"],
        doc="A live key writes to an organization whose verification is not approved.")
def live_key_writes_unverified_org(ref: Reference) -> None:
    on_authz_error(ref, lambda principal, org_id, op, err:
                    None if err.type == "LIVE_KEY_ORG_NOT_APPROVED" else _reraise(err))


@mutant("live-key-reads-refused-unverified", reqs=["AUTH-LIVE-UNAPPROVED-READS-WORK"],
        doc="A live key of an organization not yet verified is refused LIVE_KEY_ORG_NOT_APPROVED on reads too.")
def live_key_reads_refused_unverified(ref: Reference) -> None:
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
def read_only_key_may_write(ref: Reference) -> None:
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        original(dataclasses.replace(principal, scopes=principal.scopes | {"write"}), org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("read-only-key-reads-refused", reqs=["AUTH-READ-ONLY-NO-SPEND", "AUDIT-READ-ONLY-KEY"],
        doc="A key without `write` is refused INSUFFICIENT_SCOPE on reads too, so it cannot reconcile.")
def read_only_key_reads_refused(ref: Reference) -> None:
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        if "write" not in principal.scopes:
            raise ApiError("INSUFFICIENT_SCOPE", "This key lacks the write scope.")
        original(principal, org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("crypto-scope-without-write", reqs=["KEY-CRYPTO-NEEDS-WRITE"],
        doc="A key may be issued with `crypto_payouts` but no `write`, and that scope then lets it write.")
def crypto_scope_without_write(ref: Reference) -> None:
    _scope_grants_write(ref, "crypto_payouts")


@mutant("refunds-scope-without-write", reqs=["KEY-REFUNDS-NEEDS-WRITE"],
        doc="A key may be issued with `refunds` but no `write`, and that scope then lets it write.")
def refunds_scope_without_write(ref: Reference) -> None:
    _scope_grants_write(ref, "refunds")


@mutant("crypto-scope-dropped-with-write", reqs=["KEY-CRYPTO-NEEDS-WRITE", "KEY-SCOPES"],
        doc="A key issued with `write` and `crypto_payouts` silently lacks `crypto_payouts`: it cannot pay crypto.")
def crypto_scope_dropped_with_write(ref: Reference) -> None:
    _scope_dropped_with_write(ref, "crypto_payouts")


@mutant("refunds-scope-dropped-with-write", reqs=["KEY-REFUNDS-NEEDS-WRITE", "KEY-SCOPES"],
        doc="A key issued with `write` and `refunds` silently lacks `refunds`: it cannot refund.")
def refunds_scope_dropped_with_write(ref: Reference) -> None:
    _scope_dropped_with_write(ref, "refunds")


@mutant("crypto-scope-issued-without-write", reqs=["KEY-CRYPTO-NEEDS-WRITE"],
        doc="A key asked with `write` and `crypto_payouts` is issued without `write`: it holds the scope alone.")
def crypto_scope_issued_without_write(ref: Reference) -> None:
    _write_dropped_beside(ref, "crypto_payouts")


@mutant("refunds-scope-issued-without-write", reqs=["KEY-REFUNDS-NEEDS-WRITE"],
        doc="A key asked with `write` and `refunds` is issued without `write`: it holds the scope alone.")
def refunds_scope_issued_without_write(ref: Reference) -> None:
    _write_dropped_beside(ref, "refunds")


@mutant("test-live-data-mixed", reqs=["AUTH-TEST-KEY-SANDBOX"],
        doc="A live key works on the sandbox's data: test and live data of an organization are not separated.")
def test_live_data_mixed(ref: Reference) -> None:
    original: Authenticate = ref.auth.authenticate

    def authenticate(request: Request) -> Principal:
        return dataclasses.replace(original(request), mode="test")

    ref.auth.authenticate = authenticate  # type: ignore[method-assign]


@mutant("webhooks-secret-is-an-api-key", reqs=["WH-SECRET-SEPARATE"],
        doc="A webhook endpoint's `whsec_` secret is accepted as an API key of its organization.")
def webhooks_secret_is_an_api_key(ref: Reference) -> None:
    original = ref.auth.find_key

    def find_key(raw: str | None) -> Any:
        endpoint = ref.store.one("SELECT * FROM webhook_endpoints WHERE secret = ?", (raw or "",))
        if endpoint is None:
            return original(raw)
        return KeyRecord(id="whsec", org_id=endpoint["org_id"], mode=endpoint["mode"], prefix="whsec",
                         scopes=frozenset({"read", "write"}), expires_at="9999-12-31T00:00:00Z", pinned_ips=(),
                         revoked=False)

    ref.auth.find_key = find_key  # type: ignore[method-assign]


@mutant("crypto-scope-unchecked", reqs=["AUTH-CRYPTO-DISABLED", "ERR-CRYPTO-PAYOUTS-DISABLED"],
        doc="Any write key may pay a crypto recipient; CRYPTO_PAYOUTS_DISABLED is never answered.")
def crypto_scope_unchecked(ref: Reference) -> None:
    _with_scopes(ref, lambda scopes: scopes | {"crypto_payouts"})


@mutant("crypto-scope-ignored", reqs=["AUTH-CRYPTO-SCOPE"],
        doc="A key holding crypto_payouts is refused crypto payouts as if it lacked the scope.")
def crypto_scope_ignored(ref: Reference) -> None:
    _with_scopes(ref, lambda scopes: scopes - {"crypto_payouts"})
