"""Events > Event types (22): every type the suite can cause, driven through the domain, observed as a delivery
(with every check of Delivery headers and Event envelope) and as the same object in the feed.

Each row of `contract/catalog/events.yaml` with a `drive` is one case; its `data` is checked against the
resource the spec shows (the flat `WebhookPayout`, the `approval` object) and the row's `expect` and
`present`, and left open where the spec says "not shown". For a payout or a checkout payment, its events in
the feed form a walk of its transition table (`event_moves` in `contract/catalog/transitions.yaml`), and each
of them reached the endpoint at least once. The types every walk passes through on its way to the row's
(`events.passed_through`: `payout.pending` and `payout.completed` before `payout.returned`) are checked on the
same subject as the row itself, at no request more. `webhook_endpoint.disabled` is driven by test_retries.py;
batch runs (the profile's timeline) need the clock.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import expect, run_contract

from .._support.answers import by_id, contains
from .._support.deliveries import checked, parsed
from .._support.drive import Stage, Subject, drive
from .._support.events import data_problems, feed, has, passed_through, walk_problems
from .._support.machines import RETURNED

MACHINES = {"payout": "payout", "payment": "checkout_payment"}
ENVELOPE = ("id", "sequence", "type", "createdAt", "apiVersion", "livemode", "data")


def _passed(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The catalog rows of the types every walk to `row`'s type passes through (its machine's `event_moves`)."""
    contract = run_contract()
    by_type = {r["type"]: r for r in contract.events["types"]}
    for machine in MACHINES.values():
        moves = contract.machine(machine)["event_moves"]
        if any(after == row["type"] for _, after in moves):
            return [by_type[t] for t in passed_through(row["type"], moves)]
    return []


def _cases() -> list[Any]:
    contract = run_contract()
    requirements, schema_reqs = contract.requirements, contract.events["schema_reqs"]

    def marks(row: dict[str, Any]) -> list[Any]:
        rows = [row, *_passed(row)]
        reqs = [r["req"] for r in rows] + sorted({schema_reqs[r["schema"]] for r in rows if r.get("schema")})
        marks = [pytest.mark.req(*reqs), pytest.mark.needs(*requirements[row["req"]]["needs"])]
        # a bank return comes 90 s after the payout (the profile's timeline): the longest real-time wait
        return marks + ([pytest.mark.long_wait] if (row.get("drive") or {}).get("payout") == RETURNED else [])

    return [pytest.param(row, id=row["type"], marks=marks(row)) for row in contract.events["types"] if row.get("drive")]


def _delivered(stage: Stage, subject: Subject, ids: set[str]) -> dict[str, dict[str, Any]]:
    """The deliveries about `subject` once every event id in `ids` arrived (or the wait ended), by id."""
    seen = stage.wait(lambda ds: ids <= {parsed(d).get("id") for d in ds if subject.delivered(d)})
    return {body["id"]: body for body in (parsed(d) for d in seen if subject.delivered(d))}


@pytest.mark.smoke(ids=[
    "payout_approval.rejected", "payout_approval.pending", "payout_approval.expired",
    "payout_approval.execution_failed", "payout.returned", "payout.failed", "checkout_payment.refunded",
    "checkout_payment.partially_refunded", "payout_approval.executed", "payout_approval.approved",
    "payout.processing", "payout.canceled", "checkout_payment.reversed", "checkout_payment.failed"
])
@pytest.mark.req("EVT-TYPES-22", "EVT-TYPE")
@pytest.mark.parametrize("row", _cases())
# without an operator clock a payout row waits for its sandbox scenario in real time (a bank return: 90 s) and
# then for the delivery: more than the default 120 s (a one-key run timed out on payout.returned)
@pytest.mark.timeout(300)
def test_event_type_is_delivered_and_fed(row: dict[str, Any], stage: Stage) -> None:
    subject = drive(stage, row["drive"], (row.get("expect") or {}).get("status"))
    bodies = [_checked(stage, subject, r) for r in (row, *_passed(row))]
    delivered = _delivered(stage, subject, set())
    since = min(int(b["sequence"]) for b in delivered.values()) - 1
    fed = [e for e in feed(stage.api, found=has(*(b["id"] for b in bodies)), since=str(since)) if subject.matches(e)]
    for body in bodies:
        row_in_feed = by_id(fed).get(body["id"])
        expect(row_in_feed is not None, f"the feed has no row with the delivered id {body['id']!r}")
        differs = [k for k in ENVELOPE if not contains(row_in_feed.get(k), body.get(k))]
        expect(not differs, f"the feed row of {body['id']} differs from the delivery in {differs}")
    delivered = _delivered(stage, subject, set(by_id(fed)))
    missing = [e.get("type") for e in fed if e.get("id") not in delivered]
    expect(not missing, f"events of {subject.kind} {subject.id} in the feed never reached the endpoint: {missing}")
    if subject.kind in MACHINES:
        types = [e.get("type") for e in sorted(fed, key=lambda e: int(e.get("sequence", 0)))]
        wrong = walk_problems(types, stage.contract.machine(MACHINES[subject.kind])["event_moves"])
        expect(not wrong, f"the events of {subject.kind} {subject.id} ({types}) are not a walk of its transition"
                          f" table: {wrong}")


def _checked(stage: Stage, subject: Subject, row: dict[str, Any]) -> dict[str, Any]:
    """The first delivery of `row`'s type about `subject`, with every check of Delivery headers and Event
    envelope and its `data` against the row; its body."""
    body = checked(stage.delivery_of(row["type"], subject), stage.secret, row["type"])
    problems = data_problems(row, body.get("data"), stage.contract.machine("payout")["states"])
    expect(not problems, f"`data` of a `{row['type']}` delivery: " + "; ".join(problems))
    return body
