"""The idempotency rows that need the request (or the key store) to misbehave, produced by operator faults.

Each test with a fault uses a fresh organization so that its fault cannot be consumed by another test's
request; without the operator, identical requests sent at once try rule 3 on the target's own organization.

- "First request still running: `409 IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS`" (rule 3 and its error row):
  the first request is slowed with a `delay` fault and an identical one is sent while it runs.
- "`IDEMPOTENCY_UNAVAILABLE` | 503 | No | As is | Key could not be recorded; nothing executed."
- "`PAYOUT_OUTCOME_UNKNOWN` | 500 or 409 | Maybe | Never | The payout may exist and the key is kept;
  replays answer 409."
- "`INTERNAL` | 500 | Maybe | As is | Nothing recorded, key released": the store cannot record the
  handler's writes (`store_unavailable`).

The payout's outcome is made unknown by the payment network not answering (`timeout` on `payoutNetwork`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_error, expect_status

from .._support.payouts import payable_destination, payout_body, payouts_with_reference
from .._support.products import product_body, products_named
from .._support.profile import success
from .._support.types import Unique

DELAY_SECONDS = 2.0
NETWORK = "payoutNetwork"  # operator fault pseudo-operation: the payment network a new payout is handed to
AT_ONCE = 4  # identical requests sent together without a fault: enough to overlap on a server that runs them


def _concurrently(api: Api, op_id: str, payload: dict, key: str, n: int = 2) -> list[Exchange]:
    """`n` identical requests (same key and body) sent at the same moment from `n` clients."""
    start = Barrier(n)

    def send(client: Api) -> Exchange:
        start.wait()
        return client.op(op_id, json=payload, idempotency_key=key)

    clients = [api.with_credential(api.credential) for _ in range(n)]
    try:
        with ThreadPoolExecutor(max_workers=n) as pool:
            return list(pool.map(send, clients))
    finally:
        for client in clients:
            client.close()


@pytest.mark.req("IDEM-500-RELEASES", "ERR-INTERNAL")
@pytest.mark.needs("operator")
def test_internal_error_releases_the_key(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """A product create whose writes the store cannot record (the operator breaks it) answers 500 INTERNAL,
    records nothing, and the same key and body sent again executes: the key was released."""
    org = fresh_org()
    payload, key = product_body(contract, unique), unique("key")
    operator.inject_fault(org.org_id, "createCheckoutProduct", "store_unavailable")
    expect_error(org.api.op("createCheckoutProduct", json=payload, idempotency_key=key), 500, "INTERNAL",
                 "a product create the server could not complete")
    expect(products_named(org.api, contract, payload["name"]) == [], "the 500 INTERNAL answer recorded a product")
    again = org.api.op("createCheckoutProduct", json=payload, idempotency_key=key)
    expect_status(again, success(contract, "createCheckoutProduct"), "the same key and body after 500 INTERNAL")
    made = products_named(org.api, contract, payload["name"])
    expect(len(made) == 1, f"{len(made)} products named {payload['name']!r} exist after the retry", again)


@pytest.mark.smoke
@pytest.mark.req("IDEM-IN-PROGRESS", "ERR-IDEMPOTENCY-KEY-REQUEST-IN-PROGRESS")
@pytest.mark.needs("operator")
def test_identical_request_while_the_first_runs(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """Of two identical concurrent requests (the first slowed down), one runs and one answers 409 in progress."""
    org = fresh_org()
    payload, key = product_body(contract, unique), unique("key")
    operator.inject_fault(org.org_id, "createCheckoutProduct", "delay", seconds=DELAY_SECONDS)
    answers = sorted(_concurrently(org.api, "createCheckoutProduct", payload, key), key=lambda ex: ex.status)
    ran, refused = answers
    expect_status(ran, success(contract, "createCheckoutProduct"), "one of the two identical requests runs")
    expect_error(refused, 409, "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS", "the identical request sent while the first "
                                                                      "was still running")
    made = products_named(org.api, contract, payload["name"])
    expect(len(made) == 1, f"{len(made)} products named {payload['name']!r} exist after two identical requests "
                           "under one key")


@pytest.mark.req("IDEM-IN-PROGRESS", "ERR-IDEMPOTENCY-KEY-REQUEST-IN-PROGRESS")
@pytest.mark.needs("profile")
def test_identical_requests_at_once_pay_once(api: Api, contract: Contract, unique: Unique) -> None:
    """Identical keyed payouts sent at once, with nothing slowing the first: each answer is the payout (made or
    replayed) or 409 IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS, and one payout carries the reference."""
    reference, key = unique("ref"), unique("key")
    payload = payout_body(contract, payable_destination(api, contract, unique), reference)
    answers = _concurrently(api, "createPayout", payload, key, n=AT_ONCE)
    for ex in answers:
        if ex.status == 409:
            expect_error(ex, 409, "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS", "an identical request sent at once")
        else:
            expect_status(ex, success(contract, "createPayout"), "an identical request sent at once: the payout, "
                          "made or replayed, or 409 IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")
    found = [p.get("payoutId") for p in payouts_with_reference(api, contract, reference)]
    expect(len(found) == 1, f"{AT_ONCE} identical requests under one key sent at once made {len(found)} payouts "
                            f"with reference {reference!r}: {found}", answers[0])


@pytest.mark.smoke
@pytest.mark.req("IDEM-UNAVAILABLE", "ERR-IDEMPOTENCY-UNAVAILABLE")
@pytest.mark.needs("operator")
def test_key_store_unavailable_executes_nothing(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """503 IDEMPOTENCY_UNAVAILABLE leaves nothing created; resent as is with the same key, the request runs."""
    org = fresh_org()
    payload, key = product_body(contract, unique), unique("key")
    operator.inject_fault(org.org_id, "createCheckoutProduct", "idempotency_unavailable")
    expect_error(org.api.op("createCheckoutProduct", json=payload, idempotency_key=key), 503,
                 "IDEMPOTENCY_UNAVAILABLE", "the key could not be recorded")
    made = products_named(org.api, contract, payload["name"])
    expect(not made, f"IDEMPOTENCY_UNAVAILABLE means nothing executed, yet product {payload['name']!r} exists")
    expect_status(org.api.op("createCheckoutProduct", json=payload, idempotency_key=key),
                  success(contract, "createCheckoutProduct"), "retry as is: the same request and key, resent, runs")


@pytest.mark.smoke
@pytest.mark.req("IDEM-OUTCOME-UNKNOWN", "ERR-PAYOUT-OUTCOME-UNKNOWN")
@pytest.mark.needs("operator")
def test_outcome_unknown_keeps_the_key(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """The payment network does not answer when the payout is handed to it (the operator breaks it): 500
    PAYOUT_OUTCOME_UNKNOWN, and the key is kept: the replay answers 409 and pays nothing more. A target that
    answers 201 hands the payout to the network after answering: the test skips there."""
    org = fresh_org()
    reference, key = unique("ref"), unique("key")
    payload = payout_body(contract, payable_destination(org.api, contract, unique), reference)
    operator.inject_fault(org.org_id, NETWORK, "timeout")
    first = org.api.op("createPayout", json=payload, idempotency_key=key)
    if first.status == 201:
        pytest.skip("the payout answered 201 while the payment network did not answer: the target hands it to the "
                    "network after answering, so its outcome was never unknown at the request")
    expect_error(first, 500, "PAYOUT_OUTCOME_UNKNOWN", "the payout's outcome is unknown")
    before = len(payouts_with_reference(org.api, contract, reference))
    expect_error(org.api.op("createPayout", json=payload, idempotency_key=key), 409, "PAYOUT_OUTCOME_UNKNOWN",
                 "a replay of a kept PAYOUT_OUTCOME_UNKNOWN key")
    after = len(payouts_with_reference(org.api, contract, reference))
    expect(before <= 1 and after == before,
           f"GET /orders?reference={reference} finds {before} payouts after the unknown outcome and {after} after "
           "its replay; the kept key must not pay again")
