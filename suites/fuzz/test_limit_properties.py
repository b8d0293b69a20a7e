"""Property: `limit` on list routes, over arbitrary integers, follows the rule the spec states for the route.

Limits: "| `limit` | balance history 1-500 (default 100, clamped); balance transactions 1-100 (default 100,
refused out of range); audit events 1-100 (default 50); payments on a link 1-100 (default 20, clamped or
defaulted) | list routes |". The rules come from contract/catalog/limits.yaml:

- ``clamp``: every integer is answered 200 with a page no longer than the value brought into range;
- ``refuse``: a value in range is answered 200 with at most that many rows, one outside it 400
  VALIDATION_ERROR naming `limit`.

Audit events (no out-of-range rule: not shown) are not tested. Routes needing more than ``{orgId}`` (payments
on a link) and routes the fuzz phase does not cover (fuzz.yaml) are left out. Two sandbox top-ups first give
the ledger at least two rows, so that a clamp to 1 is visible.

Partial by design: the page is checked against its upper bound only. A clamp to the maximum (500 for the
history, 100 for the transactions) shows only in a list longer than the maximum, which this property does not
make; it would pass a route clamping to less or not at all. The exact sizes are the `limit` tests' job
(suites/limits/test_limit_lists.py: one row above each default; a refusal above the transactions' maximum).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from payconform.suite import (
    FUZZ_DOCUMENTS,
    Api,
    Contract,
    Exchange,
    expect,
    expect_error,
    expect_status,
    fuzz_session,
    list_items,
    run_contract,
)

SESSION = fuzz_session()
RULES = ("clamp", "refuse")


def _routes() -> list:
    contract = run_contract()
    fuzzed = {op for doc in FUZZ_DOCUMENTS for op in SESSION.operations(doc)}
    routes = (contract.limits.get("list_limits") or {}).get("routes") or []
    return [pytest.param(r, id=r["name"], marks=pytest.mark.req(r["requirement"]))
            for r in routes
            if r.get("out_of_range") in RULES and r.get("operation") in fuzzed and r["route"].count("{") == 1]


@pytest.fixture
def two_rows(api: Api, contract: Contract) -> None:
    """Two sandbox top-ups, so the ledger and the history hold at least two rows."""
    for _ in range(2):
        expect_status(api.op("fundSandbox", json=contract.operation("fundSandbox")["body"]), 200, "sandbox top-up")


def _items(contract: Contract, route: dict, ex: Exchange) -> list:
    return list_items(contract, route["operation"], ex)


@pytest.mark.req("LIMIT-LIST-ROUTES")
@pytest.mark.parametrize("route", _routes())
@SESSION.settings.hypothesis_settings()
@given(limit=st.integers())
@example(limit=2**31)  # the extremes and the edges first: a share of the phase's budget cut short still sends them
@example(limit=10**30)
@example(limit=0)
@example(limit=101)
@example(limit=501)
@example(limit=-1)
@example(limit=1)
@example(limit=100)
@example(limit=500)
def test_limit_follows_the_route_rule(api: Api, contract: Contract, two_rows: None, route: dict, limit: int) -> None:
    """``GET route?limit=<any integer>`` is answered as the route's rule says."""
    SESSION.spend()  # each example is a request of the fuzz phase's budget
    low, high = route["min"], route["max"]
    ex = api.op(route["operation"], params={"limit": str(limit)})
    if route["out_of_range"] == "refuse" and not low <= limit <= high:
        body = expect_error(ex, 400, "VALIDATION_ERROR", f"limit={limit} is outside {low}-{high}: {route['spec']}")
        expect("limit" in str(body.get("errors")), f"`errors` does not name `limit`: {body.get('errors')!r}", ex)
        return
    expect_status(ex, 200, f"limit={limit}: {route['spec']}")
    allowed = max(low, min(high, limit))
    items = _items(contract, route, ex)
    expect(len(items) <= allowed, f"limit={limit} gave {len(items)} rows; at most {allowed} are allowed", ex)
