"""Answers the fuzz phase looks for on inputs example-based tests do not send: odd characters and encodings
are refused with the spec's error body (a 4xx), never a 500 or a traceback."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from payconform.reference.core.clock import iso, parse_instant

from .helpers import PRODUCT, assert_error

JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(("path", "idem"), [
    ("/recipients/{orgId}", None),
    ("/checkout/organizations/{orgId}/products", "k-surrogate-1"),
    ("/payments/organizations/{orgId}/payouts", "k-surrogate-2"),
])
@pytest.mark.parametrize("text", ["A\\ud800b", "\\udc00", "\\ud83d"])
def test_lone_surrogate_in_a_json_body_is_a_400(org, path: str, idem: str | None, text: str) -> None:
    """`"\\ud800"` is valid JSON syntax but no Unicode text: 400 VALIDATION_ERROR naming the body."""
    body = f'{{"name": "{text}", "currency": "USD", "unitAmount": "1.00", "reference": "{text}"}}'.encode()
    r = org.call("POST", path, content=body, idem=idem, headers=JSON)
    assert_error(r, 400, "VALIDATION_ERROR")


@pytest.mark.parametrize("path", [
    "/recipients/{orgId}/%ED%A0%80",
    "/recipients/{orgId}?cursor=%ED%A0%80",
    "/recipients/{orgId}/external/%F0%9F%98%80",
    "/payments/organizations/{orgId}/balance_transactions?type=%FF",
    "/payments/organizations/{orgId}/events?since=%00",
])
def test_undecodable_path_and_query_bytes_are_a_4xx(org, path: str) -> None:
    r = org.call("GET", path)
    assert 400 <= r.status_code < 500, r.text
    assert_error(r, r.status_code, r.json()["type"])


def test_a_request_the_http_layer_cannot_parse_gets_the_error_body(tmp_path) -> None:
    """An empty `content-length` header (sent by the fuzz phase) is refused below the app, still with the spec's
    error body and an x-request-id, not uvicorn's plain-text 400."""
    proc = subprocess.Popen([sys.executable, "-m", "payconform.reference", "--port", "0", "--token-file",
                             str(tmp_path / "token"), "--db", str(tmp_path / "ref.sqlite3")],
                            stderr=subprocess.PIPE, text=True)
    try:
        host, port = proc.stderr.readline().split()[-1].removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=60) as conn:
            conn.sendall(b"POST /business/api/v1/recipients/x HTTP/1.1\r\nHost: h\r\ncontent-length: \r\n\r\n")
            raw = b""
            while chunk := conn.recv(65536):
                raw += chunk
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and b"content-type: application/json" in head.lower()
        error = json.loads(body)
        assert error["type"] == "VALIDATION_ERROR" and error["status"] == 400 and isinstance(error["detail"], str)
        assert f"x-request-id: {error['requestId']}".encode() in head.lower()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0  # a stop for a hang, on a loaded machine


def test_instants_before_year_1000_keep_four_digit_years_and_calendar_edges_are_refused() -> None:
    """`0067-10-02T02:16:59Z` was written back as `67-10-02...` (not ISO 8601); an offset instant at the
    calendar's first hour overflowed into a 500."""
    assert iso(datetime(67, 10, 2, 2, 16, 59, tzinfo=UTC)) == "0067-10-02T02:16:59.000Z"
    assert iso(datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)) == "2026-01-02T03:04:05.006Z"
    assert parse_instant("0001-01-01T00:00:00+01:00") is None
    assert parse_instant("0067-10-02T02:16:59Z") == datetime(67, 10, 2, 2, 16, 59, tzinfo=UTC)


def test_a_link_expiring_in_year_67_answers_an_iso_instant(org) -> None:
    product = org.call("POST", "/checkout/organizations/{orgId}/products", json=PRODUCT, idem="k-y67-product").json()
    r = org.call("POST", "/checkout/organizations/{orgId}/links", idem="k-y67-link",
                 json={"productId": product["id"], "expiresAt": "0067-10-02T02:16:59Z"})
    assert r.status_code < 500, r.text
    if r.status_code == 201:
        assert r.json()["expiresAt"] == "0067-10-02T02:16:59.000Z"


@pytest.mark.parametrize("path", [
    "/payments/organizations/{orgId}/payouts/batches?cursor=.%C2%8F",
    "/recipients/{orgId}?cursor=e30.%C3%A9",
    "/checkout/organizations/{orgId}/products?cursor=.%F0%9F%98%80",
])
def test_a_cursor_with_a_non_ascii_signature_is_a_400(org, path: str) -> None:
    """Found by a long fuzz run: `cursor=.\\u008f` was a 500 (`hmac.compare_digest` raises on non-ASCII text)."""
    assert_error(org.call("GET", path), 400, "VALIDATION_ERROR")


@pytest.mark.parametrize("quote_id", ["qt_e30.\u00e9", "qt_\u00e9.abc"])
def test_a_quote_id_with_non_ascii_text_is_unverifiable(org, quote_id: str) -> None:
    r = org.call("POST", "/payments/organizations/{orgId}/payouts/send", idem="k-quote-" + quote_id.encode().hex(),
                 json={"quoteId": quote_id, "reference": "r-1", "expectDestination": "9.50"})
    assert_error(r, 400, "QUOTE_UNVERIFIABLE")


@pytest.mark.parametrize("token", ["plink_abc.%C3%A9", "plink_%C3%A9.abc"])
def test_a_payout_link_token_with_non_ascii_text_is_not_found(org, token: str) -> None:
    r = org.call("POST", f"/payout-links/{token}/submit", json={"esignConsent": True}, key=None)
    assert_error(r, 404, "NOT_FOUND")
