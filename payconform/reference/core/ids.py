"""Identifier generation, and checking the signature of a signed opaque id (cursor, quote id, link token).

Ids are opaque to clients; prefixes only help a human reading a log.
"""

from __future__ import annotations

import hmac
import secrets
import string

_BASE36 = string.digits + string.ascii_lowercase


def org_id() -> str:
    """CUID-shaped: `c` + 24 lowercase base-36 characters (the spec: normally CUID-shaped, no `org_` alias)."""
    return "c" + "".join(secrets.choice(_BASE36) for _ in range(24))


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def request_id() -> str:
    return "req_" + secrets.token_hex(12)


def same_signature(presented: str, expected: str) -> bool:
    """Constant-time comparison of a signature a client presented with the one expected. Text no signature can
    be (non-ASCII, a lone surrogate from a JSON escape) is simply not it: `hmac.compare_digest` would raise."""
    try:
        return hmac.compare_digest(presented.encode("ascii"), expected.encode("ascii"))
    except UnicodeEncodeError:
        return False
