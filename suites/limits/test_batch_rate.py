"""Limits, row Batch submission: "| Batch submission | 30 per minute | batch submission |".

The row does not say per what (credential, organization); a fresh organization with its own key, exempt
from the harness's pacing, is alone under either reading. The submissions go back to back, well inside one
minute: thirty runs are accepted, the next one is 429 RATE_LIMITED (judged under every reading of the window
by `_support.rates.trip`) while another route still answers. (The target's own organization is not alone
under the per-organization reading: other tests submit runs there.)
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, Target, expect_error, expect_status

from .._support.batches import lines_to, submit
from .._support.payouts import payable_destination
from .._support.rates import Window, default_rate, route_rate, still_served, trip
from .._support.types import Unique

ROW = "batch_submission"  # the Limits row's name (`contract/catalog/limits.yaml`)


@pytest.mark.smoke
@pytest.mark.req("RATE-BATCH")
@pytest.mark.needs("operator", "profile")
def test_batch_submissions_beyond_thirty_a_minute_are_refused(fresh_org, api: Api, contract: Contract,
                                                              target: Target, unique: Unique) -> None:
    """Thirty runs accepted (202), the thirty-first 429 RATE_LIMITED, GET /payouts/batches still 200."""
    limit, default = route_rate(contract, target, ROW), default_rate(contract, target)
    tripping = fresh_org(paced=False).api
    destination = payable_destination(tripping, contract, unique)
    refused = trip(Window(tripping, contract),
                   lambda n: submit(tripping, contract, lines_to(contract, destination, unique, 1), unique("run"),
                                    raw=True),
                   lambda ex, n: expect_status(ex, 202, f"batch submission {n}, under the limit ({limit.source})"),
                   limit, ROW, default)
    expect_error(refused, 429, "RATE_LIMITED", f"a batch submission over the limit ({limit.source})")
    still_served(tripping, api, "listPayoutBatches", "another route, same credential, after the limit")
