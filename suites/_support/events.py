"""Events as data and as the feed: the event catalog's types (`contract/catalog/events.yaml`, read through
the run's contract), reading the feed, and how an event's `data` or a walk of event types falls short of the
catalog."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from payconform.suite import Api, expect_status, run_contract

from .answers import contains, find_member
from .payouts import payout_problems
from .profile import items


def event_types() -> set[str]:
    return {t["type"] for t in run_contract().events["types"]}


def opt_in_types() -> list[str]:
    """The event types an endpoint receives only when it lists them in `events` (checkout payments)."""
    return [t["type"] for t in run_contract().events["types"] if t["opt_in"]]


def feed(api: Api, *, found: Callable[[list[dict[str, Any]]], bool] | None = None,
         **params: str) -> list[dict[str, Any]]:
    """Every event of the feed matching `params`, following `since=<last sequence>` (the profile's paging) to an
    empty page. With `found` (what the caller looks for is in the rows read), a page shorter than the profile's
    page size (`listEvents.page.size`: the feed's end when it was read) ends the reading once `found` holds: a
    read, not two, for a test whose events fit one page. A target whose pages are shorter still is read on to
    an empty page while `found` does not hold, so it only ends the reading early, never fails a test."""
    contract = run_contract()
    size = int((contract.operation("listEvents").get("page") or {}).get("size") or 0)
    rows: list[dict[str, Any]] = []
    query = dict(params)
    for _ in range(50):
        ex = api.op("listEvents", params=query)
        expect_status(ex, 200, "reading the event feed")
        page = items(contract, "listEvents", ex)  # the envelope is not shown: the profile's `page.items`
        rows += page
        if not page or (found is not None and len(page) < size and found(rows)):
            return rows
        query["since"] = str(page[-1].get("sequence"))
    return rows


def has(*ids: Any) -> Callable[[list[dict[str, Any]]], bool]:
    """`feed`'s `found`: every one of the event ids `ids` is among the rows read."""
    return lambda rows: set(ids) <= {r.get("id") for r in rows}


def data_problems(row: dict[str, Any], data: Any, payout_states: list[str]) -> list[str]:
    """How an event's `data` falls short of its catalog row: the resource the spec shows (the flat
    `WebhookPayout`, or the `approval` object), the values the row expects and the fields it names."""
    if not isinstance(data, dict):
        return [f"`data` is {type(data).__name__}, not an object"]
    problems: list[str] = []
    if row.get("schema") == "WebhookPayout":
        # A returned payload keeps `completedAt` (Resources > Payout), although its status reads `failed`.
        problems += [p for p in payout_problems(data, data, payout_states)
                     if not (row["type"] == "payout.returned" and p.startswith("`completedAt`"))]
    if row.get("schema") == "PayoutApproval":
        approval = data.get("approval")
        missing = [f for f in run_contract().events["approval_fields"]
                   if not isinstance(approval, dict) or f not in approval]
        problems += [f"`data.approval` lacks {missing}"] if missing else []
    if row.get("expect") and not contains(data, row["expect"]):
        problems.append(f"`data` does not carry {row['expect']}")
    # where the body's shape is not shown, a named field may sit at any depth of `data` (`data.batch.counts`)
    anywhere = row.get("data") == "not_shown"
    problems += [f"`data` has no `{path}`" + (" at any depth" if anywhere else "") for path in row.get("present") or ()
                 if (find_member(data, path.rsplit(".", 1)[-1]) if anywhere else _at(data, path)) is None]
    return problems


def _at(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def walk_problems(types: list[str], moves: list[list[str | None]]) -> list[str]:
    """Where a sequence of event types (feed order) leaves the machine's `event_moves` (None: the first)."""
    allowed = {tuple(m) for m in moves}
    pairs = zip([None, *types], types)
    return [f"{before or '(first)'} -> {after}" for before, after in pairs if (before, after) not in allowed]


def passed_through(type_: str, moves: list[list[str | None]]) -> list[str]:
    """The event types every walk of the machine's `event_moves` passes through on its way to `type_` (the
    subject of a `payout.returned` was announced `payout.pending` and `payout.completed` first): those that,
    taken out, leave `type_` unreachable from the first event. In walk order."""
    edges = [(before, after) for before, after in moves]

    def reachable(without: str | None) -> set[str | None]:
        seen: set[str | None] = {None}
        frontier: list[str | None] = [None]
        while frontier:
            here = frontier.pop()
            for before, after in edges:
                if before == here and after != without and after not in seen:
                    seen.add(after)
                    frontier.append(after)
        return seen

    if type_ not in reachable(None):
        return []
    order = [after for _, after in edges]
    return sorted({t for t in order if t != type_ and type_ not in reachable(t)}, key=order.index)
