"""The rate limits a test trips on purpose, what the credential's window may already hold, and the trip.

A target that overrides the spec is judged by its own description: where the target file declares a
`rate_limit` other than the Limits table's default, the default row is judged at the declared value. Tripping
a limit costs the limit plus one requests, less those the credential's window already holds (`Window`); a
declared limit above the spec's would spend more than the suite budgets for the check (the spec's limit plus
one), so that check is skipped, saying why. A declared default
says nothing of a route's own row (balance history, batch submission): those rows are then not judged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import pytest

from payconform.suite import Api, Contract, Exchange, Run, Target, expect_status, fail

CEILING_WAIT = 60.0  # the longest a per-source-IP ceiling's refusal is waited out: its one-minute window


@dataclass(frozen=True)
class Judged:
    """The per-minute limit a test holds the target to, and the words that say where it comes from."""

    per_minute: int
    window_seconds: int
    source: str


def row(contract: Contract, name: str) -> dict:
    return next(r for r in contract.limits["rate_limits"] if r["name"] == name)


def default_rate(contract: Contract, target: Target) -> Judged:
    """The Limits row Default rate, or the target's declared `rate_limit` when it is lower than the spec's;
    skips when the declaration is higher (tripping it would cost more requests than the check is given)."""
    spec = row(contract, "default")
    declared = target.rate_limit
    if declared == spec["per_minute"]:
        return Judged(declared, spec["window_seconds"], f"the spec's {declared} per minute")
    if declared > spec["per_minute"]:
        pytest.skip(f"the target file declares rate_limit {declared} (the spec: {spec['per_minute']} per minute); "
                    f"tripping it takes {declared + 1} requests, more than the {spec['per_minute'] + 1} this check "
                    "may spend, so the declared limit is not judged")
    return Judged(declared, spec["window_seconds"],
                  f"the target file's declared rate_limit {declared} per minute (the spec's: {spec['per_minute']})")


def route_rate(contract: Contract, target: Target, name: str) -> Judged:
    """A route's own Limits row (``name``), judged only against a target that keeps the spec's default rate."""
    spec, default = row(contract, name), row(contract, "default")["per_minute"]
    if target.rate_limit != default:
        pytest.skip(f"the target file declares rate_limit {target.rate_limit} instead of the spec's {default}; "
                    f"the row {name!r} ({spec['per_minute']} per minute at the spec's default) is not part of "
                    "what a target file declares, so it is not judged")
    return Judged(spec["per_minute"], row(contract, "default")["window_seconds"],
                  f"the spec's {spec['per_minute']} per minute")


def after_the_preflight(run: Run, contract: Contract) -> None:
    """The run's preflight read the unpaced key too: wait until that read has left the key's window, so that
    the window holds this test's requests alone (for a run that keeps no pacing file, which counts it)."""
    ended = run.preflight_ended()
    if ended is not None:
        time.sleep(max(0.0, ended + row(contract, "default")["window_seconds"] + 1 - time.time()))


def tripping_credential(request: pytest.FixtureRequest, api_as: Callable[[str], Api]) -> Api:
    """The credential a test trips a per-credential limit with: a fresh organization's unpaced key where the
    operator can make one (its windows hold nothing), else `rate_limit_key` on the target's own organization
    (whose windows hold what the run sent with it: `Window` counts it)."""
    if request.getfixturevalue("run").has_operator():
        return request.getfixturevalue("fresh_org")(paced=False).api
    return api_as("rate_limit_key")


class Window:
    """What a target may count in its window of one credential, from the run's pacing file (every request of
    every process of the run, and of earlier runs on the same target, with the time its answer came in).

    The spec gives "a 60-second window" and no more: not whether it is fixed or sliding, nor whether refused
    requests count. A request answered more than a window (and a second) before another went out cannot be
    in that other's window under any reading; every later one may be. So ``held`` over-counts under some
    readings and never under-counts: a 429 is wrong only when ``held`` is below the limit. A run without a
    pacing file records nothing: the window then waits for the preflight's read to leave and counts this
    test's own requests."""

    def __init__(self, api: Api, contract: Contract) -> None:
        self.api, self.seconds = api, float(row(contract, "default")["window_seconds"])
        self._own: list[tuple[float, str | None]] | None = None
        if api.pacer.sent_after(api.credential, time.time()) is None:
            after_the_preflight(api.run, contract)
            self._own = []

    def times(self, route: str | None = None) -> list[float]:
        """When the requests (to the routes of the Limits row ``route``) the window may hold when one goes out
        now were answered, oldest first."""
        since = time.time() - self.seconds - 1
        if self._own is None:
            return self.api.pacer.sent_after(self.api.credential, since, route)
        return [ts for ts, r in self._own if ts > since and (route is None or r == route)]

    def held(self, route: str | None = None) -> int:
        return len(self.times(route))

    def sent(self, route: str | None) -> None:
        """One request (to ``route``'s routes) was answered: recorded here when there is no pacing file."""
        if self._own is not None:
            self._own.append((time.time(), route))

    def room_for(self, count: int, limit: int, route: str | None = None) -> None:
        """Wait until ``count`` more requests (to ``route``'s routes) keep ``held`` at or under ``limit``."""
        while (over := self.held(route) + count - limit) > 0:
            time.sleep(max(0.1, self.times(route)[over - 1] + self.seconds + 1 - time.time()))


def trip(window: Window, send: Callable[[int], Exchange], served: Callable[[Exchange, int], None], limit: Judged,
         route: str | None = None, default: Judged | None = None) -> Exchange:
    """``send(n)`` for n = 1, 2, ... until the target answers 429; that answer, judged against every reading
    of the window (``limit``: the row tripped; ``route``: its name when it is a route's own row, held to
    ``default`` as well). Each other answer goes to ``served``.

    - A 429 while ``window.held`` is below the row's limit (and below the default's) is wrong under every
      reading, unless another limit refused it: the per-source-IP ceiling counts what other programs at the
      run's address send too. So the burst is sent again once the credential's windows hold nothing of it; a
      second such 429 fails.
    - More than the limit served in a burst shorter than the window is over the limit unless a fixed window
      turned inside the burst (such a target serves up to twice the limit across the turn). Sending goes on
      to the next 429 (twice the limit served fails), whose `Retry-After` is waited out: a fixed window then
      starts afresh, a sliding one has room; a burst from there serving more than the limit fails.
    """
    budget = [limit] if default is None else [limit, default]
    n, fresh, early = 0, False, None
    while True:
        began, own = time.time(), 0
        while True:
            n += 1
            held = [window.held(route if b is limit and route else None) for b in budget]
            ex = send(n)
            window.sent(route)
            if ex.status == 429:
                if all(h < b.per_minute for h, b in zip(held, budget)):
                    if early is not None:
                        fail(f"request {n} was refused with 429 while the credential's window held at most "
                             f"{held[0]} requests{' to this route' if route else ''}, fewer than the limit "
                             f"({limit.source}; a 60-second window, fixed or sliding, refusing nothing sooner), "
                             f"as request {early} was in a burst before", ex)
                    early = n
                break
            served(ex, n)
            own += 1
            over = own > (1 if fresh else 2) * limit.per_minute
            if over and time.time() - began < window.seconds:
                fail(f"{own} requests in a row were served within {time.time() - began:.0f}s, more than "
                     + ("the limit since a Retry-After wait, when a window starts afresh" if fresh else
                        "twice the limit (a fixed window turning inside the burst allows twice at most)")
                     + f" ({limit.source})", ex)
            if over:
                pytest.skip(f"the target answered {own} requests in {time.time() - began:.0f}s, more than a "
                            f"window: no burst fits one window to judge the limit ({limit.source})")
        if early == n:  # judged on a burst into windows that hold nothing of this one's
            for b in budget:
                window.room_for(b.per_minute, b.per_minute, route if b is limit and route else None)
            continue
        if fresh or own <= limit.per_minute:
            return ex
        time.sleep(_asked_wait(ex, window.seconds))
        fresh = True


def _asked_wait(ex: Exchange, otherwise: float) -> float:
    """The whole seconds a 429's `Retry-After` asks for; ``otherwise`` when it gives none."""
    retry = ex.headers.get("retry-after", "").strip()
    return float(retry) if retry.isdigit() else otherwise


def still_served(api: Api, other: Api, op_id: str, what: str) -> Exchange:
    """``op_id`` with ``api``, whose route limit a test just tripped: 200. A 429 that ``other``, a credential
    with windows of its own, also meets on the same route at once is not ``api``'s: the per-source-IP ceiling
    counts what other programs at the run's address send too. That one is waited out (its `Retry-After`) and
    the read sent again; a server that holds the tripped row against every route still refuses ``api`` alone."""
    ex = api.op(op_id, raw=True)
    if ex.status == 429 and other.op(op_id, raw=True).status == 429:
        seconds = min(_asked_wait(ex, CEILING_WAIT), CEILING_WAIT)
        api.run.credit(seconds)  # the address's ceiling: not the target's time for this test
        time.sleep(seconds)
        ex = api.op(op_id, raw=True)
    return expect_status(ex, 200, what)
