"""The suite's webhook verifier and receiver (payconform/webhooks.py).

The verifier is cross-checked against the `standardwebhooks` library and its published vector, and shown to
be stricter where the library is lenient.
"""

from __future__ import annotations

import base64
import secrets
import time
from datetime import UTC, datetime

import httpx
import pytest
from standardwebhooks import Webhook

from payconform.webhooks import Receiver, SignatureError, expected_signature, verify

VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TS = "1614265330"
VECTOR_BODY = b'{"test": 2432232314}'
VECTOR_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_published_vector() -> None:
    assert expected_signature(VECTOR_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_BODY) == VECTOR_SIG
    assert verify(VECTOR_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_SIG, VECTOR_BODY, now=int(VECTOR_TS)) == [VECTOR_SECRET]


def _fresh_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


@pytest.mark.parametrize("body", [b'{"a":1}', '{"é": "ü", "n": 1.50}'.encode(), b"[]"])
def test_agrees_with_the_library(body: bytes) -> None:
    secret, msg_id, ts = _fresh_secret(), "evt_" + secrets.token_hex(6), str(int(time.time()))
    library_sig = Webhook(secret).sign(msg_id, datetime.fromtimestamp(int(ts), UTC), body.decode())
    assert expected_signature(secret, msg_id, ts, body) == library_sig
    headers = {"webhook-id": msg_id, "webhook-timestamp": ts, "webhook-signature": library_sig}
    Webhook(secret).verify(body, headers, json_parse=False)
    assert verify(secret, msg_id, ts, library_sig, body) == [secret]


def test_strict_where_the_library_is_lenient() -> None:
    secret, msg_id = _fresh_secret(), "evt_x"
    ts = str(int(time.time()))
    good = expected_signature(secret, msg_id, ts, b"{}")
    with pytest.raises(SignatureError):
        verify(secret, msg_id, ts + ".9", good, b"{}")  # the library floors a fractional timestamp
    with pytest.raises(SignatureError):
        verify(secret, msg_id, ts, good.replace(",", ""), b"{}")  # an entry without a comma never matches
    with pytest.raises(SignatureError):
        verify(secret, msg_id, str(int(ts) - 301), expected_signature(secret, msg_id, str(int(ts) - 301), b"{}"),
               b"{}")
    with pytest.raises(SignatureError):
        verify(secret, msg_id, ts, good, b"{} ")  # raw bytes, not the parsed value


def test_several_entries_and_other_versions() -> None:
    old, new, msg_id, ts = _fresh_secret(), _fresh_secret(), "evt_y", str(int(time.time()))
    header = " ".join(["v1a,ZZZZ", expected_signature(new, msg_id, ts, b"{}"), expected_signature(old, msg_id, ts, b"{}")])
    assert verify([new, old], msg_id, ts, header, b"{}") == [new, old]
    assert verify(new, msg_id, ts, header, b"{}") == [new]


def test_receiver_keeps_raw_bytes_and_follows_its_script() -> None:
    receiver = Receiver()
    try:
        box = receiver.mailbox()
        box.fail_next(2, status=503)
        raw = b'{"b": 1,  "a": 2}'
        answers = [httpx.post(box.url, content=raw, headers={"whk-id": "evt_1"}).status_code for _ in range(3)]
        assert answers == [503, 503, 204]
        got = box.wait_for(lambda d: len(d) == 3, timeout=2)
        assert got[0].body == raw and got[0].header("WHK-ID") == "evt_1"
        assert httpx.post(receiver.base_url + "/hooks/unknown", content=b"x").status_code == 404
        box.answer(200, delay=0.3)
        started = time.monotonic()
        assert httpx.post(box.url, content=b"{}").status_code == 200
        assert time.monotonic() - started >= 0.3
    finally:
        receiver.close()


def test_an_event_of_an_unknown_type_is_accepted_outside_the_script() -> None:
    receiver = Receiver()
    try:
        box = receiver.mailbox()
        box.fail_next(1, status=500)
        bodies = [b'{"type": "vendor.new_thing"}', b'{"type": "payout.pending"}', b'{"type": "payout.pending"}']
        assert [httpx.post(box.url, content=body).status_code for body in bodies] == [204, 500, 204]
    finally:
        receiver.close()


def test_a_mailbox_can_take_over_an_earlier_mailboxs_address() -> None:
    receiver = Receiver()
    try:
        first = receiver.mailbox()
        assert httpx.post(first.url, content=b"1").status_code == 204
        second = receiver.mailbox(first.path)
        assert second.url == first.url
        assert httpx.post(first.url, content=b"2").status_code == 204
        assert [d.body for d in first.snapshot()] == [b"1"] and [d.body for d in second.snapshot()] == [b"2"]
    finally:
        receiver.close()
