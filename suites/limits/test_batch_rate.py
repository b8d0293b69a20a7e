"""Limits, row Batch submission: "| Batch submission | 30 per minute | batch submission |".

The row does not say per what (credential, organization); a fresh organization with its own key, exempt
from the harness's pacing, is alone under either reading. The submissions go back to back, well inside one
minute: thirty runs are accepted, the next one is 429 RATE_LIMITED while another route still answers. (The
target's own organization is not alone under the per-organization reading: other tests submit runs there.)
"""

from __future__ import annotations

import pytest

from payconform.contract import Contract
from payconform.expect import expect_error, expect_status
from payconform.target import Target

from .._support.batches import lines_to, submit
from .._support.payouts import payable_destination
from .._support.rates import route_rate
from .._support.types import Unique


@pytest.mark.smoke
@pytest.mark.req("RATE-BATCH")
@pytest.mark.needs("operator", "profile")
def test_batch_submissions_beyond_thirty_a_minute_are_refused(fresh_org, contract: Contract, target: Target,
                                                              unique: Unique) -> None:
    """Thirty runs accepted (202), the thirty-first 429 RATE_LIMITED, GET /payouts/batches still 200."""
    judged = route_rate(contract, target, "batch_submission")
    limit = judged.per_minute
    api = fresh_org(paced=False).api
    destination = payable_destination(api, contract, unique)
    for sent in range(1, limit + 1):
        ex = submit(api, contract, lines_to(contract, destination, unique, 1), unique("run"), raw=True)
        expect_status(ex, 202, f"batch submission {sent} of {limit} ({judged.source})")
    ex = submit(api, contract, lines_to(contract, destination, unique, 1), unique("run"), raw=True)
    expect_error(ex, 429, "RATE_LIMITED", f"batch submission {limit + 1} within a minute ({judged.source})")
    expect_status(api.op("listPayoutBatches", raw=True), 200, "another route, same credential, after the limit")
