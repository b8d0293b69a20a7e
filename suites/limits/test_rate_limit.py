"""Limits: "Default rate | 100 requests per minute per API credential, 60-second window" and "`Retry-After` |
seconds, authoritative; a 429 means the request was refused before the handler ran", with the RATE_LIMITED
row ("429 ... Wait for `Retry-After`").

These tests trip the limit on purpose, so each uses a credential no other test uses and that the harness
does not pace: the target's `rate_limit_key`, or the key of a fresh organization (whose clock the test then
moves). The tests on `rate_limit_key` share one xdist group so that they never run at the same time.
"""

from __future__ import annotations

import time

import pytest

from payconform.accounting import preflight_ended
from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.expect import expect, expect_error, expect_status, fail

from .._support.recipients import recipient_body
from .._support.types import Unique

pytestmark = pytest.mark.xdist_group("rate_limit_key")


def _default_row(contract: Contract) -> dict:
    return next(r for r in contract.limits["rate_limits"] if r["name"] == "default")


def _default_rate(contract: Contract) -> int:
    return _default_row(contract)["per_minute"]


def _after_the_preflight(contract: Contract) -> None:
    """The run's preflight read this key too: wait until that read has left the key's window ("60-second
    window"), so that the window holds this test's reads alone - else a 429 comes one read early and the test
    starts over, a second window of requests."""
    ended = preflight_ended()
    if ended is not None:
        time.sleep(max(0.0, ended + _default_row(contract)["window_seconds"] + 1 - time.time()))


def _read(api: Api) -> Exchange:
    """One cheap request, sent once (the harness does not wait out a 429 on it)."""
    return api.op("getBalance", raw=True)


def _expect_rate_limited(ex: Exchange) -> int:
    """429 RATE_LIMITED with `Retry-After` in seconds; the seconds."""
    expect_error(ex, 429, "RATE_LIMITED", "a request over the rate limit")
    value = ex.headers.get("retry-after")
    expect(value is not None and value.strip().isdigit(),
           f"the 429 carries Retry-After {value!r}, not a number of seconds", ex)
    return int(value)


def _until_limited(api: Api, most: int) -> Exchange:
    """Reads until one is refused (at most ``most``); the refusal."""
    for sent in range(1, most + 1):
        ex = _read(api)
        if ex.status == 429:
            return ex
        expect_status(ex, 200, f"read {sent} of at most {most}")
    fail(f"{most} requests in a row from one credential were all served, more than the rate limit allows")


def _serve_a_full_window(api: Api, limit: int) -> None:
    """``limit`` reads in a row, every one served. If the credential's window was already in use (an earlier
    test), a 429 comes early: it is waited out once, as its Retry-After says, and the count starts again."""
    for attempt in (1, 2):
        for sent in range(1, limit + 1):
            ex = _read(api)
            if ex.status == 429 and attempt == 1:
                time.sleep(_expect_rate_limited(ex))
                break
            expect_status(ex, 200, f"request {sent} of the {limit} one credential may send in a minute")
        else:
            return


@pytest.mark.smoke
@pytest.mark.req("RATE-DEFAULT", "RATE-REFUSED-BEFORE-HANDLER", "RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("rate_limit_key")
def test_the_request_after_the_limit_is_refused_before_its_handler(api_as, api: Api, contract: Contract,
                                                                   unique: Unique) -> None:
    """100 requests in a minute are served; the 101st, a write, answers 429 and creates nothing.

    The write creates a recipient with a new `externalId`; another key then reads that id and finds nothing.
    """
    limited, limit = api_as("rate_limit_key"), _default_rate(contract)
    _after_the_preflight(contract)
    _serve_a_full_window(limited, limit)
    payload = recipient_body(contract, unique)
    _expect_rate_limited(limited.op("createBeneficiary", json=payload, raw=True))
    expect_status(api.op("getBeneficiaryByExternalId", externalId=payload["externalId"]), 404,
                  "the write refused with 429 created no recipient")


@pytest.mark.req("RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("operator", "clock")
def test_retry_after_is_authoritative_on_the_clock(fresh_org, clock, contract: Contract) -> None:
    """Once the organization's clock has moved by `Retry-After` seconds, the next request is served."""
    org = fresh_org(paced=False)
    wait = _expect_rate_limited(_until_limited(org.api, _default_rate(contract) + 1))
    clock.advance(org.org_id, wait)
    expect_status(_read(org.api), 200, f"the request sent {wait}s later, as Retry-After said")


@pytest.mark.req("RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("rate_limit_key", "real_time")
def test_retry_after_is_authoritative_in_real_time(api_as, contract: Contract) -> None:
    """After really waiting `Retry-After` seconds, the next request is served."""
    limited = api_as("rate_limit_key")
    wait = _expect_rate_limited(_until_limited(limited, _default_rate(contract) + 1))
    time.sleep(wait)
    expect_status(_read(limited), 200, f"the request sent {wait}s later, as Retry-After said")
