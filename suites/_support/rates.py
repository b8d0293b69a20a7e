"""The rate limits a test trips on purpose, and a credential window of its own to trip them in.

A target that overrides the spec is judged by its own description: where the target file declares a
`rate_limit` other than the Limits table's default, the default row is judged at the declared value. Tripping
a limit costs the limit plus one requests; a declared limit above the spec's would spend more than the suite
budgets for the check (the spec's limit plus one), so that check is skipped, saying why. A declared default
says nothing of a route's own row (balance history, batch submission): those rows are then not judged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import pytest

from payconform.accounting import preflight_ended
from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.plugin.session import get_state
from payconform.target import Target


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


def after_the_preflight(contract: Contract) -> None:
    """The run's preflight read the unpaced key too: wait until that read has left the key's window, so that
    the window holds this test's requests alone."""
    ended = preflight_ended()
    if ended is not None:
        time.sleep(max(0.0, ended + row(contract, "default")["window_seconds"] + 1 - time.time()))


def tripping_credential(request: pytest.FixtureRequest, api_as: Callable[[str], Api], contract: Contract) -> Api:
    """The credential a test trips a per-credential limit with: a fresh organization's unpaced key where the
    operator can make one (its windows hold nothing: no wait, and the target's `rate_limit_key` stays free for
    the default row's test), else `rate_limit_key` on the target's own organization, once the preflight's read
    has left its window."""
    if get_state(request.config).operator() is not None:
        return request.getfixturevalue("fresh_org")(paced=False).api
    after_the_preflight(contract)
    return api_as("rate_limit_key")


def served_in_a_window_of_its_own(send: Callable[[int], Exchange], check: Callable[[Exchange, int], None],
                                  count: int, window_seconds: int) -> None:
    """``send(n)`` for n = 1..``count``, each answer given to ``check``. A 429 the first time through means the
    credential's windows held an earlier test's requests: they are waited out (the longer of its `Retry-After`
    and a whole window since this attempt began) and the count starts again, once; a 429 then goes to ``check``."""
    for attempt in (1, 2):
        began = time.time()
        for n in range(1, count + 1):
            ex = send(n)
            if ex.status == 429 and attempt == 1:
                retry = ex.headers.get("retry-after", "")
                wait = int(retry) if retry.strip().isdigit() else window_seconds
                time.sleep(max(wait, began + window_seconds + 1 - time.time()))
                break
            check(ex, n)
        else:
            return
