"""A fresh organization with a mailbox registered and its clock under the test's control: the retry and
auto-disable tests (Events > Delivery and retries, States > Webhook endpoint), which move days of time.

After each move the clock is advanced by zero seconds once more while polling, which makes the reference's
dispatcher run at once. A delivery's time on the organization's clock is when it arrived plus every advance
made before it arrived, so real time spent on a loaded machine never reads as an early retry.
"""

from __future__ import annotations

import time
from typing import Any

from payconform.suite import Contract, Delivery, Mailbox, run_contract

from .deliveries import about, kind, wait_for
from .payouts import DEFAULT, create_payout

TICK = 15  # the dispatcher's period: an attempt may land up to one tick after it is due
SLACK = 3  # real seconds that pass while the test runs, on top of the advanced clock
DAY = 86400


def ladder() -> list[int]:
    """The primary schedule's retry delays, in seconds (`contract/catalog/events.yaml`)."""
    return run_contract().events["retry_schedules"]["ladder"]["delays_seconds"]


class Timeline:
    """A fresh organization with a mailbox registered, and its clock under the test's control."""

    def __init__(self, org: Any, clock: Any, box: Mailbox, contract: Contract) -> None:
        self.org, self.clock, self.box, self.contract = org, clock, box, contract
        self.advances: list[tuple[float, float]] = []  # (our clock when the advance was asked, seconds)

    def flush(self) -> None:
        self.clock.advance(self.org.org_id, 0)

    def advance(self, seconds: float) -> None:
        self.advances.append((time.time(), seconds))
        self.clock.advance(self.org.org_id, seconds)

    @property
    def advanced(self) -> float:
        """Seconds the test has moved the organization's clock so far."""
        return sum(s for _, s in self.advances)

    def org_time(self, delivery: Delivery) -> float:
        """When the delivery arrived, read on the organization's clock (relative to our clock's epoch)."""
        return delivery.received_at + sum(s for asked, s in self.advances if asked <= delivery.received_at)

    def about(self, payout_id: str) -> list[Delivery]:
        """The attempts of the payout's `payout.pending` event (its later state changes are other events)."""
        return [d for d in self.box.snapshot() if about(d, "payoutId", payout_id) and kind(d) == "payout.pending"]

    def payout(self, unique: Any, scenario: str = DEFAULT) -> str:
        return create_payout(self.org.api, self.contract, unique, scenario).json["payoutId"]

    def first_delivery(self, payout_id: str) -> Delivery:
        wait_for(self.box, lambda ds: any(about(d, "payoutId", payout_id) for d in ds), self.flush,
                 f"the first delivery about payout {payout_id}")
        return self.about(payout_id)[0]

    def settle(self, payout_id: str, count: int, timeout: float = 3.0) -> list[Delivery]:
        """The deliveries about the payout once `count` arrived (or after `timeout` seconds of polling)."""
        self.box.wait_for(lambda ds: len(self.about(payout_id)) >= count, timeout, flush=self.flush)
        return self.about(payout_id)
