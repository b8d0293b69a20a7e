"""The one paging checker: walks a cursor-paged list through the harness client and checks the paging rules.

Conventions, row Paging: "Cursor paging; the cursor is opaque, taken verbatim from `nextCursor` of the
previous page; `nextCursor` is absent on the last page." Every list test uses this module instead of
reading pages by hand, so the rules are checked the same way on every list. Where a list keeps its items
and its cursor comes from the profile's `page` entry (`items`, `cursor`, `cursor_param`).

Rules the spec states are checked with `expect` (a failure names the requirement of the running test).
Rules common practice adds but the spec does not state for a list (a tampered cursor refused rather than
silently restarted, inserts between page reads neither repeated nor hidden) are reported with `observe`:
a `PagingObservation` warning in the run's summary, never a failure.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from ..client import Api, Exchange
from ..contract import Contract
from ..results.mismatch import ProfileMismatch
from .expect import expect, expect_error, expect_status

MAX_PAGES = 60


class PagingObservation(UserWarning):
    """A paging behaviour common practice expects but the spec does not require of this list."""


def observe(what: str, ex: Exchange | None = None) -> None:
    """Report `what` as an observation (a warning), not a failure; names the request id when there is one."""
    rid = f" (x-request-id: {ex.request_id})" if ex is not None and ex.request_id else ""
    warnings.warn(PagingObservation(what + rid), stacklevel=2)


@dataclass(frozen=True)
class PageShape:
    """Where a list keeps its items and cursors, from the profile's `page` entry of the operation."""

    op_id: str
    items: str | None
    cursor: str | None
    cursor_param: str | None

    @classmethod
    def of(cls, contract: Contract, op_id: str) -> PageShape:
        page = contract.operation(op_id).get("page") or {}
        return cls(op_id, page.get("items"), page.get("cursor"), page.get("cursor_param"))

    @property
    def cursor_paged(self) -> bool:
        return bool(self.cursor and self.cursor_param)


def list_items(contract: Contract, op_id: str, ex: Exchange) -> list[Any]:
    """The items of a list answer, where the profile's `page.items` says they are (None: a bare array).

    Where the envelope is the profile's choice (`page.source: profile`: the spec does not show it) and the answer
    keeps its items elsewhere, that is the deployment's choice: a `ProfileMismatch` naming the entry, with the
    override when the answer has exactly one array to hold them. Where the spec shows the envelope, a missing
    list is a failure."""
    page = contract.operation(op_id).get("page") or {}
    key = page.get("items", "data")
    body = ex.json
    found = body if key is None else (body.get(key) if isinstance(body, dict) else None)
    if not isinstance(found, list) and page.get("source") == "profile" and isinstance(body, dict | list):
        arrays = [k for k, v in body.items() if isinstance(v, list)] if isinstance(body, dict) else []
        holds = "a bare array" if isinstance(body, list) else f"arrays: {', '.join(arrays) or 'none'}"
        fits = None if isinstance(body, list) else arrays[0] if len(arrays) == 1 else ""
        raise ProfileMismatch(f"operations.{op_id}.page.items", f"the {op_id} answer has no `{key}` list ({holds})",
                              expected=f"items under `{key}`", exchange=ex,
                              override={"operations": {op_id: {"page": {"items": fits}}}} if fits != "" else None)
    expect(isinstance(found, list), f"the page has no `{key}` list" if key else "the answer is not a JSON array", ex)
    return found


def cursor_paged_lists(contract: Contract) -> list[str]:
    """Every operation of the merged profile whose `page` entry names a `nextCursor`-style cursor."""
    ops = contract.profile.get("operations", contract.profile)
    return sorted(op_id for op_id, op in ops.items()
                  if isinstance(op, Mapping) and PageShape.of(contract, op_id).cursor_paged)


def identity(item: Any) -> str:
    """An item's `id` when it has one, else the whole item (the spec does not name every list's id field)."""
    if isinstance(item, Mapping) and isinstance(item.get("id"), (str, int)):
        return str(item["id"])
    return json.dumps(item, sort_keys=True)


@dataclass
class Page:
    ex: Exchange
    items: list[Any]
    cursor: str | None


@dataclass
class Walk:
    """The pages of one walk, in order."""

    pages: list[Page] = field(default_factory=list)

    @property
    def items(self) -> list[Any]:
        return [item for page in self.pages for item in page.items]

    @property
    def ids(self) -> list[str]:
        return [identity(item) for item in self.items]

    @property
    def last(self) -> Exchange:
        return self.pages[-1].ex


class Pager:
    """Reads one list (an operation of the profile with fixed filters) page by page. `start` parameters go on
    a first page only, never beside a cursor (balance history: "Send `cursor` or `since`, not both")."""

    def __init__(self, api: Api, contract: Contract, op_id: str, *, params: Mapping[str, str] | None = None,
                 start: Mapping[str, str] | None = None, **path_params: str) -> None:
        self.api = api
        self.contract = contract
        self.shape = PageShape.of(contract, op_id)
        self.params = dict(params or {})
        self.start = dict(start or {})
        self.path_params = path_params

    def request(self, *, cursor: str | None = None, limit: int | None = None,
                extra: Sequence[tuple[str, str]] = ()) -> Exchange:
        params = list(self.params.items()) + (list(self.start.items()) if cursor is None else []) + list(extra)
        if limit is not None:
            params.append(("limit", str(limit)))
        if cursor is not None:
            params.append((self.shape.cursor_param or "cursor", cursor))
        return self.api.op(self.shape.op_id, params=params, **self.path_params)

    def page(self, *, cursor: str | None = None, limit: int | None = None, what: str | None = None) -> Page:
        """One page, answered 200, with its items list and its next cursor (a non-empty string, or absent)."""
        return self.parse(self.request(cursor=cursor, limit=limit), what)

    def parse(self, ex: Exchange, what: str | None = None) -> Page:
        """The page an exchange carries: it must be a 200 with the items list and a well-formed cursor."""
        expect_status(ex, 200, what)
        body = ex.json
        items = list_items(self.contract, self.shape.op_id, ex)
        nxt = body.get(self.shape.cursor) if isinstance(body, dict) and self.shape.cursor else None
        expect(nxt is None or (isinstance(nxt, str) and nxt != ""),
               f"`{self.shape.cursor}` is {nxt!r}: a cursor is a non-empty string, or absent on the last page", ex)
        return Page(ex, items, nxt)

    def seek(self, found: Callable[[Any], bool], what: str) -> Page:
        """The first page (read without `limit`, cursors followed) holding an item `found` accepts, or the last
        page: where a list's order and page size are not shown, a new row may be on any page."""
        page = self.page(what=what)
        for number in range(2, MAX_PAGES + 1):
            if any(found(item) for item in page.items) or page.cursor is None:
                break
            page = self.page(cursor=page.cursor, what=f"{what}, page {number}")
        return page

    def gather(self, wanted: set[str], what: str, key: Callable[[Any], Any] = identity) -> tuple[dict[str, Any], Page]:
        """The items whose `key` is in `wanted`, read page by page (no `limit`, cursors followed) until every one
        was seen or the last page (MAX_PAGES at most): on a busy list whose order and page size are not shown,
        a new row may be on any page. Returns them by key, and the last page read."""
        found: dict[str, Any] = {}
        page, number = self.page(what=what), 1
        while True:
            found.update({str(key(item)): item for item in page.items if str(key(item)) in wanted})
            if set(found) >= wanted or page.cursor is None or number >= MAX_PAGES:
                return found, page
            number += 1
            page = self.page(cursor=page.cursor, what=f"{what}, page {number}")

    def walk(self, limit: int, *, start: str | None = None, first: Page | None = None,
             pages: int | None = None) -> Walk:
        """Follow `nextCursor` verbatim until a page has none: a short page is not the end, only a missing
        cursor is. A list that never stops handing out cursors fails after MAX_PAGES pages. With `pages`, stop
        after that many (the head of a list too long to walk)."""
        walk = Walk([first] if first is not None else [])
        cursor = first.cursor if first is not None else start
        if first is None:
            walk.pages.append(self.page(cursor=cursor, limit=limit, what="reading the first page"))
            cursor = walk.pages[-1].cursor
        while cursor is not None and (pages is None or len(walk.pages) < pages):
            expect(len(walk.pages) < MAX_PAGES,
                   f"still handing out `{self.shape.cursor}` after {MAX_PAGES} pages of limit={limit}: "
                   "`nextCursor` must be absent on the last page", walk.last)
            walk.pages.append(self.page(cursor=cursor, limit=limit, what=f"reading page {len(walk.pages) + 1}"))
            expect(walk.pages[-1].cursor != cursor, f"`{self.shape.cursor}` is the cursor just sent: the list "
                   "would never end, and `nextCursor` must be absent on the last page", walk.last)
            cursor = walk.pages[-1].cursor
        return walk


def expect_no_duplicates(walk: Walk) -> None:
    seen: set[str] = set()
    for number, page in enumerate(walk.pages, 1):
        for key in map(identity, page.items):
            expect(key not in seen, f"page {number} repeats an item of an earlier page: {key}", page.ex)
            seen.add(key)


def expect_same_sequence(walk: Walk, whole: Sequence[Any], ex: Exchange) -> None:
    """The pages concatenate to exactly the list read in one page: no gap, no repeat, the same order."""
    expect_no_duplicates(walk)
    got, want = walk.ids, [identity(item) for item in whole]
    missing = [key for key in want if key not in set(got)]
    expect(not missing, f"{len(missing)} item(s) of the list never appear on any page, e.g. {missing[:2]}", walk.last)
    extra = [key for key in got if key not in set(want)]
    expect(not extra, f"the pages hold item(s) the one-page read does not: {extra[:2]}", walk.last)
    expect(got == want, "the pages, concatenated, are not in the order of the one-page read: the declared order "
           f"does not hold across page boundaries (pages {[len(p.items) for p in walk.pages]})", ex)


def holds(item: Any, marker: str) -> bool:
    """Whether `marker` (an id, a request id or a distinctive decimal amount) is one of the item's values."""
    if isinstance(item, Mapping):
        return any(holds(value, marker) for value in item.values())
    if isinstance(item, list):
        return any(holds(value, marker) for value in item)
    if isinstance(item, (str, int)) and not isinstance(item, bool):
        return str(item) == marker or _same_decimal(str(item), marker)
    return False


def _same_decimal(a: str, b: str) -> bool:
    try:
        return Decimal(a) == Decimal(b)
    except InvalidOperation:
        return False


def created_together(a: Any, b: Any) -> bool:
    """Whether two items carry the same `createdAt` instant: where a list's order has no tie rule ("Newest
    first"), such items may be listed either way round."""
    def instant(item: Any) -> datetime | None:
        value = item.get("createdAt") if isinstance(item, Mapping) else None
        try:
            return datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            return None
    return instant(a) is not None and instant(a) == instant(b)


def in_order(seen: Sequence[Any], want: Sequence[Any], tied: Callable[[Any, Any], bool] | None = None) -> bool:
    """Whether `seen` lists the items of `want` in its order, two items swapped only where `tied` says they may."""
    rank = {id(item): index for index, item in enumerate(want)}
    return all(rank[id(a)] < rank[id(b)] or (tied is not None and tied(a, b))
               for i, a in enumerate(seen) for b in seen[i + 1:])


def expect_order_of(walk: Walk, markers: Sequence[str], *, newest_first: bool | None,
                    tied: Callable[[Any, Any], bool] | None = None) -> None:
    """Items made one after the other (each found by its marker) appear reversed (newest first), in creation
    order (oldest first) or, with `newest_first=None`, consistently in one of the two directions; items that
    `tied` accepts (the same `createdAt` where no tie rule is given) may be listed either way round."""
    position: dict[str, int] = {}
    for marker in markers:
        found = [index for index, item in enumerate(walk.items) if holds(item, marker)]
        expect(bool(found), f"the item made with {marker!r} is on no page", walk.last)
        position[marker] = found[0]
    seen = sorted(markers, key=position.__getitem__)
    item_of = {marker: walk.items[position[marker]] for marker in markers}
    directions = {True: [list(reversed(markers))], False: [list(markers)]}.get(
        newest_first, [list(reversed(markers)), list(markers)])  # type: ignore[arg-type]
    order = {True: "newest first", False: "oldest first"}.get(newest_first, "one time order")  # type: ignore[arg-type]
    ok = any(in_order([item_of[m] for m in seen], [item_of[m] for m in want], tied) for want in directions)
    expect(ok, f"items created one after the other are listed out of {order}: {seen}"
           + (" (items with the same `createdAt` may be in either order)" if tied else ""), walk.last)


def expect_cursor_refused(ex: Exchange, what: str, param: str = "cursor",
                          types: frozenset[str] = frozenset({"VALIDATION_ERROR"})) -> None:
    """400 of one of the route's refusal `types`; a VALIDATION_ERROR names the parameter in `errors` (a route
    whose row says only "400" may also answer BAD_REQUEST, with the cause in `detail`)."""
    body = expect_error(ex, 400, set(types), what)
    if body.get("type") == "VALIDATION_ERROR":
        expect(_names(body.get("errors"), param), f"`errors` does not name `{param}`: {body.get('errors')!r}", ex)


def observe_cursor_refused(ex: Exchange, first: Page, what: str) -> None:
    """Where the spec is silent: a bad cursor should be refused, never silently restart the list."""
    if ex.status == 200:
        restarted = isinstance(ex.json, dict) and ex.json == first.ex.json
        observe(f"{first.ex.op_id}: {what} was answered 200" + (", restarting the list" if restarted else ""), ex)


def _names(errors: Any, param: str) -> bool:
    if not isinstance(errors, list):
        return False
    return any(isinstance(v, str) and (v == param or v.endswith("." + param))
               for entry in errors for v in (entry.values() if isinstance(entry, dict) else [entry]))


def tampered(cursor: str) -> tuple[str, str]:
    """A cursor no server issued, and what it is: the issued one truncated to half (one probe: where the spec is
    silent the answer is only observed; where it requires a refusal, a foreign cursor is the test)."""
    if len(cursor) > 1:
        return "a truncated cursor", cursor[: len(cursor) // 2]
    return "a cursor with a character appended", cursor + "x"


def inserted_between(pager: Pager, limit: int, insert: Callable[[], None]) -> tuple[Walk, Walk]:
    """Read the list whole, then read its first page, insert a row, and walk on from the held cursor.
    Returns (before, during): `during` must hold every item of `before` exactly once."""
    before = pager.walk(limit)
    first = pager.page(limit=limit, what="reading the first page again")
    insert()
    return before, pager.walk(limit, first=first)


def missing_or_repeated(before: Walk, during: Walk) -> str | None:
    """What the inserts did to the items that were there before, or None when nothing was lost or repeated."""
    counts: dict[str, int] = {}
    for key in during.ids:
        counts[key] = counts.get(key, 0) + 1
    lost = [key for key in before.ids if key not in counts]
    doubled = [key for key, n in counts.items() if n > 1]
    if lost or doubled:
        return f"after an insert between page reads, {len(lost)} existing item(s) vanished and {len(doubled)} repeated"
    return None
