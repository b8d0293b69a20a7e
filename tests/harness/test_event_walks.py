"""The event types every walk of a machine passes through on its way to another (`suites/_support/events.py`,
`passed_through`): an event-type case checks those on its own subject too, and names their rows."""

from __future__ import annotations

from payconform.contract import Contract
from suites._support.events import passed_through


def test_types_on_every_way_to_a_type():
    moves = [[None, "a"], ["a", "b"], ["a", "c"], ["b", "c"], ["c", "d"], [None, "x"]]
    assert passed_through("d", moves) == ["a", "c"]  # b can be skipped, a and c cannot
    assert passed_through("c", moves) == ["a"]
    assert passed_through("a", moves) == passed_through("x", moves) == []
    assert passed_through("unknown", moves) == []


def test_the_catalog_machines():
    contract = Contract.load()
    payout, payment = (contract.machine(m)["event_moves"] for m in ("payout", "checkout_payment"))
    assert passed_through("payout.returned", payout) == ["payout.pending", "payout.completed"]
    assert passed_through("payout.processing", payout) == ["payout.pending"]
    assert passed_through("payout.pending", payout) == []
    for later in ("refunded", "reversed", "partially_refunded"):
        assert passed_through(f"checkout_payment.{later}", payment) == ["checkout_payment.paid"]
    assert passed_through("checkout_payment.failed", payment) == []
