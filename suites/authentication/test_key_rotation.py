"""Key rotation: Endpoints > Key rotation, Authentication > Mode B rule 7, the Limits row Rotation overlap.

"Issues a successor and gives the predecessor a deadline (24 hours by default). An expired key cannot be
rotated." Rotation is a dashboard action (the operator adapter); "an API key cannot call it". Time moves on
fresh organizations' own clocks: both keys work 23 hours after rotation, and 25 hours after it only the
successor does (the predecessor answers UNAUTHORIZED or KEY_EXPIRED: the spec does not say which).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from payconform.suite import Api, Contract, expect_error, expect_status

from .._support.answers import DASHBOARD_REFUSALS
from .._support.signing import expect_operator_refuses, expect_signature_error, product_create, send_signed

HOUR = 3600
PREDECESSOR_REFUSED = ("UNAUTHORIZED", "KEY_EXPIRED")
# Mode B: any 4xx ("HTTP statuses of these ...: not shown"); a key no longer registered may fail the signature check
SIGNED_PREDECESSOR_REFUSED = (*PREDECESSOR_REFUSED, "SIGNATURE_INVALID")


def _past() -> str:
    return (datetime.now(timezone.utc) - timedelta(days=1)).isoformat(timespec="seconds").replace("+00:00", "Z")


def _works(api: Api, credential: str, what: str) -> None:
    expect_status(api.op("getBalance", credential=credential), 200, what)


@pytest.mark.smoke
@pytest.mark.req("ROT-SUCCESSOR-DEADLINE", "ROT-KEY-OVERLAP")
@pytest.mark.needs("operator", "clock")
def test_api_key_rotation_overlap_and_deadline(fresh_org, operator, clock) -> None:
    """Rotate a key: the predecessor and the successor both work, still 23 hours later; 25 hours after the
    rotation the predecessor is refused (401) and the successor works."""
    org = fresh_org()
    old = operator.issue_key(org.org_id, mode="test", scopes=["read", "write"])
    new = operator.rotate_key(org.org_id, str(old["id"]))
    _works(org.api, old["key"], "the predecessor right after rotation")
    _works(org.api, new["key"], "the successor right after rotation")
    clock.advance(org.org_id, 23 * HOUR)
    _works(org.api, old["key"], "the predecessor 23 hours after rotation (the overlap is 24 hours)")
    _works(org.api, new["key"], "the successor 23 hours after rotation")
    clock.advance(org.org_id, 2 * HOUR)
    expect_error(org.api.op("getBalance", credential=old["key"]), 401, PREDECESSOR_REFUSED,
                 "the predecessor 25 hours after rotation (past its 24-hour deadline)")
    _works(org.api, new["key"], "the successor 25 hours after rotation")


@pytest.mark.req("ROT-SIGNED-OVERLAP")
@pytest.mark.needs("operator", "clock")
def test_signing_key_rotation_overlap_and_deadline(signing_keys, clock, contract: Contract, unique) -> None:
    """Rotate a signing key to a new key pair: requests signed with either key work, still 23 hours later;
    25 hours after the rotation one signed with the predecessor is refused (any 4xx: Mode B statuses are not
    shown) and the successor works."""
    old = signing_keys.register()
    new = signing_keys.rotate(old)

    def both_work(when: str) -> None:
        for handle, which in ((old, "predecessor"), (new, "successor")):
            expect_status(handle.api.op("getBalance"), 200, f"a read signed with the {which} {when}")

    both_work("right after rotation")
    old.advance(clock, 23 * HOUR)
    both_work("23 hours after rotation (the overlap is 24 hours)")
    old.advance(clock, 2 * HOUR)
    _, req = product_create(old.api, contract, unique)
    expect_signature_error(send_signed(old.api, old.signer, req), SIGNED_PREDECESSOR_REFUSED,
                           "a request signed with the predecessor 25 hours after rotation")
    expect_status(new.api.op("getBalance"), 200, "a read signed with the successor 25 hours after rotation")


@pytest.mark.smoke
@pytest.mark.req("ROT-EXPIRED-CANNOT-ROTATE", "ERR-KEY-EXPIRED")
@pytest.mark.needs("operator")
def test_expired_api_key_cannot_be_rotated(fresh_org, operator) -> None:
    """An API key that expired yesterday: rotating it is refused, and it still answers 401 KEY_EXPIRED."""
    org = fresh_org()
    old = operator.issue_key(org.org_id, mode="test", scopes=["read"], expires_at=_past())
    expect_operator_refuses(lambda: operator.rotate_key(org.org_id, str(old["id"])), "rotating an expired API key")
    expect_error(org.api.op("getBalance", credential=old["key"]), 401, "KEY_EXPIRED",
                 "the expired key after its rotation was refused")


@pytest.mark.req("ROT-EXPIRED-CANNOT-ROTATE")
@pytest.mark.needs("operator")
def test_expired_signing_key_cannot_be_rotated(signing_keys) -> None:
    """A signing key that expired yesterday: rotating it to a new key pair is refused."""
    old = signing_keys.register(expires_at=_past())
    expect_operator_refuses(lambda: signing_keys.rotate(old), "rotating an expired signing key")


@pytest.mark.req("ROT-API-KEY-REFUSED")
@pytest.mark.needs("operator", "clock")
def test_api_key_cannot_call_the_rotate_route(fresh_org, operator, clock) -> None:
    """POST /organizations/{orgId}/api-keys/{apiKeyId}/rotate with the key itself is refused (401 or 403), and
    no deadline was given: the key still works 25 hours later."""
    org = fresh_org()
    key = operator.issue_key(org.org_id, mode="test", scopes=["read", "write"])
    ex = org.api.op("rotateApiKey", apiKeyId=str(key["id"]), credential=key["key"])
    expect_status(ex, DASHBOARD_REFUSALS, "an API key calling the rotate route (dashboard session only; the refusal's status "
                  "is not shown)")
    clock.advance(org.org_id, 25 * HOUR)
    _works(org.api, key["key"], "the key 25 hours after its own rotate call was refused")
