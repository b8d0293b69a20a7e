"""Limits, row Balance history: "| Balance history | 60 per minute per credential | GET balance/history |".

The test trips the limit on purpose with a fresh organization's unpaced key where the operator can make one,
else with the target's `rate_limit_key`, which the harness does not pace and no other test uses at the same time
(the xdist group of the rate-limit tests), on the target's own organization. The reads go back to back, well
inside one minute, once the credential's default window has room for all of them (`_support.rates.Window`):
then only the route's own row may refuse them, and the read after the sixtieth is refused (judged under every
reading of the window by `_support.rates.trip`) while another route still answers the same credential. Its
reads stay in the default window: the default row's test, next in the group, counts them and sends only the rest.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, Target, expect_error, expect_status

from .._support.rates import Window, default_rate, route_rate, still_served, trip, tripping_credential

ROW = "balance_history"  # the Limits row's name (`contract/catalog/limits.yaml`)

pytestmark = pytest.mark.xdist_group("rate_limit_key")


@pytest.mark.smoke
@pytest.mark.req("RATE-HISTORY")
@pytest.mark.needs("rate_limit_key")
def test_history_reads_beyond_sixty_a_minute_are_refused(request: pytest.FixtureRequest, api_as, api: Api,
                                                          contract: Contract, target: Target) -> None:
    """Sixty balance history reads served, the next one 429 RATE_LIMITED, GET /balance still 200."""
    limit, default = route_rate(contract, target, ROW), default_rate(contract, target)
    tripping = tripping_credential(request, api_as)
    window = Window(tripping, contract)
    window.room_for(limit.per_minute + 2, default.per_minute)  # the reads, the refused one, the other route's
    refused = trip(window, lambda n: tripping.op("getBalanceHistory", raw=True),
                   lambda ex, n: expect_status(ex, 200, f"balance history read {n}, under the limit ({limit.source})"),
                   limit, ROW, default)
    expect_error(refused, 429, "RATE_LIMITED", f"a balance history read over the limit ({limit.source})")
    still_served(tripping, api, "getBalance", "another route, same credential, after the history limit")
