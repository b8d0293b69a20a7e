"""Driving the payout state machine of `contract/catalog/transitions.yaml` through the sandbox.

A walk reads the payout through the spec's authoritative read (`GET /orders/{payoutId}`) after every step of
the organization's clock and keeps every answer, so a test can check both where the payout ended and that it
never moved backwards on the way. How far to move the clock is the profile's (`sandbox.payout_scenarios`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

from payconform.client import Api, Exchange
from payconform.contract import Contract, run_contract
from payconform.expect import expect

from . import runwide
from .payouts import create_payout, read_payout, timeline
from .realtime import REAL_TIME, Timed
from .types import Unique, shared_scope

RETURNED = "0004"  # the profile's scenario whose payout completes, then comes back (sandbox.payout_scenarios)
REREAD = 3  # reads per step of the walks whose repeated reads are checked (a read that goes back is the check)


def scenario_rows(name: str = "payout") -> list[tuple[dict, str, bool]]:
    """(row, scenario, move expected) for every catalog row the sandbox drives through a payout scenario."""
    cases = []
    for row in run_contract().machine(name)["rows"]:
        sandbox = row.get("sandbox") or {}
        cases += [(row, s, True) for s in sandbox.get("scenarios") or ()]
        cases += [(row, s, False) for s in sandbox.get("skipped_by") or ()]
    return cases


class Reading(NamedTuple):
    elapsed: float
    ex: Exchange

    @property
    def body(self) -> dict[str, Any]:
        return self.ex.json

    @property
    def status(self) -> Any:
        return self.ex.json.get("status")


def walk(api: Api, clock: Any, org_id: str, contract: Contract, payout_id: str, *, reads_per_step: int = 1,
         seconds: float | None = None, until: Callable[[list[Reading]], bool] | None = None) -> list[Reading]:
    """Reads the payout now and after every profile step of the organization's clock, up to `seconds`
    (default: the profile's `settle_seconds`), or until the readings satisfy `until`."""
    tl = timeline(contract)
    step, end = float(tl["step_seconds"]), float(seconds if seconds is not None else tl["settle_seconds"])
    readings, elapsed = [], 0.0
    while True:
        readings += [Reading(elapsed, read_payout(api, payout_id)) for _ in range(reads_per_step)]
        if elapsed >= end or (until is not None and until(readings)):
            return readings
        clock.advance(org_id, step)
        elapsed += step


def scenario_walk(timed: Timed, contract: Contract, unique: Unique, scenario: str,
                  until: Callable[[list[Reading]], bool] | None = None,
                  reads_per_step: int = 1) -> tuple[str, list[Reading]]:
    """(payout id, readings) of a payout made in `scenario` and read after every profile step. With a clock (a
    fresh organization per test) the test's own payout, walked up to the profile's `settle_seconds` or until
    `until`, read `reads_per_step` times a step. In real time on the target's own organization the tests of a
    scenario only read its payout, so the run walks one per scenario until that scenario has ended (`_ended`)
    and every test of it that needs no more reads a step reads those readings (`runwide`: a worker asking while
    another walks waits for that walk, the same real time as its own; a test that needs more reads walks anew,
    and its walk is shared from then on): a payout and a walk per test cost their requests and their real time
    each."""
    api, clock = timed.api, timed.clock
    if clock is not REAL_TIME:
        payout_id = create_payout(api, contract, unique, scenario).json["payoutId"]
        return payout_id, walk(api, clock, api.org_id, contract, payout_id, until=until,
                               reads_per_step=reads_per_step)

    def make() -> dict[str, Any]:
        payout_id = create_payout(api, contract, unique, scenario).json["payoutId"]
        readings = walk(api, clock, api.org_id, contract, payout_id, until=_ended(scenario),
                        reads_per_step=reads_per_step)
        return {"payoutId": payout_id, "reads_per_step": reads_per_step,
                "readings": [[r.elapsed, runwide.exchange_json(r.ex)] for r in readings]}

    held = runwide.shared(shared_scope(api), f"walk of payout scenario {scenario}", make,
                          lambda made: made["reads_per_step"] >= reads_per_step)
    return held["payoutId"], [Reading(elapsed, runwide.exchange_of(ex)) for elapsed, ex in held["readings"]]


def _ended(scenario: str) -> Callable[[list[Reading]], bool]:
    """Whether a real-time walk of `scenario` has seen all its tests read: the payout back from the bank
    (`failed` after `completed`) for the returned scenario, else the last two reads `completed` or `failed`."""
    if scenario == RETURNED:
        return came_back
    return lambda rs: len(rs) >= 2 and rs[-1].status == rs[-2].status and rs[-1].status in ("completed", "failed")


def came_back(readings: list[Reading]) -> bool:
    """Whether the payout was read `completed` and then `failed` (a bank return)."""
    seen = path(readings)
    return "completed" in seen and seen[-1] == "failed"


def path(readings: list[Reading]) -> list[Any]:
    """The statuses seen, consecutive repeats collapsed."""
    seen: list[Any] = []
    for r in readings:
        if not seen or seen[-1] != r.status:
            seen.append(r.status)
    return seen


def expect_forward_only(readings: list[Reading], contract: Contract) -> None:
    """Every change between two consecutive reads is a move of the payout table (never backwards)."""
    moves = {tuple(m) for m in contract.machine("payout")["moves"]}
    for before, after in itertools.pairwise(readings):
        if before.status != after.status:
            expect((before.status, after.status) in moves,
                   f"the payout moved from {before.status!r} to {after.status!r} between two reads "
                   f"({after.elapsed:.0f} s after creation); the payout table has no such move", after.ex)


def first(readings: list[Reading], status: str) -> Reading | None:
    return next((r for r in readings if r.status == status), None)
