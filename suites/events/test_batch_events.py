"""Events of payout batches, read from the event feed (Events > Event types, the `payout_batch.*` rows;
States and transitions > Payout batch; Resources > Payout batch and items).

The body shape of `payout_batch.*` is not shown: an event is taken to be about a run when its data carries
the run's id anywhere (the profile's `sandbox.batch.event_data`). Each test works in a fresh organization
whose clock it moves (or, for a run the timeline takes where it goes in seconds, on the target's own
organization in real time, its events read under the feed's `type` filter, or at the stage's endpoint); the
run is read before the feed, so a target that settles on read has recorded its events.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Contract, Delivery, expect, expect_status


from .._support.answers import find_member
from .._support.batches import Run, about, cancel, confirm, confirmed, create, paid, reach, settle
from .._support.deliveries import kind, parsed
from .._support.drive import Stage, Subject
from .._support.events import event_types, feed
from .._support.profile import success
from .._support.realtime import REAL_TIME, Timed
from .._support.types import Unique

PREFIX = "payout_batch."


def _batch_events(api: Any, run: Run) -> list[dict[str, Any]]:
    """The feed's `payout_batch.*` events about the run, oldest first (read unfiltered, so any type shows)."""
    return [e for e in feed(api) if str(e.get("type", "")).startswith(PREFIX) and about(e, run.id)]


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [str(e.get("type")) for e in events]


@pytest.mark.smoke
@pytest.mark.req("EVT-BATCH-AWAITING-CONFIRMATION")
@pytest.mark.needs("operator", "clock", "profile")
def test_awaiting_confirmation_is_announced(fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """Once the run's lines are validated: one `payout_batch.awaiting_confirmation` about it, and none before."""
    org = fresh_org()
    run = create(org.api, contract, unique)
    reach(org.api, clock, org.org_id, contract, run, "validating")
    early = _types(_batch_events(org.api, run))
    expect(not early, f"before its lines were validated the run already has events {early}")
    clock.advance(org.org_id, float(contract.profile["sandbox"]["batch"]["timeline"]["awaiting_confirmation"]))
    settle(org.api, clock, org.org_id, contract, run, ("awaiting_confirmation",))
    seen = _types(_batch_events(org.api, run))
    expect(seen == ["payout_batch.awaiting_confirmation"],
           f"a run awaiting confirmation has events {seen}, expected one payout_batch.awaiting_confirmation")


@pytest.mark.smoke
@pytest.mark.req("EVT-BATCH-COMPLETED", "BATCH-COMPLETED-COUNTS", "BATCH-EVENTS")
@pytest.mark.needs("api_key", "profile", "webhook_receiver")
@pytest.mark.timeout(300)  # without a clock: the run's timeline in real time and two delivery waits
def test_a_completed_run_announces_counts_and_each_line_its_payout(stage: Stage, contract: Contract) -> None:
    """A confirmed run, observed at the stage's endpoint (batch and payout events reach every endpoint):
    `payout_batch.completed` carrying `counts`; only the four batch types the spec names (no in-progress
    event); and each created line its own `payout.*` events."""
    api = stage.api
    run = create(api, contract, stage.unique, n=2)
    confirmed(api, stage.clock or REAL_TIME, stage.org_id, contract, run)
    completed = parsed(stage.delivery_of("payout_batch.completed", Subject("batch", run.id)))
    expect(find_member(completed.get("data"), "counts") is not None,
           f"payout_batch.completed carries no `counts` (at any depth: the body's shape is not shown): "
           f"{completed.get('data')!r}")
    payouts = [Subject("payout", str(p.get("payoutId"))) for p in paid(api, contract, run)]
    expect(len(payouts) == len(run.references), f"the run's {len(run.references)} lines made payouts "
                                                f"{[s.id for s in payouts]}")

    def announced(subject: Subject, ds: list[Delivery]) -> bool:
        return any(subject.delivered(d) and str(kind(d)).startswith("payout.") for d in ds)

    seen = stage.wait(lambda ds: all(announced(s, ds) for s in payouts))
    silent = [s.id for s in payouts if not announced(s, seen)]
    expect(not silent, f"payouts created from the run's lines have no payout.* event: {silent}")
    allowed = {t for t in event_types() if t.startswith(PREFIX)}
    batch = Subject("batch", run.id)
    odd = sorted({str(kind(d)) for d in seen if str(kind(d)).startswith(PREFIX) and batch.delivered(d)} - allowed)
    expect(not odd, f"the run emitted {odd}: the spec's batch events are {sorted(allowed)}, with no in-progress "
           "event")


@pytest.mark.smoke
@pytest.mark.req("EVT-BATCH-CANCELED", "BATCH-T-CANCEL")
@pytest.mark.needs("profile")
def test_a_canceled_run_is_announced(timed: Timed, contract: Contract, unique: Unique) -> None:
    """Canceled while awaiting confirmation: `payout_batch.canceled` about it, and no payout was created. On the
    target's own organization the run is taken there in real time and the feed read under `type`."""
    api, clock = timed.api, timed.clock
    run = create(api, contract, unique)
    reach(api, clock, api.org_id, contract, run, "awaiting_confirmation")
    expect_status(cancel(api, run.id), success(contract, "cancelPayoutBatch"), "cancelling the run")
    seen = _types([e for e in feed(api, type="payout_batch.canceled") if about(e, run.id)])
    expect("payout_batch.canceled" in seen, f"the canceled run has events {seen}, no payout_batch.canceled")
    expect(not paid(api, contract, run), "the canceled run created payouts")


@pytest.mark.req("BATCH-COMPLETED-COUNTS")
@pytest.mark.needs("profile")
def test_the_completed_event_carries_counts(timed: Timed, contract: Contract, unique: Unique) -> None:
    """A confirmed run's `payout_batch.completed`, read from the feed under `type` (on the target's own
    organization too, with a run taken there in real time), carries `counts`."""
    api, clock = timed.api, timed.clock
    run = create(api, contract, unique)
    confirmed(api, clock, api.org_id, contract, run)
    completed = [e for e in feed(api, type="payout_batch.completed") if about(e, run.id)]
    expect(len(completed) == 1, f"the completed run has {len(completed)} payout_batch.completed events, not one")
    data = completed[0].get("data")
    expect(find_member(data, "counts") is not None,
           f"payout_batch.completed carries no `counts` (at any depth: the body's shape is not shown): {data!r}")


@pytest.mark.smoke
@pytest.mark.req("EVT-BATCH-FAILED")
@pytest.mark.needs("operator", "clock", "profile")
def test_a_broken_run_is_announced(fresh_org, operator, clock, contract: Contract, unique: Unique) -> None:
    """A run broken by the operator's fault (the profile's `run_fault`): `failed`, `payout_batch.failed`."""
    org = fresh_org()
    run = create(org.api, contract, unique)
    reach(org.api, clock, org.org_id, contract, run, "awaiting_confirmation")
    fault = contract.profile["sandbox"]["batch"]["run_fault"]
    operator.inject_fault(org.org_id, fault["operation"], fault["kind"], type=fault.get("type"))
    confirm(org.api, run.id)
    settle(org.api, clock, org.org_id, contract, run, ("failed",))
    seen = _types(_batch_events(org.api, run))
    expect("payout_batch.failed" in seen, f"the broken run has events {seen}, no payout_batch.failed")
