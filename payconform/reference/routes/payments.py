"""Checkout payments over the API: sandbox simulate, forced outcomes, the list on a link, the scenario table
(the state machine and the sandbox timeline: `payments.py`)."""

from __future__ import annotations


from ..resources import payments
from ..resources.links import find_link
from ..core.operation import Call, Operation, Reply
from ..conventions.paging import by_seq, page
from ..resources.payments import payment_json, payments_limit
from ..core.validate import check


def simulate_payment(call: Call) -> Reply:
    c = check(call.json())
    reference = c.string("reference", required=True, max_len=255)
    client_reference = c.string("clientReferenceId", max_len=255, nullable=True)
    c.done()
    assert reference is not None
    row = payments.simulate(call, call.params["linkId"], reference, client_reference)
    return Reply(200, payment_json(call, row), row["id"])


def force_outcome(call: Call) -> Reply:
    """`moved: false` when the payment's status refuses the action."""
    c = check(call.json())
    action = c.string("action", required=True, choices=tuple(call.ref.checkout.forced))
    c.done()
    row, moved = payments.force(call, call.params["paymentId"], action or "")
    return Reply(200, {**payment_json(call, row), "moved": moved}, row["id"])


def list_payments(call: Call) -> Reply:
    link = find_link(call, call.params["linkId"])
    payments.settle_link(call, link["id"])
    q = call.query
    rows, next_cursor = by_seq(
        call.ref.store, call.ref.cursors, table="checkout_payments", scope=f"payments:{call.org_id}:{link['id']}",
        where="org_id = ? AND mode = ? AND link_id = ?", params=(call.org_id, call.mode, link["id"]),
        limit=payments_limit(q.get("limit")), cursor=q.get("cursor"),
    )
    return Reply(200, page(call, [payment_json(call, r) for r in rows], next_cursor))


def sandbox_scenarios(call: Call) -> Reply:
    return Reply(200, call.ref.checkout.table())


P = "/checkout/organizations/{orgId}"
OPERATIONS = [
    Operation("listCheckoutPayments", "GET", P + "/links/{linkId}/payments", list_payments),
    Operation("simulateCheckoutPayment", "POST", P + "/links/{linkId}/payments/simulate", simulate_payment,
              idempotency="required", takes_body=True, sandbox_only=True),
    Operation("simulateCheckoutPaymentOutcome", "POST", P + "/payments/{paymentId}/simulate", force_outcome,
              idempotency="required", takes_body=True, sandbox_only=True),
    Operation("getSandboxScenarios", "GET", P + "/sandbox/scenarios", sandbox_scenarios, sandbox_only=True),
]
