"""The floor of a run: the least wall time the target's published limits allow for the requests it sent.

Each Limits row is a rate: ``n`` requests under ``L`` per minute take at least ``n / L`` minutes at that
rate (the first window's burst aside, which the 60-second window hands back at the end). The floor is the
largest of these over every constraint:

- each credential's default rate (``rate_limit``, 100 a minute); the keys of the pool are equivalent, so
  the pool's requests count as if spread evenly over its keys (the least the limits allow with them);
- the per-source-IP ceiling (``ip_rate_limit``, 2,000 a minute) over everything sent;
- each route with a row of its own (balance history, 60 a minute per credential; batch submission, 30 a
  minute, scope not shown and so taken for the whole run, as the pacer does).

Credentials sent over their limit on purpose (``exempt``: the rate-limit tests' keys) are held to the IP
ceiling only, as the pacer holds them.

The floor counts every request the run sent to the API, the CLI's preflight included; the wall time it is
compared with runs from the start of ``payconform run`` (before it starts the reference, provisions keys
and runs the preflight; from the pytest controller's start when pytest is run directly) to the end of the
tests, so start-up, collection and the tail are in it; ``sending_seconds`` is the part from the first
request to the last.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .accounting import rate_limit_requirements
from .pacer import ANONYMOUS, RouteLimit, credential_id, route_limits

MINUTE = 60.0
# epoch seconds `payconform run` started (before it starts the reference, provisions and runs the preflight):
# the pytest run it starts counts its wall time from there
STARTED_VAR = "PAYCONFORM_RUN_STARTED"


def run_started() -> datetime:
    """When the run began: the command's start handed over in ``PAYCONFORM_RUN_STARTED``, else now."""
    try:
        return datetime.fromtimestamp(float(os.environ[STARTED_VAR]), timezone.utc)
    except (KeyError, ValueError, OverflowError, OSError):
        return datetime.now(timezone.utc)


@dataclass(frozen=True)
class Floor:
    """The floor in seconds and the constraint that sets it (``binding``)."""

    seconds: float
    binding: str


def floor(credentials: Mapping[str, int], routes: Mapping[str, Mapping[str, int]], *, rate_limit: int,
          ip_rate_limit: int, route_limits: Iterable[RouteLimit] = (), pool: Collection[str] = (),
          exempt: Collection[str] = ()) -> Floor:
    """The floor of ``credentials`` (credential id -> requests) and ``routes`` (route name -> credential id
    -> requests) under the given limits; ``pool``: the ids of the equivalent keys."""
    paced = {c: n for c, n in credentials.items() if c not in exempt and c != ANONYMOUS}
    candidates = [(sum(credentials.values()) / ip_rate_limit, f"per-source-IP ceiling ({ip_rate_limit}/min)")]
    candidates += _per_credential(paced, pool, rate_limit, "default rate")
    for limit in route_limits:
        used = {c: n for c, n in (routes.get(limit.name) or {}).items() if c not in exempt and c != ANONYMOUS}
        if limit.per_credential:
            candidates += _per_credential(used, pool, limit.per_minute, limit.name)
        elif used:
            candidates.append((sum(used.values()) / limit.per_minute, f"{limit.name} ({limit.per_minute}/min)"))
    minutes, binding = max(candidates, key=lambda c: c[0])
    return Floor(round(minutes * MINUTE, 3), binding)


def _per_credential(counts: Mapping[str, int], pool: Collection[str], per_minute: int,
                    name: str) -> list[tuple[float, str]]:
    """One candidate per credential outside the pool, one for the pool spread over its keys."""
    out = [(n / per_minute, f"{name} of one credential ({per_minute}/min)")
           for c, n in counts.items() if c not in pool]
    in_pool = sum(n for c, n in counts.items() if c in pool)
    if in_pool and len(pool) == 1:
        out.append((in_pool / per_minute, f"{name} of one credential ({per_minute}/min)"))
    elif in_pool:
        out.append((in_pool / (per_minute * len(pool)), f"{name} of the key pool ({len(pool)} x {per_minute}/min)"))
    return out


def estimate(requests: int, keys: int, per_minute: int, ip_per_minute: int) -> float:
    """The floor, in seconds, of ``requests`` planned over ``keys`` equivalent keys (a tier's budget, before
    the run): the run header's duration estimate."""
    pool = [f"key{i}" for i in range(max(keys, 1))]
    share = {key: requests / len(pool) for key in pool}
    return floor(share, {}, rate_limit=max(per_minute, 1), ip_rate_limit=max(ip_per_minute, 1), pool=pool).seconds


def ratio(wall: float, floor_seconds: float) -> float | None:
    """wall / floor, None when the floor is zero (nothing was sent)."""
    return round(wall / floor_seconds, 3) if floor_seconds > 0 else None


def run_floor(tally: Mapping[str, Any], target: Any, route_limits: Iterable[RouteLimit]) -> Floor:
    """The floor of a run's merged counts (``payconform.pacing.accounting``) with the target's credentials."""
    return floor(tally.get("credentials") or {}, tally.get("routes") or {},
                 rate_limit=int(target.rate_limit), ip_rate_limit=int(target.ip_rate_limit),
                 route_limits=route_limits, pool={credential_id(k) for k in target.pool},
                 exempt=set(tally.get("exempt") or []))


def run_cost(counts: Any, target: Any, contract: Any, tests: Iterable[Mapping[str, Any]],
             wall_seconds: float) -> dict[str, Any]:
    """``results.json``'s ``cost``: the request counts (``accounting.RunCounts``), the floor, the wall time
    and wall / floor. A 429 is planned in a test of a rate-limit requirement, unplanned anywhere else."""
    rate_reqs = rate_limit_requirements(contract)
    planned = [t["nodeid"] for t in tests if rate_reqs & set(t.get("requirements") or [])]
    out = counts.summary(target.credentials, planned)
    found = run_floor(counts.run_tally(preflight=True), target, route_limits(contract.limits.get("rate_limits") or []))
    out.update(floor_seconds=found.seconds, floor_binding=found.binding, wall_seconds=round(wall_seconds, 3),
               wall_over_floor=ratio(wall_seconds, found.seconds))
    return out


def cost_line(cost: dict) -> str:
    """One line: requests, floor, wall, wall/floor, 429s (the summary's and the report's run-cost line)."""
    phases = cost["by_phase"]
    over = cost.get("wall_over_floor")
    tripped = cost.get("over_limit") or {}
    on_purpose = (f"; {tripped['requests']:,} of them over a limit on purpose ({', '.join(tripped['credentials'])})"
                  if tripped.get("requests") else "")
    return (f"requests: {cost['requests']:,} (suites {phases['suites']:,}, fuzz {phases['fuzz']:,}; "
            f"preflight {phases['preflight']:,}, operator calls {phases['operator']:,}{on_purpose}); "
            f"floor {cost['floor_seconds']:.0f}s ({cost['floor_binding']}), wall {cost['wall_seconds']:.0f}s "
            f"from the start (sending {cost.get('sending_seconds', 0):.0f}s), "
            f"wall/floor {over if over is not None else '-'}; 429s: {cost['rate_limited']['planned']} planned, "
            f"{cost['rate_limited']['unplanned']} unplanned; Retry-After waits: {cost['retry_after']['waits']}")
