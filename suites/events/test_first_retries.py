"""Events > Delivery and retries, in real time with a key alone (`--run-slow`, the deep tier): the first two
retries of a failed delivery to a sandbox endpoint the key registers, a delivery answered 2xx never
retried, and the event whose deliveries fail kept in the feed. The whole ladder, and the 2xx that stops it later on, need the operator clock (`test_retries.py`).

On the target's own organization two endpoints of this test receive the same `payout.pending` event of the
test's own payout: one answers 500 to everything, the other 204. Gaps are read on our clock at arrival; an
attempt may come up to a dispatcher period late (`clocked.TICK`), and on an organization other tests keep busy
up to `QUEUED` more behind their deliveries: never early.
"""

from __future__ import annotations

import time

import pytest

from payconform.suite import Contract, Delivery, Mailbox, expect, run_contract

from .._support.clocked import SLACK, TICK, Timeline
from .._support.deliveries import about, kind, register
from .._support.events import feed, has
from .._support.realtime import real_clock, waits_minutes
from .._support.types import Unique

QUEUED = 30.0  # seconds an attempt may queue behind the deliveries of the other tests on a shared organization
RETRIES = 2  # the retries waited for: both described schedules agree on their gaps (1 min, 5 min)


def _gap_bands() -> list[tuple[float, float]]:
    """For each of the first `RETRIES` retries, the earliest and latest gap after the previous attempt that the
    described schedules allow (each gap jittered by plus or minus 20 percent), the lateness allowed added."""
    schedules = [s["delays_seconds"] for s in run_contract().events["retry_schedules"].values()]
    gaps = [[s[k] for s in schedules] for k in range(RETRIES)]
    return [(0.8 * min(g), 1.2 * max(g) + TICK + SLACK + QUEUED) for g in gaps]


def _pending(box: Mailbox, payout_id: str) -> list[Delivery]:
    """The attempts of the payout's `payout.pending` event that reached `box`."""
    return [d for d in box.snapshot() if about(d, "payoutId", payout_id) and kind(d) == "payout.pending"]


@pytest.mark.req("WH-RETRY-SCHEDULE", "WH-2XX-SUCCESS", "FEED-IS-RECORD")
@pytest.mark.needs("api_key", "profile", "webhook_receiver", "real_time")
@waits_minutes
def test_first_retries_come_on_the_ladder_and_a_2xx_is_final(own_org, run_slow: bool, contract: Contract,
                                                             unique: Unique, webhook_receiver: Mailbox,
                                                             webhook_receiver_factory) -> None:
    """Attempts 2 and 3 to the failing endpoint come within the described gaps' jitter bands after the one
    before; the endpoint that answered 204 got the event once, though by then the retries have come twice; the
    event whose deliveries keep failing is in the feed."""
    bands = _gap_bands()
    timeline = Timeline(own_org(), real_clock(bands[-1][1], run_slow), webhook_receiver, contract)
    succeeding = webhook_receiver_factory()
    register(timeline.org.api, contract, timeline.box)
    register(timeline.org.api, contract, succeeding)
    timeline.box.fail_next(10**6, status=500)
    payout_id = timeline.payout(unique)
    timeline.first_delivery(payout_id)
    for attempt, (low, high) in enumerate(bands, start=2):
        previous = timeline.about(payout_id)[-1]
        came = timeline.settle(payout_id, attempt, timeout=max(0.0, previous.received_at + high - time.time()))
        expect(len(came) >= attempt,
               f"attempt {attempt} did not come within {high:.0f} s of the previous attempt (answered "
               f"{previous.answered}): the described delays plus 20 percent, a dispatcher period and {QUEUED:g} s "
               "of queue; 'anything else [than a 2xx] ... is retried'")
        gap = came[attempt - 1].received_at - previous.received_at
        expect(gap >= low, f"attempt {attempt} came {gap:.1f} s after the previous one, under the described retry "
                           f"delays minus 20 percent ({low:.0f} s)")
    once = _pending(succeeding, payout_id)
    expect(len(once) == 1, f"the endpoint that answered 204 got the event of payout {payout_id} {len(once)} times "
                           f"while the failing one got it {attempt} times: 'Any 2xx is success'")
    event_id = timeline.about(payout_id)[0].header("whk-id")
    expect(event_id in {e.get("id") for e in feed(timeline.org.api, found=has(event_id))},
           f"event {event_id}, whose deliveries to one endpoint failed {attempt} times, is not in the feed: 'The "
           "feed is the record; a delivery can go missing, the feed cannot'")
