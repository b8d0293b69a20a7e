"""Limits, row `limit`, per list route, parametrized from contract/catalog/limits.yaml (`list_limits.routes`).

"| `limit` | balance history 1-500 (default 100, clamped); balance transactions 1-100 (default 100, refused
out of range); audit events 1-100 (default 50); payments on a link 1-100 (default 20, clamped or defaulted)
| list routes |". The catalog's `out_of_range` says what each route does outside its range: `clamp` (never a
400), `refuse` (400 VALIDATION_ERROR naming `limit`), `not_shown` (any answer but a 5xx). Routes are tested
when `suites/_support/lists.py` can fill them; payments on a link are tested with checkout
(`suites/endpoints/test_checkout_payments.py`). Each test runs on the target's own organization and makes only
the rows it lacks (`at_least`); the page sizes it expects hold however many rows earlier runs left and other
workers write meanwhile.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from payconform.suite import Api, Contract, Pager, expect, expect_error, expect_status, run_contract

from .._support.answers import names_field
from .._support.lists import SEEDS, at_least

PLAIN_INTEGER = re.compile(r"^-?[0-9]+$")
ROUTES_REQ = "LIMIT-LIST-ROUTES"
# routes whose own rules refuse a repeated parameter, with the spec's words
REPEATED_REFUSED = {"listBalanceTransactions": "a repeated parameter is `400 VALIDATION_ERROR` naming it"}


def _routes(req: Callable[[dict], tuple[str, ...]], only: Callable[[dict], bool] = lambda r: True) -> list:
    contract = run_contract()
    routes = (contract.limits.get("list_limits") or {}).get("routes") or []
    # a list under a parent resource (payments on a link) is left to its own suite, which knows its `limit` rules
    return [pytest.param(r, id=r["name"], marks=pytest.mark.req(*req(r)))
            for r in routes if r.get("operation") in SEEDS and SEEDS[r["operation"]].path is None and only(r)]


def _default_reqs(route: dict) -> tuple[str, ...]:
    return tuple(x for x in route.get("also", []) if x.endswith("-DEFAULT")) or (route["requirement"],)


def _too_short(route: dict, value: int, got: int, want: int) -> str:
    return f"limit={value} gave {got} rows of {want} expected: {route['spec']}"


@pytest.mark.fill
@pytest.mark.parametrize("route", _routes(_default_reqs))
def test_default_page_size(own_org, contract: Contract, unique, route: dict) -> None:
    """Without `limit`, a page holds exactly the route's default number of rows and a `nextCursor`, in a list
    holding one row more (made only when the list lacks it): that tells the default from every other size
    (20, 50, 100, the maximum). The lists only grow, so other workers' rows cannot change the answer."""
    default = route["default"]
    pager, ex = at_least(own_org(), contract, unique, route["operation"], default + 1, lambda p: p.request())
    page = pager.parse(ex, "reading without `limit`")
    expect(len(page.items) == default and page.cursor is not None,
           f"without `limit` the page of a list of more than {default} rows holds {len(page.items)} rows "
           f"({'with' if page.cursor else 'without'} a `nextCursor`); the default is {default}: {route['spec']}",
           page.ex)


@pytest.mark.breadth
@pytest.mark.parametrize("route", _routes(lambda r: (ROUTES_REQ,)))
def test_limit_in_range_is_honoured(own_org, contract: Contract, unique, route: dict) -> None:
    """`limit=1` gives one row of several; `limit=max` gives every row of a shorter list."""
    pager, ex = at_least(own_org(), contract, unique, route["operation"], 3, lambda p: p.request(limit=route["max"]))
    whole = pager.parse(ex, f"limit={route['max']}")
    expect(len(whole.items) >= 3, f"limit={route['max']} over 3 new rows gave {len(whole.items)}", whole.ex)
    one = pager.page(limit=route["min"], what=f"limit={route['min']}")
    expect(len(one.items) == route["min"], _too_short(route, route["min"], len(one.items), route["min"]), one.ex)


@pytest.mark.parametrize("route", _routes(lambda r: (r["requirement"],), lambda r: r["out_of_range"] != "not_shown"))
@pytest.mark.parametrize("value", [0, -1, "above"])
def test_out_of_range(own_org, contract: Contract, unique, route: dict, value: int | str) -> None:
    """Zero, negative and above the maximum: clamped into range on a `clamp` route (a page no longer than the
    clamped value, never a 400), a 400 VALIDATION_ERROR naming `limit` on a `refuse` route."""
    limit = route["max"] + 1 if value == "above" else int(value)
    org, op_id = own_org(), route["operation"]
    if route["out_of_range"] == "refuse":  # no rows needed: a refusal is the answer whatever the list holds
        ex = SEEDS[op_id].pager(org.api, contract, op_id).request(limit=limit)
        body = expect_error(ex, 400, "VALIDATION_ERROR", f"limit={limit}: {route['spec']}")
        expect(names_field(body.get("errors"), "limit"), f"`errors` does not name `limit`: {body.get('errors')!r}", ex)
        return
    pager, ex = at_least(org, contract, unique, op_id, 2, lambda p: p.request(limit=limit))
    expect_status(ex, 200, f"limit={limit} is clamped, never refused: {route['spec']}")
    clamped = max(route["min"], min(route["max"], limit))
    items = ex.json.get(pager.shape.items) if isinstance(ex.json, dict) else None
    expect(isinstance(items, list) and min(2, clamped) <= len(items) <= clamped,
           f"limit={limit} clamps to {clamped}: a page of {min(2, clamped)} to {clamped} rows of 2 or more, got "
           f"{len(items) if isinstance(items, list) else items!r}", ex)


# the values the other `limit` tests leave out (they cover the range's ends and just outside them): beyond 32 and
# 64 bits, text, a decimal, empty, repeated (a table: each kind once is what a rule can tell apart)
ODD_VALUES = [pytest.param(2**31, id="2^31"), pytest.param(10**30, id="10^30"), pytest.param("abc", id="text"),
              pytest.param("1.5", id="decimal"), pytest.param("", id="empty"), pytest.param([1, 2], id="repeated")]


@pytest.mark.breadth
@pytest.mark.smoke(ids=["2^31-balance_history", "2^31-balance_transactions", "2^31-audit_events"])
@pytest.mark.parametrize("route", _routes(lambda r: (ROUTES_REQ, r["requirement"])))
@pytest.mark.parametrize("value", ODD_VALUES)
def test_any_limit_value(api: Api, contract: Contract, route: dict, value: int | str | list[int]) -> None:
    """An odd `limit` (huge, text, decimal, empty, repeated): the route's rule for an integer, and for a repeated
    one where the route has one (balance transactions); otherwise 200 or a 400 (VALIDATION_ERROR naming `limit`, or
    BAD_REQUEST: the spec says nothing of non-numeric or repeated values elsewhere), never 5xx."""
    pager = Pager(api, contract, route["operation"])
    values = value if isinstance(value, list) else [value]
    ex = pager.request(extra=[("limit", str(v)) for v in values])
    integer = _integer(value)
    low, high = route["min"], route["max"]
    if isinstance(value, list) and route["operation"] in REPEATED_REFUSED:
        body = expect_error(ex, 400, "VALIDATION_ERROR",
                            f"limit repeated as {value!r}: {REPEATED_REFUSED[route['operation']]}")
        expect(names_field(body.get("errors"), "limit"), f"`errors` does not name `limit`: {body.get('errors')!r}", ex)
    elif integer is not None and route["out_of_range"] == "refuse" and not low <= integer <= high:
        expect_error(ex, 400, "VALIDATION_ERROR", f"limit={value!r}: {route['spec']}")
    elif integer is not None and (route["out_of_range"] == "clamp" or low <= integer <= high):
        page = pager.parse(ex, f"limit={value!r}: {route['spec']}")
        allowed = max(low, min(high, integer))
        expect(len(page.items) <= allowed, f"limit={value!r} gave {len(page.items)} rows, more than {allowed}", page.ex)
    elif ex.status != 200:  # no rule given: a field error naming `limit`, or a plain BAD_REQUEST
        body = expect_error(ex, 400, {"VALIDATION_ERROR", "BAD_REQUEST"},
                            f"limit={value!r} answered neither 200 nor 400")
        expect(body.get("type") != "VALIDATION_ERROR" or names_field(body.get("errors"), "limit"),
               f"`errors` does not name `limit`: {body.get('errors')!r}", ex)


def _integer(value: int | str | list[int]) -> int | None:
    """The integer a single `limit` value spells in plain decimal digits, else None."""
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and PLAIN_INTEGER.match(value) else None
