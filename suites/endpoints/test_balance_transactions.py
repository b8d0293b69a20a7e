"""Resources > Balance transaction row and Endpoints > Balance and ledger, GET /balance_transactions.

Each test tops up a fresh organization's sandbox balance (the profile's `fundSandbox`), so its list holds
exactly the rows it made. The `type` of a top-up row is not shown: the tests read it off the row. The
row's creation-time field is not named either: the `createdAfter`/`createdBefore` bounds are checked with
instants far before and after every row, and inclusively on `createdAt` where a row carries it. Order,
paging and a foreign cursor are checked in suites/conventions/test_paging.py, `limit` in suites/limits.
"""

from __future__ import annotations

import re

import pytest

from payconform.client import Api
from payconform.contract import Contract
from payconform.expect import expect, expect_error
from payconform.paging import Pager, identity

from .._support.answers import names_field
from .._support.balance import top_up
from .._support.lists import filtered_page, topped_up
from .._support.money import as_decimal

NUMERIC = re.compile(r"^[0-9]+$")
PAST, FUTURE = "2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z"


def _refused(pager: Pager, name: str, params: list[tuple[str, str]], what: str) -> None:
    ex = pager.request(extra=params)
    body = expect_error(ex, 400, "VALIDATION_ERROR", what)
    expect(names_field(body.get("errors"), name), f"`errors` does not name `{name}`: {body.get('errors')!r}", ex)


@pytest.mark.req("BTX-FIELDS", "BTX-ID-NUMERIC")
@pytest.mark.needs("operator")
def test_row_fields(fresh_org, contract: Contract) -> None:
    """Rows name `id` (numeric-looking), `type`, `balanceAfter` and the currency."""
    _, pager = topped_up(fresh_org, contract, "listBalanceTransactions", "12.00")
    page = pager.page()
    expect(len(page.items) == 1, f"one top-up left {len(page.items)} rows", page.ex)
    row = page.items[0]
    for name in ("id", "type", "balanceAfter", "currency"):
        expect(row.get(name) not in (None, ""), f"the row has no `{name}`: {row!r}", page.ex)
    expect(isinstance(row["id"], int) or NUMERIC.match(str(row["id"])) is not None,
           f"`id` {row['id']!r} is not numeric-looking", page.ex)


@pytest.mark.req("BTX-CURSOR-OLDER")
@pytest.mark.needs("operator")
def test_cursor_is_strictly_older(fresh_org, contract: Contract) -> None:
    """`cursor=<id>` lists the rows strictly older than that id: not the row itself, nothing newer."""
    _, pager = topped_up(fresh_org, contract, "listBalanceTransactions", "1.10", "1.20", "1.30")
    rows = pager.page().items
    expect(len(rows) == 3, f"three top-ups left {len(rows)} rows")
    older = pager.page(cursor=str(rows[1]["id"]), what="cursor = the middle row's id")
    expect(older.items == rows[2:], f"cursor={rows[1]['id']} lists {[r.get('id') for r in older.items]}; rows "
           f"strictly older are {[r.get('id') for r in rows[2:]]}", older.ex)


@pytest.mark.req("BTX-TYPE-FILTER")
@pytest.mark.needs("operator")
def test_type_filter(fresh_org, contract: Contract) -> None:
    """`type` keeps the rows of the listed types (comma-separated); an unknown value is a 400 naming `type`."""
    _, pager = topped_up(fresh_org, contract, "listBalanceTransactions", "2.10", "2.20")
    rows = pager.page().items
    kind = str(rows[0].get("type"))
    same = filtered_page(pager, "balance transactions", type=kind)
    expect(len(same.items) == len(rows), f"type={kind} lists {len(same.items)} of {len(rows)} {kind} rows", same.ex)
    other = filtered_page(pager, "balance transactions", type="payout,payout_return")
    expect(all(r.get("type") in ("payout", "payout_return") for r in other.items),
           f"type=payout,payout_return lists types {[r.get('type') for r in other.items]}", other.ex)
    _refused(pager, "type", [("type", "no_such_type")], "an unknown `type` value")


@pytest.mark.req("BTX-FILTERS")
@pytest.mark.needs("operator")
def test_currency_and_order_filters(fresh_org, contract: Contract, unique) -> None:
    """`currency=USD` keeps the USD rows; another currency or an unknown `orderId` lists none of them (an
    empty page, or a 400 for a value the target does not know)."""
    _, pager = topped_up(fresh_org, contract, "listBalanceTransactions", "3.10")
    rows = pager.page().items
    usd = filtered_page(pager, "balance transactions", currency="USD")
    expect(usd.items == rows, f"currency=USD lists {len(usd.items)} of {len(rows)} USD rows", usd.ex)
    for name, value in (("currency", "EUR"), ("orderId", unique("order"))):
        ex = pager.request(extra=[(name, value)])
        if ex.status == 400:
            expect_error(ex, 400, "VALIDATION_ERROR", f"{name}={value}")
            continue
        page = pager.parse(ex, f"{name}={value}")
        expect(page.items == [], f"{name}={value} lists {len(page.items)} rows of the USD top-up", ex)


@pytest.mark.req("BTX-CREATED-RANGE")
@pytest.mark.needs("operator")
def test_created_range_is_inclusive(fresh_org, contract: Contract) -> None:
    """`createdAfter`/`createdBefore` bound the rows inclusively; an instant without a timezone is refused."""
    _, pager = topped_up(fresh_org, contract, "listBalanceTransactions", "4.10")
    rows = pager.page().items
    expect(filtered_page(pager, "balance transactions", createdAfter=PAST, createdBefore=FUTURE).items == rows,
           "a range around every row drops rows")
    expect(filtered_page(pager, "balance transactions", createdAfter=FUTURE).items == [],
           f"createdAfter={FUTURE} keeps rows")
    expect(filtered_page(pager, "balance transactions", createdBefore=PAST).items == [],
           f"createdBefore={PAST} keeps rows")
    at = rows[0].get("createdAt")
    if isinstance(at, str):
        both = filtered_page(pager, "balance transactions", createdAfter=at, createdBefore=at)
        expect(both.items == rows[:1], f"createdAfter=createdBefore={at} (the row's own time) drops the row", both.ex)
    _refused(pager, "createdAfter", [("createdAfter", "2026-01-01T00:00:00")], "an instant without a timezone")


@pytest.mark.req("BTX-INVALID-QUERY")
@pytest.mark.parametrize("name,value", [("currency", "USD"), ("limit", "10"), ("type", "payout")])
def test_repeated_parameter_is_refused(api: Api, contract: Contract, name: str, value: str) -> None:
    """A parameter sent twice is a 400 VALIDATION_ERROR naming it."""
    pager = Pager(api, contract, "listBalanceTransactions")
    _refused(pager, name, [(name, value), (name, value)], f"`{name}` sent twice")


@pytest.mark.req("BTX-NET")
@pytest.mark.needs("operator")
def test_net_is_amount_less_fee(fresh_org, contract: Contract) -> None:
    """`net` is the amount less the fee, with the amount's sign; present whenever the fee is known."""
    _, pager = topped_up(fresh_org, contract, "listBalanceTransactions", "5.10")
    for row in pager.page().items:
        fee_field = row.get("fee")  # a bare amount, or an object with `amount`
        amount = as_decimal(row.get("amount"))
        fee = as_decimal(fee_field.get("amount") if isinstance(fee_field, dict) else fee_field)
        if fee is None:
            continue
        net = as_decimal(row.get("net"))
        expect(net is not None, f"a row with a known fee has no `net`: {row!r}")
        if amount is not None:
            expect(net == amount - fee.copy_sign(amount), f"`net` {net} is not amount {amount} less fee {fee}")
            expect(net == 0 or (net > 0) == (amount > 0), f"`net` {net} does not carry the sign of amount {amount}")


@pytest.mark.req("BTX-APPEND-ONLY")
@pytest.mark.needs("operator")
def test_rows_are_append_only(fresh_org, contract: Contract) -> None:
    """A row once listed keeps its id and content on later reads: a later movement appends a row and changes
    none of the earlier ones."""
    handle, pager = topped_up(fresh_org, contract, "listBalanceTransactions", "6.10", "6.20")
    first = pager.walk(100).items
    top_up(handle.api, contract, "6.30")
    later = pager.walk(100)
    now = {identity(row): row for row in later.items}
    for row in first:
        expect(now.get(identity(row)) == row, f"row {identity(row)} read {row!r}, later {now.get(identity(row))!r}: "
               "rows are append-only", later.last)
    expect(len(later.items) == len(first) + 1, f"one more top-up took the list from {len(first)} to "
           f"{len(later.items)} rows", later.last)


@pytest.mark.req("BTX-EMPTY-BEFORE-LOAD")
@pytest.mark.needs("operator")
def test_empty_page_before_rows_are_loaded(fresh_org, operator, contract: Contract) -> None:
    """While the organization's historical rows are not loaded (an operator state), the answer is an empty
    page, not an error; once loaded, the rows are listed."""
    handle, pager = topped_up(fresh_org, contract, "listBalanceTransactions", "7.10")
    operator.set_history_loaded(handle.org_id, False)
    page = pager.page(what="balance transactions before historical rows are loaded")
    expect(page.items == [] and page.cursor is None,
           f"before historical rows are loaded the page holds {len(page.items)} rows, cursor {page.cursor!r}", page.ex)
    operator.set_history_loaded(handle.org_id, True)
    loaded = pager.page(what="balance transactions once loaded")
    expect(len(loaded.items) == 1, f"once loaded the list holds {len(loaded.items)} rows, not the top-up", loaded.ex)
