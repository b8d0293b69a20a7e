"""Limits: "Default rate | 100 requests per minute per API credential, 60-second window" and "`Retry-After` |
seconds, authoritative; a 429 means the request was refused before the handler ran", with the RATE_LIMITED
row ("429 ... Wait for `Retry-After`").

These tests trip the limit on purpose, so each uses a credential that the harness does not pace: the target's
`rate_limit_key`, or the key of a fresh organization (whose clock the test then moves). The tests on
`rate_limit_key` share one xdist group so that they never run at the same time. No test waits for an empty
window: each counts what the credential's window may already hold (`_support.rates.Window`, from the run's
pacing file) and judges the 429 under every reading of the window (`_support.rates.trip`). A target file
declaring its own `rate_limit` is judged by it (see `_support.rates`). The default row's test is the module's
last: a module's tests are spread over the run (`payconform/plugin/order.py`), so it comes after the balance
history test, whose reads it counts, instead of filling the window that test needs room in.
"""

from __future__ import annotations

import time

import pytest

from payconform.suite import Api, Contract, Exchange, Target, expect, expect_error, expect_status

from .._support.profile import success
from .._support.rates import Judged, Window, default_rate, trip
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


def _until_limited(api: Api, contract: Contract, limit: Judged) -> Exchange:
    """Reads until one is refused; the refusal (judged by `trip`)."""
    return trip(Window(api, contract), lambda n: _read(api),
                lambda ex, n: expect_status(ex, 200, f"read {n}, under the limit ({limit.source})"), limit)


@pytest.mark.req("RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("operator", "clock")
def test_retry_after_is_authoritative_on_the_clock(fresh_org, clock, contract: Contract, target: Target) -> None:
    """Once the organization's clock has moved by `Retry-After` seconds, the next request is served."""
    limit = default_rate(contract, target)
    org = fresh_org(paced=False)
    wait = _expect_rate_limited(_until_limited(org.api, contract, limit))
    clock.advance(org.org_id, wait)
    expect_status(_read(org.api), 200, f"the request sent {wait}s later, as Retry-After said")


@pytest.mark.req("RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("rate_limit_key", "real_time")
def test_retry_after_is_authoritative_in_real_time(api_as, contract: Contract, target: Target) -> None:
    """After really waiting `Retry-After` seconds, the next request is served."""
    limited = api_as("rate_limit_key")
    wait = _expect_rate_limited(_until_limited(limited, contract, default_rate(contract, target)))
    time.sleep(wait)
    expect_status(_read(limited), 200, f"the request sent {wait}s later, as Retry-After said")


@pytest.mark.smoke
@pytest.mark.req("RATE-DEFAULT", "RATE-REFUSED-BEFORE-HANDLER", "RATE-RETRY-AFTER", "ERR-RATE-LIMITED")
@pytest.mark.needs("rate_limit_key")
def test_the_request_after_the_limit_is_refused_before_its_handler(api_as, api: Api, contract: Contract,
                                                                   target: Target, unique: Unique) -> None:
    """Reads are served while the credential's window may hold fewer than 100 requests; from there on each
    request is a write, and the one refused with 429 created nothing.

    Each write creates a recipient with a new `externalId`; another key then reads the refused one's id and
    finds nothing. The reads the window already holds (the balance history test's, run before in the group)
    count: only the rest are sent.
    """
    limited, limit = api_as("rate_limit_key"), default_rate(contract, target)
    window = Window(limited, contract)
    writes: list[dict] = []

    def send(n: int) -> Exchange:
        if window.held() < limit.per_minute:
            return _read(limited)
        writes.append(recipient_body(contract, unique))
        return limited.op("createBeneficiary", json=writes[-1], raw=True)

    def served(ex: Exchange, n: int) -> None:
        expect_status(ex, success(contract, "createBeneficiary") if ex.op_id == "createBeneficiary" else 200,
                      f"request {n}, under the limit ({limit.source})")

    refused = trip(window, send, served, limit)
    _expect_rate_limited(refused)
    expect(refused.op_id == "createBeneficiary", "the request refused with 429 was a read, not the write the test "
           "checks (the window was counted wrong)", refused)
    expect_status(api.op("getBeneficiaryByExternalId", externalId=writes[-1]["externalId"]), 404,
                  "the write refused with 429 created no recipient")
