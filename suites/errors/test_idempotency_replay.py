"""Endpoints rule 3: what the service does with a key it has seen.

"Same key and same body replays the stored response. Same key with a different body: `409
IDEMPOTENCY_KEY_CONFLICT`. ... A 4xx releases the key." Checked on a checkout write (product create, whose
name is unique among active products, so a second execution cannot go unnoticed) and on a money write
(payout create, looked up afterwards with `GET /orders?reference=`).
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_error_body, expect_status

from .._support.idempotency import same_response
from .._support.payouts import keyed_payout, payable_destination, payout_body, payouts_with_reference
from .._support.products import expect_name_free, product_body
from .._support.profile import setup_call, success
from .._support.types import Unique


@pytest.mark.req("IDEM-REPLAY")
def test_same_key_and_body_replays_the_stored_product(api: Api, contract: Contract, unique: Unique) -> None:
    """The repeat answers the first status and body (same product id) and creates nothing new."""
    payload, key = product_body(contract, unique), unique("key")
    first = setup_call(api, contract, "createCheckoutProduct", json=payload, idempotency_key=key)
    again = api.op("createCheckoutProduct", json=payload, idempotency_key=key)
    expect(same_response(first, again), "the same key and body did not replay the stored response "
                                        f"(first: {first.status} {first.json})", again)


@pytest.mark.req("IDEM-REPLAY")
def test_same_key_and_body_replays_the_stored_payout(api: Api, contract: Contract, unique: Unique) -> None:
    """A repeated payout answers the first status and body, and exactly one payout carries its reference."""
    reference, key = unique("ref"), unique("key")
    payload = payout_body(contract, payable_destination(api, contract, unique), reference)
    first = keyed_payout(api, contract, payload, key)
    again = api.op("createPayout", json=payload, idempotency_key=key)
    expect(same_response(first, again), "the same key and body did not replay the stored payout "
                                        f"(first: {first.status} {first.json})", again)
    found = payouts_with_reference(api, contract, reference)
    expect(len(found) == 1, f"GET /orders?reference={reference} finds {len(found)} payouts after one payout and "
                            "its replay; the replay must not pay again")


@pytest.mark.smoke
@pytest.mark.req("IDEM-CONFLICT", "ERR-IDEMPOTENCY-KEY-CONFLICT")
def test_same_key_with_another_body_conflicts(api: Api, contract: Contract, unique: Unique) -> None:
    """The second body answers 409 IDEMPOTENCY_KEY_CONFLICT and does not run: its name stays free."""
    key = unique("key")
    setup_call(api, contract, "createCheckoutProduct", json=product_body(contract, unique), idempotency_key=key)
    other = product_body(contract, unique)
    expect_error(api.op("createCheckoutProduct", json=other, idempotency_key=key), 409, "IDEMPOTENCY_KEY_CONFLICT",
                 "the same key with a different body")
    expect_name_free(api, other, "the same key with a different body, refused")


@pytest.mark.req("IDEM-4XX-RELEASES")
def test_a_4xx_releases_the_key(api: Api, contract: Contract, unique: Unique) -> None:
    """After a request refused with a 4xx, the same key with a corrected body runs."""
    key, payload = unique("key"), product_body(contract, unique)
    refused = api.op("createCheckoutProduct", json={**payload, "unitAmount": "not an amount"}, idempotency_key=key)
    expect(400 <= refused.status < 500, "a product with unitAmount 'not an amount' was not refused with a 4xx",
           refused)
    expect_error_body(refused)
    expect_status(api.op("createCheckoutProduct", json=payload, idempotency_key=key),
                  success(contract, "createCheckoutProduct"), "the key was released by the 4xx, so the corrected "
                                                              "request runs")
