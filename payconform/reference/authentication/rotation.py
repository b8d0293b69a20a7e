"""Key rotation rules, shared by API keys and signing keys (Endpoints > Key rotation; Authentication > Mode B
rule 7; Limits row Rotation overlap).

Rotation issues a successor and gives the predecessor a deadline, 24 hours by default: until then both
work, afterwards the predecessor answers KEY_EXPIRED. A deadline never extends a key: a predecessor due
to expire sooner keeps its own expiry. An expired key cannot be rotated (the KEY_EXPIRED row: "Issue a new
key"). The successor keeps the predecessor's mode, scopes and pinning and gets a fresh default expiry
(the spec does not say which expiry a successor has).

Rotation is a dashboard action: the operator API performs it (`operator/keys.py`); the API route answers an
API key with 403 (`routes/keys.py`). Patch points: `overlap`, `check`, `deadline`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..core.clock import iso
from ..core.errors import ApiError


class Rotation:
    def __init__(self) -> None:
        self.overlap = timedelta(hours=24)

    def check(self, expires_at: str, now: datetime) -> None:
        """Refuse to rotate a key that has already expired."""
        if expires_at <= iso(now):
            raise ApiError("KEY_EXPIRED", "An expired key cannot be rotated; issue a new key.")

    def deadline(self, expires_at: str, now: datetime) -> str:
        """The predecessor's new expiry: the overlap from now, or its own expiry if that comes first."""
        return min(expires_at, iso(now + self.overlap))
