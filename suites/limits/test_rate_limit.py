"""Limits: "Default rate | 100 requests per minute per API credential, 60-second window" and "`Retry-After` |
seconds, authoritative; a 429 means the request was refused before the handler ran", with the RATE_LIMITED
row ("429 ... Wait for `Retry-After`").

These tests trip the limit on purpose, so each uses a credential no other test uses and that the harness
does not pace: the target's `rate_limit_key`, or the key of a fresh organization (whose clock the test then
moves). The tests on `rate_limit_key` share one xdist group so that they never run at the same time. A target
file declaring its own `rate_limit` is judged by it (see `_support.rates`).
"""

from __future__ import annotations

import time

import pytest

from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.expect import expect, expect_error, expect_status, fail
from payconform.target import Target

from .._support.rates import Judged, after_the_preflight, default_rate, served_in_a_window_of_its_own
from .._support.recipients import recipient_body
from .._support.types import Unique

pytestmark = pytest.mark.xdist_group("rate_limit_key")


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


def _until_limited(api: Api, limit: Judged) -> Exchange:
    """Reads until one is refused (at most the limit and one more); the refusal."""
    most = limit.per_minute + 1
    for sent in range(1, most + 1):
        ex = _read(api)
        if ex.status == 429:
            return ex
        expect_status(ex, 200, f"read {sent} of at most {most}")
    fail(f"{most} requests in a row from one credential were all served, more than the rate limit allows"
         f" ({limit.source})")


def _serve_a_full_window(api: Api, limit: Judged) -> None:
    """As many reads as the limit allows in a row, every one served."""
    served_in_a_window_of_its_own(
        lambda n: _read(api),
        lambda ex, n: expect_status(ex, 200, f"request {n} of the {limit.per_minute} one credential may send in a"
                                             f" minute ({limit.source})"),
        limit.per_minute, limit.window_seconds)


@pytest.mark.smoke
@pytest.mark.req("RATE-DEFAULT", "RATE-REFUSED-BEFORE-HANDLER", "RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("rate_limit_key")
def test_the_request_after_the_limit_is_refused_before_its_handler(api_as, api: Api, contract: Contract,
                                                                   target: Target, unique: Unique) -> None:
    """100 requests in a minute are served; the 101st, a write, answers 429 and creates nothing.

    The write creates a recipient with a new `externalId`; another key then reads that id and finds nothing.
    """
    limited, limit = api_as("rate_limit_key"), default_rate(contract, target)
    after_the_preflight(contract)
    _serve_a_full_window(limited, limit)
    payload = recipient_body(contract, unique)
    _expect_rate_limited(limited.op("createBeneficiary", json=payload, raw=True))
    expect_status(api.op("getBeneficiaryByExternalId", externalId=payload["externalId"]), 404,
                  "the write refused with 429 created no recipient")


@pytest.mark.req("RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("operator", "clock")
def test_retry_after_is_authoritative_on_the_clock(fresh_org, clock, contract: Contract, target: Target) -> None:
    """Once the organization's clock has moved by `Retry-After` seconds, the next request is served."""
    limit = default_rate(contract, target)
    org = fresh_org(paced=False)
    wait = _expect_rate_limited(_until_limited(org.api, limit))
    clock.advance(org.org_id, wait)
    expect_status(_read(org.api), 200, f"the request sent {wait}s later, as Retry-After said")


@pytest.mark.req("RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("rate_limit_key", "real_time")
def test_retry_after_is_authoritative_in_real_time(api_as, contract: Contract, target: Target) -> None:
    """After really waiting `Retry-After` seconds, the next request is served."""
    limited = api_as("rate_limit_key")
    wait = _expect_rate_limited(_until_limited(limited, default_rate(contract, target)))
    time.sleep(wait)
    expect_status(_read(limited), 200, f"the request sent {wait}s later, as Retry-After said")
