"""Endpoints > Payout operations, the approval queue: `GET /payouts/approvals` ("Approval queue, readable with an
API key", `listPayoutApprovals`) and `GET /payouts/approvals/{approvalId}` ("One approval", `getPayoutApproval`).

Approvals are made by holding payouts at the profile's approval threshold (`sandbox.approval`); the list's
envelope is the profile's (`page.items`). Each test holds its own approvals on the target's organization and
finds them by id among whatever else the queue holds.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from payconform.suite import Api, Contract, Pager, expect, expect_error

from .._support.approvals import hold, read_approval, threshold
from .._support.money import as_decimal
from .._support.types import Unique


@pytest.mark.req("APPROVAL-LIST")
@pytest.mark.needs("profile")
def test_queue_lists_the_held_payouts(api: Api, contract: Contract, unique: Unique) -> None:
    """Two held payouts: the queue read with the API key lists both approvals, `pending`, among whatever else
    the target's own organization holds, on the pages read until both were seen (order and page size are not
    shown)."""
    held = [hold(api, contract, unique).approval_id for _ in range(2)]
    listed, last = Pager(api, contract, "listPayoutApprovals").gather(set(held), "reading the approval queue with "
                                                                      "an API key")
    expect(sorted(listed) == sorted(held), f"the queue lists {sorted(listed)} of the held approvals {held}", last.ex)
    statuses = {approval_id: listed[approval_id].get("status") for approval_id in held}
    expect(all(s == "pending" for s in statuses.values()), f"the queue shows statuses {statuses}", last.ex)


@pytest.mark.req("APPROVAL-READ")
@pytest.mark.needs("profile")
def test_read_one_approval(api: Api, contract: Contract, unique: Unique) -> None:
    """Each of two held approvals reads back as itself (`pending`, its amount); an unknown id is 404 NOT_FOUND."""
    at = Decimal(threshold(api, contract))
    amounts = (str(at), str(at + 1000))  # at and above the organization's threshold: both held
    held = [hold(api, contract, unique, amount) for amount in amounts]
    for approval, amount in zip(held, amounts):
        got = read_approval(api, approval.approval_id).json
        expect(got.get("status") == "pending" and as_decimal(got.get("amount")) == Decimal(amount),
               f"approval {approval.approval_id} reads status {got.get('status')!r}, amount {got.get('amount')!r};"
               f" it holds a `pending` payout of {amount}")
    expect_error(api.op("getPayoutApproval", approvalId=held[0].approval_id + "x"), 404, "NOT_FOUND",
                 "reading an approval id that does not exist")
