"""A real-time walk reads at the profile's instants (`suites/_support/realtime.py`, `next_step`): the time its
reads spent waiting for the pacer is taken off the next wait, so a walk on a busy key does not drift a step
later each time; an operator clock is moved by whole steps. A walk ends at its payout's final state, and a
payout standing in one while a bank return is still to come is read less and less often (`machines`)."""

from __future__ import annotations

from types import SimpleNamespace

from payconform.contract import run_contract
from payconform.run import Run
from suites._support import machines, realtime
from suites._support.realtime import REAL_TIME, next_step


class Clock:
    def __init__(self) -> None:
        self.moves: list[float] = []

    def advance(self, org_id: str, seconds: float) -> None:
        self.moves.append(seconds)


def test_real_time_waits_only_for_what_is_left_of_the_step(monkeypatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(realtime.time, "monotonic", lambda: 1000.0 + 14.0)  # reads took 4 s past the first step
    monkeypatch.setattr(REAL_TIME, "advance", lambda org_id, seconds: waits.append(seconds), raising=False)
    next_step(REAL_TIME, "org", 10.0, started=1000.0, elapsed=20.0)
    next_step(REAL_TIME, "org", 10.0, started=1000.0, elapsed=10.0)  # already past: no wait at all
    assert waits == [6.0, 0.0]


def test_an_operator_clock_moves_a_whole_step() -> None:
    clock = Clock()
    next_step(clock, "org", 10.0, started=0.0, elapsed=50.0)
    assert clock.moves == [10.0]


class Answer:
    def __init__(self, status: str) -> None:
        self.json = {"status": status}


def _walked(monkeypatch, scenario: str) -> list[float]:
    """The instants a walk of `scenario` reads a payout that is processing at 10 s, completed at 30 s and, for
    the returned scenario, back (failed) at 90 s: the reference's timeline."""
    clock, now = Clock(), [0.0]

    def status(at: float) -> str:
        if scenario == machines.RETURNED and at >= 90:
            return "failed"
        return "completed" if at >= 30 else "processing" if at >= 10 else "pending"

    monkeypatch.setattr(machines, "read_payout", lambda api, payout_id: Answer(status(now[0])))
    monkeypatch.setattr(clock, "advance", lambda org_id, seconds: now.__setitem__(0, now[0] + seconds))
    walked = machines.walk_together(None, clock, "org", run_contract(), {"po_1": (1, machines._ended(scenario))})
    return [(r.elapsed, r.status) for r in walked["po_1"]]


def test_a_walk_ends_at_the_final_state(monkeypatch) -> None:
    assert _walked(monkeypatch, "default") == [(0, "pending"), (10, "processing"), (20, "processing"),
                                               (30, "completed")]


def test_a_final_state_is_read_less_often_until_the_bank_return(monkeypatch) -> None:
    """Completed at 30 s: read at 40, 60 (twice the time it stood there), then 90 (three steps on at most) sees
    the return, where a read every step would take seven reads from 30 to 90 s."""
    assert _walked(monkeypatch, machines.RETURNED) == [
        (0, "pending"), (10, "processing"), (20, "processing"), (30, "completed"), (40, "completed"),
        (60, "completed"), (90, "failed")]


def test_a_read_the_pacer_held_past_a_step_is_marked_late(monkeypatch) -> None:
    """In real time, a read answered more than a step after its instant is `late`: the payout-state tests do not
    judge a row a late walk may have missed (a busy key's window turning takes longer than a state lasts)."""
    now = [0.0]
    monkeypatch.setattr(machines.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(REAL_TIME, "advance", lambda org_id, seconds: now.__setitem__(0, now[0] + seconds),
                        raising=False)

    def read(api, payout_id):
        if now[0] >= 10:
            now[0] += 25  # the pacer held this read 25 s
        return Answer("completed" if now[0] >= 30 else "processing" if now[0] >= 10 else "pending")

    monkeypatch.setattr(machines, "read_payout", read)
    walked = machines.walk_together(SimpleNamespace(run=Run()), REAL_TIME, "org", run_contract(), {"po_1": (1, machines._ended("default"))})
    assert [(r.elapsed, r.status, r.late) for r in walked["po_1"]] == [(0, "pending", False), (10, "completed", True)]
