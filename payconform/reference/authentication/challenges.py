"""The Mode B challenge flow (Authentication > Mode B rule 4; Limits row Signature challenge lifetime).

A request under a signing key without `X-Svc-Signature` is answered `202 {type: SIGNATURE_CHALLENGE,
requestId, payloadToSign}` and nothing runs. `payloadToSign` is the request's own seven-line signed string
with the issue time as the timestamp and the challenge's `requestId` as the nonce, so it names the method,
path (with query), body and idempotency key it was issued for. The resend carries `X-Svc-Request-Id` and
`X-Svc-Signature`: the server rebuilds the string from the resent request and requires it to equal the
issued one (the binding), verifies the signature over it, and spends the challenge (single use) within
five minutes of issue.

Refusals, in this order: unknown challenge, other request or bad signature -> SIGNATURE_INVALID (one
answer, as for every mismatch); already used -> SIGNATURE_REPLAYED; older than the lifetime ->
SIGNATURE_TIMESTAMP_SKEW (its signed timestamp is out of the window). The spec names no type for the last
two; a caller holding a valid signature learns nothing it did not know.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from ..core.errors import ApiError
from ..core.store import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS signature_challenges (
    id TEXT PRIMARY KEY, key_id TEXT NOT NULL, payload TEXT NOT NULL, timestamp TEXT NOT NULL,
    issued_at REAL NOT NULL, used_at REAL);
"""

# (timestamp line, nonce line) -> the signed string the resent request would have
Rebuild = Callable[[str, str], str]


class Challenges:
    """Issued challenges; `lifetime` and `binds` are patch points for mutants."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.conn.executescript(SCHEMA)
        self.lifetime = timedelta(minutes=5)

    def issue(self, key_id: str, challenge_id: str, rebuild: Rebuild, now: datetime) -> ApiError:
        """Record a challenge for this request and return the 202 answer to raise (nothing else runs)."""
        timestamp = str(int(now.timestamp()))
        payload = rebuild(timestamp, challenge_id)
        # forget this key's long-expired challenges (per key: each organization has its own clock)
        self.store.run("DELETE FROM signature_challenges WHERE key_id = ? AND issued_at < ?",
                       (key_id, now.timestamp() - 2 * self.lifetime.total_seconds()))
        self.store.run("INSERT INTO signature_challenges (id, key_id, payload, timestamp, issued_at)"
                       " VALUES (?,?,?,?,?)", (challenge_id, key_id, payload, timestamp, now.timestamp()))
        return ApiError("SIGNATURE_CHALLENGE", payloadToSign=payload)

    def binds(self, issued: str, resent: str) -> bool:
        """Whether the resent request is the one the challenge was issued for (method, path, body, key)."""
        return issued == resent

    def redeem(self, key_id: str, challenge_id: str, rebuild: Rebuild, verifies: Callable[[bytes], bool],
               now: datetime) -> None:
        """Accept the resend of a challenged request, or raise its refusal; a success spends the challenge."""
        row = self.store.one("SELECT * FROM signature_challenges WHERE id = ? AND key_id = ?", (challenge_id, key_id))
        if row is None or not self.binds(row["payload"], rebuild(row["timestamp"], challenge_id)):
            raise ApiError("SIGNATURE_INVALID")
        if not verifies(row["payload"].encode("utf-8")):
            raise ApiError("SIGNATURE_INVALID")
        if row["used_at"] is not None:
            raise ApiError("SIGNATURE_REPLAYED")
        if now.timestamp() - row["issued_at"] > self.lifetime.total_seconds():
            raise ApiError("SIGNATURE_TIMESTAMP_SKEW", "The challenge expired (five minutes); ask for a new one.")
        self.store.run("UPDATE signature_challenges SET used_at = ? WHERE id = ?", (now.timestamp(), challenge_id))
