"""Limits, row Delivery log: the delivery list holds the 50 newest attempts.

More than 50 events are caused for one endpoint (payouts to one recipient, the profile's body); once they
have arrived, both delivery lists answer exactly 50 rows.
"""

from __future__ import annotations

import pytest

from payconform.expect import expect, expect_status

from .._support.drive import Stage, Subject
from .._support.payouts import pay, scenario_destination
from .._support.profile import success

LOG = 50


@pytest.mark.smoke
@pytest.mark.req("WH-DELIVERY-LOG-LIMIT")
@pytest.mark.needs("api_key", "webhook_receiver", "profile")
def test_delivery_log_holds_the_50_newest(stage: Stage) -> None:
    destination = scenario_destination(stage.api, stage.contract, stage.unique)
    payouts = []
    for _ in range(LOG + 1):
        ex = pay(stage.api, stage.contract, stage.unique, destination)
        expect_status(ex, success(stage.contract, "createPayout") - {202}, "creating a payout")
        payouts.append(Subject("payout", ex.json["payoutId"]))
    stage.wait(lambda ds: all(any(s.delivered(d) for d in ds) for s in payouts))
    for op_id in ("listSandboxWebhookDeliveries", "listWebhookEndpointDeliveries"):
        ex = stage.api.op(op_id, endpointId=stage.endpoint["id"])
        expect_status(ex, 200, f"reading the deliveries ({op_id})")
        expect(isinstance(ex.json, list) and len(ex.json) == LOG,
               f"after {LOG + 1} deliveries {op_id} answered {len(ex.json) if isinstance(ex.json, list) else ex.json!r}"
               f" rows, not the {LOG} newest", ex)
