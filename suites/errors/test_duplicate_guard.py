"""The duplicate-body guard on money writes (Endpoints rule 3, the DUPLICATE_REQUEST_DETECTED row, Limits).

"An identical body under a different key within 15 minutes: `409 DUPLICATE_REQUEST_DETECTED`, nothing
executed; send the `originalIdempotencyKey` in the header to replay the original, or header
`X-Allow-Duplicate: true` (the only accepted value) to pay twice deliberately." Checked on payout create;
what ran is read back with `GET /orders?reference=` (every body carries its own reference).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_error, expect_error_body, expect_status

from .._support.answers import member
from .._support.idempotency import same_response
from .._support.payouts import keyed_payout, payable_destination, payout_body, payouts_with_reference
from .._support.profile import success
from .._support.realtime import next_step, waits_minutes
from .._support.types import Unique

OTHER_VALUES = ("yes", "TRUE", "1")
MINUTE = 60


class Original(NamedTuple):
    payload: dict
    reference: str
    key: str
    payout_id: str
    first: Exchange


def _pay_once(api: Api, contract: Contract, unique: Unique) -> Original:
    """A funded payout, accepted under a fresh key."""
    reference, key = unique("ref"), unique("key")
    payload = payout_body(contract, payable_destination(api, contract, unique), reference)
    first = keyed_payout(api, contract, payload, key)
    return Original(payload, reference, key, first.json["payoutId"], first)


def _expect_paid(api: Api, contract: Contract, original: Original, count: int, after: str) -> None:
    found = payouts_with_reference(api, contract, original.reference)
    expect(len(found) == count, f"GET /orders?reference={original.reference} finds {len(found)} payouts {after}; "
                                f"expected {count}")


@pytest.mark.smoke
@pytest.mark.req("DUP-DETECTED", "ERR-DUPLICATE-REQUEST-DETECTED", "ERRBODY-ORIGINAL-KEY", "DUP-ORIGINAL-PAYOUT")
def test_identical_body_under_a_new_key_is_refused(api: Api, contract: Contract, unique: Unique) -> None:
    """409 DUPLICATE_REQUEST_DETECTED naming the original key and payout; no second payout."""
    original = _pay_once(api, contract, unique)
    err = expect_error(api.op("createPayout", json=original.payload, idempotency_key=unique("key")), 409,
                       "DUPLICATE_REQUEST_DETECTED", "the identical payout body under another key")
    expect(err.get("originalIdempotencyKey") == original.key,
           f"originalIdempotencyKey is {err.get('originalIdempotencyKey')!r}, not the first request's key "
           f"{original.key!r}")
    expect(err.get("originalPayoutId") == original.payout_id,
           f"the first request ended in payout {original.payout_id!r}, but originalPayoutId is "
           f"{err.get('originalPayoutId')!r}")
    _expect_paid(api, contract, original, 1, "after a duplicate was refused")


@pytest.mark.req("DUP-ORIGINAL-KEY")
def test_the_original_key_replays_the_original(api: Api, contract: Contract, unique: Unique) -> None:
    """Resending with the `originalIdempotencyKey` of the refusal answers the original payout, paying nothing."""
    original = _pay_once(api, contract, unique)
    refusal = api.op("createPayout", json=original.payload, idempotency_key=unique("key"))
    err = expect_error(refusal, 409, "DUPLICATE_REQUEST_DETECTED", "the identical payout body under another key")
    replay = api.op("createPayout", json=original.payload, idempotency_key=str(err.get("originalIdempotencyKey")))
    expect(same_response(original.first, replay), "the originalIdempotencyKey did not replay the original answer "
                                                  f"({original.first.status} {original.first.json})", replay)
    _expect_paid(api, contract, original, 1, "after the original key was resent")


@pytest.mark.req("DUP-ALLOW-HEADER")
def test_allow_duplicate_true_pays_twice(api: Api, contract: Contract, unique: Unique) -> None:
    """`X-Allow-Duplicate: true` under a new key runs the identical body again: a second payout."""
    original = _pay_once(api, contract, unique)
    second = api.op("createPayout", json=original.payload, idempotency_key=unique("key"),
                    headers={"X-Allow-Duplicate": "true"})
    expect_status(second, success(contract, "createPayout"), "X-Allow-Duplicate: true pays twice deliberately")
    expect(member(second, "payoutId") != original.payout_id, "the deliberate duplicate answered the original "
                                                              "payout instead of a new one", second)
    _expect_paid(api, contract, original, 2, "after a deliberate duplicate")


@pytest.mark.req("DUP-ALLOW-ONLY-TRUE")
def test_other_allow_duplicate_values_never_pay_twice(api: Api, contract: Contract, unique: Unique) -> None:
    """`yes`, `TRUE`, `1` are not the accepted value: refused (400) or left to the guard (409), never run.

    Whether another value is refused as malformed or ignored is not shown; both are accepted.
    """
    original = _pay_once(api, contract, unique)
    for value in OTHER_VALUES:
        ex = api.op("createPayout", json=original.payload, idempotency_key=unique("key"),
                    headers={"X-Allow-Duplicate": value})
        if ex.status == 409:
            expect_error(ex, 409, "DUPLICATE_REQUEST_DETECTED", f"X-Allow-Duplicate: {value} ignored")
        else:
            expect_status(ex, 400, f"X-Allow-Duplicate: {value} refused as malformed, or ignored (409)")
            expect_error_body(ex)
    _expect_paid(api, contract, original, 1, f"after duplicates with X-Allow-Duplicate {', '.join(OTHER_VALUES)}")


@pytest.mark.smoke
@pytest.mark.req("DUP-WINDOW", "DUP-DETECTED")
@waits_minutes
def test_the_guard_lasts_15_minutes(slow_timed, contract: Contract, unique: Unique) -> None:
    """A minute before the window ends the duplicate is refused; a minute after it, the same body runs. On a
    fresh organization's clock, or in real time on the target's own (the body carries the test's own
    reference); the real-time sends go out at once, not when the key's minute turns."""
    window = contract.limits["duplicate_guard"]["seconds"]
    org = slow_timed(window + MINUTE)
    started = time.monotonic()
    original = _pay_once(org.api, contract, unique)
    answered = time.monotonic() - started
    next_step(org.clock, org.org_id, window - MINUTE, started, window - MINUTE)
    with org.at_once():
        early = org.api.op("createPayout", json=original.payload, idempotency_key=unique("key"))
    expect_error(early, 409, "DUPLICATE_REQUEST_DETECTED", "the identical body a minute before the 15 minutes end")
    next_step(org.clock, org.org_id, 2 * MINUTE, started, answered + window + MINUTE)
    with org.at_once():
        late = org.api.op("createPayout", json=original.payload, idempotency_key=unique("key"))
    expect_status(late, success(contract, "createPayout"),
                  "the identical body a minute after the 15 minutes ended runs")
    _expect_paid(org.api, contract, original, 2, "once the window passed")
