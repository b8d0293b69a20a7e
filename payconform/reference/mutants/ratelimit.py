"""Mutants of the rate limits (the default limit, an authoritative Retry-After)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..responses import Outgoing
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference


@mutant("retry-after-missing", reqs=["RATE-RETRY-AFTER"], doc="429 answers carry no Retry-After header.")
def _(ref: Reference) -> None:
    def drop(out: Outgoing) -> None:
        if out.status == 429:
            out.headers.pop("Retry-After", None)

    ref.response_filters.append(drop)


@mutant("rate-limit-off", reqs=["RATE-DEFAULT"], doc="No per-credential rate limit: request 101 in a minute is served.")
def _(ref: Reference) -> None:
    ref.ratelimit.per_key_limit = 10**9
