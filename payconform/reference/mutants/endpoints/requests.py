"""Mutants of the Endpoints part that hold for every request: idempotency keys, duplicate guards,
authorization and signing of requests.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from contextvars import ContextVar
from starlette.datastructures import Headers

from ...authentication.auth import SCOPES, Principal
from ...core.clock import add_years, iso
from ...core.errors import ApiError
from ...conventions.idempotency import canonical_body
from ...core.operation import WRITE_METHODS, Call, Reply
from ...operator.keys import api_key_json
from ..patching import Authenticate, Handler, around, around_authenticate
from ..registry import mutant
from ..support.requests import Authorize, Execute, on_authz_error

if TYPE_CHECKING:
    from ...core.operation import Operation
    from ...reference import Reference
    from starlette.requests import Request


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


def _set_idempotency(ref: Reference, old: str, new: str, only: str | None = None) -> None:
    for op_id, op in list(ref.operations.items()):
        if op.idempotency == old and only in (None, op_id):
            ref.operations[op_id] = dataclasses.replace(op, idempotency=new)


def _hide_running(ref: Reference) -> None:
    """The key store answers as if a key whose first request still runs were not there."""
    lookup = ref.idempotency.lookup

    def settled_only(scope: tuple[str, str], key: str):
        record = lookup(scope, key)
        return None if record is not None and record["state"] == "running" else record

    ref.idempotency.lookup = settled_only  # type: ignore[method-assign]


SIDE_BY_SIDE_SECONDS = 0.3


@mutant("key-refusals-403-on-writes", reqs=["AUTH-COMMON-401"],
        doc="On writes, a revoked, expired or pinned key is refused with 403 (same type) instead of 401.")
def key_refusals_403_on_writes(ref: Reference) -> None:
    @around_authenticate(ref)
    def authenticate(original: Authenticate, request: Request) -> Principal:
        try:
            return original(request)
        except ApiError as err:
            if err.status == 401 and request.method != "GET":
                err.status = 403
            raise


@mutant("pinned-key-refusal-403", reqs=["AUTH-COMMON-401"],
        doc="A pinned key used from outside its allowlist is refused with 403 KEY_IP_NOT_ALLOWED, reads and writes "
            "alike, instead of 401.")
def pinned_key_refusal_403(ref: Reference) -> None:
    @around_authenticate(ref)
    def authenticate(original: Authenticate, request: Request) -> Principal:
        try:
            return original(request)
        except ApiError as err:
            if err.type == "KEY_IP_NOT_ALLOWED":
                err.status = 403
            raise


@mutant("refused-write-runs", reqs=["AUTH-REFUSED-NOTHING-RAN"],
        doc="A write refused with a 401 or 403 runs its handler anyway; the refusal is answered afterwards.")
def refused_write_runs(ref: Reference) -> None:
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
    on_authz_error(ref, postpone)
    _run_then_refuse(ref)


@mutant("wrong-org-write-runs-at-home", reqs=["AUTH-REFUSED-NOTHING-RAN"],
        doc="A write addressed to another organization runs in the key's own organization, then answers 403 "
            "FORBIDDEN.")
def wrong_org_write_runs_at_home(ref: Reference) -> None:
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


@mutant("idem-replay-executes-twice", reqs=["IDEM-REPLAY"],
        doc="A request repeated with the same key and body runs the handler again instead of replaying.")
def idem_replay_executes_twice(ref: Reference) -> None:
    ref.idempotency.lookup = lambda scope, key: None  # type: ignore[method-assign]


@mutant("idem-conflict-undetected", reqs=["IDEM-CONFLICT"],
        doc="The same key with a different body replays the first answer instead of 409 IDEMPOTENCY_KEY_CONFLICT.")
def idem_conflict_undetected(ref: Reference) -> None:
    original = ref.idempotency.fingerprint
    ref.idempotency.fingerprint = lambda method, path, body: original(method, path, "")  # type: ignore[method-assign]


@mutant("idem-4xx-keeps-key", reqs=["IDEM-4XX-RELEASES"],
        doc="A 4xx answer keeps the key: a corrected retry with the same key replays the error.")
def idem_4xx_keeps_key(ref: Reference) -> None:
    ref.idempotency.releases = lambda err: err.status >= 500 and err.type != "PAYOUT_OUTCOME_UNKNOWN"  # type: ignore[method-assign]


@mutant("idem-key-256-accepted", reqs=["IDEM-CHARSET", "LIMIT-IDEM-KEY-LENGTH"],
        doc="A 256-character Idempotency-Key is accepted instead of 400 IDEMPOTENCY_KEY_INVALID.")
def idem_key_256_accepted(ref: Reference) -> None:
    ref.idempotency.key_pattern = re.compile(r"^[A-Za-z0-9_.:-]{1,256}$")


@mutant("idem-key-required-nowhere", reqs=["IDEM-REQUIRED", "IDEM-REQUIRED-ROUTES", "ERR-IDEMPOTENCY-KEY-REQUIRED"],
        doc="No route requires an Idempotency-Key: a keyed write without one runs instead of 400 "
            "IDEMPOTENCY_KEY_REQUIRED.")
def idem_key_required_nowhere(ref: Reference) -> None:
    _set_idempotency(ref, "required", "optional")


@mutant("idem-key-not-required-on-add-method", reqs=["IDEM-REQUIRED-ROUTES"],
        doc="Add-payment-method runs without an Idempotency-Key.")
def idem_key_not_required_on_add_method(ref: Reference) -> None:
    _set_idempotency(ref, "required", "optional", only="addBeneficiaryMethod")


@mutant("idem-key-required-on-optional-routes", reqs=["IDEM-OPTIONAL-ROUTES"],
        doc="Recipient PATCH and DELETE refuse a request without a key (400 IDEMPOTENCY_KEY_REQUIRED).")
def idem_key_required_on_optional_routes(ref: Reference) -> None:
    _set_idempotency(ref, "optional", "required")


@mutant("idem-key-ignored-on-optional-routes", reqs=["IDEM-OPTIONAL-ROUTES"],
        doc="Recipient PATCH and DELETE ignore an Idempotency-Key: a repeat under the same key runs again.")
def idem_key_ignored_on_optional_routes(ref: Reference) -> None:
    _set_idempotency(ref, "optional", "none")


@mutant("idem-keyless-requests-deduplicated", reqs=["IDEM-OPTIONAL-ROUTES"],
        doc="On optional routes a request without a key is keyed by its own fingerprint, so an identical "
            "repeat replays instead of running again.")
def idem_keyless_requests_deduplicated(ref: Reference) -> None:
    run = ref.idempotency.run

    async def implicit_key(call: Call, execute: Execute) -> Reply:
        if call.op.idempotency == "optional" and "idempotency-key" not in call.headers:
            key = "implicit-" + ref.idempotency.fingerprint(call.op.method, call.path, canonical_body(call.raw_body))
            call.headers = Headers(raw=[*call.headers.raw, (b"idempotency-key", key[:255].encode())])
        return await run(call, execute)

    ref.idempotency.run = implicit_key  # type: ignore[method-assign]


@mutant("idem-empty-key-treated-as-missing",
        reqs=["IDEM-INVALID", "ERR-IDEMPOTENCY-KEY-INVALID", "LIMIT-IDEM-KEY-LENGTH"],
        doc="An empty Idempotency-Key counts as no key, and the keyed write runs without one.")
def idem_empty_key_treated_as_missing(ref: Reference) -> None:
    parse = ref.idempotency.parse_key
    ref.idempotency.parse_key = lambda value, mode: None if value == "" else parse(value, mode)  # type: ignore[method-assign]


@mutant("idem-key-charset-unchecked", reqs=["IDEM-INVALID", "ERR-IDEMPOTENCY-KEY-INVALID"],
        doc="Any 1-255 characters are accepted as a key (spaces, `/`, non-ASCII).")
def idem_key_charset_unchecked(ref: Reference) -> None:
    ref.idempotency.key_pattern = re.compile(r"^.{1,255}$", re.DOTALL)


@mutant("idem-key-charset-too-narrow", reqs=["IDEM-CHARSET"],
        doc="Keys with `.` or `:` are refused as IDEMPOTENCY_KEY_INVALID.")
def idem_key_charset_too_narrow(ref: Reference) -> None:
    ref.idempotency.key_pattern = re.compile(r"^[A-Za-z0-9_-]{1,255}$")


@mutant("idem-key-length-bounds-shifted", reqs=["IDEM-CHARSET", "LIMIT-IDEM-KEY-LENGTH"],
        doc="Keys of 1 or 255 characters are refused (2-254 accepted).")
def idem_key_length_bounds_shifted(ref: Reference) -> None:
    ref.idempotency.key_pattern = re.compile(r"^[A-Za-z0-9_.:-]{2,254}$")


@mutant("idem-in-progress-undetected", reqs=["IDEM-IN-PROGRESS", "ERR-IDEMPOTENCY-KEY-REQUEST-IN-PROGRESS"],
        doc="An identical request sent while the first still runs runs too.")
def idem_in_progress_undetected(ref: Reference) -> None:
    _hide_running(ref)


@mutant("idem-in-progress-undetected-side-by-side",
        reqs=["IDEM-IN-PROGRESS", "ERR-IDEMPOTENCY-KEY-REQUEST-IN-PROGRESS"],
        doc="As idem-in-progress-undetected, on a server that runs requests side by side (each payout yields "
            "for a moment once its key is claimed): identical payouts sent at once pay more than once.")
def idem_in_progress_undetected_side_by_side(ref: Reference) -> None:
    before_handler = ref.faults.before_handler

    async def side_by_side(org_id: str, operation: str) -> None:
        if operation == "createPayout":
            await asyncio.sleep(SIDE_BY_SIDE_SECONDS)
        await before_handler(org_id, operation)

    _hide_running(ref)
    ref.faults.before_handler = side_by_side  # type: ignore[method-assign]


@mutant("dup-guard-off", reqs=["DUP-DETECTED", "ERR-DUPLICATE-REQUEST-DETECTED"],
        doc="No duplicate-body guard: an identical payout under another key pays again.")
def dup_guard_off(ref: Reference) -> None:
    ref.idempotency.duplicate_window = timedelta(0)


@mutant("allow-duplicate-any-value", reqs=["DUP-ALLOW-ONLY-TRUE"],
        doc="Any X-Allow-Duplicate value (yes, TRUE, 1) bypasses the guard.")
def allow_duplicate_any_value(ref: Reference) -> None:
    ref.idempotency.allow_duplicate = lambda call: "x-allow-duplicate" in call.headers  # type: ignore[method-assign]


@mutant("allow-duplicate-true-ignored", reqs=["DUP-ALLOW-HEADER"],
        doc="X-Allow-Duplicate: true does not bypass the guard: a deliberate duplicate is refused.")
def allow_duplicate_true_ignored(ref: Reference) -> None:
    ref.idempotency.allow_duplicate = lambda call: False  # type: ignore[method-assign]


@mutant("rotation-predecessor-keeps-expiry", reqs=["ROT-SUCCESSOR-DEADLINE", "ROT-KEY-OVERLAP", "ROT-SIGNED-OVERLAP"],
        doc="Rotation gives the predecessor no deadline: it keeps working until its own expiry.")
def rotation_predecessor_keeps_expiry(ref: Reference) -> None:
    ref.rotation.deadline = lambda expires_at, now: expires_at  # type: ignore[method-assign]


@mutant("rotation-overlap-1-hour", reqs=["ROT-SUCCESSOR-DEADLINE", "ROT-KEY-OVERLAP", "ROT-SIGNED-OVERLAP"],
        doc="The predecessor's deadline is one hour after rotation instead of 24 hours.")
def rotation_overlap_1_hour(ref: Reference) -> None:
    ref.rotation.overlap = timedelta(hours=1)


@mutant("expired-key-rotatable", reqs=["ROT-EXPIRED-CANNOT-ROTATE"],
        doc="An expired key can be rotated: a successor is issued.")
def expired_key_rotatable(ref: Reference) -> None:
    ref.rotation.check = lambda expires_at, now: None  # type: ignore[method-assign]


@mutant("signed-rotation-no-overlap", reqs=["ROT-SIGNED-OVERLAP"],
        doc="Rotating a signing key ends its predecessor at once.")
def signed_rotation_no_overlap(ref: Reference) -> None:
    original = ref.signing.set_expiry
    ref.signing.set_expiry = lambda key_id, expires_at: original(key_id, iso(ref.clock.wall()))  # type: ignore[method-assign]


def _rotate(ref: Reference, call: Call) -> Reply:
    """What the dashboard's rotation does, done for the call's `apiKeyId`: a successor is issued and the
    predecessor given its deadline."""
    row = ref.store.one("SELECT * FROM api_keys WHERE id = ? AND org_id = ?", (call.params["apiKeyId"], call.org_id))
    if row is None:
        raise ApiError("NOT_FOUND", "No such key in this organization.")
    successor, raw = ref.auth.issue(call.org_id, row["mode"], json.loads(row["scopes"]), add_years(call.now, 1),
                                    json.loads(row["pinned_ips"]), call.now)
    deadline = ref.rotation.deadline(row["expires_at"], call.now)
    ref.store.run("UPDATE api_keys SET expires_at = ? WHERE id = ?", (deadline, row["id"]))
    return Reply(201, {**api_key_json(successor, raw), "previousValidUntil": deadline}, successor.id)


@mutant("api-key-can-rotate", reqs=["ROT-API-KEY-REFUSED"],
        doc="An API key may call POST /organizations/{orgId}/api-keys/{apiKeyId}/rotate: a successor is issued.")
def api_key_can_rotate(ref: Reference) -> None:
    ref.wrap_handler("rotateApiKey", lambda original: lambda call: _rotate(ref, call))


@mutant("api-key-rotate-refused-after-rotating", reqs=["ROT-API-KEY-REFUSED"],
        doc="An API key's call of the rotate route is refused only after it ran: the answer is 403, but the "
            "predecessor has its 24-hour deadline and a successor is issued.")
def api_key_rotate_refused_after_rotating(ref: Reference) -> None:
    @around(ref, "rotateApiKey")
    def rotate_api_key(original: Handler, call: Call) -> Reply:
        _rotate(ref, call)
        try:
            return original(call)
        except ApiError as err:
            err.keeps_writes = True
            raise
