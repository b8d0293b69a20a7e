"""Errors > Request errors, row UNAUTHORIZED, and Authentication > Mode A rule 5: a key that is missing,
malformed, unknown, wrong, revoked or incomplete answers 401 `UNAUTHORIZED`; the wrong keys are
"deliberately indistinguishable".

The bad keys are derived from the run's own working key, so that a server that matches a key loosely
(ignoring its prefix, the case of its public id, part of its secret) lets one through and fails here.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from payconform.suite import Api, Exchange, Target, expect, expect_error
from payconform.suite import Kind, Needs

from .._support.controls import expect_key_accepted

KEY_PARTS = re.compile(r"^svc_(test|live)_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$")

Parts = tuple[str, str, str]  # mode, public id, secret


def _secret() -> str:
    return secrets.token_urlsafe(32)  # 43 base64url characters


def _upper_public_id(mode: str, public: str, secret: str) -> str:
    if public == public.upper():
        pytest.skip("the key's public id has no letter to upper-case")
    return f"svc_{mode}_{public.upper()}_{secret}"


# name -> (requirements, the bad key made from the working key's parts)
BAD_KEYS: dict[str, tuple[tuple[str, ...], Callable[[str, str, str], str]]] = {
    "unknown": (("AUTH-UNKNOWN-KEY",), lambda m, p, s: f"svc_{m}_{secrets.token_hex(16)}_{_secret()}"),
    "wrong-secret": (("AUTH-WRONG-KEY",), lambda m, p, s: f"svc_{m}_{p}_{_secret()}"),
    "other-mode-prefix": (("KEY-PREFIX-IN-CREDENTIAL",),
                          lambda m, p, s: f"svc_{'live' if m == 'test' else 'test'}_{p}_{s}"),
    "no-prefix": (("KEY-PREFIX-IN-CREDENTIAL", "AUTH-MALFORMED-KEY"), lambda m, p, s: f"{p}_{s}"),
    "foreign-prefix": (("AUTH-MALFORMED-KEY",), lambda m, p, s: f"svc_prod_{p}_{s}"),
    "not-a-key": (("AUTH-MALFORMED-KEY",), lambda m, p, s: "hello"),
    "public-id-short": (("AUTH-MALFORMED-KEY",), lambda m, p, s: f"svc_{m}_{p[:-1]}_{s}"),
    "public-id-long": (("AUTH-MALFORMED-KEY",), lambda m, p, s: f"svc_{m}_{p}0_{s}"),
    "public-id-upper-case": (("AUTH-MALFORMED-KEY",), _upper_public_id),
    "secret-long": (("AUTH-MALFORMED-KEY",), lambda m, p, s: f"svc_{m}_{p}_{s}A"),
    "secret-not-base64url": (("AUTH-MALFORMED-KEY",), lambda m, p, s: f"svc_{m}_{p}_{s[:-1]}+"),
    "no-secret": (("AUTH-INCOMPLETE-KEY",), lambda m, p, s: f"svc_{m}_{p}"),
    "empty-secret": (("AUTH-INCOMPLETE-KEY",), lambda m, p, s: f"svc_{m}_{p}_"),
    "secret-truncated": (("AUTH-INCOMPLETE-KEY",), lambda m, p, s: f"svc_{m}_{p}_{s[:-1]}"),
}


INDISTINGUISHABLE = ("unknown", "wrong-secret", "other-mode-prefix")  # well-formed keys ("unknown ... or wrong")


def _parts(key: str) -> Parts:
    match = KEY_PARTS.match(key)
    if match is None:
        pytest.skip("the api key is not in the documented format, so no near-miss keys can be made from it")
    return match.group(1), match.group(2), match.group(3)


def _bad_key(name: str, api: Api, target: Target) -> str:
    if name == "revoked":
        if not target.has("revoked_key"):
            Needs(Kind.CREDENTIAL, "revoked_key").skip()
        return str(target.credential("revoked_key"))
    return BAD_KEYS[name][1](*_parts(str(api.credential)))


def _answer(ex: Exchange) -> dict[str, Any]:
    """What a caller can tell an UNAUTHORIZED answer by: status, type, detail, resolution, body fields."""
    body = expect_error(ex, 401, "UNAUTHORIZED")
    return {"status": ex.status, "type": body.get("type"), "detail": body.get("detail"),
            "resolution": body.get("resolution"), "fields": sorted(set(body) - {"requestId"})}


CASES = [pytest.param(name, marks=pytest.mark.req(*reqs, "ERR-UNAUTHORIZED"), id=name)
         for name, (reqs, _) in BAD_KEYS.items()]
CASES.append(pytest.param("revoked", marks=[pytest.mark.req("AUTH-REVOKED-KEY", "ERR-UNAUTHORIZED"),
                                            pytest.mark.needs("revoked_key")], id="revoked"))


@pytest.mark.smoke(ids=["other-mode-prefix"])
@pytest.mark.parametrize("name", CASES)
def test_bad_key_is_unauthorized(name: str, api: Api, target: Target) -> None:
    """Each kind of bad key, on an ordinary read of the organization: 401 UNAUTHORIZED (where the run's key is
    accepted)."""
    expect_key_accepted(api, f"the {name} key")
    expect_error(api.op("getBalance", credential=_bad_key(name, api, target)), 401, "UNAUTHORIZED")


@pytest.mark.req("AUTH-MISSING-KEY", "ERR-UNAUTHORIZED")
def test_missing_key_is_unauthorized(anon: Api, api: Api) -> None:
    """No `x-api-key` header at all: 401 UNAUTHORIZED (where the run's key is accepted)."""
    expect_key_accepted(api, "a request without a key")
    expect_error(anon.op("getBalance"), 401, "UNAUTHORIZED")


@pytest.mark.req("AUTH-INDISTINGUISHABLE", "AUTH-UNKNOWN-KEY", "AUTH-REVOKED-KEY", "AUTH-WRONG-KEY")
def test_wrong_keys_are_indistinguishable(api: Api, target: Target) -> None:
    """Unknown, wrong-secret, revoked and other-mode keys (well-formed keys a caller could guess) get the same
    status, type, detail, resolution and body fields (`requestId` aside), so an answer never tells which keys
    exist.

    Missing, malformed and incomplete keys are left out of the comparison (each must still be UNAUTHORIZED,
    `test_bad_key_is_unauthorized`): the spec's "deliberately indistinguishable" names unknown, revoked or wrong
    keys, and a key refused for its format probes nothing, so its `detail` may say why."""
    expect_key_accepted(api, "the wrong keys")
    names = [*INDISTINGUISHABLE, *(["revoked"] if target.has("revoked_key") else [])]
    answers = {name: _answer(api.op("getBalance", credential=_bad_key(name, api, target))) for name in names}
    baseline = answers["unknown"]
    differ = {name: {k: v for k, v in answer.items() if v != baseline[k]}
              for name, answer in answers.items() if answer != baseline}
    shown = {k: baseline[k] for k in ("detail", "resolution", "fields")}
    expect(not differ, f"UNAUTHORIZED answers differ from the unknown key's ({shown}): {differ}")
