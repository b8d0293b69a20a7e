"""States and transitions > Payout batch, walked row by row from `contract/catalog/transitions.yaml`.

A run is taken to the status the row starts from along the profile's `sandbox.batch.timeline` (the spec shows
no timing): in a fresh organization whose clock the test moves where the row starts in a window of the
timeline (received, validating), else on the target's own organization in real time (the timeline is seconds;
that clock is shared, never moved). Cancel before creation starts: `canceled`, and no payout ever exists from
it. Cancel after creation began, from the confirm's answer on (creation may still be under way): 409
PAYOUT_BATCH_NOT_CANCELABLE, the run never `canceled`. Confirm from `awaiting_confirmation`: 200 or 202 and
creation begins; from any other status: 409 PAYOUT_BATCH_NOT_CONFIRMABLE.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status, run_contract

from .._support.batches import cancel, confirm, confirmed, create, paid, reach, read, settle, status
from .._support.profile import success
from .._support.realtime import Timed
from .._support.types import Unique

ROWS = {row["id"]: row for row in run_contract().machine("payout_batch")["rows"]}
CANCEL, AFTER_CREATION, CONFIRM = ROWS["BATCH-T-CANCEL"], ROWS["BATCH-T-CANCEL-AFTER-CREATION"], ROWS["BATCH-T-CONFIRM"]


@pytest.mark.req("BATCH-T-CANCEL")
@pytest.mark.needs("operator", "clock", "profile")
@pytest.mark.parametrize("state", CANCEL["from"])
def test_cancel_before_creation_starts(fresh_org, clock, contract: Contract, unique: Unique, state: str) -> None:
    """From `received`, `validating` or `awaiting_confirmation`: `canceled`; no payout ever exists from it."""
    org = fresh_org()
    run = create(org.api, contract, unique)
    reach(org.api, clock, org.org_id, contract, run, state)
    ex = cancel(org.api, run.id)
    expect_status(ex, success(contract, "cancelPayoutBatch"), f"cancelling a run in {state!r}")
    clock.advance(org.org_id, float(contract.profile["sandbox"]["batch"]["settle_seconds"]))
    after = status(org.api, contract, run.id)
    expect(after == CANCEL["to"], f"a run canceled in {state!r} later reads {after!r}")
    made = paid(org.api, contract, run)
    expect(not made, f"a canceled run made payouts: {[p.get('payoutId') for p in made]}")


@pytest.mark.smoke
@pytest.mark.req("BATCH-T-CANCEL-AFTER-CREATION", "ERR-PAYOUT-BATCH-NOT-CANCELABLE")
@pytest.mark.needs("profile")
def test_cancel_after_creation_began_is_refused(timed: Timed, contract: Contract, unique: Unique) -> None:
    """Creation begins with the confirm ("`awaiting_confirmation` | confirm batch | creation begins (answers 200
    or 202)"), so from the confirm's answer on a cancel is refused: sent right after it, while creation may still
    be under way (no batch status shows that, the run may still read `awaiting_confirmation`), and again once the
    run is `completed`, each is 409 PAYOUT_BATCH_NOT_CANCELABLE. The run is never `canceled`: it goes on to
    `completed` with every line's payout. Accepted reading: a 202 confirm has begun creation as well, whatever
    the target still has to do."""
    api, clock = timed.api, timed.clock
    run = create(api, contract, unique)
    reach(api, clock, api.org_id, contract, run, CONFIRM["from"][0])
    expect_status(confirm(api, run.id), success(contract, "confirmPayoutBatch"), "confirming a run awaiting "
                  "confirmation")
    expect_error(cancel(api, run.id), 409, AFTER_CREATION["error"],
                 "cancelling a run right after its confirm was answered (creation had begun)")
    during = status(api, contract, run.id)
    expect(during != "canceled", "a cancel refused while creation was under way left the run `canceled`")
    done = settle(api, clock, api.org_id, contract, run, ("completed",)).json.get("status")
    expect_error(cancel(api, run.id), 409, AFTER_CREATION["error"], "cancelling a run whose creation completed")
    after = status(api, contract, run.id)
    expect(after == done, f"a refused cancel moved the run from {done!r} to {after!r}")
    expect(len(paid(api, contract, run)) == len(run.references), "the run's payouts are not all there")


@pytest.mark.req("BATCH-T-CONFIRM", "BATCH-CONFIRM")
@pytest.mark.needs("profile")
def test_confirm_awaiting_confirmation_begins_creation(timed: Timed, contract: Contract, unique: Unique) -> None:
    """Confirm in `awaiting_confirmation` answers 200 or 202, and every line becomes a payout."""
    api, clock = timed.api, timed.clock
    run = create(api, contract, unique, n=2)
    reach(api, clock, api.org_id, contract, run, CONFIRM["from"][0])
    expect_status(confirm(api, run.id), set(CONFIRM["statuses"]), "confirming a run awaiting confirmation")
    settle(api, clock, api.org_id, contract, run, ("completed",))
    made = sorted(str(p.get("reference")) for p in paid(api, contract, run))
    expect(made == sorted(run.references),
           f"after the confirm the payouts with the run's references are {made}, expected {sorted(run.references)}")


def _to_received(api: Api, clock: Any, contract: Contract, run: Any) -> None:
    reach(api, clock, api.org_id, contract, run, "received")


def _to_validating(api: Api, clock: Any, contract: Contract, run: Any) -> None:
    reach(api, clock, api.org_id, contract, run, "validating")


def _to_canceled(api: Api, clock: Any, contract: Contract, run: Any) -> None:
    expect_status(cancel(api, run.id), success(contract, "cancelPayoutBatch"), "cancelling a new run")


def _to_completed(api: Api, clock: Any, contract: Contract, run: Any) -> None:
    confirmed(api, clock, api.org_id, contract, run)


OTHER_STATES = {"received": _to_received, "validating": _to_validating, "canceled": _to_canceled,
                "completed": _to_completed}
# a status held only for a window of the timeline: in real time the refused confirm could land past it
WINDOWED = {"received", "validating"}


@pytest.mark.smoke(ids=["validating"])
@pytest.mark.req("BATCH-T-CONFIRM", "ERR-PAYOUT-BATCH-NOT-CONFIRMABLE")
@pytest.mark.needs("profile")
@pytest.mark.parametrize("state", [pytest.param(s, marks=[pytest.mark.needs("operator", "clock")] if s in WINDOWED
                                                else []) for s in sorted(OTHER_STATES)])
def test_confirm_in_any_other_state_is_refused(timed: Timed, contract: Contract, unique: Unique, state: str) -> None:
    """409 PAYOUT_BATCH_NOT_CONFIRMABLE, and the run is not moved (no payout made by the refused confirm). A
    final status is reached on the target's own organization in real time; a status held for a window of the
    timeline, on a fresh organization's clock."""
    api, clock = timed.api, timed.clock
    run = create(api, contract, unique)
    OTHER_STATES[state](api, clock, contract, run)
    made_before = len(paid(api, contract, run))
    expect_error(confirm(api, run.id), 409, CONFIRM["error"], f"confirming a run in {state!r}")
    expect(read(api, contract, run.id).json.get("status") == state, f"a refused confirm moved the {state!r} run")
    expect(len(paid(api, contract, run)) == made_before, f"a refused confirm of a {state!r} run made payouts")
