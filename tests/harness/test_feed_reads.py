"""How many reads the event feed takes (`suites/_support/events.py`, `feed`): to an empty page, except that a
test that found its events on a page shorter than the profile's page size (`listEvents.page.size`: the feed's
end when it was read) stops there; a target with shorter pages than the profile's is read on while the events
are not found, so the early end never hides one."""

from __future__ import annotations

import json
from typing import Any

import httpx

from payconform.client import Exchange, RequestInfo
from suites._support.events import feed, has


class Feed:
    """A fake API whose `listEvents` serves `events` oldest first, `page` a page, after `since`."""

    def __init__(self, count: int, page: int) -> None:
        self.events = [{"id": f"evt_{n}", "sequence": str(n), "type": "payout.pending"} for n in range(1, count + 1)]
        self.page, self.reads = page, 0

    def op(self, op_id: str, params: dict[str, Any]) -> Exchange:
        assert op_id == "listEvents"
        self.reads += 1
        since = int(params.get("since", 0))
        rows = [e for e in self.events if int(e["sequence"]) > since][:self.page]
        return Exchange(RequestInfo("GET", "http://t/events", httpx.Headers(), b""), 200,
                        httpx.Headers({"content-type": "application/json"}), json.dumps({"data": rows}).encode(), 0.01)


def test_events_found_on_a_short_page_take_one_read() -> None:
    api = Feed(30, page=100)
    assert [e["id"] for e in feed(api, found=has("evt_12", "evt_30"), since="0")][-1] == "evt_30"
    assert api.reads == 1


def test_without_found_the_feed_is_read_to_an_empty_page() -> None:
    api = Feed(30, page=100)
    assert len(feed(api, since="0")) == 30 and api.reads == 2


def test_a_full_page_is_read_on() -> None:
    api = Feed(150, page=100)
    assert len(feed(api, found=has("evt_1"), since="0")) == 150 and api.reads == 2


def test_shorter_pages_than_the_profile_are_read_on_until_found() -> None:
    """Pages of 5 (the `feed-pages-of-five` variant): each is short of the profile's 100, so the reading ends on
    the page that completes what the test looks for, not on the first."""
    api = Feed(30, page=5)
    rows = feed(api, found=has("evt_3", "evt_17"), since="0")
    assert rows[-1]["id"] == "evt_20" and api.reads == 4
    api = Feed(30, page=5)
    assert len(feed(api, found=has("evt_99"), since="0")) == 30 and api.reads == 7  # never found: to the end
