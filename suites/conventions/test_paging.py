"""Conventions, row Paging, applied to every cursor-paged list of the profile through `payconform.checks.paging`.

"Cursor paging; the cursor is opaque, taken verbatim from `nextCursor` of the previous page; `nextCursor` is
absent on the last page." The lists come from the profile's `page` entries; each needs a way to fill it
(`SEEDS` below), so a new list joins by adding one seeder. Each test reads a list holding exactly the rows it
made (stable data under xdist): on the target's own organization where the list can be confined to them (a
parent, a filter or a time window of the test's own, `Seed.own`), else in a fresh organization (needs the
operator). Where no filter confines a list, its pages are checked on the head of the target's own busy list
(`busy_head`): read again when they disagree, since other workers may write meanwhile; such a walk never
reaches the last page, so it checks the cursor, not the end.

Order is checked where the spec declares it (balance transactions, audit events: newest first; balance
history: by settlement time, either direction). Refusal of a foreign cursor is checked where the spec
requires it (balance history, balance transactions, audit events); elsewhere a cursor that is not refused
is reported as an observation. Inserts between page reads must neither repeat nor hide rows on the lists
whose cursor is "rows strictly older than the id" (balance transactions, audit events: cursor on `id`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from payconform.suite import (
    Api,
    Contract,
    Page,
    Pager,
    Walk,
    created_together,
    cursor_paged_lists,
    expect,
    expect_cursor_refused,
    expect_order_of,
    expect_same_sequence,
    identity,
    inserted_between,
    missing_or_repeated,
    observe,
    observe_cursor_refused,
    run_contract,
    tampered,
)

from .._support.lists import SEEDS, OwnList, Seed, busy_head, shared_own
from .._support.types import Unique

ROWS, LIMIT = 3, 2  # two pages, one boundary: the least that shows a walk, its order and an insert between reads
HEAD = 2 * LIMIT  # rows of a busy list's head: two full pages, one boundary
ATTEMPTS = 2  # reads of a list other workers may change, before the test gives up on a quiet moment
PAGING = ("CONV-PAGING-CURSOR-OPAQUE", "CONV-PAGING-LAST-PAGE-NO-CURSOR")


def _lists(reqs: Callable[[str, Seed], tuple[str, ...]], only: Callable[[Seed], bool] = lambda s: True,
           *, unseeded: bool = False, own: Callable[[Seed], bool] = lambda s: bool(s.own)) -> list:
    """One parameter per cursor-paged list of the profile; with `unseeded`, lists without a seeder are listed
    as skipped so the report shows what the suite cannot fill yet. A list the test cannot use confined to its
    rows on the target's own organization (`own` false) needs the operator."""
    contract = run_contract()
    params = []
    for op_id in cursor_paged_lists(contract):
        seed = SEEDS.get(op_id)
        if seed is None and unseeded:
            params.append(pytest.param(op_id, None, id=op_id, marks=[pytest.mark.req(*PAGING), pytest.mark.skip(
                reason=f"no seeder for {op_id} yet: the suite cannot fill this list")]))
        elif seed is not None and only(seed):
            needs = [] if own(seed) else [pytest.mark.needs("operator")]
            params.append(pytest.param(op_id, seed, id=op_id, marks=[pytest.mark.req(*reqs(op_id, seed)), *needs]))
    return params


def _limit_shown(contract: Contract) -> set[str]:
    """The lists whose `limit` the spec shows (Limits, row `limit`); elsewhere a page size is the target's."""
    return {r["operation"] for r in (contract.limits.get("list_limits") or {}).get("routes") or []}


def _walk_reqs(op_id: str, seed: Seed) -> tuple[str, ...]:
    """The rules a walk checks: the end (last page) only where the list is the test's own rows."""
    reached = PAGING if seed.own else PAGING[:1]
    return reached + ((seed.order_req,) if seed.order_req else ())


def _filled(request: pytest.FixtureRequest, seed: Seed, contract: Contract, unique: Unique, op_id: str, rows: int,
            params: dict[str, str] | None = None, *, own: bool = True, head: bool = False,
            shared: bool = False) -> OwnList:
    """`rows` rows in a list that holds nothing else: confined to the test's own on the target's organization
    (`Seed.own`, unless `own` is false; with `shared`, the rows the walk and insert tests share, `shared_own`);
    with `head`, else the head of the target's own busy list; else a fresh organization's (its `more()` adds a
    row there)."""
    if own and seed.own:
        api = request.getfixturevalue("own_org")().api
        if shared:
            return shared_own(api, contract, unique, op_id, rows, params)
        return seed.own(api, contract, unique, rows, params or {})
    if head:
        return busy_head(request.getfixturevalue("own_org")().api, contract, unique, op_id, HEAD, params)
    api = request.getfixturevalue("fresh_org")().api
    markers = seed.make(api, contract, unique, rows)
    return OwnList(markers, seed.pager(api, contract, op_id, params), lambda: _one_more(seed, api, contract, unique))


@pytest.mark.breadth
@pytest.mark.parametrize(("op_id", "seed"), _lists(_walk_reqs, unseeded=True, own=lambda s: True))
def test_pages_concatenate_to_the_list(request: pytest.FixtureRequest, contract: Contract, unique, op_id: str,
                                       seed: Seed) -> None:
    """Pages of `limit=2`, cursors taken verbatim, concatenate to the one-page read: no repeat, no gap, the
    same order; the walk ends only where `nextCursor` is absent; declared order holds across boundaries. On
    the head of a busy list: its first pages concatenate to a one-page read of as many rows."""
    filled = _filled(request, seed, contract, unique, op_id, ROWS, head=True, shared=True)
    markers, pager = filled.markers, filled.pager
    whole, walk = _quiet_read(filled)
    if filled.head is None:
        expect(whole.cursor is None, f"a one-page read of {len(whole.items)} rows still carries `nextCursor`",
               whole.ex)
    if len(walk.pages) == 1 and op_id not in _limit_shown(contract):
        pytest.skip(f"{op_id}: limit={LIMIT} over {len(whole.items)} rows gave one page; the spec shows no `limit` "
                    "for this list (its page size is not shown), so its pages cannot be walked with this few rows")
    expect(len(walk.pages) > 1, f"limit={LIMIT} over {len(whole.items)} rows gave one page", walk.last)
    expect_same_sequence(walk, whole.items, walk.last)
    if seed.order_req:
        expect_order_of(walk, markers, newest_first=seed.newest_first,
                        tied=None if seed.tie_rule else created_together)
    first = walk.pages[0]
    what, bad = tampered(first.cursor or "")
    observe_cursor_refused(pager.request(cursor=bad, limit=LIMIT), first, what)


def _read(filled: OwnList, seen: Page | None = None) -> tuple[Page, Walk]:
    """The one-page read (of the whole list, or of its head: `seen` when it was just read) and the walk of
    `limit=2` over as many rows."""
    pager = filled.pager
    if filled.head is None:
        return pager.page(limit=100, what="reading the whole list in one page"), pager.walk(LIMIT)
    whole = seen or pager.page(limit=filled.head, what=f"reading the list's first {filled.head} rows in one page")
    return whole, pager.walk(LIMIT, pages=-(-filled.head // LIMIT))


def _quiet_read(filled: OwnList) -> tuple[Page, Walk]:
    """`_read`, where other workers may write into the list (`closed` false): when the walk disagrees with the
    one-page read, the list is read once more; a list that changed is read again (up to ATTEMPTS times, then
    the test skips), a list that did not is judged on the reads that disagree."""
    for attempt in range(ATTEMPTS):
        whole, walk = _read(filled, None if attempt else filled.seen)
        if filled.closed or walk.ids == _ids(whole):
            return whole, walk
        again = filled.pager.page(limit=filled.head or 100, what="reading the list again")
        if _ids(again) == _ids(whole):
            return whole, walk
    pytest.skip(f"{filled.pager.shape.op_id}: other writers changed the list during each of {ATTEMPTS} walks, "
                "so its pages cannot be compared with a one-page read")


def _ids(page: Page) -> list[str]:
    return [identity(item) for item in page.items]


@pytest.mark.breadth
@pytest.mark.parametrize(("op_id", "seed"), _lists(lambda op, s: PAGING))
def test_empty_list_has_no_cursor(request: pytest.FixtureRequest, contract: Contract, unique, op_id: str,
                                  seed: Seed) -> None:
    """A list with nothing in it is one page, the last: empty, and without `nextCursor`. A list that lives
    under something the organization must have first is filled, then filtered to nothing (a run's items), or
    read under a parent holding nothing yet (a link's payments)."""
    page = _filled(request, seed, contract, unique, op_id, 1 if seed.path and seed.empty else 0,
                   seed.empty).pager.page(what="reading an empty list")
    expect(page.items == [], f"a list with nothing in it holds {len(page.items)} rows", page.ex)
    expect(page.cursor is None, f"the empty list's only page carries `nextCursor` {page.cursor!r}", page.ex)


def _one_more(seed: Seed, api: Api, contract: Contract, unique: Unique) -> None:
    seed.make(api, contract, unique, 1)


def _grows_in_scope(seed: Seed) -> bool:
    """Whether a row made later lands in the list confined to the test's rows (not so for a span of time)."""
    return seed.own is not None and seed.own_grows


@pytest.mark.breadth
@pytest.mark.parametrize(("op_id", "seed"), _lists(lambda op, s: PAGING + ((s.cursor_req,) if s.cursor_req else ()),
                                                   lambda s: s.grows, own=lambda s: _grows_in_scope(s)))
def test_inserts_between_reads_neither_repeat_nor_hide(request: pytest.FixtureRequest, contract: Contract, unique,
                                                       op_id: str, seed: Seed) -> None:
    """A row written while a cursor is held does not make an existing row repeat or vanish."""
    filled = _filled(request, seed, contract, unique, op_id, ROWS, own=_grows_in_scope(seed), shared=True)
    before, during = inserted_between(filled.pager, LIMIT, filled.more)
    problem = missing_or_repeated(before, during)
    if problem and seed.cursor_req:
        expect(False, problem + f" ({seed.cursor_req}: the cursor names a row, later rows are newer)", during.last)
    elif problem:
        observe(f"{op_id}: {problem}", during.last)


@pytest.mark.parametrize(("op_id", "seed"), _lists(lambda op, s: (s.refusal_req or "",), lambda s: bool(s.refusal_req),
                                                   own=lambda s: False))
def test_foreign_cursor_is_refused(fresh_org, api: Api, contract: Contract, unique, op_id: str, seed: Seed) -> None:
    """A cursor issued for another organization's list: a 400 of the route's type (VALIDATION_ERROR naming
    `cursor`; the audit row says only "400"), never a restart."""
    other = fresh_org().api
    seed.make(other, contract, unique, 3)
    foreign = Pager(other, contract, op_id, params=seed.params).page(limit=1,
                                                                  what="reading another organization's list")
    expect(foreign.cursor is not None, "a one-row page of a three-row list has no `nextCursor`", foreign.ex)
    ex = Pager(api, contract, op_id, params=seed.params).request(cursor=foreign.cursor, limit=1)
    expect_cursor_refused(ex, "a cursor issued for another organization", types=seed.refusal_types)
