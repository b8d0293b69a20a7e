"""Driving the domain so that each event type happens, for the event-type, walk and routing tests.

A `Stage` is an organization with this test's mailbox registered through the sandbox route (opted in to
every checkout-payment event) and a way to let time pass: against a target with an operator clock, a fresh
organization whose clock the test moves; otherwise the target's organization and real waiting, up to
`realtime.REAL_WAIT` seconds (a longer wait skips with `needs clock`). How each type is produced is data (`drive` in
`contract/catalog/events.yaml`); the payout scenarios, the approval threshold, the checkout totals and the
batch timeline come from the profile, because the spec shows none of them. Decisions on approvals are dashboard actions: the
operator.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from payconform.suite import Api, Contract, Delivery, Mailbox, expect_status
from payconform.suite import Kind, Needs

from . import batches
from .answers import scalars
from .approvals import fund_for_threshold, hold
from .deliveries import DISPATCH_WAIT, FLUSHED_WAIT, Flush, awaited, kind, parsed, wait_for
from .machines import path, walk
from .payments import example_total, forced, payment, refund
from .payouts import DEFAULT, cancel_payout, create_payout, create_self_funded, read_payout, timeline
from .profile import success
from .realtime import REAL_TIME
from .scenario_outcomes import mismatch_unless_in_scenario, one_reading
from .types import Unique

DAY = 86400


@dataclass(frozen=True)
class Subject:
    """What events are about: a `payout` (`data.payoutId`), an `approval` (`data.approval.id`), a checkout
    `payment` or a `batch` run (its id anywhere in `data`, whose shape is not shown)."""

    kind: str
    id: str

    def matches(self, event: Any) -> bool:
        data = event.get("data") if isinstance(event, dict) else None
        if not isinstance(data, dict):
            return False
        if self.kind == "payout":
            return data.get("payoutId") == self.id
        if self.kind == "approval":
            return isinstance(data.get("approval"), dict) and data["approval"].get("id") == self.id
        return self.id in set(scalars(data))

    def delivered(self, delivery: Delivery) -> bool:
        try:
            return self.matches(json.loads(delivery.body))
        except ValueError:
            return False


@dataclass
class Stage:
    api: Api
    org_id: str
    contract: Contract
    unique: Unique
    box: Mailbox
    secret: str
    endpoint: dict[str, Any]
    clock: Any | None
    operator: Any | None
    key: Callable[[str], Api]  # a client with the named credential's scopes, in the same organization

    @property
    def flush(self) -> Flush:
        return (lambda: self.clock.advance(self.org_id, 0)) if self.clock is not None else None

    def advance(self, seconds: float) -> None:
        """Let `seconds` pass for the organization: its clock, or real time when the wait is short."""
        (self.clock or REAL_TIME).advance(self.org_id, seconds)

    def need_operator(self) -> Any:
        if self.operator is None:
            Needs(Kind.OPERATOR).skip()
        return self.operator

    @property
    def patience(self) -> float:
        """How long to wait for a delivery: with a clock every poll runs the dispatcher; without one it runs
        every 15 seconds."""
        return FLUSHED_WAIT if self.clock is not None else DISPATCH_WAIT

    def wait(self, predicate: Callable[[list[Delivery]], bool]) -> list[Delivery]:
        """The mailbox's deliveries once `predicate` holds or `patience` has passed with none arriving."""
        return awaited(self.box, predicate, self.flush, self.patience)

    def delivery_of(self, type_: str, subject: Subject) -> Delivery:
        """The first delivery of a `type_` event about `subject`."""
        def found(ds: list[Delivery]) -> list[Delivery]:
            return [d for d in ds if subject.delivered(d) and kind(d) == type_]

        return found(wait_for(self.box, lambda ds: bool(found(ds)), self.flush,
                              f"a `{type_}` event about {subject.kind} {subject.id}", self.patience))[0]


def _created(stage: Stage, scenario: str) -> Subject:
    return Subject("payout", create_payout(stage.api, stage.contract, stage.unique, scenario).json["payoutId"])


def _payout(stage: Stage, scenario: str, reach: str | None = None) -> Subject:
    """A payout in `scenario`, then `settled`; in real time, where `reach` is given, until a delivery about it
    says `reach` (`announced`)."""
    subject = _created(stage, scenario)
    if stage.clock is None and reach is not None:
        announced(stage, subject, reach)
    else:
        settled(stage, subject, reach)
    if scenario != DEFAULT:
        clock = stage.clock if stage.clock is not None else REAL_TIME
        mismatch_unless_in_scenario(stage.api, clock, stage.org_id, stage.contract, stage.unique, scenario,
                                    one_reading(read_payout(stage.api, subject.id)))
    return subject


def announced(stage: Stage, subject: Subject, reach: str) -> None:
    """Wait, up to the profile's time for every scenario to settle and a delivery's dispatch, until a delivery
    about the payout carries `status: reach`: its own events say where it is, so an event test waiting in real
    time reads nothing (a walk reads the payout every profile step). A payout that never gets there is the
    test's failure: the delivery it then waits for does not come, or says otherwise."""
    def there(ds: list[Delivery]) -> bool:
        return any(subject.delivered(d) and (parsed(d).get("data") or {}).get("status") == reach for d in ds)

    stage.box.wait_for(there, timeline(stage.contract)["settle_seconds"] + DISPATCH_WAIT)


def settled(stage: Stage, subject: Subject, reach: str | None = None) -> None:
    """The profile's time for every scenario of a payout to reach its last state: on the clock in one move; in
    real time read every profile step, within that time, until it has moved into `reach` (else until it has
    moved twice: pending, processing, and where it ends)."""
    if stage.clock is not None:
        stage.advance(timeline(stage.contract)["settle_seconds"])
        return

    def there(readings: list) -> bool:
        seen = path(readings)
        return seen[-1] == reach and len(seen) > 1 if reach else len(seen) >= 3

    walk(stage.api, REAL_TIME, stage.org_id, stage.contract, subject.id, until=there)


def _cancel(stage: Stage, _: str) -> Subject:
    api = stage.key("crypto_key")
    payout_id = create_self_funded(api, stage.contract, stage.unique).json["payoutId"]
    cancel_payout(api, payout_id, "canceling a payout awaiting own funds")
    return Subject("payout", payout_id)


def _approval(stage: Stage, decision: str) -> Subject:
    operator = stage.need_operator() if decision != "hold" else None
    if decision == "approve":
        fund_for_threshold(stage.api, stage.contract)
    held = hold(stage.api, stage.contract, stage.unique)
    if decision in ("approve", "approve_unfunded"):
        operator.approve_payout(stage.org_id, held.approval_id)
    elif decision == "reject":
        operator.reject_payout(stage.org_id, held.approval_id)
    elif decision == "expire":
        stage.advance(DAY + 120)
    return Subject("approval", held.approval_id)


TOTALS = {"paid": "paid", "fail": "settles_later", "chargeback": "paid", "refund": "paid", "partial_refund": "paid"}


def _checkout(stage: Stage, outcome: str) -> Subject:
    total = example_total(stage.contract, TOTALS[outcome])
    if outcome in ("fail", "chargeback", "refund"):
        _, paid, ex = forced(stage.api, stage.contract, stage.unique, total, outcome)
        expect_status(ex, 200, f"forcing `{outcome}` on a simulated payment")
    else:
        _, paid = payment(stage.api, stage.contract, stage.unique, total)
        if outcome == "partial_refund":
            partial_refund(stage, paid)
    return Subject("payment", paid["id"])


def partial_refund(stage: Stage, paid: dict[str, Any], share: int = 3) -> str:
    """Refund a `1/share` part of the payment (base units, the refund route); the piece refunded."""
    piece = str(int(paid["amountBase"]) // share)
    ex = refund(stage.key("refunds_key"), stage.contract, paid["id"], piece)
    expect_status(ex, success(stage.contract, "refundCheckoutPayment"),
                  f"refunding {piece} of {paid['amountBase']} base units")
    return piece


def _batch(stage: Stage, outcome: str) -> Subject:
    """A run taken through the profile's batch timeline to `outcome` (the operator breaks one for `failed`), on
    the stage's clock or, without one, in real time (the timeline is seconds)."""
    api, contract, clock = stage.api, stage.contract, stage.clock or REAL_TIME
    operator = stage.need_operator() if outcome == "failed" else None
    run = batches.create(api, contract, stage.unique)
    if outcome == "completed":
        batches.confirmed(api, clock, stage.org_id, contract, run)
        return Subject("batch", run.id)
    batches.reach(api, clock, stage.org_id, contract, run, "awaiting_confirmation")
    if outcome == "canceled":
        expect_status(batches.cancel(api, run.id), success(contract, "cancelPayoutBatch"), "canceling the run")
    elif outcome == "failed":
        fault = batches.profile(contract)["run_fault"]
        operator.inject_fault(stage.org_id, fault["operation"], fault["kind"], type=fault.get("type"))
        batches.confirm(api, run.id)
        batches.settle(api, clock, stage.org_id, contract, run, ("failed",))
    return Subject("batch", run.id)


DRIVERS: dict[str, Callable[[Stage, str], Subject]] = {
    "created": _created, "payout": _payout, "cancel": _cancel, "approval": _approval, "checkout": _checkout, "batch": _batch,
}


def drive(stage: Stage, how: dict[str, str], reach: str | None = None) -> Subject:
    """Make the event of a catalog row happen (`drive: {payout: "0003"}` and the like); a payout followed in real
    time is waited on until a delivery about it says `reach` (the row's expected status), where given."""
    (kind, value), = how.items()
    if kind == "payout":
        return _payout(stage, value, reach)
    return DRIVERS[kind](stage, value)
