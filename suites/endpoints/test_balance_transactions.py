"""Resources > Balance transaction row and Endpoints > Balance and ledger, GET /balance_transactions.

Each test tops up the target's own organization (the profile's `fundSandbox`) by amounts no other test uses
and finds its rows by those amounts among the newest, whatever else earlier runs and other workers wrote; a
filter is checked by the test's rows it keeps and by every row it lists matching it. The `type` of a top-up
row is not shown: the tests read it off the row, nor is the name of its currency field (a `currency` field is
judged where rows carry one). The row's creation-time field is not named either: the `createdAfter`/
`createdBefore` bounds are checked with instants far before and after every row, and inclusively on `createdAt`
where a row carries it (to the precision its times are shown to). Order,
paging and a foreign cursor are checked in suites/conventions/test_paging.py, `limit` in suites/limits.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from payconform.suite import Api, Contract, Exchange, Page, Pager, expect, expect_error, identity

from .._support.answers import names_field
from .._support.instants import is_instant, parse_instant, write_instant
from .._support.lists import MILLISECOND, filtered_page, own_top_ups, shown_step, topped_up
from .._support.money import as_decimal, decimal_values
from .._support.machines import RETURNED, came_back, path, scenario_walk
from .._support.payouts import create_payout
from .._support.realtime import Timed
from .._support.scenario_outcomes import mismatch_unless_in_scenario

NUMERIC = re.compile(r"^[0-9]+$")
PAST, FUTURE = "2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z"


def _refused(pager: Pager, name: str, params: list[tuple[str, str]], what: str) -> None:
    ex = pager.request(extra=params)
    body = expect_error(ex, 400, "VALIDATION_ERROR", what)
    expect(names_field(body.get("errors"), name), f"`errors` does not name `{name}`: {body.get('errors')!r}", ex)


@pytest.mark.req("BTX-FIELDS", "BTX-ID-NUMERIC")
def test_row_fields(own_org, contract: Contract) -> None:
    """Rows name `id` (numeric-looking), `type` and `balanceAfter`. The row's currency is named without its
    field's name ("`type`, `orderId`, currency"): no name is required of it."""
    _, (row,), _ = own_top_ups(own_org(), contract, 1)
    for name in ("id", "type", "balanceAfter"):
        expect(row.get(name) not in (None, ""), f"the row has no `{name}`: {row!r}")
    expect(isinstance(row["id"], int) or NUMERIC.match(str(row["id"])) is not None,
           f"`id` {row['id']!r} is not numeric-looking")


@pytest.mark.req("BTX-CURSOR-OLDER")
def test_cursor_is_strictly_older(own_org, contract: Contract) -> None:
    """`cursor=<id>` lists the rows strictly older than that id: not the row itself, nothing newer. Rows written
    meanwhile are newer still, so the rows after the middle top-up on the first read start the cursor's page."""
    pager, rows, first = own_top_ups(own_org(), contract, 3)
    ids = [identity(r) for r in first.items]
    at = ids.index(identity(rows[1]))
    older = pager.page(cursor=str(rows[1]["id"]), limit=100, what="cursor = the middle top-up's id")
    got, after = [identity(r) for r in older.items], ids[at + 1:]
    both = min(len(got), len(after))  # the first read's page ends where it ends: compare what both hold
    expect(bool(got) and got[:both] == after[:both] and identity(rows[2]) in got,
           f"cursor={rows[1]['id']} lists {got[:5]}... ({len(got)} rows); the rows strictly older than it on the "
           f"first read were {after[:5]}... ({len(after)} rows on that page)", older.ex)


@pytest.mark.req("BTX-TYPE-FILTER", "BTX-FIELDS")
def test_type_filter(own_org, contract: Contract, unique) -> None:
    """`type` keeps the rows of the listed types: one type keeps the test's top-ups and drops its payout's row;
    the comma-separated top-up and payout types keep both (each listed type, not only the first); an unknown
    value is a 400 naming `type`. The payout's row is found by `orderId` (its type read off it, as the full list
    of types is not shown), and names the payout in its own `orderId` field."""
    handle = own_org()
    payout_id = create_payout(handle.api, contract, unique).json["payoutId"]
    pager, rows, _ = own_top_ups(handle, contract, 2)
    kind = str(rows[0].get("type"))
    paid = filtered_page(pager, "balance transactions", orderId=payout_id).items
    unnamed = [r.get("id") for r in paid if r.get("orderId") != payout_id]
    expect(not unnamed, f"rows {unnamed} listed for orderId={payout_id} do not carry `orderId` {payout_id!r}: the "
           "row's fields are \"`id` ..., `balanceAfter`, `net` ..., `type`, `orderId`, currency\"")
    outgoing = sorted({str(r.get("type")) for r in paid} - {kind})
    expect(bool(outgoing), f"orderId={payout_id} (a payout just made) lists no row of a type other than the top-ups'"
           f" `{kind}`: {paid!r}")
    listed = f"{kind},{outgoing[0]}"
    both = filtered_page(pager, "balance transactions", type=listed, limit="100")
    held = set(map(identity, both.items))
    expect(all(r.get("type") in (kind, outgoing[0]) for r in both.items), f"type={listed} lists types "
           f"{sorted({str(r.get('type')) for r in both.items})}", both.ex)
    expect(all(identity(r) in held for r in (*rows, *(r for r in paid if r.get("type") == outgoing[0]))),
           f"type={listed} hides the test's rows of one of the listed types (top-ups {[r.get('id') for r in rows]}, "
           f"the payout's {[r.get('id') for r in paid]}): a comma list keeps the rows of each type", both.ex)
    same = filtered_page(pager, "balance transactions", type=kind, limit="100")
    kept = set(map(identity, same.items))
    expect(all(r.get("type") == kind for r in same.items) and all(identity(r) in kept for r in rows),
           f"type={kind} lists types {sorted({str(r.get('type')) for r in same.items})} and keeps "
           f"{sum(identity(r) in kept for r in rows)} of the {len(rows)} `{kind}` top-ups", same.ex)
    _refused(pager, "type", [("type", "no_such_type")], "an unknown `type` value")


@pytest.mark.req("BTX-FILTERS")
def test_currency_and_order_filters(own_org, contract: Contract, unique) -> None:
    """`currency=USD` keeps the test's USD top-up; another currency drops it; an unknown `orderId` lists none (an
    empty page, or a 400 for a value the target does not know). The row's currency field is not named ("`type`,
    `orderId`, currency", the query parameter alone is `currency`): a listed row is judged by a `currency` field
    only where it carries one, else by the test's own USD row alone."""
    pager, rows, _ = own_top_ups(own_org(), contract, 1)
    mine = identity(rows[0])
    for value in ("USD", "EUR"):
        ex = pager.request(extra=[("currency", value)])
        if value != "USD" and ex.status == 400:
            expect_error(ex, 400, "VALIDATION_ERROR", f"currency={value}")
            continue
        page = pager.parse(ex, f"currency={value}")
        named = [r for r in page.items if isinstance(r, dict) and "currency" in r]
        reading = (f"judged by the `currency` field of {len(named)} of its {len(page.items)} rows" if named else
                   f"its {len(page.items)} rows carry no `currency` field (the row's currency field is not named): "
                   "judged by the test's own USD top-up")
        others = sorted({str(r.get("currency")) for r in named if r.get("currency") != value})
        expect(others == [], f"currency={value} lists rows of currencies {others} ({reading})", ex)
        listed = mine in map(identity, page.items)
        expect(listed == (value == "USD"), f"currency={value} {'drops' if value == 'USD' else 'lists'} the test's "
               f"USD top-up {mine} ({reading})", ex)
    order = unique("order")
    ex = pager.request(extra=[("orderId", order)])
    if ex.status == 400:
        expect_error(ex, 400, "VALIDATION_ERROR", f"orderId={order}")
        return
    page = pager.parse(ex, f"orderId={order}")
    strays = [r for r in page.items if r.get("orderId") != order]
    expect(strays == [], f"orderId={order} lists {len(strays)} rows with another orderId", ex)


def _returned_payout_rows(timed: Timed, contract: Contract, unique) -> tuple[str, list[dict], Page]:
    """The payout the bank returns (the profile's scenario 0004), followed until it has come back (`completed`,
    then `failed`; in real time the run's walk of that scenario, `scenario_walk`, which the payout-state tests
    read too), and its rows under `orderId=<its id>` with the page that lists them."""
    payout_id, readings = scenario_walk(timed, contract, unique, RETURNED, until=came_back)
    mismatch_unless_in_scenario(timed.api, timed.clock, timed.org_id, contract, unique, RETURNED, readings)
    expect(came_back(readings), f"scenario {RETURNED} went {path(readings)}; it does not come back from the bank "
           "(`completed`, then `failed`)", readings[-1].ex)
    page = filtered_page(Pager(timed.api, contract, "listBalanceTransactions"), "balance transactions",
                         orderId=payout_id)
    return payout_id, [r for r in page.items if r.get("orderId") == payout_id], page


@pytest.mark.req("BTX-TYPES-SEEN")
@pytest.mark.needs("profile")
@pytest.mark.xdist_group("payout-scenario-walks")
@pytest.mark.payout_walk(RETURNED)
@pytest.mark.timeout(300)
def test_a_returned_payout_shows_payout_and_payout_return(timed: Timed, contract: Contract, unique) -> None:
    """A payout from the balance that the bank returns (`_returned_payout_rows`): under `orderId=<its id>`, one
    `payout` row and one `payout_return` row. A payout that fails with its funds returned (0003) is not used:
    which type its money coming back takes is not shown ("the full list of `type` values is not shown")."""
    payout_id, rows, page = _returned_payout_rows(timed, contract, unique)
    types = Counter(str(r.get("type")) for r in rows)
    expect(types["payout"] == 1 and types["payout_return"] == 1,
           f"the payout {payout_id} the bank returned has rows of types {dict(types)}: one `payout` and one "
           "`payout_return` (\"Types seen: `payout`, `payout_return`\")", page.ex)


@pytest.mark.req("BTX-COVERAGE")
@pytest.mark.needs("profile")
@pytest.mark.xdist_group("payout-scenario-walks")
@pytest.mark.payout_walk(RETURNED)
@pytest.mark.timeout(300)
def test_rows_cover_funding_payouts_and_returns(timed: Timed, contract: Contract, unique) -> None:
    """"Rows cover funding in, payouts out, returns, ...": a top-up of an amount no other test uses has its row
    among the newest, and the payout the bank returned (the profile's scenario 0004, the run's walk of it in real
    time) has rows under `orderId=<its id>` for the money going out and for the money coming back. Holds and
    their release, and operator adjustments, are brought about by the operator only
    (`suites/resources/test_ledger_reconciliation.py`)."""
    payout_id, rows, page = _returned_payout_rows(timed, contract, unique)
    own_top_ups(timed, contract, 1)  # its row is found among the newest, or the test fails there
    types = sorted(str(r.get("type")) for r in rows)
    expect(len(rows) >= 2, f"the payout {payout_id} the bank returned has {len(rows)} rows (types {types}): the "
           "rows cover the payout going out and its return coming back, a row each", page.ex)


@pytest.mark.req("BTX-CREATED-RANGE")
def test_created_range_is_inclusive(own_org, contract: Contract) -> None:
    """`createdAfter`/`createdBefore` bound the rows inclusively; an instant without a timezone is refused. Where
    rows show their time to the millisecond, the row's own time as both bounds keeps it; the precision of a shown
    time is not given, and a time shown coarser (whole seconds) may stand for any instant of its step, so there
    the row is looked for within a step either side of its shown time instead. The precision is read from three
    rows' shown times: one row's milliseconds end in zero one time in ten, and a step guessed from it too coarse
    would let bounds that exclude their instant pass."""
    pager, rows, newest = own_top_ups(own_org(), contract, 3)
    around = filtered_page(pager, "balance transactions", createdAfter=PAST, createdBefore=FUTURE)
    expect(rows[0] in around.items, "a range around every row drops rows", around.ex)
    expect(filtered_page(pager, "balance transactions", createdAfter=FUTURE).items == [],
           f"createdAfter={FUTURE} keeps rows")
    expect(filtered_page(pager, "balance transactions", createdBefore=PAST).items == [],
           f"createdBefore={PAST} keeps rows")
    at = rows[0].get("createdAt")
    if is_instant(at):
        step = shown_step([parse_instant(t) for r in newest.items if is_instant(t := r.get("createdAt"))])
        low, high = ((at, at) if step <= MILLISECOND else
                     (write_instant(parse_instant(at) - step), write_instant(parse_instant(at) + step)))
        both = filtered_page(pager, "balance transactions", createdAfter=low, createdBefore=high)
        reading = ("the row's own time as both bounds" if step <= MILLISECOND else
                   f"times shown to {step.total_seconds():g} s: the row's instant lies within a step of {at}")
        expect(identity(rows[0]) in map(identity, both.items),
               f"createdAfter={low}, createdBefore={high} ({reading}) drops the row", both.ex)
    _refused(pager, "createdAfter", [("createdAfter", "2026-01-01T00:00:00")], "an instant without a timezone")


@pytest.mark.req("BTX-INVALID-QUERY")
@pytest.mark.parametrize("name,value", [("currency", "USD"), ("limit", "10"), ("type", "payout")])
def test_repeated_parameter_is_refused(api: Api, contract: Contract, name: str, value: str) -> None:
    """A parameter sent twice is a 400 VALIDATION_ERROR naming it."""
    pager = Pager(api, contract, "listBalanceTransactions")
    _refused(pager, name, [(name, value), (name, value)], f"`{name}` sent twice")


@pytest.mark.req("BTX-NET")
def test_net_is_amount_less_fee(own_org, contract: Contract, unique) -> None:
    """`net` is the amount less the fee, carrying the amount's sign, and present wherever a fee is shown: checked
    on every row of the newest page, among them a payout's (money out, found by `orderId`) and the top-up its
    setup makes (money in). "Absent when the fee is unknown" is not checked: no state a key can make is shown to
    leave a fee unknown (catalog: BTX-NET)."""
    handle = own_org()
    payout_id = create_payout(handle.api, contract, unique).json["payoutId"]
    page = Pager(handle.api, contract, "listBalanceTransactions").page(limit=100, what="the newest balance "
                                                                                       "transactions")
    mine = [r for r in page.items if r.get("orderId") == payout_id]
    expect(bool(mine), f"no row on the newest page carries `orderId` {payout_id}, the payout just made", page.ex)
    for row in page.items:
        _check_net(row, page.ex)


def _check_net(row: dict, ex: Exchange) -> None:
    """`net` of one row against its fee and amount, where the row shows them (the amount's name is not shown:
    `amount`, else the row's one decimal figure besides `id`, `net`, `balanceAfter` and the fee)."""
    fee_field = row.get("fee")  # a bare amount, or an object with `amount`
    fee = as_decimal(fee_field.get("amount") if isinstance(fee_field, dict) else fee_field)
    named = as_decimal(row.get("amount"))
    others = decimal_values({k: v for k, v in row.items() if k not in ("id", "net", "balanceAfter", "fee")})
    amount = named if named is not None else (next(iter(others)) if len(others) == 1 else None)
    if fee is None:
        return
    net = as_decimal(row.get("net"))
    expect(net is not None, f"a row with a known fee has no `net`: {row!r}", ex)
    if amount is None:
        return
    expect(net == amount - fee.copy_sign(amount), f"`net` {net} is not amount {amount} less fee {fee}: {row!r}", ex)
    expect(net == 0 or (net > 0) == (amount > 0), f"`net` {net} does not carry the sign of amount {amount}: {row!r}",
           ex)


@pytest.mark.req("BTX-APPEND-ONLY")
def test_rows_are_append_only(own_org, contract: Contract) -> None:
    """A row once listed keeps its id and content on later reads: a later movement appends a row and changes
    none of the earlier ones (every row of the first read still on the later one, the test's top-ups among them)."""
    handle = own_org()
    _, rows, page = own_top_ups(handle, contract, 2)
    first = page.items
    _, [third], later = own_top_ups(handle, contract, 1)
    now = {identity(row): row for row in later.items}
    for row in first:
        expect(identity(row) not in now or now[identity(row)] == row, f"row {identity(row)} read {row!r}, later "
               f"{now.get(identity(row))!r}: rows are append-only", later.ex)
    expect(all(identity(r) in now for r in (*rows, third)), "a later top-up took earlier top-ups off the list",
           later.ex)


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
