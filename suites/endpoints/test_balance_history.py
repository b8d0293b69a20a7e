"""Resources > Balance history entry and Endpoints > Balance and ledger, GET /balance/history.

Each test tops up an organization (the profile's `fundSandbox`: "Entries are added for ... a sandbox
top-up"): the target's own where a key is enough, its entries found in a `since` window opened just before
them (`own_history`), whatever else earlier runs and other workers wrote. "Other entry fields: not shown":
entries are read by `type`, `status` and `balanceAfter` only (and found by `amount` where they carry one).
Order, paging and a foreign cursor are checked in suites/conventions/test_paging.py, `limit` in
suites/limits.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from payconform.suite import Contract, Page, Pager, expect, expect_error, identity
from payconform.suite import Kind, Needs

from .._support.balance import CACHE_SECONDS, provider_figure, read_balance, top_up
from .._support.instants import is_instant, parse_instant
from .._support.lists import at_least, filtered_page, history_window, own_history, topped_up
from .._support.machines import walk
from .._support.money import as_decimal
from .._support.payouts import create_payout
from .._support.realtime import REAL_TIME, Timed
from .._support.scenario_outcomes import mismatch_unless_in_scenario

TYPES = {"funding", "payout", "reversal"}
STATUSES = {"COMPLETED", "DEBITED", "RETURNED", "CANCELED"}


@pytest.mark.req("HIST-GET", "HIST-PAGE-FIELDS")
def test_page_fields(own_org, contract: Contract) -> None:
    """`entries` and `hasMore` on every page; `hasMore` true exactly when a `nextCursor` follows (a one-entry
    page of the whole history, and the page of the entries since just before the test's two top-ups)."""
    pager, last, _ = own_history(own_org(), contract, 2)
    first = pager.page(limit=1)
    for page, more in ((first, True), (last, False)):
        expect(page.ex.json.get("hasMore") is more, f"`hasMore` is {page.ex.json.get('hasMore')!r} on a page "
               f"{'followed by' if more else 'ending'} the list", page.ex)
    expect(first.cursor is not None, "the first of two one-entry pages has no `nextCursor`", first.ex)


@pytest.mark.req("HIST-ENTRY-SANDBOX-TOPUP", "HIST-ENTRY-TYPE-STATUS")
def test_top_up_adds_a_completed_funding_entry(own_org, contract: Contract) -> None:
    """One top-up: one entry, `type: funding`, `status: COMPLETED`; every entry uses the spec's values."""
    _, page, mine = own_history(own_org(), contract, 1)
    strange = [(e.get("type"), e.get("status")) for e in page.items
               if e.get("type") not in TYPES or e.get("status") not in STATUSES]
    expect(not strange, f"type / status {strange[:3]} are not the spec's values", page.ex)
    if mine is None:  # entries show no `amount` (not shown): the window opened just before the top-up holds it
        mine = [e for e in page.items if (e.get("type"), e.get("status")) == ("funding", "COMPLETED")][:1]
        expect(bool(mine), "no funding entry since just before the top-up", page.ex)
    entry = mine[0]
    expect((entry.get("type"), entry.get("status")) == ("funding", "COMPLETED"),
           f"a top-up is listed as {entry.get('type')!r} {entry.get('status')!r}", page.ex)


@pytest.mark.req("HIST-BALANCE-AFTER-RECONCILES")
@pytest.mark.needs("operator", "clock")
def test_balance_after_reconciles_with_the_balance(fresh_org, clock, contract: Contract, unique) -> None:
    """The newest entry's `balanceAfter`, when published, equals GET /balance; withheld, a `note` says why.
    Two top-ups, then a payout (whose setup tops up once more): the newest entry is the payout's debit, the
    one `payout` entry, so the largest running total (before the debit) is not the balance. The order's
    direction is not shown, so the newest is found by its type, not its place."""
    handle, pager = topped_up(fresh_org, contract, "getBalanceHistory", "8.10", "8.20")
    create_payout(handle.api, contract, unique)
    page = pager.page()
    clock.advance(handle.org_id, CACHE_SECONDS)
    balance = provider_figure(read_balance(handle.api))
    published = [e for e in page.items if isinstance(e.get("balanceAfter"), str)]
    if len(published) < len(page.items):
        expect(isinstance(page.ex.json.get("note"), str), "`balanceAfter` is withheld without a `note`", page.ex)
    debits = [e for e in page.items if e.get("type") == "payout"]
    expect(len(debits) == 1, f"after one payout drawn from the balance the history lists {len(debits)} `payout` "
           "entries (\"Entries are added for ... a payout drawn from the prefunded balance (`DEBITED`)\")", page.ex)
    newest = debits[0].get("balanceAfter")
    if isinstance(newest, str):
        totals = [Decimal(e["balanceAfter"]) for e in published]
        expect(Decimal(newest) == balance, f"the newest entry (the payout's debit) has `balanceAfter` {newest}, the "
               f"balance is {balance} (every published value: {totals})", page.ex)


@pytest.mark.req("HIST-ENTRY-PAYOUT-DEBITED")
@pytest.mark.needs("profile")
def test_a_payout_from_the_balance_is_debited(own_org, contract: Contract, unique) -> None:
    """A payout drawn from the balance adds a `payout` entry `DEBITED`: in the window opened just before the
    test's payout there is a `payout` entry, and every one there (other workers' too) is `DEBITED`. Where none
    is listed yet, the payout is followed in real time until it completes and the window read again."""
    org = own_org()
    pager, since, _ = history_window(org, contract, 1)
    payout_id = create_payout(org.api, contract, unique).json["payoutId"]

    def debits() -> tuple[list[dict], Page]:
        window = filtered_page(pager, "balance history", since=since, limit="500")
        return [e for e in window.items if e.get("type") == "payout"], window

    found, window = debits()
    if not found:
        walk(org.api, REAL_TIME, org.org_id, contract, payout_id, until=lambda rs: rs[-1].status == "completed")
        found, window = debits()
    expect(bool(found), f"no `payout` entry since just before payout {payout_id} was drawn from the balance",
           window.ex)
    other = sorted({str(e.get("status")) for e in found} - {"DEBITED"})
    expect(not other, f"`payout` entries read status {other}; a payout drawn from the balance is `DEBITED`", window.ex)


@pytest.mark.req("HIST-REVERSAL")
@pytest.mark.needs("profile")
def test_a_failed_payout_keeps_its_debit_and_gains_a_reversal(timed: Timed, contract: Contract, unique) -> None:
    """A payout from the balance that fails with its money returned (the profile's scenario 0003), read until it
    has failed: in the window opened just before it, a `payout` `DEBITED` entry and a `reversal` `RETURNED` one
    (other workers' entries may stand beside them: the spec's fields do not tell whose an entry is). The payout's
    timeline passes on a fresh organization's operator clock where there is one, else in real time on the
    target's own organization (`timed`)."""
    pager, since, _ = history_window(timed, contract, 1)
    payout_id = create_payout(timed.api, contract, unique, "0003").json["payoutId"]
    readings = walk(timed.api, timed.clock, timed.org_id, contract, payout_id,
                    until=lambda rs: rs[-1].status == "failed")
    mismatch_unless_in_scenario(timed.api, timed.clock, timed.org_id, contract, unique, "0003", readings)
    expect(readings[-1].status == "failed", f"scenario 0003 reads {readings[-1].status!r}, not 'failed'",
           readings[-1].ex)
    window = filtered_page(pager, "balance history", since=since, limit="500")
    kinds = {(e.get("type"), e.get("status")) for e in window.items}
    expect({("payout", "DEBITED"), ("reversal", "RETURNED")} <= kinds,
           f"after payout {payout_id} failed with its money returned, the entries since just before it are of "
           f"kinds {sorted(map(str, kinds))}: it keeps its `payout` `DEBITED` and gains a `reversal` `RETURNED`",
           window.ex)


SETTLED = (("top-up", "10.00"), ("top-up", "20.00"), ("deposit", "400.00"))  # in the order they settle


@pytest.mark.req("HIST-ORDER-SETTLEMENT")
@pytest.mark.needs("operator", "clock")
def test_entries_are_ordered_by_settlement_not_creation(fresh_org, operator, clock, contract: Contract) -> None:
    """A deposit created first and completed last, two sandbox top-ups in between (a minute apart on the
    organization's clock): the deposit settled last, so ordered by settlement time it stands after both
    top-ups, not before them as it would by creation (or by its order's id). The direction is not shown:
    either way is accepted. The entries are told apart by `amount` where they show one (not a named field),
    else by `balanceAfter`: every entry is money in, so the running total grows in settlement order."""
    handle = fresh_org()
    pager = Pager(handle.api, contract, "getBalanceHistory")
    before = {identity(e) for e in pager.page(limit=500).items}
    deposit = operator.create_deposit(handle.org_id, SETTLED[2][1])
    for _, amount in SETTLED[:2]:
        clock.advance(handle.org_id, 60)
        top_up(handle.api, contract, amount)
    clock.advance(handle.org_id, 60)
    operator.complete_deposit(handle.org_id, deposit)
    page = pager.page(limit=500)
    mine = [e for e in page.items if identity(e) not in before]
    expect(len(mine) == 3, f"two top-ups and a completed deposit left {len(mine)} new entries", page.ex)
    names = {Decimal(amount): f"{what} of {amount}" for what, amount in SETTLED}
    if all(as_decimal(e.get("amount")) in names for e in mine):
        listed = [names[as_decimal(e["amount"])] for e in mine]
        settled = [names[Decimal(amount)] for _, amount in SETTLED]
        ordered = listed in (settled, settled[::-1])
    elif all(as_decimal(e.get("balanceAfter")) is not None for e in mine):
        totals = [as_decimal(e["balanceAfter"]) for e in mine]
        listed, settled = [f"balanceAfter {t}" for t in totals], [f"balanceAfter {t}" for t in sorted(totals)]
        ordered = totals in (sorted(totals), sorted(totals, reverse=True))
    else:
        pytest.skip("the entries show neither `amount` (not a named field) nor `balanceAfter`: the test's three "
                    "entries cannot be told apart")
    expect(ordered, f"the history lists the entries as {listed}; they settled in the order {settled} (the deposit, "
           "created first, completed last): entries are ordered by settlement time", page.ex)


@pytest.mark.req("HIST-SINCE")
def test_since_an_entrys_own_time_leaves_it_out(own_org, contract: Contract) -> None:
    """`since=T` lists only entries settled strictly after T: with T the `createdAt` of the test's own top-up
    entry (found by its amount), that entry is not listed, and every entry listed is later. Entries that show
    no `amount` or `createdAt` (fields the spec does not name) give nothing to find it by: then it skips."""
    pager, _, mine = own_history(own_org(), contract, 1)
    at = mine[0].get("createdAt") if mine else None
    if not is_instant(at):
        pytest.skip("balance history entries show no `amount` and `createdAt` (not named by the spec): the test's "
                    "own entry and its time cannot be read")
    later = filtered_page(pager, "balance history", since=at, limit="500")
    expect(mine[0] not in later.items, f"since={at}, the test's own entry's time, still lists that entry: `since` "
           "is strictly after", later.ex)
    stamp = parse_instant(at)
    early = [t for e in later.items if is_instant(t := e.get("createdAt")) and parse_instant(t) <= stamp]
    expect(not early, f"since={at} lists entries of {early[:3]}, not strictly after it", later.ex)


@pytest.mark.req("HIST-CURSOR-XOR-SINCE")
def test_cursor_and_since_together_are_refused(own_org, contract: Contract, unique) -> None:
    """Send `cursor` or `since`, not both: both together are 400 VALIDATION_ERROR."""
    pager, ex = at_least(own_org(), contract, unique, "getBalanceHistory", 2, lambda p: p.request(limit=1))
    cursor = pager.parse(ex).cursor
    expect(cursor is not None, "the first of two one-entry pages has no `nextCursor`")
    ex = pager.request(cursor=cursor, limit=1, extra=[("since", "2000-01-01T00:00:00Z")])
    expect_error(ex, 400, "VALIDATION_ERROR", "`cursor` and `since` together")


@pytest.mark.req("HIST-SINCE")
@pytest.mark.needs("operator", "clock")
def test_since_lists_entries_strictly_after(fresh_org, clock, contract: Contract) -> None:
    """`since=T` lists only entries settled strictly after T: with T the organization's time between two
    top-ups a minute apart, the later one alone; with T an entry's own time (where entries carry `createdAt`,
    a field the spec does not name), not that entry."""
    handle, pager = topped_up(fresh_org, contract, "getBalanceHistory", "10.10")
    between = clock.advance(handle.org_id, 60)
    if not isinstance(between, str):
        pytest.skip("the operator's clock does not say what time it is")
    top_up(handle.api, contract, "10.20")
    everything = pager.page().items
    later = filtered_page(pager, "balance history", since=between)
    expect(len(later.items) == 1 and later.items[0] in everything,
           f"since={between} (between two top-ups) lists {len(later.items)} of {len(everything)} entries; only "
           "the later top-up settled after it", later.ex)
    at = later.items[0].get("createdAt")
    if isinstance(at, str):
        same = filtered_page(pager, "balance history", since=at)
        expect(same.items == [], f"since={at}, the entry's own time, still lists it: `since` is strictly after",
               same.ex)


@pytest.mark.req("HIST-INVALID-QUERY")
@pytest.mark.parametrize("since", ["yesterday", "2026-01-01T00:00:00"])
def test_malformed_since_is_refused(api, contract: Contract, since: str) -> None:
    """A `since` that is not an instant with a timezone: 400 VALIDATION_ERROR."""
    ex = Pager(api, contract, "getBalanceHistory").request(extra=[("since", since)])
    expect_error(ex, 400, "VALIDATION_ERROR", f"since={since!r}")


@pytest.mark.smoke
@pytest.mark.req("HIST-TOO-LARGE", "HIST-SIZE-LIMIT", "ERR-HISTORY-TOO-LARGE")
@pytest.mark.needs("operator")
def test_history_too_large(fresh_org, operator, contract: Contract) -> None:
    """At the limit of orders the history answers; one order more: 413 HISTORY_TOO_LARGE, while balance
    transactions still page ("page balance transactions"). The operator seeds the orders (making 100,000
    payouts through the API is not a test)."""
    if not hasattr(operator, "seed_orders"):
        Needs(Kind.OPERATOR, "cannot seed_orders").skip()
    size = contract.limits["balance_history_size"]
    handle = fresh_org()
    pager = Pager(handle.api, contract, "getBalanceHistory")
    operator.seed_orders(handle.org_id, size["max_orders"])
    pager.page(what=f"{size['max_orders']} orders: not more than the limit")
    operator.seed_orders(handle.org_id, size["max_orders"] + 1)
    expect_error(pager.request(), size["over_status"], size["error_type"], f"more than {size['max_orders']} orders")
    Pager(handle.api, contract, "listBalanceTransactions").page(what="balance transactions of an organization whose "
                                                                     "history is too large")
