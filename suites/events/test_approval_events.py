"""Events > Event types (22), the approval rows: what a `payout_approval.*` event carries beyond the catalog's
fields (test_event_types.py checks those). `approval.error` of `payout_approval.execution_failed` names the
type the payout's creation was refused with: the one the approval itself reads with an API key.
"""

from __future__ import annotations

import pytest

from payconform.suite import expect

from .._support.approvals import settled_approval
from .._support.deliveries import parsed
from .._support.drive import Stage, drive


@pytest.mark.req("EVT-APPROVAL-EXECUTION-FAILED")
@pytest.mark.needs("api_key", "profile", "webhook_receiver", "operator")
def test_execution_failed_carries_the_refusals_error_type(stage: Stage) -> None:
    """Approved with no balance to pay from: the event's `approval.error.type` is an error type of the spec and
    the one the approval reads (the refusal's), not a generic stand-in."""
    subject = drive(stage, {"approval": "approve_unfunded"})
    data = parsed(stage.delivery_of("payout_approval.execution_failed", subject)).get("data")
    approval = data.get("approval") if isinstance(data, dict) else None
    error = approval.get("error") if isinstance(approval, dict) else None
    announced = error.get("type") if isinstance(error, dict) else None
    read = settled_approval(stage.api, subject.id)
    refused = (read.json.get("error") or {}).get("type") if isinstance(read.json.get("error"), dict) else None
    expect(announced in stage.contract.errors,
           f"EVT-APPROVAL-EXECUTION-FAILED: `payout_approval.execution_failed` carries `approval.error` {error!r},"
           " no error type of the spec: 'Approved, but creating the payout was refused; `approval.error` has the"
           " error `type`.'")
    expect(announced == refused,
           f"EVT-APPROVAL-EXECUTION-FAILED: `payout_approval.execution_failed` carries `approval.error.type`"
           f" {announced!r}, but the approval reads {refused!r}: 'Approved, but creating the payout was refused;"
           " `approval.error` has the error `type`' (the refusal's type)", read)
