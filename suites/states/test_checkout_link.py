"""States and transitions > Checkout link: every row of the table, parametrized from
`contract/catalog/transitions.yaml` (machine `checkout_link`), plus what the rows add: the public page at
`shareUrl` (served while `sent`, `410` once paused), pause being permanent, and payments surviving a pause.

A row's `from` states are each reached through the API (`expired` through a fresh organization's clock, or
without one the link's lifetime waited out under `--run-slow`: the profile's reading of a trigger the spec does
not show); its trigger is sent once and the answer and a
read of the link are compared with the row's `to` (or its `error`).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import pytest

from payconform.suite import (
    Api,
    Contract,
    Exchange,
    Pager,
    SafetyError,
    expect,
    expect_error,
    expect_error_body,
    expect_status,
    run_contract,
)
from payconform.suite import Kind, Needs

from .._support.checkout import (draft, expiring_draft, let_expire, link_exchange, link_in, pause, priced_product,
                                 publish, read_link, sent_link)
from .._support.profile import success
from .._support.realtime import REAL_TIME, SLOW_TIMEOUT, Timed
from .._support.payments import list_payments, page_items, simulate

TRIGGERS = {
    "publish": lambda api, link_id: publish(api, link_id),
    "pause": lambda api, link_id: pause(api, link_id),
    "delete": lambda api, link_id: api.op("deleteCheckoutLink", linkId=link_id),
}


def _cases() -> list[Any]:
    cases = []
    for row in run_contract().machine("checkout_link")["rows"]:
        if row["id"] == "LINK-T-PUBLISH-EXPIRED":
            continue  # the draft's own expiresAt passing is not a reachable `from` state: test below
        error_from = (row.get("error") or {}).get("from") or []
        for state in row["from"]:
            marks = [pytest.mark.req(row["id"])]
            if state == "expired":  # a fresh organization's clock, or its lifetime in real time
                marks += [pytest.mark.needs("profile"), pytest.mark.long_wait, pytest.mark.timeout(SLOW_TIMEOUT)]
            cases.append(pytest.param(row, state, False, id=f"{row['id']}-{state}", marks=marks))
        for state in error_from:
            cases.append(pytest.param(row, state, True, id=f"{row['id']}-{state}-refused",
                                      marks=[pytest.mark.req(row["id"])]))
    return cases


def _outcome(api: Api, row: dict, state: str, refused: bool, ex: Exchange, link_id: str) -> None:
    error = row.get("error") or {}
    if refused or row["to"] == "unchanged":
        if error.get("type"):
            expect_error(ex, error["status"], error["type"], f"{row['trigger']} from `{state}`")
        else:
            expect(400 <= ex.status < 500, f"{row['trigger']} from `{state}` answered {ex.status}, not a refusal", ex)
            expect_error_body(ex)
        after = read_link(api, link_id)
        expect(after.get("status") == state, f"after the refused {row['trigger']} the link reads status"
               f" {after.get('status')!r}, not `{state}` as before", ex)
        return
    expect_status(ex, 200, f"{row['trigger']} from `{state}`")
    if row["to"] == "removed":
        expect_error(api.op("getCheckoutLink", linkId=link_id), 404, "NOT_FOUND", "reading a deleted draft")
        return
    expect(ex.json.get("status") == row["to"],
           f"{row['trigger']} from `{state}` answered status {ex.json.get('status')!r}, not `{row['to']}`", ex)
    after = read_link(api, link_id)
    expect(after.get("status") == row["to"], f"a read after {row['trigger']} from `{state}` shows status"
           f" {after.get('status')!r}, not `{row['to']}`", ex)


@pytest.mark.smoke(ids=[
    "LINK-T-PUBLISH-TERMINAL-expired", "LINK-T-PAUSE-EXPIRED-expired", "LINK-T-PAUSE-draft",
    "LINK-T-PUBLISH-SENT-NOOP-sent"
])
@pytest.mark.parametrize(("row", "state", "refused"), _cases())
def test_link_transition(row: dict, state: str, refused: bool, request: pytest.FixtureRequest,
                         contract: Contract, unique) -> None:
    """One row of the Checkout link table from one of its `from` states: the status it answers and keeps."""
    api, link = link_in(state, request, contract, unique)
    ex = TRIGGERS[row["trigger"]](api, link["id"])
    _outcome(api, row, state, refused, ex, link["id"])


@pytest.mark.smoke
@pytest.mark.req("LINK-T-PUBLISH-EXPIRED", "LINK-PUBLISH-EXPIRED", "ERR-LINK-EXPIRED")
def test_publish_expired_draft(timed: Timed, contract: Contract, unique) -> None:
    """A draft published after its `expiresAt` passed: 400 LINK_EXPIRED and the link unchanged (still a draft,
    its `shareUrl` what it was before the publish: none, or the URL a draft may carry from creation); the remedy
    the Errors table gives (PATCH `expiresAt` to null, then publish) works. With an operator clock, on a fresh
    organization whose clock passes the `expiresAt` (`timed`); without one, on the target's own organization in
    real time (`_expired_in_real_time`)."""
    if timed.clock is REAL_TIME:
        link = _expired_in_real_time(timed.api, contract, unique)
    else:
        link = expiring_draft(timed.api, contract, unique, timed.clock)
        let_expire(timed.clock, timed.org_id)
    _expired_publish_refused_then_remedied(timed.api, link)


def _expired_in_real_time(api: Api, contract: Contract, unique) -> dict[str, Any]:
    """A draft whose `expiresAt` is a few seconds after the target's own `Date`, as read once a later answer's
    `Date` is past it. A target that refuses so near an `expiresAt` (a minimum lifetime the spec does not show)
    leaves the test to the clock: it skips."""
    ex = api.op("listCheckoutLinks", params={"limit": "1"})
    expect_status(ex, 200, "listing checkout links (to read the target's `Date`)")
    expires = _date(ex) + timedelta(seconds=NEAR_EXPIRY)
    product = priced_product(api, contract, unique, "150.00")
    made = link_exchange(api, contract, product, expiresAt=expires.isoformat().replace("+00:00", "Z"))
    if made.status == 400:
        Needs(Kind.CLOCK, f"the target refuses a draft expiring {NEAR_EXPIRY} s ahead ({made.status})").skip()
    expect_status(made, success(contract, "createCheckoutLink"), "creating a draft that expires in seconds")
    link_id = made.json["id"]
    for _ in range(5):  # until the target's own time is past expiresAt (a `Date` counts whole seconds, and a
        # server may stamp the second it cached: two seconds past it the first read usually shows it passed)
        time.sleep(max(1.0, (expires - datetime.now(timezone.utc)).total_seconds() + 2))
        seen = expect_status(api.op("getCheckoutLink", linkId=link_id), 200, "reading the draft")
        if _date(seen) > expires:
            return seen.json
    Needs(Kind.CLOCK, f"the target's `Date` did not pass the draft's expiresAt {expires.isoformat()}").skip()


NEAR_EXPIRY = 15  # seconds between the target's `Date` and the draft's `expiresAt` in the real-time test


def _date(ex: Exchange) -> datetime:
    return parsedate_to_datetime(str(ex.headers.get("date")))


def _expired_publish_refused_then_remedied(api: Api, before: dict[str, Any]) -> None:
    """`before` is the draft as last answered before the publish (its create answer or a read)."""
    link_id = before["id"]
    expect_error(publish(api, link_id), 400, "LINK_EXPIRED", "publishing a draft whose expiresAt passed")
    after = read_link(api, link_id)
    was, now = before.get("shareUrl") or None, after.get("shareUrl") or None
    expect(after.get("status") == "draft" and now == was,
           f"after LINK_EXPIRED the link reads status {after.get('status')!r}, shareUrl {now!r}; the row says "
           f"unchanged: still `draft` with the shareUrl the draft had before, {was!r} (accepted: none, or a URL "
           "a draft carries from creation)")
    expect_status(api.op("updateCheckoutLink", linkId=link_id, json={"expiresAt": None}), 200,
                  "PATCH expiresAt to null")
    ex = publish(api, link_id)
    expect_status(ex, 200, "publishing once expiresAt is null")
    expect(ex.json.get("status") == "sent", f"the republished draft reads {ex.json.get('status')!r}", ex)


def _page(anon: Api, url: Any) -> Exchange:
    expect(isinstance(url, str) and url.startswith(("http://", "https://")), f"`shareUrl` is {url!r}, not a URL")
    try:
        return anon.get(url, credential=None)
    except SafetyError:
        Needs(Kind.TARGET, "shareUrl on the target's host").skip()


@pytest.mark.smoke
@pytest.mark.req("LINK-T-PUBLISH-DRAFT")
def test_share_url_serves_the_page(api: Api, anon: Api, contract: Contract, unique) -> None:
    """After publish, GET `shareUrl` (no credential) serves a page: a 200 with a body. The spec names no media
    type for it, so an HTML page and a page model (JSON, for a client-side renderer) are both accepted."""
    link = sent_link(api, contract, unique)
    ex = _page(anon, link.get("shareUrl"))
    expect_status(ex, 200, "GET shareUrl of a sent link")
    expect(bool(ex.content), f"shareUrl answered 200 with an empty body (content-type "
                             f"{ex.headers.get('content-type')!r}; any media type is accepted)", ex)


@pytest.mark.req("LINK-T-PAUSE")
def test_paused_page_is_gone_for_good(api: Api, anon: Api, contract: Contract, unique) -> None:
    """Pausing a sent link: the public page answers 410, and publishing again does not revive it."""
    link = sent_link(api, contract, unique)
    expect_status(pause(api, link["id"]), 200, "pausing a sent link")
    expect_status(_page(anon, link.get("shareUrl")), 410, "GET shareUrl after pause")
    ex = publish(api, link["id"])
    expect(ex.status >= 400, f"publishing a paused link answered {ex.status}; pause is permanent", ex)
    expect(read_link(api, link["id"]).get("status") == "cancelled", "a paused link no longer reads `cancelled`", ex)
    expect_status(_page(anon, link.get("shareUrl")), 410, "GET shareUrl after the refused republish")


@pytest.mark.req("LINK-T-PAUSE", "LINK-PAUSE")
def test_pause_leaves_payments_untouched(api: Api, contract: Contract, unique) -> None:
    """Payments recorded before a pause are listed afterwards exactly as before."""
    link = sent_link(api, contract, unique)
    expect_status(simulate(api, link["id"], unique("pref")), 200, "a payment before the pause")
    before = page_items(contract, list_payments(api, link["id"]))
    expect_status(pause(api, link["id"]), 200, "pausing the link")
    after = page_items(contract, list_payments(api, link["id"]))
    keep = ("id", "status", "amountBase", "refundedBase", "decimals")
    expect([{k: p.get(k) for k in keep} for p in after] == [{k: p.get(k) for k in keep} for p in before],
           f"payments before the pause {before!r} differ from after it {after!r}")


@pytest.mark.smoke
@pytest.mark.req("LINK-T-DELETE-DRAFT", "LINK-DELETE")
def test_deleted_draft_is_gone(api: Api, contract: Contract, unique) -> None:
    """DELETE a draft: 200, and it no longer appears on any page of the list of links (the profile's envelope;
    the shared organization may hold more links than one page)."""
    link = draft(api, contract, unique)
    expect_status(api.op("deleteCheckoutLink", linkId=link["id"]), 200, "deleting a draft")
    walk = Pager(api, contract, "listCheckoutLinks").walk(100)
    expect(all(item.get("id") != link["id"] for item in walk.items), "the deleted draft is still listed", walk.last)
