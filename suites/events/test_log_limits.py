"""Limits, row Delivery log: the delivery list holds the 50 newest attempts.

Fifty deliveries reach one endpoint (payouts to one recipient, the profile's body: each is announced as it
moves on; the attempts its log holds already, earlier tests' and other workers', are not paid for again) and
both delivery lists are read; then one event more: each list then answers exactly 50 rows, among them an attempt it did not hold
before, and every attempt it dropped is no newer (`createdAt`) than any it keeps. Other workers' events may reach
the endpoint meanwhile: they are newer still, so the rule holds whatever they add. Ties of one `createdAt` may
be kept either way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from payconform.suite import Exchange, expect, expect_status

from .._support.drive import Stage, Subject
from .._support.instants import is_instant
from .._support.payouts import pay, scenario_destination, timeline
from .._support.profile import items, success

LOG = 50
MOVES = 3  # events a payout of the default scenario causes: pending, processing, completed (Payout lifecycle)
ROUTES = ("listSandboxWebhookDeliveries", "listWebhookEndpointDeliveries")


def _payouts(stage: Stage, destination: str, n: int) -> list[Subject]:
    """`n` payouts to `destination`, once a delivery about each has arrived."""
    made = []
    for _ in range(n):
        ex = pay(stage.api, stage.contract, stage.unique, destination)
        expect_status(ex, success(stage.contract, "createPayout") - {202}, "creating a payout")
        made.append(Subject("payout", ex.json["payoutId"]))
    stage.wait(lambda ds: all(any(s.delivered(d) for d in ds) for s in made))
    return made


def _filled(stage: Stage, destination: str) -> list[dict[str, Any]]:
    """The endpoint's delivery list (`ROUTES[1]`) once its log holds `LOG` attempts: payouts to `destination`
    for the shortfall, `LOG` payouts at most. What it holds already costs nothing (earlier tests' events and other
    workers' reach the worker's endpoint: the test runs last, `fill`); one round pays for the shortfall at
    `MOVES` deliveries a payout and waits for them to move on (the profile's timeline)."""
    rows = _log(stage, ROUTES[1])[1]
    if len(rows) >= LOG:
        return rows
    _payouts(stage, destination, min(LOG, -(-(LOG - len(rows)) // MOVES)))
    if stage.clock is not None:
        stage.clock.advance(stage.org_id, timeline(stage.contract)["settle_seconds"])
    wait = stage.patience + (0 if stage.clock is not None else timeline(stage.contract)["settle_seconds"])
    stage.box.wait_for(lambda ds: len(ds) >= LOG - len(rows), wait, flush=stage.flush)
    return _log(stage, ROUTES[1])[1]


def _log(stage: Stage, op_id: str) -> tuple[Exchange, list[dict[str, Any]]]:
    """A delivery list's answer and rows: the management route's a bare array (Endpoints > Webhook endpoint
    management); the sandbox route's "Recent delivery attempts" where the profile's `page.items` says (its shape is
    not shown). Neither's order is read."""
    ex = stage.api.op(op_id, endpointId=stage.endpoint["id"])
    expect_status(ex, 200, f"reading the deliveries ({op_id})")
    rows = ex.json if op_id == "listWebhookEndpointDeliveries" else items(stage.contract, op_id, ex)
    expect(isinstance(rows, list) and all(isinstance(r, dict) for r in rows),
           f"{op_id} answered {ex.json!r}, not a bare array of deliveries" if op_id == "listWebhookEndpointDeliveries"
           else f"{op_id} lists {rows!r}, not delivery objects", ex)
    return ex, rows


def _instant(row: dict[str, Any]) -> datetime:
    at = row.get("createdAt")
    expect(is_instant(at), f"a delivery's `createdAt` is {at!r}, not an instant: {row!r}")
    return datetime.fromisoformat(str(at).replace("Z", "+00:00"))


@pytest.mark.smoke
@pytest.mark.fill
@pytest.mark.req("WH-DELIVERY-LOG-LIMIT")
@pytest.mark.needs("api_key", "webhook_receiver", "profile")
def test_delivery_log_holds_the_50_newest(stage: Stage) -> None:
    destination = scenario_destination(stage.api, stage.contract, stage.unique)
    before = {ROUTES[1]: _filled(stage, destination), ROUTES[0]: _log(stage, ROUTES[0])[1]}
    _payouts(stage, destination, 1)
    for op_id in ROUTES:
        ex, rows = _log(stage, op_id)
        expect(len(rows) == LOG, f"after more than {LOG} deliveries {op_id} answered {len(rows)} rows, not the "
               f"{LOG} newest", ex)
        kept = {row.get("id") for row in rows}
        dropped = [row for row in before[op_id] if row.get("id") not in kept]
        expect(len(kept - {row.get("id") for row in before[op_id]}) > 0,
               f"after one delivery more {op_id} lists the same {LOG} attempts as before: not the newest", ex)
        oldest_kept = min(map(_instant, rows))
        late = [row for row in dropped if _instant(row) > oldest_kept]
        expect(not late, f"{op_id} dropped attempts newer than one it keeps (kept from {oldest_kept.isoformat()}; "
               f"dropped {[(r.get('id'), r.get('createdAt')) for r in late[:3]]}): not the {LOG} newest", ex)
