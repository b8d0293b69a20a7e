"""The `--state-url` contract: how a receiver shows what it concluded from the deliveries it got.

    GET {state-url}/payouts/{payoutId}
    200 {"status": "<payout status the receiver holds>", "events": ["<whk-id>", ...]}
    404 when the receiver knows nothing of the payout

`events` lists the ids of the deliveries the receiver processed for the payout, once per processing, in
order: a delivery it ignored as stale is listed (it was processed, and changed nothing); a duplicate it
deduplicated is not listed again. Without `events` the checks that count processings are skipped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote

from .send import Exchange

POLL_SECONDS = 0.05
SETTLE_SECONDS = 3.0  # how long a receiver that works after answering may take to show a delivery's effect
GRACE_SECONDS = 0.3  # after a duplicate: time for a second (wrong) processing to show


class StateError(AssertionError):
    """The state endpoint did not answer as the contract says."""


@dataclass(frozen=True)
class PayoutState:
    status: str | None
    events: list[str] | None  # None: the receiver does not list processed deliveries


def payout_url(state_url: str, payout_id: str) -> str:
    return f"{state_url.rstrip('/')}/payouts/{quote(payout_id, safe='')}"


def parse(exchange: Exchange) -> PayoutState:
    """The state of one payout from the answer to `GET .../payouts/{id}`; StateError when off-contract."""
    if exchange.status == 404:
        return PayoutState(None, [])
    if exchange.status != 200:
        raise StateError(f"the --state-url answered {exchange.outcome()}; the contract is 200 with "
                         '{"status": ..., "events": [...]} (or 404 for an unknown payout)')
    try:
        body = json.loads(exchange.response_body)
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("status"), str):
        raise StateError(f"the --state-url answer to {exchange.method} {exchange.url} has no string `status`")
    events = body.get("events")
    return PayoutState(body["status"], [str(e) for e in events] if isinstance(events, list) else None)


def settle(read: Callable[[], PayoutState], event_ids: Iterable[str]) -> PayoutState:
    """Read until every one of `event_ids` shows among the processed events (a receiver answers first and works
    afterwards) or `SETTLE_SECONDS` pass; without an `events` list, wait the grace period once."""
    wanted = set(event_ids)
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        state = read()
        if state.events is None:
            time.sleep(GRACE_SECONDS)
            return read()
        if wanted <= set(state.events) or time.monotonic() >= deadline:
            return state
        time.sleep(POLL_SECONDS)
