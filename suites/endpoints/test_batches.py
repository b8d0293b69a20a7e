"""Endpoints > Payout operations, the batch rows; Resources > Payout batch and items.

Create answers 202; a run is read and listed by the profile's id field; its items are read with the
`status` filter; confirm answers 200 or 202; cancel needs an `Idempotency-Key`, takes no body, answers 200
with the run `canceled`, and 404 BATCH_NOT_FOUND for a run that does not exist. The request body of a run
and its timing are the profile's (`createPayoutBatch`, `sandbox.batch`). A run a test moves along is its own,
on the target's organization, waiting out the timeline's seconds (whose clock it must not move); the tests
that only read runs share two (`read_only_runs`).
"""

from __future__ import annotations

import pytest

from payconform.suite import (
    Api,
    Contract,
    Pager,
    expect,
    expect_error,
    expect_error_body,
    expect_status,
)

from .._support.batches import (
    NOWHERE,
    cancel,
    confirm,
    confirmed,
    create,
    line,
    lines_of,
    lines_to,
    profile,
    reach,
    read,
    read_only_runs,
    settle,
    statuses,
)
from .._support.payouts import payable_destination
from .._support.realtime import Timed
from .._support.types import Unique


@pytest.mark.req("BATCH-CREATE", "BATCH-STATUS-VALUES")
@pytest.mark.needs("profile")
def test_create_answers_202_with_the_run(api: Api, contract: Contract, unique: Unique) -> None:
    """202, and the run is in one of the spec's batch statuses: read back with GET, since the spec shows no body
    for the 202 ("Creates a run; answers 202"); a `status` in the answer, if any, is one of them too."""
    run = read_only_runs(api, contract, unique)[0]
    expect_status(run.answer, 202, "creating a payout batch")
    answered = run.answer.json.get("status") if isinstance(run.answer.json, dict) else None
    expect(answered is None or answered in statuses(contract),
           f"the 202 answers status {answered!r}, not one of {statuses(contract)}", run.answer)
    ex = read(api, contract, run.id)
    expect(ex.json.get("status") in statuses(contract),
           f"the new run reads status {ex.json.get('status')!r}, not one of {statuses(contract)}", ex)


@pytest.mark.req("BATCH-CREATE")
@pytest.mark.needs("profile")
def test_an_unreadable_run_is_400(api: Api, unique: Unique) -> None:
    """A body no run can be read from (a JSON string, whatever the profile's shape of a run) is refused with
    one of the row's statuses, "400, 409, 500": a 400 with an error body of any type, not a 422."""
    ex = api.op("createPayoutBatch", json=unique("not a run"))
    expect_error_body(ex, "creating a payout batch from a JSON string")
    expect(ex.status == 400, f"an unreadable run body answered {ex.status}, not 400 (the row lists 202; 400, 409, "
           "500)", ex)


@pytest.mark.req("BATCH-STATUS-VALUES")
@pytest.mark.needs("profile")
def test_every_status_read_is_a_batch_status(timed: Timed, contract: Contract, unique: Unique) -> None:
    """Read along a whole run (received, validating, awaiting confirmation, completed), every status is one
    of the spec's six."""
    api, clock = timed.api, timed.clock
    run = create(api, contract, unique)
    timeline, elapsed = profile(contract)["timeline"], 0.0
    seen = [read(api, contract, run.id).json.get("status")]
    for state in ("validating", "awaiting_confirmation"):
        clock.advance(api.org_id, float(timeline[state]) - elapsed)
        elapsed = float(timeline[state])
        seen.append(read(api, contract, run.id).json.get("status"))
    confirm(api, run.id)
    seen.append(settle(api, clock, api.org_id, contract, run, tuple(statuses(contract))).json.get("status"))
    odd = [s for s in seen if s not in statuses(contract)]
    expect(not odd, f"the run read statuses {seen}; {odd} are not batch statuses {statuses(contract)}")


@pytest.mark.req("BATCH-EXTERNAL-REFERENCE")
@pytest.mark.needs("profile")
def test_a_run_carries_its_external_reference(api: Api, contract: Contract, unique: Unique) -> None:
    """The run read back carries the `externalReferenceId` it was created with."""
    run = read_only_runs(api, contract, unique)[1]
    got = read(api, contract, run.id).json.get("externalReferenceId")
    expect(got == run.external_reference_id, f"the run reads externalReferenceId {got!r}, "
           f"created with {run.external_reference_id!r}")


@pytest.mark.req("BATCH-READ")
@pytest.mark.needs("profile")
def test_read_one_run(api: Api, contract: Contract, unique: Unique) -> None:
    """Of two runs, reading the first by its id answers that run (not the newest)."""
    first = read_only_runs(api, contract, unique)[0]
    got = read(api, contract, first.id).json.get("externalReferenceId")
    expect(got == first.external_reference_id,
           f"reading run {first.id} answered externalReferenceId {got!r}, not {first.external_reference_id!r}")


@pytest.mark.req("BATCH-LIST")
@pytest.mark.needs("profile")
def test_list_runs(api: Api, contract: Contract, unique: Unique) -> None:
    """The organization's runs are listed: both runs the test makes, among whatever else the target's own
    organization holds, on the pages read until both were seen (order and page size are not shown)."""
    made = {run.id for run in read_only_runs(api, contract, unique)}
    field = profile(contract)["id_field"]
    listed, last = Pager(api, contract, "listPayoutBatches").gather(made, "listing payout batches",
                                                                    key=lambda b: b.get(field))
    expect(set(listed) == made, f"the list holds {sorted(listed)} of the runs made, {sorted(made)}", last.ex)


@pytest.mark.req("BATCH-ITEMS")
@pytest.mark.needs("profile")
def test_items_are_the_lines_of_the_run(api: Api, contract: Contract, unique: Unique) -> None:
    """The items of a three-line run are three."""
    run = read_only_runs(api, contract, unique)[1]
    got = lines_of(api, contract, run.id)
    expect(len(got) == 3, f"a run of 3 lines lists {len(got)} items")


@pytest.mark.req("BATCH-ITEM-FAILED", "BATCH-ITEMS-STATUS-FILTER", "BATCH-ITEMS")
@pytest.mark.needs("profile")
def test_an_invalid_line_is_read_with_the_status_filter(timed: Timed, contract: Contract, unique: Unique) -> None:
    """Two good lines and one to no payable account: once validated, `status=invalid` lists that one line,
    `invalid` with a non-empty `errors[]`."""
    api, clock = timed.api, timed.clock
    destination = payable_destination(api, contract, unique)
    lines = [*lines_to(contract, destination, unique, 2), line(contract, NOWHERE, unique("line"))]
    run = create(api, contract, unique, lines)
    reach(api, clock, api.org_id, contract, run, "awaiting_confirmation")
    invalid = lines_of(api, contract, run.id, "invalid")
    expect(len(invalid) == 1, f"status=invalid lists {len(invalid)} items of a run with one invalid line")
    expect(invalid[0].get("status") == "invalid", f"status=invalid lists an item {invalid[0].get('status')!r}")
    errors = invalid[0].get("errors")
    expect(isinstance(errors, list) and errors, f"the invalid line carries errors {errors!r}, not a non-empty array")


@pytest.mark.req("BATCH-ITEM-FAILED", "BATCH-ITEMS-STATUS-FILTER")
@pytest.mark.needs("operator", "clock", "profile")
def test_a_line_refused_at_creation_is_create_failed(fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """A line valid at validation that the balance cannot cover when confirmed (the profile's
    `create_failed_line`): `status=create_failed` lists it, with a non-empty `errors[]`; the other is made."""
    org = fresh_org()
    destination = payable_destination(org.api, contract, unique)
    top_up = contract.profile["sandbox"]["top_up"]["amount"]
    too_much = f"{int(float(top_up)) * 2}.00"
    lines = [line(contract, destination, unique("line")), line(contract, destination, unique("line"),
                                                                 sourceAmount=too_much)]
    run = create(org.api, contract, unique, lines)
    confirmed(org.api, clock, org.org_id, contract, run)
    failed = lines_of(org.api, contract, run.id, "create_failed")
    expect(len(failed) == 1, f"status=create_failed lists {len(failed)} items; one line was over the balance")
    expect(failed[0].get("status") == "create_failed", f"status=create_failed lists {failed[0].get('status')!r}")
    errors = failed[0].get("errors")
    expect(isinstance(errors, list) and errors, f"the failed line carries errors {errors!r}, not a non-empty array")


@pytest.mark.req("BATCH-CONFIRM")
@pytest.mark.needs("profile")
def test_confirm_answers_200_or_202(timed: Timed, contract: Contract, unique: Unique) -> None:
    """Confirming a run awaiting confirmation answers 200 or 202 (and a second confirm, 409)."""
    api, clock = timed.api, timed.clock
    run = create(api, contract, unique)
    reach(api, clock, api.org_id, contract, run, "awaiting_confirmation")
    expect_status(confirm(api, run.id), {200, 202}, "confirming a run awaiting confirmation")
    settle(api, clock, api.org_id, contract, run, ("completed",))
    expect_error(confirm(api, run.id), 409, "PAYOUT_BATCH_NOT_CONFIRMABLE", "confirming a completed run")


@pytest.mark.req("BATCH-CANCEL-OK")
@pytest.mark.needs("profile")
def test_cancel_answers_the_canceled_run(api: Api, contract: Contract, unique: Unique) -> None:
    """200 and the run, now `canceled`."""
    run = create(api, contract, unique)
    ex = cancel(api, run.id)
    expect_status(ex, 200, "cancelling a new run")
    expect(isinstance(ex.json, dict) and ex.json.get("status") == "canceled",
           f"the cancel answered a run in {ex.json.get('status') if isinstance(ex.json, dict) else ex.json!r}", ex)


@pytest.mark.req("BATCH-CANCEL-IDEM")
@pytest.mark.needs("profile")
def test_cancel_requires_a_key_and_takes_no_body(api: Api, contract: Contract, unique: Unique) -> None:
    """Without `Idempotency-Key`: 400 IDEMPOTENCY_KEY_REQUIRED and the run is not canceled; with one and no
    body: 200."""
    run = create(api, contract, unique)
    expect_error(cancel(api, run.id, idempotency_key=None), 400, "IDEMPOTENCY_KEY_REQUIRED",
                 "cancelling a run without an Idempotency-Key")
    expect(read(api, contract, run.id).json.get("status") != "canceled", "a cancel without a key canceled the run")
    expect_status(cancel(api, run.id), 200, "cancelling with a key and no body")


@pytest.mark.req("BATCH-CANCEL-NOT-FOUND", "ERR-BATCH-NOT-FOUND")
def test_cancel_an_unknown_run(api: Api, unique: Unique) -> None:
    """404 BATCH_NOT_FOUND."""
    expect_error(cancel(api, unique("no-such-batch")), 404, "BATCH_NOT_FOUND", "cancelling a run that does not exist")
