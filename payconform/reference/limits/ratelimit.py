"""Rate limits, checked before anything else runs (a 429 means the handler did not run).

Fixed windows: a credential's window opens at its first request and lasts 60 seconds; the 101st request
inside it is refused with `Retry-After` = the whole seconds until the window closes, rounded up. That
makes `Retry-After` authoritative: a request sent that many seconds later starts a new window. The
per-credential limiter reads the organization's clock, so the operator can fast-forward it; the
per-source-IP ceiling (2,000 per minute) reads the wall clock.

`scale()` moves the spec's limits for a faster sandbox (`--rate-limit`, `--ip-rate-limit`): the per-route rows
keep their ratio to the per-credential default, so a target file declaring the same `rate_limit` describes them.
"""

from __future__ import annotations

import math
from datetime import datetime

from ..authentication.auth import Principal
from ..core.clock import Clock
from ..core.errors import ApiError

SPEC_RATE = 100  # Limits, row Default rate: per credential per minute
SPEC_IP_RATE = 2000  # Limits, row Per-source-IP ceiling


class RateLimiter:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.per_key_limit = SPEC_RATE
        self.per_ip_limit = SPEC_IP_RATE
        self.window_seconds = 60.0
        self.per_operation_limits = {"getBalanceHistory": 60}  # Limits, row Balance history: per credential
        self.per_operation_limits["createPayoutBatch"] = 30  # Limits, row Batch submission (per credential)
        self.per_bearer_limit = 20  # profile sandbox.payout_links.rate_limit: per payout link (spec: "429", no value)
        self._windows: dict[str, tuple[float, int]] = {}

    def scale(self, rate: int | None = None, ip_rate: int | None = None) -> None:
        """Per-credential default ``rate`` (each per-route row scaled by ``rate``/100, at least 1) and per-IP
        ceiling ``ip_rate``; the per-payout-link limit is the profile's, not a Limits row, and stays."""
        if rate is not None:
            factor = rate / self.per_key_limit
            self.per_key_limit = rate
            self.per_operation_limits = {op: max(1, round(limit * factor))
                                         for op, limit in self.per_operation_limits.items()}
        if ip_rate is not None:
            self.per_ip_limit = ip_rate

    def check_ip(self, host: str | None) -> None:
        self.hit(f"ip:{host}", self.clock.wall(), self.per_ip_limit)

    def check_key(self, principal: Principal) -> None:
        self.hit(f"key:{principal.key_id}", self.clock.now(principal.org_id), self.per_key_limit)

    def check_operation(self, principal: Principal, op_id: str) -> None:
        """A route with its own per-credential limit counts in a window of its own, besides the default."""
        limit = self.per_operation_limits.get(op_id)
        if limit is not None:
            self.hit(f"op:{op_id}:{principal.key_id}", self.clock.now(principal.org_id), limit)

    def check_bearer(self, ident: str, org_id: str) -> None:
        """A route authorized by a bearer token instead of a credential (a payout link) counts per token."""
        self.hit(f"bearer:{ident}", self.clock.now(org_id), self.per_bearer_limit)

    def hit(self, ident: str, now: datetime, limit: int) -> None:
        """Count one request against the window of `ident`, or refuse it with RATE_LIMITED (a patch point for
        the variants that count windows another way)."""
        ts = now.timestamp()
        start, count = self._windows.get(ident, (ts, 0))
        if ts >= start + self.window_seconds or ts < start:
            start, count = ts, 0
        if count >= limit:
            retry_after = max(1, math.ceil(start + self.window_seconds - ts))
            raise ApiError(
                "RATE_LIMITED",
                f"More than {limit} requests in {int(self.window_seconds)} seconds.",
                headers={"Retry-After": str(retry_after)},
            )
        self._windows[ident] = (start, count + 1)
