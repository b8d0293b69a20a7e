"""States and transitions > Payout approval, and the payout table's approval row, walked row by row.

A payout at the profile's approval threshold is held (202 `pending_approval`, no payout); the decisions
are dashboard actions, asked of the operator; expiry is 24 hours on the organization's clock. The approval
is read with the API key (`GET /payouts/approvals/{approvalId}`), the payouts with `GET /orders?reference=`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from payconform.suite import Contract, Pager, expect

from .._support.answers import scalars
from .._support.approvals import EXECUTION_WAIT, fund_for_threshold, hold, read_approval, settled_approval
from .._support.events import feed
from .._support.payouts import create_payout, payouts_with_reference, read_payout
from .._support.types import Unique

DAY = 86400
MINUTE = 60


@pytest.mark.smoke
@pytest.mark.req("PAYOUT-T-CREATE-APPROVAL", "APPROVAL-T-PENDING", "PAYOUT-CREATE")
@pytest.mark.needs("profile")
def test_a_payout_over_the_threshold_is_held(api, contract: Contract, unique: Unique) -> None:
    """202 `pending_approval`, the approval `pending`, a `payout_approval.pending` event about it in the feed
    (its data names the approval's id at any depth: the body's shape is the `approval` object), and no payout
    with that reference."""
    held = hold(api, contract, unique)
    approval = read_approval(api, held.approval_id)
    expect(approval.json.get("status") == "pending", f"the new approval is {approval.json.get('status')!r}", approval)
    found = payouts_with_reference(api, contract, held.reference)
    expect(not found, f"a held payout already exists: {[p.get('payoutId') for p in found]}")

    def about(event: dict) -> bool:
        return held.approval_id in set(scalars(event.get("data")))

    announced = feed(api, found=lambda rows: any(map(about, rows)), type="payout_approval.pending")
    expect(any(map(about, announced)),
           f"PAYOUT-T-CREATE-APPROVAL: the held payout's row reads \"answer is `202` with `pending_approval` | "
           f"`payout_approval.pending`\", but the event feed holds no payout_approval.pending naming approval "
           f"{held.approval_id}", approval)


@pytest.mark.smoke
@pytest.mark.req("APPROVAL-T-APPROVED", "APPROVAL-T-EXECUTED")
@pytest.mark.needs("operator", "profile")
def test_an_approved_payout_is_executed(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """Approved, the held instruction becomes a payout: `executed` with the `payoutId` of the one payout made."""
    org = fresh_org()
    fund_for_threshold(org.api, contract)
    held = hold(org.api, contract, unique)
    operator.approve_payout(org.org_id, held.approval_id)
    approval = settled_approval(org.api, held.approval_id)
    expect(approval.json.get("status") == "executed",
           f"the approved approval reads {approval.json.get('status')!r}, not 'executed' (read until it left "
           f"'approved', up to {EXECUTION_WAIT:g} s)", approval)
    payout_id = approval.json.get("payoutId")
    expect(isinstance(payout_id, str) and payout_id, "the executed approval carries no `payoutId`", approval)
    expect(read_payout(org.api, payout_id).json.get("reference") == held.reference,
           f"payout {payout_id} does not carry the held request's reference {held.reference!r}")
    found = [p.get("payoutId") for p in payouts_with_reference(org.api, contract, held.reference)]
    expect(found == [payout_id], f"GET /orders?reference= finds {found}, expected exactly [{payout_id!r}]")


@pytest.mark.smoke
@pytest.mark.req("APPROVAL-T-REJECTED")
@pytest.mark.needs("operator", "profile")
def test_a_rejected_payout_is_never_sent(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """Rejected, the approval reads `rejected` and no payout exists for it."""
    org = fresh_org()
    fund_for_threshold(org.api, contract)
    held = hold(org.api, contract, unique)
    operator.reject_payout(org.org_id, held.approval_id)
    approval = read_approval(org.api, held.approval_id)
    expect(approval.json.get("status") == "rejected", f"the rejected approval reads {approval.json.get('status')!r}",
           approval)
    found = payouts_with_reference(org.api, contract, held.reference)
    expect(not found, f"a rejected payout was sent: {[p.get('payoutId') for p in found]}")


@pytest.mark.smoke
@pytest.mark.req("APPROVAL-T-EXPIRED", "APPROVAL-EXPIRY-LIMIT")
@pytest.mark.needs("operator", "clock", "profile")
def test_an_undecided_approval_expires_after_24_hours(fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """Still `pending` a minute before 24 hours, `expired` a minute after; nothing is sent."""
    org = fresh_org()
    held = hold(org.api, contract, unique)
    clock.advance(org.org_id, DAY - MINUTE)
    before = read_approval(org.api, held.approval_id)
    expect(before.json.get("status") == "pending",
           f"a minute before 24 hours the approval reads {before.json.get('status')!r}", before)
    clock.advance(org.org_id, 2 * MINUTE)
    after = read_approval(org.api, held.approval_id)
    expect(after.json.get("status") == "expired",
           f"a minute after 24 hours the approval reads {after.json.get('status')!r}, not 'expired'", after)
    expect(not payouts_with_reference(org.api, contract, held.reference), "an expired approval sent a payout")


@pytest.mark.smoke
@pytest.mark.req("APPROVAL-T-EXECUTION-FAILED")
@pytest.mark.needs("operator", "profile")
def test_a_refused_execution_carries_the_error_type(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """Approved with no balance to pay from, creating the payout is refused: `execution_failed` with
    `error.type` an error type of the spec, and no payout."""
    org = fresh_org()
    held = hold(org.api, contract, unique)
    operator.approve_payout(org.org_id, held.approval_id)
    approval = settled_approval(org.api, held.approval_id)
    expect(approval.json.get("status") == "execution_failed",
           f"the approval whose payout could not be created reads {approval.json.get('status')!r} (read until it "
           f"left 'approved', up to {EXECUTION_WAIT:g} s)", approval)
    error = approval.json.get("error")
    error_type = error.get("type") if isinstance(error, dict) else None
    expect(error_type in contract.errors, f"`error` is {error!r}; it carries no error `type` of the spec", approval)
    expect(not payouts_with_reference(org.api, contract, held.reference), "a failed execution sent a payout")


@pytest.mark.req("APPROVAL-EXPIRES-AT", "APPROVAL-FIELDS", "APPROVAL-QUEUE-READABLE")
@pytest.mark.needs("profile")
def test_the_queue_is_readable_with_an_api_key(api, contract: Contract, unique: Unique) -> None:
    """The approval is in the queue and readable by id, with the spec's fields, `requiredApprovals` one or more,
    `approvals` 0 while no approver has decided, and `expiresAt` 24 hours after `createdAt`."""
    held = hold(api, contract, unique)
    approval = read_approval(api, held.approval_id).json
    missing = [f for f in ("id", "kind", "status", "requiredApprovals", "approvals", "amount", "currency",
                           "destinationAccountId", "createdAt", "expiresAt", "updatedAt") if f not in approval]
    expect(not missing, f"the approval lacks {missing}")
    required, approvals = approval["requiredApprovals"], approval["approvals"]
    expect(type(required) is int and required >= 1,
           f"APPROVAL-FIELDS: a held payout's `requiredApprovals` is {required!r}, not a count of one or more")
    expect(type(approvals) is int and approvals == 0,
           f"APPROVAL-FIELDS: the spec reads \"`approvals` (count so far)\", but an approval no approver has decided "
           f"reads `approvals: {approvals!r}`, not 0")
    created, expires = (datetime.fromisoformat(str(approval[k])) for k in ("createdAt", "expiresAt"))
    expect(expires - created == timedelta(hours=24),
           f"expiresAt is {expires - created} after createdAt, not 24 hours")
    page = Pager(api, contract, "listPayoutApprovals").seek(
        lambda a: isinstance(a, dict) and a.get("id") == held.approval_id, "reading the approval queue with an API key")
    ids = [a.get("id") for a in page.items if isinstance(a, dict)]
    expect(held.approval_id in ids, f"the approval queue (every page, order and page size not shown) does not list "
           f"{held.approval_id}", page.ex)


@pytest.mark.req("PAYOUT-CREATE")
@pytest.mark.needs("operator", "profile")
def test_a_velocity_cap_holds_the_payout_over_it(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """With a cap of one payout an hour, the first small payout is made and the second is held (202)."""
    org = fresh_org()
    operator.set_approval_policy(org.org_id, threshold=None, velocity_cap={"count": 1, "window_seconds": 3600})
    create_payout(org.api, contract, unique)
    hold(org.api, contract, unique, amount="10.00")
