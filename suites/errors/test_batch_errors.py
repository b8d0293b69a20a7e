"""Errors > Batch and payout link errors, the batch rows (and Resources > Error body: `originalBatchId`,
`approvalId`). PAYOUT_BATCH_NOT_CONFIRMABLE and PAYOUT_BATCH_NOT_CANCELABLE are walked with the transition
table (`suites/states/test_payout_batch.py`).

What makes a run need approvers is the organization's approval policy (a dashboard setting: read where the
policy shows its threshold, else the profile's; the operator sets it and decides on a fresh organization); the
profile's `sandbox.batch.approval` applies it to the total of the run's lines.
"""

from __future__ import annotations

from decimal import ROUND_UP, Decimal

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status

from .._support.answers import scalars
from .._support.approvals import read_approval, threshold
from .._support.batches import confirm, create, lines_to, paid, reach, settle, submit
from .._support.events import feed
from .._support.payouts import payable_destination
from .._support.profile import items, success
from .._support.realtime import Timed
from .._support.types import Unique


@pytest.mark.smoke(ids=["listPayoutBatchItems"])
@pytest.mark.req("ERR-BATCH-NOT-FOUND")
@pytest.mark.parametrize("op_id", ["getPayoutBatch", "listPayoutBatchItems", "confirmPayoutBatch"])
def test_an_unknown_run_is_batch_not_found(api: Api, unique: Unique, op_id: str) -> None:
    """404 BATCH_NOT_FOUND for a batch id the organization does not have."""
    expect_error(api.op(op_id, batchId=unique("no-such-batch")), 404, "BATCH_NOT_FOUND",
                 f"{op_id} of a run that does not exist")


@pytest.mark.smoke
@pytest.mark.req("ERR-PAYOUT-BATCH-DUPLICATE-REFERENCE", "ERRBODY-ORIGINAL-BATCH-ID", "BATCH-EXTERNAL-REFERENCE")
@pytest.mark.needs("profile")
def test_a_taken_external_reference_names_the_original_run(api: Api, contract: Contract, unique: Unique) -> None:
    """A second run (other lines) under the first one's `externalReferenceId`: 409
    PAYOUT_BATCH_DUPLICATE_REFERENCE with `originalBatchId` the first run's id."""
    first = create(api, contract, unique)
    destination = payable_destination(api, contract, unique)
    ex = submit(api, contract, lines_to(contract, destination, unique, 1), first.external_reference_id)
    body = expect_error(ex, 409, "PAYOUT_BATCH_DUPLICATE_REFERENCE", "a run under a taken externalReferenceId")
    expect(body.get("originalBatchId") == first.id,
           f"originalBatchId is {body.get('originalBatchId')!r}, the first run is {first.id!r}", ex)


@pytest.mark.smoke
@pytest.mark.req("ERR-MASS-PAYOUTS-DISABLED")
@pytest.mark.needs("operator", "profile")
def test_an_organization_that_opted_out_cannot_submit(fresh_org, operator, contract: Contract,
                                                      unique: Unique) -> None:
    """With the organization's `mass_payouts` feature off: 403 MASS_PAYOUTS_DISABLED, and no run exists."""
    org = fresh_org()
    lines = lines_to(contract, payable_destination(org.api, contract, unique), unique, 1)
    operator.update_org(org.org_id, features=["developer"])
    expect_error(submit(org.api, contract, lines, unique("run")), 403, "MASS_PAYOUTS_DISABLED",
                 "submitting a run for an organization that opted out of batches")
    listed = org.api.op("listPayoutBatches")
    expect_status(listed, 200, "listing the organization's runs")
    expect(not items(contract, "listPayoutBatches", listed), "a refused run was recorded anyway", listed)


@pytest.mark.smoke
@pytest.mark.req("ERR-PAYOUT-BATCH-AWAITING-APPROVAL", "ERRBODY-APPROVAL-ID", "EVT-APPROVAL-PENDING")
@pytest.mark.needs("profile")
def test_a_run_over_the_threshold_is_not_confirmed(timed: Timed, contract: Contract, unique: Unique) -> None:
    """Two lines, each under the organization's approval threshold (as its policy shows it, else the profile's
    `sandbox.approval`) and together at it: once the run awaits confirmation, confirm answers 409
    PAYOUT_BATCH_AWAITING_APPROVAL with an `approvalId` the API key can read, the feed announces the approval
    (`payout_approval.pending`: "Payout or batch waits for approvers"), and the run pays nothing. With a key
    alone the run is the target's own organization's, its timeline waited out in real time (`timed`)."""
    at = Decimal(threshold(timed.api, contract))
    half = (at / 2).quantize(Decimal("0.01"), rounding=ROUND_UP)
    destination = payable_destination(timed.api, contract, unique)
    run = create(timed.api, contract, unique, lines_to(contract, destination, unique, 2, sourceAmount=str(half)))
    reach(timed.api, timed.clock, timed.org_id, contract, run, "awaiting_confirmation")
    body = expect_error(confirm(timed.api, run.id), 409, "PAYOUT_BATCH_AWAITING_APPROVAL",
                        f"confirming a run of two lines of {half} (the approval threshold is {at})")
    approval_id = body.get("approvalId")
    expect(isinstance(approval_id, str) and approval_id, f"the error body carries approvalId {approval_id!r}")
    read_approval(timed.api, approval_id)
    announced = feed(timed.api, found=lambda rows: any(approval_id in scalars(e.get("data")) for e in rows),
                     type="payout_approval.pending")
    expect(any(approval_id in scalars(e.get("data")) for e in announced),
           f"EVT-APPROVAL-PENDING: \"`payout_approval.pending` | Payout or batch waits for approvers\", but the "
           f"feed holds no payout_approval.pending naming the run's approval {approval_id}")
    expect(not paid(timed.api, contract, run), "a run waiting for approvers made payouts")


@pytest.mark.req("ERR-PAYOUT-BATCH-AWAITING-APPROVAL", "ERRBODY-APPROVAL-ID")
@pytest.mark.needs("operator", "clock", "profile")
def test_a_rejected_run_is_not_confirmed(fresh_org, operator, clock, contract: Contract, unique: Unique) -> None:
    """Over the organization's threshold, confirm answers 409 PAYOUT_BATCH_AWAITING_APPROVAL with an
    `approvalId` the API key can read, before anyone decides and after an approver says no; nothing is sent."""
    org = fresh_org()
    operator.set_approval_policy(org.org_id, threshold="15.00")
    run = create(org.api, contract, unique, n=2)
    reach(org.api, clock, org.org_id, contract, run, "awaiting_confirmation")
    body = expect_error(confirm(org.api, run.id), 409, "PAYOUT_BATCH_AWAITING_APPROVAL", "confirming a held run")
    approval_id = body.get("approvalId")
    expect(isinstance(approval_id, str) and approval_id, f"the error body carries approvalId {approval_id!r}")
    read_approval(org.api, approval_id)
    operator.reject_payout(org.org_id, approval_id)
    expect_error(confirm(org.api, run.id), 409, "PAYOUT_BATCH_AWAITING_APPROVAL", "confirming a rejected run")
    expect(not paid(org.api, contract, run), "a run waiting for approvers made payouts")


@pytest.mark.req("ERRBODY-APPROVAL-ID", "ERR-PAYOUT-BATCH-AWAITING-APPROVAL")
@pytest.mark.needs("operator", "clock", "profile")
def test_the_named_approval_releases_the_run(fresh_org, operator, clock, contract: Contract, unique: Unique) -> None:
    """Approving the approval the error names lets the same run be confirmed; its lines are then paid."""
    org = fresh_org()
    operator.set_approval_policy(org.org_id, threshold="15.00")
    run = create(org.api, contract, unique, n=2)
    reach(org.api, clock, org.org_id, contract, run, "awaiting_confirmation")
    body = expect_error(confirm(org.api, run.id), 409, "PAYOUT_BATCH_AWAITING_APPROVAL", "confirming a held run")
    operator.approve_payout(org.org_id, str(body.get("approvalId")))
    expect_status(confirm(org.api, run.id), success(contract, "confirmPayoutBatch"),
                  "confirming the run once its approval is given")
    settle(org.api, clock, org.org_id, contract, run, ("completed",))
    expect(len(paid(org.api, contract, run)) == len(run.references), "the approved run did not pay its lines")
