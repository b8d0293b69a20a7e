import json

from payconform.redact import Redactor

KEY = "svc_test_" + "0123456789abcdef" * 2 + "_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U-_"
LIVE = "svc_live_" + "fedcba9876543210" * 2 + "_" + "z" * 43
WHSEC = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
AKID = "akid_test_" + "9f8e7d6c5b4a"
PEM = """-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oo5rpB6i7PwMoAoGCCqGSM49
AwEHoUQDQgAEBoKnUZbpw8cXDrPqOYXJd8/aDEBYPDbXuGfgmZwRxSmHbCKG8Lw4
-----END EC PRIVATE KEY-----"""
PKCS8 = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----"
TOKEN = "operator-token-3f9a1c"


def test_every_kind_masked_prefix_kept():
    r = Redactor([TOKEN])
    text = f"keys {KEY} and {LIVE}; secret {WHSEC}; id {AKID}; token {TOKEN}\n{PEM}\n{PKCS8}"
    out = r(text)
    for secret in (KEY, LIVE, WHSEC, AKID, TOKEN, "MHcCAQEEIBkg4LVWM9", "MIGHAgEAMBMGByqGSM49"):
        assert secret not in out
    assert "svc_test_****" in out and "svc_live_****" in out
    assert "whsec_****" in out and "akid_test_****" in out
    assert "-----BEGIN EC PRIVATE KEY-----****-----END EC PRIVATE KEY-----" in out
    assert "-----BEGIN PRIVATE KEY-----****-----END PRIVATE KEY-----" in out


def test_known_secret_of_any_shape():
    r = Redactor()
    r.add({"a": "plainsecretvalue", "b": ["another-secret"]}, None, "abc")  # short ones are ignored
    out = r("x plainsecretvalue y another-secret z abc")
    assert "plainsecretvalue" not in out and "another-secret" not in out and "abc" in out


def test_a_key_inside_a_word_is_masked():
    """A URL-encoded key follows a letter or digit ("%3D" for "="): it is masked all the same."""
    out = Redactor()(f"token%3D{KEY}&x=1 and id%3D{AKID}")
    assert KEY not in out and AKID not in out and "token%3Dsvc_test_****&x=1" in out


def test_the_longest_registered_secret_wins_and_many_keys_stay_masked():
    """Registered secrets of no known shape are masked whole even where one begins another; the keys a run
    issues one at a time are masked each, by their shape."""
    r = Redactor(["operator-token-3f9a1c", "operator-token-3f9a1c-extended"])
    keys = [KEY.replace("0123", f"{n:04d}") for n in range(300)]
    for key in keys:
        r.add(key)
    out = r(" ".join(["operator-token-3f9a1c-extended", "operator-token-3f9a1c", *keys]))
    assert out.split()[:2] == ["****", "****"]
    assert not any(key in out for key in keys) and out.count("svc_test_****") == 300
    assert r.secrets >= set(keys)


def test_headers_mapping_and_text():
    r = Redactor()
    headers = r.headers({"X-Api-Key": KEY, "x-operator-token": "tok-xyz-123", "Authorization": "Bearer abc.def",
                         "content-type": "application/json"})
    assert headers["X-Api-Key"] == "svc_test_****"
    assert headers["x-operator-token"] == "****"
    assert headers["Authorization"] == "Bearer ****"
    assert headers["content-type"] == "application/json"
    assert "tok-xyz-123" not in r('x-operator-token: tok-xyz-123\n"authorization": "Basic dXNlcjpw"')
    assert "dXNlcjpw" not in r('"authorization": "Basic dXNlcjpw"')


def test_json_secret_fields_and_pem_in_json():
    r = Redactor()
    body = json.dumps({"token": "plt_abcdef123456", "secret": "s3cr3t-value", "privateKey": PEM, "name": "ok"})
    out = r(body)
    assert "plt_abcdef123456" not in out and "s3cr3t-value" not in out and "MHcCAQEEIBkg" not in out
    assert '"name": "ok"' in out
    obj = r.obj({"key": KEY, "nested": [{"secret": "abcdefgh"}], "n": 1})
    assert obj == {"key": "svc_test_****", "nested": [{"secret": "****"}], "n": 1}


def test_idempotent():
    r = Redactor([KEY])
    once = r(f"x-api-key: {KEY}")
    assert r(once) == once == "x-api-key: svc_test_****"


def test_truncated_pem_and_json_escaped_pem():
    r = Redactor()
    truncated = "body: -----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqG... [truncated]"
    assert "MIGHAgEAMBMG" not in r(truncated)
    escaped = '{"pem": "-----BEGIN PRIVATE KEY-----\\nMIGHAgEAMBMGByqGSM49\\n-----END PRIVATE KEY-----"}'
    out = r(escaped)
    assert "MIGHAgEAMBMG" not in out and out.endswith('-----END PRIVATE KEY-----"}')


def test_private_key_pem_field_is_masked():
    """A field named `private_key_pem` (signing material in a JSON document) is masked whatever it holds."""
    out = Redactor().obj({"mode": "test", "private_key_pem": "not-a-pem-but-secret", "public_key_pem": "public"})
    assert out["private_key_pem"] == "****" and out["public_key_pem"] == "public"
