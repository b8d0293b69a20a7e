import json
import os
import stat

import pytest

from payconform.target import Target, TargetConfigError

KEY = "svc_test_" + "a" * 32 + "_" + "B" * 43
KEY2 = "svc_test_" + "b" * 32 + "_" + "C" * 43
LIVE = "svc_live_" + "c" * 32 + "_" + "D" * 43
BASE = "http://127.0.0.1:8123/business/api/v1"


def write(tmp_path, text, name="t.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_load_yaml_defaults(tmp_path):
    p = write(tmp_path, f"base_url: {BASE}/\norg_id: ckorg1\ncredentials:\n  api_key: {KEY}\n")
    t = Target.load(p)
    assert t.base_url == BASE  # trailing slash dropped
    assert t.org_id == "ckorg1"
    assert t.api_key == KEY and t.pool == [KEY]
    assert (t.rate_limit, t.ip_rate_limit, t.request_timeout) == (100, 2000, 10.0)
    assert t.operator_config["adapter"] == "none"
    assert KEY not in repr(t)


def test_load_json_and_pool(tmp_path):
    data = {"base_url": BASE, "org_id": "ck1", "other_org_id": "ck2",
            "credentials": {"api_key": KEY, "api_key_pool": [KEY, KEY2], "live_key": LIVE},
            "rate_limit": 50, "operator": {"adapter": "reference", "url": "http://127.0.0.1:8123/_operator",
                                           "token": "tok-123456"}}
    t = Target.load(write(tmp_path, json.dumps(data), "t.json"))
    assert t.pool == [KEY, KEY2]
    assert t.rate_limit == 50
    assert set(t.secrets()) == {KEY, KEY2, LIVE, "tok-123456"}


def test_env_values(tmp_path):
    p = write(tmp_path, f"base_url: {BASE}\norg_id: ck1\ncredentials:\n  api_key: env:PC_KEY\n"
                        "operator: {adapter: reference, url: 'http://h/_operator', token: 'env:PC_TOK'}\n")
    t = Target.load(p, environ={"PC_KEY": KEY, "PC_TOK": "secret-token"})
    assert t.api_key == KEY and t.operator_token == "secret-token"
    # dumping keeps the reference, not the value
    out = t.dump(tmp_path / "out.yaml")
    assert "env:PC_KEY" in out.read_text() and KEY not in out.read_text()


def test_env_value_missing(tmp_path):
    p = write(tmp_path, f"base_url: {BASE}\norg_id: ck1\ncredentials:\n  api_key: env:PC_NOPE\n")
    with pytest.raises(TargetConfigError, match="environment variable PC_NOPE is not set"):
        Target.load(p, environ={})


def test_overrides_from_flags(tmp_path):
    p = write(tmp_path, f"base_url: {BASE}\norg_id: ck1\ncredentials:\n  api_key: {KEY}\n")
    t = Target.load(p, overrides={"org_id": "ck9", "read_only_key": KEY2, "rate_limit": 10,
                                  "api_key_pool": f"{KEY},{KEY2}", "operator_url": "http://x/_operator",
                                  "operator_token": "abcdef"})
    assert t.org_id == "ck9" and t.credentials["read_only_key"] == KEY2 and t.rate_limit == 10
    assert t.pool == [KEY, KEY2]
    assert t.operator_config == {"adapter": "reference", "url": "http://x/_operator", "token": "abcdef"}


def test_flags_without_file():
    t = Target.load(None, overrides={"base_url": BASE, "org_id": "ck1", "api_key": KEY})
    assert t.api_key == KEY


@pytest.mark.parametrize("doc, message", [
    ({"org_id": "ck1"}, "base_url is required"),
    ({"base_url": "ftp://h/business/api/v1", "org_id": "ck1"}, "must start with http:// or https://"),
    ({"base_url": "http://h/api", "org_id": "ck1"}, "must end with the fixed prefix /business/api/v1"),
    ({"base_url": BASE}, "org_id is required"),
    ({"base_url": BASE, "org_id": "org_123"}, "org_ alias"),
    ({"base_url": BASE, "org_id": "ck1", "credentials": {"api_key": LIVE}}, "api_key must be a test key"),
    ({"base_url": BASE, "org_id": "ck1", "credentials": {"live_key": KEY}}, "live_key must be a live key"),
    ({"base_url": BASE, "org_id": "ck1", "credentials": {"nope_key": KEY}}, "unknown credential 'nope_key'"),
    ({"base_url": BASE, "org_id": "ck1", "rate_limt": 5}, "unknown field 'rate_limt'"),
    ({"base_url": BASE, "org_id": "ck1", "rate_limit": 0}, "rate_limit must be a positive integer"),
    ({"base_url": BASE, "org_id": "ck1", "operator": {"adapter": "reference"}}, "operator.url is required"),
    ({"base_url": BASE, "org_id": "ck1", "operator": {"adapter": "not a class"}}, "operator.adapter must be"),
])
def test_validation_messages(doc, message):
    with pytest.raises(TargetConfigError) as exc:
        Target.from_dict(doc)
    assert message in str(exc.value)


def test_validation_lists_every_problem():
    with pytest.raises(TargetConfigError) as exc:
        Target.from_dict({"base_url": "http://h/x"})
    text = str(exc.value)
    assert "base_url must end" in text and "org_id is required" in text


def test_custom_adapter_accepted():
    t = Target.from_dict({"base_url": BASE, "org_id": "ck1", "operator": {"adapter": "mypkg.ops:Adapter", "x": 1}})
    assert t.operator_config["adapter"] == "mypkg.ops:Adapter"


def test_dump_mode_0600_and_roundtrip(tmp_path):
    t = Target.from_dict({"base_url": BASE, "org_id": "ck1", "credentials": {"api_key": KEY}})
    out = tmp_path / "sub" / "target.yaml"
    out.parent.mkdir()
    out.write_text("old")
    os.chmod(out, 0o644)
    t.dump(out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    again = Target.load(out)
    assert again.to_dict() == t.to_dict()
    j = t.dump(tmp_path / "target.json")
    assert json.loads(j.read_text())["credentials"]["api_key"] == KEY
