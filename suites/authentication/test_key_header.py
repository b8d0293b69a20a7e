"""Authentication > Mode A rule 1 and Resources > API key, row Format: the whole key travels in `x-api-key`,
and every key the service issues has the documented shape."""

from __future__ import annotations

import re

import pytest

from payconform.suite import API_KEY_NAMES, Api, Target, expect, expect_status

from .._support.controls import expect_refused_without_key

KEY_FORMAT = re.compile(r"^svc_(live|test)_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$")


def _keys(value: str | list[str]) -> list[str]:
    return value if isinstance(value, list) else [value]


def _misshapen(keys: dict[str, str | list[str]]) -> list[str]:
    """Names (never values: they are secrets) of the keys that do not have the documented format."""
    return [name for name, value in keys.items() for key in _keys(value) if not KEY_FORMAT.match(str(key))]


@pytest.mark.req("AUTH-KEY-HEADER")
def test_complete_key_in_x_api_key_authenticates(api: Api) -> None:
    """The complete key in `x-api-key` authenticates a request; the header name is matched without regard to
    case, as every HTTP header name is."""
    expect_status(api.op("getBalance"), 200, "the complete key sent in x-api-key")
    ex = api.op("getBalance", credential=None, headers={"X-API-Key": api.credential})
    expect_status(ex, 200, "the complete key sent in a header spelled X-API-Key")
    expect_refused_without_key(api, "getBalance", "the key in x-api-key")


@pytest.mark.req("KEY-FORMAT")
def test_configured_keys_have_documented_format(api: Api, target: Target) -> None:
    """Every key the target issued for this run is `svc_live_`/`svc_test_`, 32 lowercase hex, `_`, 43 base64url."""
    expect_status(api.op("getBalance"), 200, "the configured api key works")
    keys = {name: target.credential(name) for name in API_KEY_NAMES if target.has(name)}
    bad = _misshapen(keys)
    expect(not bad, f"configured keys not in the documented format: {', '.join(bad)}")


@pytest.mark.req("KEY-FORMAT")
@pytest.mark.needs("operator")
def test_issued_keys_have_documented_format(fresh_org) -> None:
    """A test key and a live key issued now both have the documented format, each with its own mode prefix."""
    org = fresh_org()
    issued = {"test": org.key, "live": org.issue_key(mode="live", scopes=["read"])}
    bad = _misshapen({f"{mode} key": key for mode, key in issued.items()})
    expect(not bad, f"issued keys not in the documented format: {', '.join(bad)}")
    wrong_mode = [mode for mode, key in issued.items() if not str(key).startswith(f"svc_{mode}_")]
    expect(not wrong_mode, f"keys issued for mode {wrong_mode} do not carry that mode's prefix")
