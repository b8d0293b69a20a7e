"""Driving the payout state machine of `contract/catalog/transitions.yaml` through the sandbox.

A walk reads the payout through the spec's authoritative read (`GET /orders/{payoutId}`) after every step of
the organization's clock and keeps every answer, so a test can check both where the payout ended and that it
never moved backwards on the way. How far to move the clock is the profile's (`sandbox.payout_scenarios`).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from payconform.suite import Api, Contract, Exchange, Kind, Needs, ProfileMismatch, expect, run_contract, waiting_for

from . import runwide
from .payouts import create_payout, read_payout, timeline
from .realtime import REAL_TIME, Timed, next_step
from .types import Unique, shared_scope

RETURNED = "0004"  # the profile's scenario whose payout completes, then comes back (sandbox.payout_scenarios)
REREAD = 3  # reads per step of the walks whose repeated reads are checked (a read that goes back is the check)
PLAN: dict[str, int] = {}  # scenario -> reads a step, of the run's tests that read a real-time walk (`plan_walks`)
MOST_READS = [REREAD]  # the most reads a step this run spends (`plan_walks`): one where it saves requests
FINAL = ("completed", "failed")  # the payout states a walk can stand in for long (a bank return may follow completed)
SPARSEST = 3  # the most steps between two reads of a payout standing in a final state


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
    late: bool = False  # in real time, answered more than a step after its instant (the pacer held it)

    @property
    def body(self) -> dict[str, Any]:
        return self.ex.json

    @property
    def status(self) -> Any:
        return self.ex.json.get("status")


def walk(api: Api, clock: Any, org_id: str, contract: Contract, payout_id: str, *, reads_per_step: int = 1,
         seconds: float | None = None, until: Callable[[list[Reading]], bool] | None = None,
         step: float | None = None) -> list[Reading]:
    """Reads the payout now and after every step (`walk_step`, or `step`) of the organization's clock, up to
    `seconds` (default: the profile's `settle_seconds`), or until the readings satisfy `until`."""
    return walk_together(api, clock, org_id, contract, {payout_id: (reads_per_step, until)}, seconds=seconds,
                         step=step)[payout_id]


def walk_step(contract: Contract) -> float:
    """Seconds between a walk's reads: the profile's `step_seconds`, or half of `processing_seconds` where
    that is shorter, so that a `processing` of the profile's dwell is read at least twice, never stepped over."""
    tl = timeline(contract)
    return min(float(tl["step_seconds"]), float(tl.get("processing_seconds") or tl["step_seconds"] * 2) / 2)


def walk_together(api: Api, clock: Any, org_id: str, contract: Contract,
                  payouts: Mapping[str, tuple[int, Callable[[list[Reading]], bool] | None]], *,
                  seconds: float | None = None, step: float | None = None,
                  created: Mapping[str, float] | None = None) -> dict[str, list[Reading]]:
    """`walk` of several payouts side by side (payout id -> (reads a step, until)): each is read after every
    step until its own walk ends, and the clock moves until the last one has. A payout already `completed` or
    `failed` whose walk goes on (a bank return to come) is read at twice the time it has stood there, one to
    three steps later (`_next_read`): its one change left is seen all the same, for fewer reads. In real time a
    read is `late` when the payout is older than its instant by more than a step, counted from `created` (the
    `time.monotonic()` just after each payout was created) where given, else from the walk's start: a payout
    created long before the walk began may have moved through states its first read cannot see."""
    tl = timeline(contract)
    step = float(step if step is not None else walk_step(contract))
    end = float(seconds if seconds is not None else tl["settle_seconds"])
    readings: dict[str, list[Reading]] = {payout_id: [] for payout_id in payouts}
    due = dict.fromkeys(payouts, 0.0)
    walking, elapsed, started = list(payouts), 0.0, time.monotonic()
    with waiting_for(f"the states of payout {', '.join(payouts)} (a walk of up to {end:g} s)"):
        while True:
            for payout_id in [p for p in walking if elapsed >= min(due[p], end)]:
                reads, until = payouts[payout_id]
                for _ in range(reads):
                    # in real time a read is due now, not when the key is free
                    with api.run.urgent() if clock is REAL_TIME else contextlib.nullcontext():
                        ex = read_payout(api, payout_id)
                    born = (created or {}).get(payout_id, started)
                    late = clock is REAL_TIME and time.monotonic() - born > elapsed + step
                    readings[payout_id].append(Reading(elapsed, ex, late))
                if elapsed >= end or (until is not None and until(readings[payout_id])):
                    walking.remove(payout_id)
                due[payout_id] = _next_read(readings[payout_id], step)
            if not walking:
                return readings
            elapsed += step
            next_step(clock, org_id, step, started, elapsed)


def _next_read(readings: list[Reading], step: float) -> float:
    """When a walk next reads its payout: a step after the last read, or, once it stands in a final state
    (`completed`, `failed`), at twice the time since it was first read there, at least one step and at most
    `SPARSEST` steps on: the change left to it is seen at most two steps late."""
    last = readings[-1]
    if last.status not in FINAL:
        return last.elapsed + step
    standing = list(itertools.takewhile(lambda r: r.status == last.status, reversed(readings)))
    return last.elapsed + min(SPARSEST * step, max(step, 2 * (last.elapsed - standing[-1].elapsed)))


def plan_walks(items: Iterable[Any], *, many_requests: bool = True) -> None:
    """What the run's selected tests need walked in real time: each `payout_walk(scenario, reads)` marker of a
    collected test, the most reads a step per scenario (`scenario_walk` walks them all together). A run that
    does not spend many requests on one check (`many_requests`: one key, not deep) reads once a step: the
    repeated reads then are the steps' (a walk read three times a step costs a one-key run 30 requests more)."""
    PLAN.clear()
    MOST_READS[0] = REREAD if many_requests else 1
    for item in items:
        for mark in item.iter_markers("payout_walk"):
            scenario, reads = mark.args[0], min(int(mark.kwargs.get("reads", 1)), MOST_READS[0])
            PLAN[scenario] = max(PLAN.get(scenario, 0), reads)


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
    each. The first such test walks every scenario the run's tests need (`PLAN`) side by side: the walks take
    the real time of the longest, not of all of them one after another."""
    api, clock = timed.api, timed.clock
    reads_per_step = min(reads_per_step, MOST_READS[0])
    if clock is not REAL_TIME:
        payout_id = create_payout(api, contract, unique, scenario).json["payoutId"]
        return payout_id, walk(api, clock, api.org_id, contract, payout_id, until=until,
                               reads_per_step=reads_per_step)

    plan = {**PLAN, scenario: max(PLAN.get(scenario, 0), reads_per_step)}
    names = {f"walk of payout scenario {s}": s for s in plan}

    def make(wanted: list[str]) -> dict[str, Any]:
        scenarios = [names[name] for name in wanted]
        ids, created = {}, {}
        for s in scenarios:
            ids[s] = create_payout(api, contract, unique, s).json["payoutId"]
            created[ids[s]] = time.monotonic()
        walked = walk_together(timed.reads, clock, api.org_id, contract,
                               {ids[s]: (plan[s], _ended(s)) for s in scenarios}, created=created)
        return {name: {"payoutId": ids[s], "reads_per_step": plan[s],
                       "readings": [[r.elapsed, runwide.exchange_json(r.ex), r.late] for r in walked[ids[s]]]}
                for name, s in zip(wanted, scenarios)}

    held = runwide.shared_together(shared_scope(api), {
        name: (lambda made, n=plan[s]: made["reads_per_step"] >= n) for name, s in names.items()}, make)
    mine = held[f"walk of payout scenario {scenario}"]
    return mine["payoutId"], [Reading(elapsed, runwide.exchange_of(ex), late) for elapsed, ex, late in mine["readings"]]


def _ended(scenario: str) -> Callable[[list[Reading]], bool]:
    """Whether a real-time walk of `scenario` has seen all its tests read: the payout back from the bank
    (`failed` after `completed`) for the returned scenario, else the payout `completed` or `failed` (the
    step's reads all the same, where a step reads more than once)."""
    if scenario == RETURNED:
        return came_back
    return lambda rs: rs[-1].status in FINAL and all(r.status == rs[-1].status for r in rs if r.elapsed == rs[-1].elapsed)


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


FINE_STEP = 1.0  # seconds between the reads of a walk that looks for a state shorter than the profile's dwell


def unseen_state(timed: Timed, contract: Contract, unique: Unique, scenario: str, row: dict,
                 readings: list[Reading]) -> None:
    """Where a walk of `scenario` did not see the row's move into a state the spec lets a payout skip or hold
    briefly (the row's `to`, which another scenario skips): nothing, so that the caller judges the walk (a
    failure), when a walk on the organization's clock read at `FINE_STEP` sees no such state either; else the
    test ends without a failure: a `ProfileMismatch` naming `processing_seconds` when the fine walk saw the
    state (it lasts less than the profile says), a skip when the walk was in real time and its reads were
    further apart than the state may last (not observed)."""
    tl, state = timeline(contract), row["to"]
    dwell = float(tl.get("processing_seconds") or 0)
    if timed.clock is REAL_TIME:
        Needs(Kind.CLOCK, f"not observed: in sandbox scenario {scenario!r} the payout went "
                          f"{' -> '.join(map(str, path(readings)))}, read every {walk_step(contract):g} s; {state!r} may "
                          "be skipped or brief (the spec gives no dwell) and goes unseen between two reads (profile "
                          "`sandbox.payout_scenarios.timeline.processing_seconds`)").skip()
    after = next((r.elapsed for r in readings if r.status not in row["from"]), readings[-1].elapsed)
    payout_id = create_payout(timed.api, contract, unique, scenario).json["payoutId"]
    fine = walk(timed.api, timed.clock, timed.org_id, contract, payout_id, step=FINE_STEP, seconds=after,
                until=lambda rs: rs[-1].status not in (*row["from"], state))
    held = [r for r in fine if r.status == state]
    if held:
        lasted = max(FINE_STEP, held[-1].elapsed - held[0].elapsed + FINE_STEP)
        raise ProfileMismatch(
            "sandbox.payout_scenarios.timeline.processing_seconds",
            f"in sandbox scenario {scenario!r} the payout holds {state!r} about {lasted:g} s (seen in reads "
            f"{FINE_STEP:g} s apart, not in the walk's {walk_step(contract):g} s apart)",
            expected=f"{dwell:g}", exchange=held[0].ex,
            override={"sandbox": {"payout_scenarios": {"timeline": {"processing_seconds": lasted}}}})
