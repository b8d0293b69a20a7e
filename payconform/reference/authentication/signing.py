"""Mode B: signed requests (Authentication > Mode B), the alternative to the Mode A key header.

A request whose `X-Api-Key` is a signing key id (`akid_test_...` / `akid_live_...`) is authenticated here
instead of by `auth.Auth`. A signing key is the public half of a P-256 key pair (SPKI PEM), or a custody
provider's stamp key (whose authentication is not shown: the reference registers it, and no request
signed under it verifies). The checks, in order; a refusal stops there and nothing runs:

1. the key id names a key: else 401 UNAUTHORIZED, the very answer of Mode A for unknown keys;
2. expiry and pinning as in Mode A: KEY_EXPIRED, KEY_IP_NOT_ALLOWED;
3. no `X-Svc-Signature`: the 202 challenge (`challenges.py`); with `X-Svc-Request-Id`: its answer;
4. `X-Svc-Timestamp` and `X-Svc-Nonce` present: else SIGNATURE_REQUIRED;
5. the timestamp within five minutes of the organization's clock: else SIGNATURE_TIMESTAMP_SKEW;
6. the signature verifies over the seven-line string of the bytes received: else SIGNATURE_INVALID, with
   the same status, type and detail whatever the cause (bad base64, not DER, other key, other bytes);
7. the nonce is new for this key: else SIGNATURE_REPLAYED. Only a verified request spends a nonce, so
   nobody can burn a holder's nonces, and a nonce is remembered until its timestamp leaves the window
   (after that the timestamp check refuses it anyway).

The statuses of the signature errors are not shown in the spec; the reference answers 401 (`errors.py`).
Patch points for mutants: `skew`, `fresh`, `signed_path`, `string_to_sign`, `verify`, `check_signed`,
`spend_nonce`, `new_key_id`, `applies`, `key_material`, `set_expiry`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from starlette.requests import Request

from .auth import Principal, ip_allowed, unauthorized
from .challenges import Challenges
from ..core.clock import Clock, iso
from ..core.errors import ApiError
from ..core.incoming import client_host, read_body
from ..core.requestid import request_id_of
from ..core.store import Store, dumps

SCHEMA = """
CREATE TABLE IF NOT EXISTS signing_keys (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, mode TEXT NOT NULL, public_key_pem TEXT, stamp_key TEXT,
    scopes TEXT NOT NULL, expires_at TEXT NOT NULL, pinned_ips TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS signature_nonces (
    key_id TEXT NOT NULL, nonce TEXT NOT NULL, forget_after REAL NOT NULL, PRIMARY KEY (key_id, nonce));
"""
KEY_ID_PREFIX = "akid_"
TIMESTAMP = re.compile(r"^[0-9]{1,12}$")


@dataclass(frozen=True)
class SigningKey:
    id: str  # the key id itself, `akid_<mode>_<24 hex>`: it is sent in every request, so it is not secret
    org_id: str
    mode: str
    public_key_pem: str | None
    stamp_key: str | None
    scopes: frozenset[str]
    expires_at: str
    pinned_ips: tuple[str, ...]


def _record(row: sqlite3.Row) -> SigningKey:
    return SigningKey(row["id"], row["org_id"], row["mode"], row["public_key_pem"], row["stamp_key"],
                      frozenset(json.loads(row["scopes"])), row["expires_at"], tuple(json.loads(row["pinned_ips"])))


def p256_public_key(pem: str) -> ec.EllipticCurvePublicKey:
    """The P-256 SPKI public key in `pem`; ValueError (with the reason) for anything else."""
    try:
        key = serialization.load_pem_public_key(pem.encode("utf-8"))
    except (ValueError, TypeError, UnicodeError):
        raise ValueError("must be a PEM SubjectPublicKeyInfo public key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError("must be a P-256 (secp256r1) public key")
    return key


class KeyMaterialError(ValueError):
    """Registration material the operator refuses: `field` and `reason` become a VALIDATION_ERROR entry."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


class PrivateKeyPasted(ValueError):
    """A private key where the public half belongs (rule 1: refused, and the key must be rotated).

    `public_pem` is its public half when it could be read, so that a registered key it belongs to can be
    named for rotation.
    """

    field = "public_key_pem"
    reason = "a private key was pasted: it is refused and must be treated as exposed; generate a new key pair"

    def __init__(self, public_pem: str | None) -> None:
        super().__init__(self.reason)
        self.public_pem = public_pem


def public_half(private_pem: str) -> str | None:
    """The canonical SPKI PEM of a private key's public half, or None when it cannot be read."""
    try:
        key = serialization.load_pem_private_key(private_pem.encode("utf-8"), password=None)
    except (ValueError, TypeError, UnicodeError):
        return None
    public = key.public_key()
    return spki_pem(public) if isinstance(public, ec.EllipticCurvePublicKey) else None


def spki_pem(key: ec.EllipticCurvePublicKey) -> str:
    """One canonical text per public key, so two registrations of the same key compare equal."""
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def signed_path(request: Request) -> str:
    """Line 3: the path as received (percent-encoding untouched, API prefix included) and its query string."""
    path = request.scope.get("raw_path") or request.url.path.encode("utf-8")
    query = request.scope.get("query_string") or b""
    return (path + (b"?" + query if query else b"")).decode("latin-1")


class Signing:
    """Signing keys (registration, lookup) and the verification of Mode B requests."""

    def __init__(self, store: Store, clock: Clock, challenges: Challenges) -> None:
        self.store = store
        self.clock = clock
        self.challenges = challenges
        store.conn.executescript(SCHEMA)
        self.skew = timedelta(minutes=5)
        self.signed_path = signed_path

    # -- keys ---------------------------------------------------------------------------------------

    def applies(self, request: Request) -> bool:
        """Whether the request is in Mode B: its `X-Api-Key` is a signing key id."""
        return request.headers.get("x-api-key", "").startswith(KEY_ID_PREFIX)

    def new_key_id(self, mode: str) -> str:
        return f"{KEY_ID_PREFIX}{mode}_{secrets.token_hex(12)}"

    def find(self, key_id: str | None) -> SigningKey | None:
        row = self.store.one("SELECT * FROM signing_keys WHERE id = ?", (key_id or "",))
        return _record(row) if row is not None else None

    def of_org(self, org_id: str) -> list[SigningKey]:
        return [_record(r) for r in self.store.all("SELECT * FROM signing_keys WHERE org_id = ?", (org_id,))]

    def key_material(self, public_key_pem: str | None, stamp_key: str | None) -> tuple[str | None, str | None]:
        """What a key registers: exactly one of a P-256 public key (as canonical SPKI PEM) and a stamp key.

        Raises PrivateKeyPasted for a private key, KeyMaterialError for anything else refused.
        """
        if public_key_pem is not None and "PRIVATE KEY" in public_key_pem:
            raise PrivateKeyPasted(public_half(public_key_pem))
        if public_key_pem is not None and stamp_key is not None:
            raise KeyMaterialError("stamp_key", "a key registers either a PEM public key or a stamp key, never both")
        if public_key_pem is None and stamp_key is None:
            raise KeyMaterialError("public_key_pem", "required (or stamp_key)")
        if public_key_pem is None:
            return None, stamp_key
        try:
            return spki_pem(p256_public_key(public_key_pem)), None
        except ValueError as exc:
            raise KeyMaterialError("public_key_pem", str(exc)) from None

    def register(self, org_id: str, mode: str, *, public_key_pem: str | None, stamp_key: str | None,
                 scopes: list[str], expires_at: datetime, pinned_ips: list[str], now: datetime) -> SigningKey:
        """Store a key whose material `key_material` accepted."""
        key_id = self.new_key_id(mode)
        self.store.run(
            "INSERT INTO signing_keys (id, org_id, mode, public_key_pem, stamp_key, scopes, expires_at, pinned_ips,"
            " created_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (key_id, org_id, mode, public_key_pem, stamp_key, dumps(sorted(set(scopes))), iso(expires_at),
             dumps(pinned_ips), iso(now)),
        )
        key = self.find(key_id)
        assert key is not None
        return key

    def set_expiry(self, key_id: str, expires_at: str) -> None:
        """Give a key a new expiry (a rotated predecessor's deadline)."""
        self.store.run("UPDATE signing_keys SET expires_at = ? WHERE id = ?", (expires_at, key_id))

    # -- requests -----------------------------------------------------------------------------------

    async def authenticate(self, request: Request) -> Principal:
        """The Principal of a Mode B request, or the refusal (see the module docstring for the order)."""
        key = self.find(request.headers.get("x-api-key"))
        if key is None:
            raise unauthorized()
        now = self.clock.now(key.org_id)
        if key.expires_at <= iso(now):
            raise ApiError("KEY_EXPIRED")
        if key.pinned_ips and not ip_allowed(client_host(request), key.pinned_ips):
            raise ApiError("KEY_IP_NOT_ALLOWED")
        body = await read_body(request)

        def rebuild(timestamp: str, nonce: str) -> str:
            return self.string_to_sign(key.id, request, body, timestamp, nonce).decode("utf-8", "replace")

        signature = request.headers.get("x-svc-signature")
        challenge_id = request.headers.get("x-svc-request-id")
        if signature is None:
            raise self.challenges.issue(key.id, request_id_of(request), rebuild, now)
        if challenge_id is not None:
            self.challenges.redeem(key.id, challenge_id, rebuild, lambda data: self.verify(key, signature, data), now)
        else:
            self.check_signed(key, request, body, signature, now)
        return Principal(key.id, key.org_id, key.mode, key.id, key.scopes)

    def string_to_sign(self, key_id: str, request: Request, body: bytes, timestamp: str, nonce: str) -> bytes:
        """The seven lines of rule 3, from the request as received."""
        lines = [key_id, request.method.upper(), self.signed_path(request), hashlib.sha256(body).hexdigest(),
                 request.headers.get("idempotency-key", ""), timestamp, nonce]
        return "\n".join(lines).encode("utf-8")

    def verify(self, key: SigningKey, signature: str, data: bytes) -> bool:
        """Whether `signature` (base64 of DER) is the key's ECDSA P-256/SHA-256 signature of `data`.

        `cryptography` parses DER strictly (no BER lengths, no trailing bytes, minimal integers) and checks
        0 < r, s < n; it accepts either S, as the spec does not require low S.
        """
        if key.public_key_pem is None:
            return False
        try:
            der = base64.b64decode(signature, validate=True)
            p256_public_key(key.public_key_pem).verify(der, data, ec.ECDSA(hashes.SHA256()))
        except (binascii.Error, ValueError, InvalidSignature):
            return False
        return True

    def fresh(self, timestamp: str, now: datetime) -> bool:
        return bool(TIMESTAMP.match(timestamp)) and abs(int(timestamp) - now.timestamp()) <= self.skew.total_seconds()

    def check_signed(self, key: SigningKey, request: Request, body: bytes, signature: str, now: datetime) -> None:
        """Steps 4-7 for a request that carries its own signature."""
        timestamp = request.headers.get("x-svc-timestamp")
        nonce = request.headers.get("x-svc-nonce")
        if not timestamp or not nonce:
            raise ApiError("SIGNATURE_REQUIRED")
        if not self.fresh(timestamp, now):
            raise ApiError("SIGNATURE_TIMESTAMP_SKEW")
        if not self.verify(key, signature, self.string_to_sign(key.id, request, body, timestamp, nonce)):
            raise ApiError("SIGNATURE_INVALID")
        if not self.spend_nonce(key.id, nonce, int(timestamp) + self.skew.total_seconds(), now):
            raise ApiError("SIGNATURE_REPLAYED")

    def spend_nonce(self, key_id: str, nonce: str, forget_after: float, now: datetime) -> bool:
        """False when the key already used this nonce; otherwise remember it until `forget_after`."""
        self.store.run("DELETE FROM signature_nonces WHERE key_id = ? AND forget_after < ?", (key_id, now.timestamp()))
        if self.store.one("SELECT 1 FROM signature_nonces WHERE key_id = ? AND nonce = ?", (key_id, nonce)):
            return False
        self.store.run("INSERT INTO signature_nonces (key_id, nonce, forget_after) VALUES (?,?,?)",
                       (key_id, nonce, forget_after))
        return True
