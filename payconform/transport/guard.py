"""What the harness refuses to send, whoever asks: a request off the target's host, a live key that could
move money or write to checkout (Safety: "A live key never moves money")."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MONEY_PATH_PARTS = ("/payouts", "/funding", "/refund", "/batches")
LIVE_PREFIXES = ("svc_live_", "akid_live_")  # a live API key or a live signing key id


class SafetyError(Exception):
    """The harness refused to send a request (live key on a money/checkout write, foreign host)."""


def is_live(credential: str | None) -> bool:
    return bool(credential) and credential.strip().startswith(LIVE_PREFIXES)


def is_money_or_checkout_write(method: str, url: str, op: Mapping | None) -> bool:
    """Whether a request may move money or write to checkout: the profile says so, or its method and path do."""
    if op is not None and (op.get("money_write") or op.get("moves_money")):
        return True
    if method.upper() not in WRITE_METHODS:
        return False
    path = urlsplit(url).path if "://" in url else url.split("?", 1)[0]
    if "/checkout/" in path or path.startswith("checkout/") or path.rstrip("/").endswith("/checkout"):
        return True
    return any(part in path for part in MONEY_PATH_PARTS)


def promised_live_refusal(op: Mapping | None) -> bool:
    """A sandbox-only operation that moves no money: the spec promises a live key 400 LIVE_MODE_UNSUPPORTED."""
    return (op is not None and bool(op.get("sandbox_only"))
            and not (op.get("money_write") or op.get("moves_money")))


def check_live_key(credential: str | None, method: str, url: str, op: Mapping | None = None,
                   allow_live_refusal: bool = False) -> None:
    """Raise ``SafetyError`` before a live credential is sent on a request that could move money or write to
    checkout; ``allow_live_refusal`` lets one through to an operation whose refusal the spec promises."""
    if (is_live(credential) and is_money_or_checkout_write(method, url, op)
            and not (allow_live_refusal and promised_live_refusal(op))):
        raise SafetyError(f"refusing to send {method.upper()} {urlsplit(url).path or url} with a live key: "
                          "a live key never moves money or writes to checkout")


def check_host(url: str, host: str) -> None:
    """Raise ``SafetyError`` for a URL whose host is not the target's."""
    found = urlsplit(url).netloc.lower()
    if found != host:
        raise SafetyError(f"refusing to send a request to {found!r}: the target is {host!r}")
