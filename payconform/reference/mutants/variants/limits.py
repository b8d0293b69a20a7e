"""Tolerated variants of the Limits part: how the rate windows are counted.

The whole suite must pass under each of them.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...core.errors import ApiError
from ..registry import variant

if TYPE_CHECKING:
    from ...reference import Reference


_LIMITED = ("key:", "op:")  # the Limits rows' windows: per credential, per route and credential


def _policy(ref: Reference) -> dict[str, Any]:
    """The window policy of ``ref``'s limiter, installed once (``kind``: anchored, sliding or aligned;
    ``counts_refused``), for the variants to set."""
    limiter = ref.ratelimit
    policy = getattr(limiter, "variant_policy", None)
    if policy is not None:
        return policy
    policy = {"kind": "anchored", "counts_refused": False}
    times: dict[str, list[float]] = {}
    original = limiter.hit

    def hit(ident: str, now: datetime, limit: int) -> None:
        if not ident.startswith(_LIMITED):
            original(ident, now, limit)
            return
        ts, window = now.timestamp(), limiter.window_seconds
        mine = times.setdefault(ident, [])
        if policy["kind"] == "sliding":
            mine[:] = [t for t in mine if ts - window < t <= ts]
        elif policy["kind"] == "aligned":
            start = math.floor(ts / window) * window
            mine[:] = [t for t in mine if start <= t <= ts]
        elif mine and not mine[0] <= ts < mine[0] + window:
            mine.clear()
        if len(mine) >= limit:
            if policy["kind"] == "sliding":
                frees = mine[len(mine) - limit] + window  # then fewer than the limit are left in the window
            else:
                frees = (math.floor(ts / window) * window if policy["kind"] == "aligned" else mine[0]) + window
            if policy["counts_refused"]:
                mine.append(ts)
            raise ApiError("RATE_LIMITED", f"More than {limit} requests in {int(window)} seconds.",
                           headers={"Retry-After": str(max(1, math.ceil(frees - ts)))})
        mine.append(ts)

    limiter.hit = hit  # type: ignore[method-assign]
    limiter.variant_policy = policy  # type: ignore[attr-defined]
    return policy


@variant("rate-window-sliding",
         doc="The rate windows slide: a request is refused while the 60 seconds before it hold the limit's "
             "worth ('60-second window' says neither fixed nor sliding).")
def rate_window_sliding(ref: Reference) -> None:
    _policy(ref)["kind"] = "sliding"


@variant("rate-window-aligned",
         doc="The rate windows are fixed minutes of the clock (:00 to :59), not opened by a credential's first "
             "request: a burst across a minute's turn is served up to twice the limit.")
def rate_window_aligned(ref: Reference) -> None:
    _policy(ref)["kind"] = "aligned"


@variant("rate-refused-counted",
         doc="Refused requests count in the window too ('100 requests per minute' does not say served ones): "
             "a client sending while refused stays refused until Retry-After.")
def rate_refused_counted(ref: Reference) -> None:
    _policy(ref)["counts_refused"] = True
