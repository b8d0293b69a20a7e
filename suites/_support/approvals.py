"""Payouts held for approvers: the 202 `pending_approval` answer and the approval read with an API key.

What makes a payout need approval and the 202 body come from the profile (`sandbox.approval`): the spec
shows the 202 with `pending_approval` but neither the threshold nor the body. The threshold is read where the
organization's policy shows it (`getPolicy`, at the profile's `policy_field`), the profile's value standing in
where it does not. Decisions are dashboard actions, so tests ask the operator (`approve_payout`,
`reject_payout`).
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any, NamedTuple

from payconform.suite import Api, Contract, Exchange, expect, expect_status

from . import runwide
from .balance import fund_sandbox
from .payouts import payout_body, scenario_destination
from .types import Unique, shared_scope

EXECUTION_WAIT = 30.0  # seconds an `approved` approval may take to be executed (the spec gives no bound)
POLL = 0.5


class Held(NamedTuple):
    approval_id: str
    reference: str
    answer: Exchange


def policy(contract: Contract) -> dict[str, Any]:
    return contract.profile["sandbox"]["approval"]


def threshold(api: Api, contract: Contract) -> str:
    """The organization's approval threshold: what its `getPolicy` answer shows at the profile's
    `policy_field`, read once per organization and mode in the run (`runwide`), else (no such field, or null:
    the answer does not show one) the profile's `threshold`."""

    def read() -> str | None:
        ex = api.op("getPolicy")
        value: Any = ex.json if ex.status == 200 else None
        for name in str(policy(contract).get("policy_field") or "").split("."):
            value = value.get(name) if isinstance(value, dict) else None
        try:
            return str(Decimal(str(value)).quantize(Decimal("0.01"))) if value is not None else None
        except ArithmeticError:
            return None

    shown = runwide.shared(shared_scope(api), "approval threshold", read)
    return shown if shown is not None else str(policy(contract)["threshold"])


def fund_for_threshold(api: Api, contract: Contract) -> None:
    """Top the balance up past the approval threshold, so an approved payout can be paid."""
    needed = Decimal(threshold(api, contract))
    top_up = Decimal(contract.profile["sandbox"]["top_up"]["amount"])
    for _ in range(int(needed / top_up) + 1):
        fund_sandbox(api, contract)


def hold(api: Api, contract: Contract, unique: Unique, amount: str | None = None) -> Held:
    """A payout at the approval threshold (`threshold`): 202, `pending_approval`, an approval id."""
    reference = unique("ref")
    destination = scenario_destination(api, contract, unique)
    payload = payout_body(contract, destination, reference, sourceAmount=amount or threshold(api, contract))
    ex = api.op("createPayout", json=payload)
    expect_status(ex, 202, "a payout an approval threshold applies to")
    answer = policy(contract)["answer"]
    values = [v for v in ex.json.values() if isinstance(v, str)] if isinstance(ex.json, dict) else []
    expect(answer["status_value"] in values, f"the 202 answer does not say {answer['status_value']!r}", ex)
    approval_id = ex.json.get(answer["approval_id"])
    expect(isinstance(approval_id, str) and approval_id, f"the 202 answer has no `{answer['approval_id']}`", ex)
    return Held(approval_id, reference, ex)


def read_approval(api: Api, approval_id: str) -> Exchange:
    ex = api.op("getPayoutApproval", approvalId=approval_id)
    expect_status(ex, 200, "reading the approval with an API key")
    expect(isinstance(ex.json, dict) and ex.json.get("id") == approval_id,
           f"GET /payouts/approvals/{approval_id} answered another approval or no `id`", ex)
    return ex


def settled_approval(api: Api, approval_id: str, patience: float = EXECUTION_WAIT) -> Exchange:
    """The approval once it has left `approved`, or as it reads after `patience` seconds: `approved` and
    `executed` are two rows of the table ('approved' -> 'executed' when the instruction becomes a payout), so a
    service may execute after the decision rather than within it."""
    deadline = time.monotonic() + patience
    ex = read_approval(api, approval_id)
    while ex.json.get("status") == "approved" and time.monotonic() < deadline:
        time.sleep(POLL)
        ex = read_approval(api, approval_id)
    return ex
