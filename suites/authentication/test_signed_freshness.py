"""Authentication > Mode B rule 5 and the Limits row Signature timestamp window: the signed timestamp must be
within 5 minutes of server time (`SIGNATURE_TIMESTAMP_SKEW`), and each nonce can be used once (an identical
signed request twice returns `SIGNATURE_REPLAYED` and the second does not execute).

Without a clock the window is probed from the harness's own clock with a margin for the skew between the
two machines (250 s inside, 350 s outside, both directions); with the operator clock, a fresh organization's
server time is moved to 10 s either side of the edge.
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from payconform.suite import Api, Contract, expect_status

from .._support.signing import (
    b64,
    expect_not_run,
    expect_ran_once,
    expect_signature_error,
    product_create,
    send_signed,
    sign_lines,
    signed_request,
)

BALANCE = "/payments/organizations/{orgId}/balance"
INSIDE, OUTSIDE = 250, 350  # seconds from the harness clock: 5 minutes is 300


@pytest.mark.req("SIGN-TIMESTAMP-SKEW", "SIGN-TIMESTAMP-WINDOW")
@pytest.mark.needs("signing_key")
@pytest.mark.parametrize("offset", [-INSIDE, INSIDE], ids=["past", "future"])
def test_timestamp_inside_the_window_is_fresh(offset: int, signed_api: Api) -> None:
    """A read signed with a timestamp about four minutes off is served."""
    req = signed_request(signed_api, "GET", BALANCE, timestamp=int(time.time()) + offset)
    expect_status(send_signed(signed_api, signed_api.signer, req), 200,
                  f"a read signed with a timestamp {offset:+d} s from now (inside the 5-minute window)")


@pytest.mark.smoke(ids=["past"])
@pytest.mark.req("SIGN-TIMESTAMP-SKEW", "ERR-SIGNATURE-TIMESTAMP-SKEW", "SIGN-TIMESTAMP-WINDOW", "SIGN-ERROR-TYPES")
@pytest.mark.needs("signing_key")
@pytest.mark.parametrize("offset", [-OUTSIDE, OUTSIDE], ids=["past", "future"])
def test_timestamp_outside_the_window_is_skewed(offset: int, signed_api: Api, api: Api, contract: Contract,
                                                unique) -> None:
    """A write signed with a timestamp about six minutes off: SIGNATURE_TIMESTAMP_SKEW, nothing created."""
    body, req = product_create(signed_api, contract, unique)
    req = replace(req, timestamp=str(int(time.time()) + offset))
    what = f"a write signed with a timestamp {offset:+d} s from now"
    expect_signature_error(send_signed(signed_api, signed_api.signer, req), "SIGNATURE_TIMESTAMP_SKEW", what)
    expect_not_run(api, body, what)


@pytest.mark.req("SIGN-TIMESTAMP-SKEW", "ERR-SIGNATURE-TIMESTAMP-SKEW", "SIGN-TIMESTAMP-WINDOW")
@pytest.mark.needs("operator", "clock")
def test_window_edges_on_the_server_clock(signing_keys, clock) -> None:
    """A fresh organization's clock moved 290 s ahead of the harness: a read stamped with the harness time
    (290 s in the server's past) is fresh; moved 20 s more (310 s), the same kind of read is skewed. The edge
    in the future: stamped 290 s and then 310 s ahead of the server."""
    org = signing_keys.register()
    org.advance(clock, 290)
    wall = int(time.time())
    for stamp in (wall, wall + 290 + 290):
        ex = send_signed(org.api, org.signer, signed_request(org.api, "GET", BALANCE, timestamp=stamp))
        expect_status(ex, 200, f"a read stamped {stamp - wall - 290:+d} s from server time")
    org.advance(clock, 20)
    wall = int(time.time())
    for stamp in (wall, wall + 310 + 310):
        ex = send_signed(org.api, org.signer, signed_request(org.api, "GET", BALANCE, timestamp=stamp))
        expect_signature_error(ex, "SIGNATURE_TIMESTAMP_SKEW", f"a read stamped {stamp - wall - 310:+d} s from "
                                                               "server time")


@pytest.mark.smoke
@pytest.mark.req("SIGN-NONCE-ONCE", "ERR-SIGNATURE-REPLAYED", "SIGN-REPLAY-NOT-RUN", "SIGN-ERROR-TYPES")
@pytest.mark.needs("signing_key")
def test_identical_signed_request_twice_is_replayed(signed_api: Api, contract: Contract, unique) -> None:
    """The same signed create (same headers, same bytes) sent twice: 201, then SIGNATURE_REPLAYED."""
    _, req = product_create(signed_api, contract, unique)
    key_id = signed_api.signer.key_id
    headers = req.headers(key_id, b64(sign_lines(signed_api.signer, req.lines(key_id))))
    expect_status(req.send(signed_api, headers), 201, "the first of two identical signed creates")
    second = req.send(signed_api, headers)
    expect_signature_error(second, "SIGNATURE_REPLAYED", "the same signed request a second time")


@pytest.mark.req("SIGN-NONCE-ONCE", "SIGN-REPLAY-NOT-RUN")
@pytest.mark.needs("signing_key")
def test_nonce_reused_on_another_request_does_not_run(signed_api: Api, api: Api, contract: Contract,
                                                      unique) -> None:
    """A second create, validly signed but with the first one's nonce: refused, and its product does not
    exist, while the first one's does. The spec names SIGNATURE_REPLAYED for an identical request; for a
    nonce reused on another request either SIGNATURE_REPLAYED or SIGNATURE_INVALID is accepted."""
    first_body, first = product_create(signed_api, contract, unique)
    expect_status(send_signed(signed_api, signed_api.signer, first), 201, "a signed create")
    body, req = product_create(signed_api, contract, unique)
    again = send_signed(signed_api, signed_api.signer, replace(req, nonce=first.nonce))
    expect_signature_error(again, ("SIGNATURE_REPLAYED", "SIGNATURE_INVALID"), "another create with a used nonce")
    expect_not_run(api, body, "a create whose nonce was used before")
    expect_ran_once(api, first_body, "the signed create that used the nonce first")
