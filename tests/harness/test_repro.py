"""Every failure carries a reproduction a person can paste, and no secret."""

from __future__ import annotations

import shlex

from payconform.results.repro import KEY_HEADER, MAX_REPRO_BODY, curl

KEY = "svc_test_0123456789abcdef_secretsecretsecret"


def test_the_key_is_an_environment_variable() -> None:
    command = curl("POST", "http://127.0.0.1:1/business/api/v1/recipients/org", [
        ("X-Api-Key", KEY), ("Idempotency-Key", "pc-1"), ("Content-Type", "application/json"),
        ("Content-Length", "9")], b'{"a": "b"}')
    assert KEY not in command
    assert KEY_HEADER in command and "content-length" not in command
    words = shlex.split(command)
    assert words[:5] == ["curl", "-sS", "-X", "POST", "http://127.0.0.1:1/business/api/v1/recipients/org"]
    assert words[words.index("--data-binary") + 1] == '{"a": "b"}'
    assert "idempotency-key: pc-1" in words


def test_a_signed_request_says_it_must_be_signed_afresh() -> None:
    command = curl("GET", "http://h/x", [("X-Api-Key", "akid_test_1"), ("X-Svc-Signature", "sig"),
                                         ("X-Svc-Timestamp", "1"), ("X-Svc-Nonce", "n")])
    assert "sig" not in shlex.split(command.split("#")[0]) and "x-svc-nonce" not in command
    assert "x-api-key: akid_test_1" in command and "sign it afresh" in command


def test_a_long_body_is_cut_and_says_so() -> None:
    command = curl("POST", "http://h/x", [], b"x" * (MAX_REPRO_BODY + 10))
    assert f"body cut at {MAX_REPRO_BODY}" in command and "x" * (MAX_REPRO_BODY + 1) not in command
