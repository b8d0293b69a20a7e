"""API keys: format, hashing, constant-time verification, scopes, pinning, expiry and organization checks.

Unknown, malformed, incomplete, revoked and wrong keys all answer the same 401 UNAUTHORIZED body (same
detail) so that a caller cannot probe which keys exist. Only a hash of the whole key is stored; the raw
key is returned once, at issue.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from starlette.requests import Request

from ..core import ids
from ..core.clock import Clock, iso
from ..core.errors import ApiError
from ..core.orgs import get_org
from ..core.store import Store, dumps

KEY_FORMAT = re.compile(r"^svc_(test|live)_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$")
SCOPES = ("read", "write", "crypto_payouts", "refunds")
UNAUTHORIZED_DETAIL = "The API key is missing, malformed, unknown, revoked or incomplete."
_DUMMY_HASH = hashlib.sha256(b"no such key").hexdigest()


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class Gated(Protocol):
    """What authorization reads of the operation called (an `Operation` is one)."""

    scopes: tuple[str, ...]
    sandbox_only: bool
    payments_gate: bool | None

    @property
    def is_write(self) -> bool: ...


@dataclass(frozen=True)
class KeyRecord:
    id: str
    org_id: str
    mode: str
    prefix: str  # `svc_test_<public id>`: the non-secret part, shown in audit rows
    scopes: frozenset[str]
    expires_at: str
    pinned_ips: tuple[str, ...]
    revoked: bool


@dataclass(frozen=True)
class Principal:
    """Who is calling: the key's organization, mode (test = sandbox, live) and scopes."""

    key_id: str
    org_id: str
    mode: str
    prefix: str
    scopes: frozenset[str]


def _record(row: sqlite3.Row) -> KeyRecord:
    return KeyRecord(
        id=row["id"],
        org_id=row["org_id"],
        mode=row["mode"],
        prefix=row["prefix"],
        scopes=frozenset(json.loads(row["scopes"])),
        expires_at=row["expires_at"],
        pinned_ips=tuple(json.loads(row["pinned_ips"])),
        revoked=row["revoked_at"] is not None,
    )


def ip_allowed(host: str | None, pinned: tuple[str, ...]) -> bool:
    """True when `host` is inside one of the pinned addresses or networks."""
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(entry, strict=False) for entry in pinned)


def unauthorized() -> ApiError:
    return ApiError("UNAUTHORIZED", UNAUTHORIZED_DETAIL)


class Auth:
    """Key checks on every request, and the issuing rules the operator applies.

    Issuing rules (instance attributes, so a mutant can loosen one): `write_only_scopes` are granted only
    alongside `write`; expiry defaults to `default_expiry_years` and may not exceed `max_expiry_years`.
    """

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self.write_only_scopes = frozenset({"crypto_payouts", "refunds"})
        self.default_expiry_years = 1
        self.max_expiry_years = 2

    def find_key(self, raw: str | None) -> KeyRecord | None:
        """The key this exact string names (revoked or expired included), or None."""
        match = KEY_FORMAT.fullmatch(raw or "")
        if match is None:
            return None
        row = self.store.one("SELECT * FROM api_keys WHERE public_id = ?", (match.group(2),))
        stored = row["key_hash"] if row is not None else _DUMMY_HASH
        if not hmac.compare_digest(stored, hash_key(raw or "")) or row is None:
            return None
        return _record(row)

    def authenticate(self, request: Request) -> Principal:
        """401 unless the `x-api-key` header holds a live, unexpired key used from an allowed address."""
        key = self.find_key(request.headers.get("x-api-key"))
        if key is None or key.revoked:
            raise unauthorized()
        if key.expires_at <= iso(self.clock.now(key.org_id)):
            raise ApiError("KEY_EXPIRED")
        if key.pinned_ips and not ip_allowed(request.client.host if request.client else None, key.pinned_ips):
            raise ApiError("KEY_IP_NOT_ALLOWED")
        return Principal(key.id, key.org_id, key.mode, key.prefix, key.scopes)

    def authorize(self, principal: Principal, org_id: str, op: Gated) -> None:
        """The 403s (and the live-key 400) of Endpoints rules 1-2, in that order; nothing has run yet."""
        org = get_org(self.store, org_id) if principal.org_id == org_id else None
        if org is None:
            raise ApiError("FORBIDDEN", "This API key cannot access that organization.")
        if org.suspended:
            raise ApiError("ACCOUNT_BLOCKED")
        if op.is_write and principal.mode == "live" and not org.verified:
            raise ApiError("LIVE_KEY_ORG_NOT_APPROVED")
        needed = {"write" if op.is_write else "read", *op.scopes}
        missing = sorted(needed - principal.scopes)
        if missing:
            raise ApiError("INSUFFICIENT_SCOPE", f"This key lacks the {', '.join(missing)} scope.")
        if op.payments_gate and not org.payments_enabled:
            raise ApiError(
                "FORBIDDEN", "The organization has not completed verification to accept payments."
            )
        if op.sandbox_only and principal.mode == "live":
            raise ApiError("LIVE_MODE_UNSUPPORTED")

    def issue(
        self, org_id: str, mode: str, scopes: list[str], expires_at: datetime, pinned_ips: list[str], now: datetime
    ) -> tuple[KeyRecord, str]:
        """Create a key; the raw key is returned here and never again."""
        public_id = secrets.token_hex(16)
        prefix = f"svc_{mode}_{public_id}"
        raw = f"{prefix}_{secrets.token_urlsafe(32)}"
        key_id = ids.new_id("key")
        self.store.run(
            "INSERT INTO api_keys (id, org_id, mode, public_id, key_hash, prefix, scopes, expires_at, pinned_ips,"
            " created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (key_id, org_id, mode, public_id, hash_key(raw), prefix, dumps(sorted(set(scopes))),
             iso(expires_at), dumps(pinned_ips), iso(now)),
        )
        key = self.find_key(raw)
        assert key is not None
        return key, raw

    def revoke(self, org_id: str, key_id: str, now: datetime) -> KeyRecord | None:
        """Immediate: the next request with the key answers UNAUTHORIZED."""
        row = self.store.one("SELECT * FROM api_keys WHERE id = ? AND org_id = ?", (key_id, org_id))
        if row is None:
            return None
        self.store.run("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", (iso(now), key_id))
        return _record(self.store.one("SELECT * FROM api_keys WHERE id = ?", (key_id,)) or row)
