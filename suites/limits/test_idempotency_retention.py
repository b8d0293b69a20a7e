"""Limits, row "Idempotency record retention | 7 days (retention only; an expired key is never re-executed)".

A payout is made in a fresh organization, whose clock is then moved to a day before or past the retention
period, and the same request is sent again under the same key. Within the 7 days the key is retained, so the
request replays the original answer. Past them the spec leaves the answer open (a replay, or a refusal), so
only the outcome that matters is asserted: nothing was paid a second time.
"""

from __future__ import annotations

import pytest

from payconform.suite import Contract, expect

from .._support.answers import member
from .._support.payouts import keyed_payout, payable_destination, payout_body, payouts_with_reference
from .._support.types import Unique

DAY = 86400


@pytest.mark.smoke
@pytest.mark.req("IDEM-RETENTION")
@pytest.mark.needs("operator", "clock")
def test_an_expired_key_is_never_re_executed(fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """Resent a day after retention ended, the payout's key does not pay again, whatever the answer."""
    org = fresh_org()
    reference, key = unique("ref"), unique("key")
    payload = payout_body(contract, payable_destination(org.api, contract, unique), reference)
    keyed_payout(org.api, contract, payload, key)
    clock.advance(org.org_id, contract.limits["idempotency"]["retention"]["seconds"] + DAY)
    again = org.api.op("createPayout", json=payload, idempotency_key=key)
    found = payouts_with_reference(org.api, contract, reference)
    expect(len(found) == 1, f"GET /orders?reference={reference} finds {len(found)} payouts after the key was resent "
                            f"past its retention (answered {again.status}); an expired key is never re-executed",
           again)


@pytest.mark.req("IDEM-RETENTION")
@pytest.mark.needs("operator", "clock")
def test_a_key_within_retention_replays(fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """Resent a day before the 7 days end, the key is still retained: the original answer (its status and
    `payoutId`) is replayed and there is still one payout."""
    org = fresh_org()
    reference, key = unique("ref"), unique("key")
    payload = payout_body(contract, payable_destination(org.api, contract, unique), reference)
    first = keyed_payout(org.api, contract, payload, key)
    clock.advance(org.org_id, contract.limits["idempotency"]["retention"]["seconds"] - DAY)
    again = org.api.op("createPayout", json=payload, idempotency_key=key)
    expect(again.status == first.status,
           f"IDEM-RETENTION: idempotency records are retained 7 days, but the key resent after six days answered "
           f"{again.status}, not the replay of the original {first.status}", again)
    expect(member(again, "payoutId") == member(first, "payoutId"),
           f"IDEM-RETENTION: the key resent after six days answered payout {member(again, 'payoutId')!r}, not the "
           f"replay of the original {member(first, 'payoutId')!r}", again)
    found = payouts_with_reference(org.api, contract, reference)
    expect(len(found) == 1, f"GET /orders?reference={reference} finds {len(found)} payouts after the key was resent "
                            "within its retention", again)
