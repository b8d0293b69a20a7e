"""Limits, row Balance history: "| Balance history | 60 per minute per credential | GET balance/history |".

The test trips the limit on purpose with a fresh organization's unpaced key where the operator can make one,
else with the target's `rate_limit_key`, which the harness does not pace and no other test uses at the same time
(the xdist group of the rate-limit tests), on the target's own organization: the row is per credential, so
nothing but that key's window matters. The reads go back to back,
well inside one minute; the route's own limit is below the default rate, so the read after the sixtieth is
refused while another route still answers the same credential.
"""

from __future__ import annotations

import pytest

from payconform.contract import Contract
from payconform.expect import expect_error, expect_status
from payconform.target import Target

from .._support.rates import route_rate, served_in_a_window_of_its_own, tripping_credential

pytestmark = pytest.mark.xdist_group("rate_limit_key")


@pytest.mark.smoke
@pytest.mark.req("RATE-HISTORY")
@pytest.mark.needs("rate_limit_key")
def test_history_reads_beyond_sixty_a_minute_are_refused(request: pytest.FixtureRequest, api_as,
                                                          contract: Contract, target: Target) -> None:
    """Sixty balance history reads served, the next one 429 RATE_LIMITED, GET /balance still 200."""
    limit = route_rate(contract, target, "balance_history")
    api = tripping_credential(request, api_as, contract)
    served_in_a_window_of_its_own(
        lambda n: api.op("getBalanceHistory", raw=True),
        lambda ex, n: expect_status(ex, 200, f"balance history read {n} of {limit.per_minute} ({limit.source})"),
        limit.per_minute, limit.window_seconds)
    expect_error(api.op("getBalanceHistory", raw=True), 429, "RATE_LIMITED",
                 f"balance history read {limit.per_minute + 1} within a minute ({limit.source})")
    expect_status(api.op("getBalance", raw=True), 200, "another route, same credential, after the history limit")
