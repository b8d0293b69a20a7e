"""Operator (dashboard) actions on credentials: API keys (issue, revoke, rotate) and signing keys
(register, rotate), under the rules every key is issued under. Every action is audited with `actorUserId`.

- `key_settings`: mode, scopes, expiry and pinning, the same for API keys and signing keys (scopes
  `crypto_payouts` and `refunds` only alongside `write`; expiry default one year, at most two).
- `POST /orgs/{orgId}/signing-keys`: register a P-256 SPKI PEM public key or a stamp key, never both
  (Authentication > Mode B rule 1). A pasted private key is refused (400 VALIDATION_ERROR) and flagged: the
  refusal is audited (`signing_key.private_key_refused`) naming the registered key it belongs to, if any,
  and the answer says that key must be rotated. The refusal is returned, not raised, so the audit row
  commits with it.
- `POST /orgs/{orgId}/keys/{keyId}/rotate` and `POST /orgs/{orgId}/signing-keys/{keyId}/rotate`: issue a
  successor, give the predecessor its deadline (`rotation.py`); the answer is the successor with
  `previousValidUntil` (the name the spec uses for a rotated webhook secret).
"""

from __future__ import annotations

import ipaddress
import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from ..authentication.auth import SCOPES, KeyRecord
from ..core.clock import add_years
from ..core.errors import ApiError, field_error
from ..core.requestid import request_id_of
from ..authentication.signing import KeyMaterialError, PrivateKeyPasted, SigningKey
from ..core.validate import Checker
from .audit import record
from .endpoint import OperatorRoute, org_of

if TYPE_CHECKING:
    from .server import OperatorServer

KeySettings = tuple[str, list[str], datetime, list[str]]  # mode, scopes, expiry, pinned addresses


def _is_network(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return True


def key_settings(ref: OperatorServer, c: Checker, now: datetime) -> KeySettings:
    """Read `mode`, `scopes`, `expires_at` / `expires_in_days` and `pinned_ips`; failures go to `c`."""
    body = c.obj
    mode = c.string("mode", choices=("test", "live")) or "test"
    scopes = body.get("scopes", ["read", "write"])
    if not (isinstance(scopes, list) and scopes and all(s in SCOPES for s in scopes)):
        c.fail("scopes", "must be a non-empty list of " + ", ".join(SCOPES))
    elif "read" not in scopes:
        c.fail("scopes", "every key has the read scope")
    elif ref.auth.write_only_scopes & set(scopes) and "write" not in scopes:
        c.fail("scopes", ", ".join(sorted(ref.auth.write_only_scopes)) + " are granted only alongside write")
    expires_at = c.instant("expires_at")
    days = c.integer("expires_in_days", low=1, high=100_000)
    if expires_at is not None and days is not None:
        c.fail("expires_in_days", "send expires_at or expires_in_days, not both")
    default = add_years(now, ref.auth.default_expiry_years)
    expiry = expires_at or (now + timedelta(days=days) if days is not None else default)
    if expiry > add_years(now, ref.auth.max_expiry_years):
        c.fail("expires_at" if expires_at else "expires_in_days",
               f"keys expire within {ref.auth.max_expiry_years} years")
    pinned = body.get("pinned_ips", [])
    if not isinstance(pinned, list) or not all(_is_network(p) for p in pinned):
        c.fail("pinned_ips", "must be a list of IP addresses or networks")
    return mode, scopes, expiry, pinned


def api_key_json(key: KeyRecord, raw: str) -> dict[str, Any]:
    return {"id": key.id, "key": raw, "prefix": key.prefix, "scopes": sorted(key.scopes), "mode": key.mode,
            "expiresAt": key.expires_at, "pinnedIps": list(key.pinned_ips)}


def signing_key_json(key: SigningKey) -> dict[str, Any]:
    return {"id": key.id, "mode": key.mode, "kind": "pem" if key.public_key_pem is not None else "stamp",
            "scopes": sorted(key.scopes), "expiresAt": key.expires_at, "pinnedIps": list(key.pinned_ips)}


def issue_key(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """Scopes `crypto_payouts` and `refunds` only alongside `write`; expiry default 1 year, at most 2
    (the rules are attributes of `ref.auth`, read by `key_settings`)."""
    org_id = org_of(ref, request)
    now = ref.clock.now(org_id)
    c = Checker(body)
    mode, scopes, expiry, pinned = key_settings(ref, c, now)
    c.done()
    key, raw = ref.auth.issue(org_id, mode, scopes, expiry, pinned, now)
    record(ref, request, org_id, key.mode, "api_key.create", key.id)
    return 201, api_key_json(key, raw)


def revoke_key(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = org_of(ref, request)
    key = ref.auth.revoke(org_id, request.path_params["keyId"], ref.clock.now(org_id))
    if key is None:
        raise ApiError("NOT_FOUND", "No such key in this organization.")
    record(ref, request, org_id, key.mode, "api_key.revoke", key.id)
    return 200, {"id": key.id, "revoked": True}


def _read_material(ref: OperatorServer, c: Checker) -> tuple[str | None, str | None]:
    """The key material of a registration body; refusals go to `c`, except a private key (PrivateKeyPasted)."""
    try:
        pem, stamp = c.string("public_key_pem", max_len=20_000), c.string("stamp_key", max_len=20_000)
        return ref.signing.key_material(pem, stamp)
    except KeyMaterialError as exc:
        c.fail(exc.field, exc.reason)
        return None, None


def _refuse_private_key(ref: OperatorServer, request: Request, org_id: str, mode: str,
                        exc: PrivateKeyPasted) -> tuple[int, Any]:
    """400 VALIDATION_ERROR, audited, naming the registered key the pasted private key belongs to."""
    exposed = [k.id for k in ref.signing.of_org(org_id) if exc.public_pem and k.public_key_pem == exc.public_pem]
    record(ref, request, org_id, mode, "signing_key.private_key_refused", exposed[0] if exposed else None,
           "VALIDATION_ERROR")
    reason = exc.reason + (f"; rotate {', '.join(exposed)}, registered with its public half" if exposed else "")
    err = field_error(exc.field, reason)
    return err.status, ref.render_error(err, request_id_of(request))


def register_signing_key(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = org_of(ref, request)
    now = ref.clock.now(org_id)
    c = Checker(body)
    mode, scopes, expiry, pinned = key_settings(ref, c, now)
    try:
        pem, stamp = _read_material(ref, c)
    except PrivateKeyPasted as exc:
        return _refuse_private_key(ref, request, org_id, mode, exc)
    c.done()
    key = ref.signing.register(org_id, mode, public_key_pem=pem, stamp_key=stamp, scopes=scopes, expires_at=expiry,
                               pinned_ips=pinned, now=now)
    record(ref, request, org_id, mode, "signing_key.create", key.id)
    return 201, signing_key_json(key)


def rotate_api_key(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = org_of(ref, request)
    now = ref.clock.now(org_id)
    row = ref.store.one("SELECT * FROM api_keys WHERE id = ? AND org_id = ? AND revoked_at IS NULL",
                        (request.path_params["keyId"], org_id))
    if row is None:
        raise ApiError("NOT_FOUND", "No such active key in this organization.")
    ref.rotation.check(row["expires_at"], now)
    successor, raw = ref.auth.issue(org_id, row["mode"], json.loads(row["scopes"]),
                                    add_years(now, ref.auth.default_expiry_years), json.loads(row["pinned_ips"]), now)
    deadline = ref.rotation.deadline(row["expires_at"], now)
    ref.store.run("UPDATE api_keys SET expires_at = ? WHERE id = ?", (deadline, row["id"]))
    record(ref, request, org_id, row["mode"], "api_key.rotate", row["id"])
    return 201, {**api_key_json(successor, raw), "previousValidUntil": deadline}


def rotate_signing_key(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """Body: the successor's `public_key_pem` (or `stamp_key`): the holder makes the new pair."""
    org_id = org_of(ref, request)
    now = ref.clock.now(org_id)
    old = ref.signing.find(request.path_params["keyId"])
    if old is None or old.org_id != org_id:
        raise ApiError("NOT_FOUND", "No such signing key in this organization.")
    ref.rotation.check(old.expires_at, now)
    c = Checker(body)
    try:
        pem, stamp = _read_material(ref, c)
    except PrivateKeyPasted as exc:
        return _refuse_private_key(ref, request, org_id, old.mode, exc)
    c.done()
    successor = ref.signing.register(org_id, old.mode, public_key_pem=pem, stamp_key=stamp, scopes=sorted(old.scopes),
                                     expires_at=add_years(now, ref.auth.default_expiry_years),
                                     pinned_ips=list(old.pinned_ips), now=now)
    deadline = ref.rotation.deadline(old.expires_at, now)
    ref.signing.set_expiry(old.id, deadline)
    record(ref, request, org_id, old.mode, "signing_key.rotate", old.id)
    return 201, {**signing_key_json(successor), "previousValidUntil": deadline}


ROUTES = [
    OperatorRoute("/orgs/{orgId}/keys", issue_key, "POST"),
    OperatorRoute("/orgs/{orgId}/keys/{keyId}/revoke", revoke_key, "POST"),
    OperatorRoute("/orgs/{orgId}/keys/{keyId}/rotate", rotate_api_key, "POST"),
    OperatorRoute("/orgs/{orgId}/signing-keys", register_signing_key, "POST"),
    OperatorRoute("/orgs/{orgId}/signing-keys/{keyId}/rotate", rotate_signing_key, "POST"),
]
