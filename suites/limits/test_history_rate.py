"""Limits, row Balance history: "| Balance history | 60 per minute per credential | GET balance/history |".

The test trips the limit on purpose with the key of a fresh organization, exempt from the harness's pacing,
so no other credential's budget is touched. The reads go back to back, well inside one minute; the route's
own limit is below the default rate, so the read after the sixtieth is refused while another route still
answers the same credential.
"""

from __future__ import annotations

import pytest

from payconform.contract import Contract
from payconform.expect import expect_error, expect_status


@pytest.mark.smoke
@pytest.mark.req("RATE-HISTORY")
@pytest.mark.needs("operator")
def test_history_reads_beyond_sixty_a_minute_are_refused(fresh_org, contract: Contract) -> None:
    """Sixty balance history reads served, the next one 429 RATE_LIMITED, GET /balance still 200."""
    limit = next(r["per_minute"] for r in contract.limits["rate_limits"] if r["name"] == "balance_history")
    api = fresh_org(paced=False).api
    for sent in range(1, limit + 1):
        expect_status(api.op("getBalanceHistory", raw=True), 200, f"balance history read {sent} of {limit}")
    expect_error(api.op("getBalanceHistory", raw=True), 429, "RATE_LIMITED",
                 f"balance history read {limit + 1} within a minute")
    expect_status(api.op("getBalance", raw=True), 200, "another route, same credential, after the history limit")
