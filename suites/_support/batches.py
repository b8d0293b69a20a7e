"""Payout batches (runs): made, read, moved along the profile's timeline, confirmed and canceled.

The spec shows neither the request body of a run nor its id field, timing or sandbox triggers: all come from
the profile (`createPayoutBatch.body`, `sandbox.batch`). A run's lines are shaped like the profile's first
example line, each with its own `reference`, so the payouts made from a run are found with the spec's
`GET /orders?reference=`. Time passes on `clock`: the operator's, in a fresh organization, or real time
(`realtime.REAL_TIME`) on the target's own organization, whose clock other tests share.
"""

from __future__ import annotations

import copy
import time
from typing import Any, NamedTuple

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_status, fill

from .answers import scalars
from .payouts import payable_destination, payouts_with_reference
from .profile import items, success
from .realtime import REAL_TIME, next_step
from .types import Scope, Unique, shared_scope

NOWHERE = "no-such-destination-account"  # names no payable account: the profile's `invalid_line`
READ_ONLY_LINES = (1, 3)  # the lines of the two runs the reading tests share


class Run(NamedTuple):
    id: str
    external_reference_id: str
    references: list[str]
    answer: Exchange
    answered_at: float  # time.monotonic() when the create was answered


def profile(contract: Contract) -> dict[str, Any]:
    return contract.profile["sandbox"]["batch"]


def statuses(contract: Contract) -> list[str]:
    """The batch statuses of the spec (Resources > Payout batch and items), from the transition catalog."""
    return list(contract.machine("payout_batch")["states"])


def line(contract: Contract, destination: str, reference: str, **fields: Any) -> dict[str, Any]:
    """A line of the profile's example run, to `destination`, with its own `reference`; `fields` override."""
    template = copy.deepcopy((contract.operation("createPayoutBatch").get("body") or {}).get("items") or [{}])[0]
    return {**fill(template, {"destinationAccountId": destination}), "reference": reference, **fields}


def lines_to(contract: Contract, destination: str, unique: Unique, n: int, **fields: Any) -> list[dict[str, Any]]:
    return [line(contract, destination, unique("line"), **fields) for _ in range(n)]


def submit(api: Api, contract: Contract, lines: list[dict[str, Any]], external_reference_id: str,
           **kw: Any) -> Exchange:
    """POST a run through the profile's `createPayoutBatch` body (`kw` as for `Api.op`)."""
    body = fill(contract.operation("createPayoutBatch").get("body") or {}, {"unique": external_reference_id})
    return api.op("createPayoutBatch", json={**body, "externalReferenceId": external_reference_id, "items": lines},
                  **kw)


def create(api: Api, contract: Contract, unique: Unique, lines: list[dict[str, Any]] | None = None,
           n: int = 1) -> Run:
    """A run that must be accepted (202) with an id; by default `n` lines to a new funded recipient."""
    if lines is None:
        lines = lines_to(contract, payable_destination(api, contract, unique), unique, n)
    external_reference_id = unique("run")
    ex = submit(api, contract, lines, external_reference_id)
    expect_status(ex, success(contract, "createPayoutBatch"), "creating a payout batch")
    batch_id = ex.json.get(profile(contract)["id_field"]) if isinstance(ex.json, dict) else None
    expect(isinstance(batch_id, str) and batch_id,
           f"the accepted run carries no `{profile(contract)['id_field']}` (the profile's id field)", ex)
    return Run(batch_id, external_reference_id, [str(x.get("reference")) for x in lines], ex, time.monotonic())


_READ_ONLY: dict[Scope, tuple[Run, ...]] = {}  # per organization and mode: the runs tests only read


def read_only_runs(api: Api, contract: Contract, unique: Unique) -> tuple[Run, ...]:
    """Two runs, of one and of three lines, one after the other, made once per worker, organization and mode for
    the tests that only read runs (their create answers, reads, list and items): a test that moves a run along
    (confirm, cancel, its timeline's states) makes its own."""
    shared = shared_scope(api)
    if shared not in _READ_ONLY:
        destination = payable_destination(api, contract, unique)
        _READ_ONLY[shared] = tuple(create(api, contract, unique, lines_to(contract, destination, unique, n))
                                   for n in READ_ONLY_LINES)
    return _READ_ONLY[shared]


def read(api: Api, contract: Contract, batch_id: str) -> Exchange:
    """GET the run: 200 and that run."""
    ex = api.op("getPayoutBatch", batchId=batch_id)
    expect_status(ex, 200, "reading the payout batch")
    expect(isinstance(ex.json, dict) and ex.json.get(profile(contract)["id_field"]) == batch_id,
           f"reading run {batch_id} answered another run or no id", ex)
    return ex


def status(api: Api, contract: Contract, batch_id: str) -> Any:
    return read(api, contract, batch_id).json.get("status")


def reach(api: Api, clock: Any, org_id: str, contract: Contract, run: Run, state: str) -> Exchange:
    """Move the organization's clock to the profile's instant of `state` (the run was just created, the clock
    not moved since) and read the run, which must be in `state`."""
    timeline = profile(contract)["timeline"]
    clock.advance(org_id, float(timeline[state]))
    ex = read(api, contract, run.id)
    # the organization's time since creation: real time passes on it too, plus what an operator clock moved
    passed = time.monotonic() - run.answered_at + (0.0 if clock is REAL_TIME else float(timeline[state]))
    later = [float(t) for t in timeline.values() if float(t) > float(timeline[state])]
    if ex.json.get("status") != state and later and passed >= min(later):
        pytest.skip(f"the run could not be read while in {state!r}: {passed:.0f} s of its timeline had passed "
                    f"before the read (the target or the pacing was slow), past the timeline's next step")
    expect(ex.json.get("status") == state,
           f"{profile(contract)['timeline'][state]} s after creation (the profile's timeline) the run is "
           f"{ex.json.get('status')!r}, not {state!r}", ex)
    return ex


def settle(api: Api, clock: Any, org_id: str, contract: Contract, run: Run, until: tuple[str, ...]) -> Exchange:
    """Read the run after every profile step of time until its status is one of `until` (or time is up)."""
    step, end = float(profile(contract)["step_seconds"]), float(profile(contract)["settle_seconds"])
    ex, elapsed, started = read(api, contract, run.id), 0.0, time.monotonic()
    while ex.json.get("status") not in until and elapsed < end:
        elapsed += step
        next_step(clock, org_id, step, started, elapsed)
        ex = read(api, contract, run.id)
    expect(ex.json.get("status") in until,
           f"{end:g} s after the confirm the run is {ex.json.get('status')!r}, not one of {list(until)}", ex)
    return ex


def confirm(api: Api, batch_id: str, **kw: Any) -> Exchange:
    return api.op("confirmPayoutBatch", batchId=batch_id, **kw)


def cancel(api: Api, batch_id: str, **kw: Any) -> Exchange:
    return api.op("cancelPayoutBatch", batchId=batch_id, **kw)


def confirmed(api: Api, clock: Any, org_id: str, contract: Contract, run: Run) -> Exchange:
    """Take a new run to `awaiting_confirmation`, confirm it (200 or 202) and read it once `completed`."""
    reach(api, clock, org_id, contract, run, "awaiting_confirmation")
    expect_status(confirm(api, run.id), success(contract, "confirmPayoutBatch"),
                  "confirming a run awaiting confirmation")
    return settle(api, clock, org_id, contract, run, ("completed",))


def lines_of(api: Api, contract: Contract, batch_id: str, state: str | None = None) -> list[dict[str, Any]]:
    """The run's items (first page), only those in `state` when given (the spec's `status` filter)."""
    ex = api.op("listPayoutBatchItems", batchId=batch_id, params={"status": state} if state else None)
    expect_status(ex, 200, f"listing the run's items{f' with status={state}' if state else ''}")
    return items(contract, "listPayoutBatchItems", ex)


def paid(api: Api, contract: Contract, run: Run) -> list[dict[str, Any]]:
    """The payouts made with the run's line references."""
    return [p for reference in run.references for p in payouts_with_reference(api, contract, reference)]


def about(event: dict[str, Any], batch_id: str) -> bool:
    """Whether a feed event's data names the run (the data shape is not shown; the profile's carries its id)."""
    return batch_id in set(scalars(event.get("data")))
