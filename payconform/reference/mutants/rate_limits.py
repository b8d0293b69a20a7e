"""Mutants of the Limits rows on the default rate and `Retry-After`, and of the RATE_LIMITED row."""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from ..operation import Call, Reply
from ..responses import Outgoing
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference


def _on_429(ref: Reference, change: Callable[[Outgoing], None]) -> None:
    def apply(out: Outgoing) -> None:
        if out.status == 429:
            change(out)

    ref.response_filters.append(apply)


@mutant("rate-limit-too-strict", reqs=["RATE-DEFAULT"],
        doc="The 100th request of a minute is already refused (99 per minute).")
def _(ref: Reference) -> None:
    ref.ratelimit.per_key_limit = 99


@mutant("rate-limit-after-handler", reqs=["RATE-REFUSED-BEFORE-HANDLER"],
        doc="The request over the limit runs its handler, then answers 429.")
def _(ref: Reference) -> None:
    check_key, run = ref.ratelimit.check_key, ref.idempotency.run
    ref.ratelimit.check_key = lambda principal: None  # type: ignore[method-assign]

    async def run_then_limit(call: Call, execute: Callable[[], Awaitable[Reply]]) -> Reply:
        reply = await run(call, execute)
        check_key(call.principal)
        return reply

    ref.idempotency.run = run_then_limit  # type: ignore[method-assign]


@mutant("retry-after-too-short", reqs=["RATE-RETRY-AFTER"],
        doc="Retry-After always says 1 second, though the window stays closed longer: it is not authoritative.")
def _(ref: Reference) -> None:
    _on_429(ref, lambda out: out.headers.update({"Retry-After": "1"}))


@mutant("rate-limited-generic-type", reqs=["ERR-RATE-LIMITED"],
        doc="A request over the limit answers 429 with type TOO_MANY_REQUESTS, not RATE_LIMITED.")
def _(ref: Reference) -> None:
    _on_429(ref, lambda out: out.body.update({"type": "TOO_MANY_REQUESTS"}))
