"""The lists the suite can fill, and what the spec says of each: shared by the paging, `limit` and ledger
tests.

A seeder makes `n` rows in the list and returns a marker per row, in creation order (an id, the request id of
an audited call, or a distinctive top-up amount), so a test can find its rows on a page whatever else the
row holds. A list joins the paging and limit tests by adding its seeder to `SEEDS`. A test that needs a list
holding exactly its rows fills one in a fresh organization (`fresh_list`); a test on the target's own
organization makes what it needs (`at_least`, `own_top_ups`, `own_history`, `Seed.own`) and finds its rows
among the others (`rows_of`).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any

from payconform.suite import Api, Contract, Exchange, OrgHandle, Page, Pager, expect, expect_status, holds
from payconform.suite import Kind, Needs

from .approvals import hold
from .balance import top_up
from .batches import create as create_run
from .batches import profile as batch_profile
from .batches import read_only_runs
from .checkout import create_link, sent_link
from .instants import is_instant, parse_instant, write_instant
from .money import decimal_values
from .payments import simulate
from .payouts import create_payout
from .products import create_product
from .profile import items
from .realtime import Timed
from .recipients import create_recipient, refused_recipient_update
from .types import Scope, Unique, shared_scope

Seeder = Callable[[Api, Contract, Unique, int], list[str]]


def _top_ups(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    """Top-ups of distinct amounts a cent apart from a random base between 1000.00 and 9999.99 (which tells
    them from other tests' top-ups in the same organization: the base is any cent of the range, not a whole
    unit, so two tests of a run, or a run and the rows of earlier ones, rarely share an amount): no amount
    equals a running total of two or more."""
    base = 100_000 + secrets.randbelow(900_000 - n)
    amounts = [f"{cents // 100}.{cents % 100:02d}" for cents in range(base + 1, base + n + 1)]
    for amount in amounts:
        top_up(api, contract, amount)
    return amounts


def _refused_changes(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [refused_recipient_update(api, unique).request_id or "" for _ in range(n)]


def _recipients(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_recipient(api, contract, unique)["id"] for _ in range(n)]


def _products(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_product(api, contract, unique)["id"] for _ in range(n)]


def _links(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    product = create_product(api, contract, unique)
    return [create_link(api, contract, product["id"])["id"] for _ in range(n)]


def _payouts(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_payout(api, contract, unique).json["payoutId"] for _ in range(n)]


ORDERS_REFERENCE = "pc-paging-orders"  # every seeded order of a (fresh) organization shares this caller reference


def _orders(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_payout(api, contract, unique, reference=ORDERS_REFERENCE).json["payoutId"] for _ in range(n)]


def _runs(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_run(api, contract, unique).id for _ in range(n)]


def _run_items(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    """One run of `n` lines (a run's items are fixed when it is made); markers are the lines' references."""
    return create_run(api, contract, unique, n=n).references


def _only_run(api: Api, contract: Contract) -> dict[str, str]:
    """The path of the items list: the batch id of the organization's one run (a fresh organization's)."""
    ex = api.op("listPayoutBatches")
    expect_status(ex, 200, "listing the organization's runs")
    runs = items(contract, "listPayoutBatches", ex)
    expect(len(runs) == 1, f"setup: the organization should hold one run, it lists {len(runs)}", ex)
    return {"batchId": str(runs[0].get(batch_profile(contract)["id_field"]))}


def _only_link(api: Api, contract: Contract) -> dict[str, str]:
    """The path of the payments list: the organization's one link (a fresh organization's), published with no
    payment when it has none yet, so that an empty list can be read too."""
    ex = api.op("listCheckoutLinks")
    expect_status(ex, 200, "listing the organization's links")
    links = items(contract, "listCheckoutLinks", ex)
    expect(len(links) <= 1, f"setup: the organization should hold one link, it lists {len(links)}", ex)
    if links:
        return {"linkId": str(links[0]["id"])}
    return {"linkId": sent_link(api, contract, lambda prefix: f"{prefix}-{secrets.token_hex(6)}")["id"]}


def _payments(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    link_id = _only_link(api, contract)["linkId"]
    answers = [simulate(api, link_id, unique("pref")) for _ in range(n)]
    return [expect_status(ex, 200, "simulating a payment on the link").json["id"] for ex in answers]


def _approvals(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [hold(api, contract, unique).approval_id for _ in range(n)]


@dataclass(frozen=True)
class OwnList:
    """A list confined to what one test made on the target's own organization (a parent of its own, or a
    filter only its rows match): the rows' markers, the pager, and `more()` to add one row in the same scope.
    Where no filter confines it, `closed` is false: other workers' rows may join while the test reads; and
    `head` says the test reads only the list's first rows (a busy list without a filter is too long to walk),
    `seen` is the read of those rows already made, when finding the list full enough made nothing."""

    markers: list[str]
    pager: Pager
    more: Callable[[], Any] | None  # None: no row can join the scope (a run's fixed items, a past span of time)
    closed: bool = True
    head: int | None = None
    seen: Page | None = None


def _own_orders(api: Api, contract: Contract, unique: Unique, n: int, params: dict[str, str]) -> OwnList:
    """Orders under a caller reference of the test's own: only its payouts match the `reference` filter."""
    reference = unique("orders")

    def make(count: int) -> list[str]:
        return [create_payout(api, contract, unique, reference=reference).json["payoutId"] for _ in range(count)]

    pager = Pager(api, contract, "listOrders", params={"reference": reference, **params})
    return OwnList(make(n), pager, lambda: make(1))


def _own_run_items(api: Api, contract: Contract, unique: Unique, n: int, params: dict[str, str]) -> OwnList:
    """The items of a run only the test reads (at least one line: a run's items are fixed when it is made, so
    nothing can join them): one of the runs the reading tests share where one has `n` lines, else its own."""
    lines = max(n, 1)
    run = next((r for r in read_only_runs(api, contract, unique) if len(r.references) == lines), None)
    run = run or create_run(api, contract, unique, n=lines)
    return OwnList(run.references, Pager(api, contract, "listPayoutBatchItems", params=params, batchId=run.id), None)


def _own_window(op_id: str) -> Callable[[Api, Contract, Unique, int, dict[str, str]], OwnList]:
    """A list of `op_id` confined to the span of the test's own rows: `createdAfter`/`createdBefore` a step
    around the `createdAt` of its first and last (found by marker on the newest page; a field the spec does not
    name, so rows without it skip), nothing in that past span being written later; a span in the far future
    for no rows. Rows made later fall outside it (`more` is None). The precision of a shown time is not given
    either (Resources: "Remaining fields ...: not shown"): a target may show whole seconds of an instant it
    stores and filters to the millisecond, so the step is the precision the newest page's times show
    (`shown_step`: a millisecond where they show milliseconds, a second where they show whole seconds), and
    where it is longer than a millisecond the rows are read only once the span's end has passed (a time of the
    target's clock the test can only wait out), so no row written meanwhile joins the span while it is read.
    Other rows inside the span are listed with the test's and judged with them (order is checked on the
    test's rows only)."""

    def own(api: Api, contract: Contract, unique: Unique, n: int, params: dict[str, str]) -> OwnList:
        markers = SEEDS[op_id].make(api, contract, unique, n)
        made = time.monotonic()
        window = {"createdAfter": FAR_FUTURE}
        if markers:
            newest = Pager(api, contract, op_id).page(limit=100, what=f"the newest rows of {op_id}")
            times = [row.get("createdAt") for row in newest.items for m in {markers[0], markers[-1]} if holds(row, m)]
            if not times or not all(is_instant(t) for t in times):
                Needs(Kind.OPERATOR, f"{op_id} rows carry no `createdAt` to confine the list to the test's").skip()
            instants = [parse_instant(t) for t in times]
            step = shown_step([parse_instant(t) for row in newest.items if is_instant(t := row.get("createdAt"))])
            window = {"createdAfter": write_instant(min(instants) - step),
                      "createdBefore": write_instant(max(instants) + step)}
            if step > MILLISECOND:  # a shown instant may be up to a step before the stored one (half, rounded)
                time.sleep(max(0.0, made + 1.5 * step.total_seconds() - time.monotonic()))
        return OwnList(markers, Pager(api, contract, op_id, params={**window, **params}), None)

    return own


def shown_step(instants: list[datetime]) -> timedelta:
    """The precision `instants` are shown to, from a millisecond to a second: the coarsest of 1 ms, 10 ms,
    100 ms and 1 s that every one of them is a whole multiple of (a target's shown times are multiples of its
    precision, so the step is never finer than that precision; shown finer than a millisecond, a millisecond,
    the precision of the filters the suite sends)."""
    units = (1_000_000, 100_000, 10_000, 1_000)  # microseconds
    finest = min((next((u for u in units if at.microsecond % u == 0), 1_000) for at in instants), default=1_000_000)
    return timedelta(microseconds=finest)


def _own_since(api: Api, contract: Contract, unique: Unique, n: int, params: dict[str, str]) -> OwnList:
    """Balance history `since` just before the test's own top-ups (`history_since`): their entries and whatever
    other workers settle meanwhile (`closed` false); `since` goes on the first page only, the cursor after it.
    With no rows, `since` in the far future: an empty list."""
    if not n:
        return OwnList([], Pager(api, contract, "getBalanceHistory", params=params, start={"since": FAR_FUTURE}),
                       None)
    amounts = _top_ups(api, contract, unique, n)
    pager = Pager(api, contract, "getBalanceHistory", params=params,
                  start={"since": history_since(api, contract, amounts)})
    return OwnList(amounts, pager, lambda: _top_ups(api, contract, unique, 1), closed=False)


_SHARED_OWN: dict[tuple[Scope, str, tuple[tuple[str, str], ...]], OwnList] = {}


def shared_own(api: Api, contract: Contract, unique: Unique, op_id: str, rows: int,
               params: dict[str, str] | None = None) -> OwnList:
    """`SEEDS[op_id].own` of `rows` rows, made once per worker, organization, mode and query where only the rows
    of its tests can join it (`closed`): tests that only read such a list, or add rows to it after their reads
    (`more`), share its rows; each judges what it reads. Its pager and `more` keep a client of the worker's own
    (with `api`'s key): a test's client closes with the test. A list others' rows may join is made afresh."""
    key = (shared_scope(api), op_id, tuple(sorted((params or {}).items())))
    own = SEEDS[op_id].own
    assert own is not None, f"{op_id}: no list of the test's own rows"
    if key in _SHARED_OWN:
        return _SHARED_OWN[key]
    made = own(api.with_credential(api.credential), contract, unique, rows, params or {})
    if made.closed:
        _SHARED_OWN[key] = made
    return made


def busy_head(api: Api, contract: Contract, unique: Unique, op_id: str, rows: int,
              params: dict[str, str] | None = None) -> OwnList:
    """The first `rows` rows of `op_id` on the target's own organization, which earlier runs and other workers
    fill too (`closed` false, read no further than `head`): only the shortfall is made, so a busy list costs
    one read, which the test may use as its own (`seen`)."""
    seed = SEEDS[op_id]
    pager = seed.pager(api, contract, op_id, params)
    page = pager.page(limit=rows, what=f"counting up to {rows} rows")
    have = len(page.items) + int(len(page.items) >= rows and page.cursor is not None)
    if have < rows:
        seed.make(api, contract, unique, rows - have)
    return OwnList([], pager, lambda: seed.make(api, contract, unique, 1), closed=False, head=rows,
                   seen=page if have >= rows else None)


FAR_FUTURE = "2999-01-01T00:00:00Z"
MILLISECOND = timedelta(milliseconds=1)


def _own_payments(api: Api, contract: Contract, unique: Unique, n: int, params: dict[str, str]) -> OwnList:
    """The payments of a link of the test's own."""
    link_id = sent_link(api, contract, unique)["id"]

    def make(count: int) -> list[str]:
        answers = [simulate(api, link_id, unique("pref")) for _ in range(count)]
        return [expect_status(ex, 200, "simulating a payment on the link").json["id"] for ex in answers]

    return OwnList(make(n), Pager(api, contract, "listCheckoutPayments", params=params, linkId=link_id),
                   lambda: make(1))


@dataclass(frozen=True)
class Seed:
    """How to fill one list and what the spec says of it."""

    make: Seeder
    newest_first: bool | None = None  # None: the spec orders it by time, direction not shown
    order_req: str | None = None      # the requirement declaring the order; None: order not shown
    refusal_req: str | None = None    # the requirement refusing a foreign cursor; None: not required
    cursor_req: str | None = None     # the requirement making the cursor a row id: inserts cannot shift it
    empty: dict[str, str] = field(default_factory=dict)  # filters under which a fresh organization's list is empty
    params: dict[str, str] = field(default_factory=dict)  # query the list always needs (e.g. a required filter)
    path: Callable[[Api, Contract], dict[str, str]] | None = None  # path parameters, found once the list is filled
    grows: bool = True  # rows can be added to the filled list (a run's items cannot)
    # on the target's own organization: `own(api, contract, unique, n, params)` fills a list only the test's
    # rows are in; None: the list cannot be confined to them, a test that needs exactly its rows needs a fresh one
    own: Callable[[Api, Contract, Unique, int, dict[str, str]], OwnList] | None = None
    own_grows: bool = True  # a row made later lands in the list `own` confines (not so in a span of time)
    refusal_types: frozenset[str] = frozenset({"VALIDATION_ERROR"})  # error types the route's row allows its 400
    tie_rule: bool = True  # the spec says how rows of one instant are ordered ("Newest first" alone does not)

    def pager(self, api: Api, contract: Contract, op_id: str, params: dict[str, str] | None = None) -> Pager:
        """The list of `op_id` in `api`'s organization (filled first when it has a `path`), with `params`."""
        path = self.path(api, contract) if self.path else {}
        return Pager(api, contract, op_id, params={**self.params, **(params or {})}, **path)


SEEDS: dict[str, Seed] = {
    # "entries are ordered by settlement time": nothing on entries settled at one instant
    "getBalanceHistory": Seed(_top_ups, None, "HIST-ORDER-SETTLEMENT", "HIST-INVALID-QUERY", own=_own_since,
                              tie_rule=False),
    "listBalanceTransactions": Seed(_top_ups, True, "BTX-NEWEST-FIRST", "BTX-INVALID-QUERY", "BTX-CURSOR-OLDER",
                                    own=_own_window("listBalanceTransactions"), own_grows=False),
    "listAuditEvents": Seed(_refused_changes, True, "AUDIT-NEWEST-FIRST", "AUDIT-INVALID-QUERY", "AUDIT-NEWEST-FIRST",
                            empty={"apiKey": "svc_test_" + "0" * 32}, own=_own_window("listAuditEvents"),
                            own_grows=False,
                            refusal_types=frozenset({"VALIDATION_ERROR", "BAD_REQUEST"})),  # row: "400 for ..."
    "listBeneficiaries": Seed(_recipients),
    "listCheckoutProducts": Seed(_products),
    "listCheckoutLinks": Seed(_links),
    "listPayouts": Seed(_payouts),
    "listOrders": Seed(_orders, params={"reference": ORDERS_REFERENCE}, own=_own_orders),
    "listPayoutBatches": Seed(_runs),
    "listPayoutBatchItems": Seed(_run_items, path=_only_run, grows=False, empty={"status": "create_failed"},
                                 own=_own_run_items),
    "listCheckoutPayments": Seed(_payments, True, "PAY-LIST", path=_only_link, own=_own_payments, tie_rule=False),
    "listPayoutApprovals": Seed(_approvals),
}


def at_least(org: OrgHandle, contract: Contract, unique: Unique, op_id: str, rows: int,
             read: Callable[[Pager], Exchange]) -> tuple[Pager, Exchange]:
    """The pager of `op_id` in `org` (the target's own, busy or not) and the answer of `read` from it once its list
    holds at least `rows` rows. The test's own read comes first: only when its page shows fewer rows (its items,
    and one more for a `nextCursor`) is the shortfall made and the read sent again, so a busy organization costs
    no request beyond the test's. A refusal, or an answer without a page, is returned as it came."""
    seed = SEEDS[op_id]
    pager = seed.pager(org.api, contract, op_id)
    ex = read(pager)
    have = _rows_shown(pager, ex)
    if have is None or have >= rows:
        return pager, ex
    seed.make(org.api, contract, unique, rows - have)
    return pager, read(pager)


def _rows_shown(pager: Pager, ex: Exchange) -> int | None:
    """The rows a 200 page shows the list holds at least (one more with a `nextCursor`); None for anything else."""
    body = ex.json if ex.status == 200 and ex.content else None
    items = body if pager.shape.items is None else body.get(pager.shape.items) if isinstance(body, dict) else None
    if not isinstance(items, list):
        return None
    return len(items) + int(isinstance(body, dict) and bool(pager.shape.cursor and body.get(pager.shape.cursor)))


def own_top_ups(org: OrgHandle | Timed, contract: Contract,
                n: int) -> tuple[Pager, list[dict[str, Any]], Page]:
    """`n` top-ups of `org`, the balance-transaction rows they made, newest first, found by their amounts on
    the first page (newest first, 100 rows) among whatever else the organization and other workers wrote, and
    that page (a test reading the newest rows right after its top-ups has them)."""
    amounts = _top_ups(org.api, contract, lambda prefix: prefix, n)
    pager = Pager(org.api, contract, "listBalanceTransactions")
    page = pager.page(limit=100, what="the newest balance transactions")
    return pager, rows_of(page, amounts), page


def own_history(org: OrgHandle, contract: Contract, n: int) -> tuple[Pager, Page, list[dict[str, Any]] | None]:
    """`n` top-ups of `org`, the balance-history pager, its page `since` just before them (`history_since`; 500
    entries at most) and the entries of the top-ups on it, found by amount (None when entries show no `amount`,
    a field the spec does not name). The history's order is not shown, so a window finds the test's entries on
    a busy organization."""
    pager, since, amounts = history_window(org, contract, n)
    page = filtered_page(pager, "balance history", since=since, limit="500")
    shown = any(isinstance(e, dict) and "amount" in e for e in page.items)
    return pager, page, rows_of(page, amounts) if shown else None


def history_window(org: OrgHandle | Timed, contract: Contract, n: int) -> tuple[Pager, str, list[str]]:
    """`n` top-ups of `org`, the balance-history pager and a `since` just before them (`history_since`), and
    the top-ups' amounts: a window a test reads again after what it does next."""
    amounts = _top_ups(org.api, contract, lambda prefix: prefix, n)
    return Pager(org.api, contract, "getBalanceHistory"), history_since(org.api, contract, amounts), amounts


def history_since(api: Api, contract: Contract, amounts: list[str]) -> str:
    """A `since` just before the top-ups of `amounts`: a second before the oldest one's balance-transaction
    `createdAt` (the organization's own time, which an operator's clock may have moved) where rows carry one,
    else a minute before the answer's `Date`."""
    btx = Pager(api, contract, "listBalanceTransactions").page(limit=100, what="the newest balance transactions")
    at = rows_of(btx, amounts)[-1].get("createdAt")
    start = (parse_instant(at) - timedelta(seconds=1) if is_instant(at)
             else parsedate_to_datetime(str(btx.ex.headers.get("date"))) - timedelta(minutes=1))
    return write_instant(start)


def rows_of(page: Page, amounts: list[str]) -> list[dict[str, Any]]:
    """The rows of `page` that carry one of `amounts` (the test's own top-ups), one per amount. The amount may
    sit in any decimal field but the running balance: a row's fields named are "`balanceAfter`, `net` ...",
    its amount's own name is not shown."""
    wanted = {Decimal(a) for a in amounts}
    rows = [r for r in page.items if isinstance(r, dict)
            and wanted & decimal_values({k: v for k, v in r.items() if k != "balanceAfter"})]
    expect(len(rows) == len(amounts), f"the page lists {len(rows)} rows of the {len(amounts)} top-ups of "
           f"amounts {amounts}", page.ex)
    return rows


def fresh_list(fresh_org: Callable[..., OrgHandle], contract: Contract, op_id: str,
               fill: Callable[[Api], Any]) -> tuple[OrgHandle, Pager]:
    """A fresh organization whose `op_id` list holds exactly the rows `fill` makes there, and its pager."""
    handle = fresh_org()
    fill(handle.api)
    return handle, Pager(handle.api, contract, op_id)


def topped_up(fresh_org: Callable[..., OrgHandle], contract: Contract, op_id: str,
              *amounts: str) -> tuple[OrgHandle, Pager]:
    """A fresh organization topped up by each of `amounts` in turn, and the pager of its `op_id` list."""
    return fresh_list(fresh_org, contract, op_id, lambda api: [top_up(api, contract, a) for a in amounts])


def filtered_page(pager: Pager, what: str, **params: str) -> Page:
    """The first page of `pager`'s list with the query `params` added (what a filter test reads)."""
    return pager.parse(pager.request(extra=list(params.items())), f"{what} {params}")
