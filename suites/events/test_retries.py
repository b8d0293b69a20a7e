"""Events > Delivery and retries, endpoint management: on the operator clock.

Each test uses a fresh organization and moves its clock (`_support/clocked.py`). Retry gaps are checked
against the jitter band (+/-20 percent) on the organization's clock. Both schedules the spec describes agree
on the first two gaps (1 min, 5 min), and the count of attempts must match one of them (WH-RETRY-SCHEDULE
notes). The auto-disable of an endpoint (States > Webhook endpoint) is test_auto_disable.py's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from payconform.suite import Delivery, expect, expect_status, run_contract

from .._support.clocked import SLACK, TICK, Timeline, ladder
from .._support.deliveries import endpoints_listed, register, verified
from .._support.events import feed
from .._support.profile import items

NEEDS = ("api_key", "profile", "webhook_receiver", "operator", "clock")
ROTATION_SLACK = 0.25  # hours a delivery may wait after the rotation before its whk-timestamp is taken
CLOCK_SLACK = 0.05  # hours the deadline may round or run ahead of the delivery's timestamp


def _schedules() -> list[list[int]]:
    """The gaps between attempts of every described schedule, and of every reading of one (events.yaml)."""
    return [s["delays_seconds"] for s in run_contract().events["retry_schedules"].values()]


def _texts(schedules: dict[str, dict[str, Any]], names: Any) -> str:
    """The spec's words for the named schedules (two readings of one schedule share its words)."""
    return " or ".join(repr(t) for t in sorted({schedules[name]["text"] for name in names}))


def _bulk_replay(timeline: Timeline, operator: Any, endpoint_id: str) -> tuple[dict[str, Any], str]:
    """Bulk replay of the last day's failed deliveries, and the `status` asked; where that requeues none, of all
    of them: delivery statuses are not shown, so a delivery awaiting a retry may not count as `failed`."""
    now = datetime.now(UTC)
    window = ((now - timedelta(days=1)).isoformat(), (now + timedelta(days=1)).isoformat())
    answer = operator.replay_webhook_deliveries(timeline.org.org_id, endpoint_id, *window, status="failed")
    if answer.get("requeued") != 0:
        return answer, "failed"
    return operator.replay_webhook_deliveries(timeline.org.org_id, endpoint_id, *window, status="all"), "all"


def _deliveries(timeline: Timeline, endpoint_id: str) -> list[dict[str, Any]]:
    """The sandbox delivery log's rows, where the profile's `listSandboxWebhookDeliveries.page.items` says (its
    shape is not shown), in whatever order it lists them."""
    ex = timeline.org.api.op("listSandboxWebhookDeliveries", endpointId=endpoint_id)
    expect_status(ex, 200, "reading the endpoint's deliveries")
    return [r for r in items(timeline.contract, "listSandboxWebhookDeliveries", ex) if isinstance(r, dict)]


@pytest.mark.req("WH-RETRY-SCHEDULE", "WH-2XX-SUCCESS")
@pytest.mark.needs(*NEEDS)
def test_failed_attempts_are_retried_within_the_jitter_band(timeline: Timeline, unique) -> None:
    register(timeline.org.api, timeline.contract, timeline.box)
    timeline.box.fail_next(1000, status=500)
    payout_id = timeline.payout(unique)
    timeline.first_delivery(payout_id)
    timeline.box.fail_next(1000, status=404)  # "anything else" is a 4xx as much as a 5xx
    for attempt in (2, 3):
        refused = timeline.about(payout_id)[-1].answered
        gaps = sorted({s[attempt - 2] for s in _schedules()})  # the described gaps before this attempt
        low, high = gaps[0], gaps[-1]
        before = len(timeline.about(payout_id))
        timeline.advance(0.8 * low - SLACK - 1)
        early = timeline.settle(payout_id, before + 1, timeout=1.0)
        if len(early) > before:
            gap = timeline.org_time(early[before]) - timeline.org_time(early[before - 1])
            expect(gap >= 0.8 * low,
                   f"attempt {attempt} came {gap:.1f} s after the previous one on the organization's clock,"
                   f" under the described retry delays {gaps} s minus 20 percent ({0.8 * low:.0f} s)")
        timeline.advance(1.2 * high - 0.8 * low + TICK + SLACK + 1)
        late = timeline.settle(payout_id, before + 1)
        expect(len(late) == before + 1,
               f"attempt {attempt} did not come within {1.2 * high:.0f} s (+{TICK} s dispatcher period)"
               f" of the previous attempt, answered {refused}, the longest described delay {gaps} s plus 20 percent"
               f" ({len(late) - before} new): 'Any 2xx is success; anything else, including a timeout, is retried'")
    timeline.box.answer(204)
    timeline.advance(ladder()[2] * 2.5)
    done = timeline.settle(payout_id, 4)
    timeline.advance(86400 * 4)
    after = timeline.settle(payout_id, len(done) + 1, timeout=1.0)
    expect(len(after) == len(done), f"after a 204 the event was sent {len(after) - len(done)} more time(s): 'Any 2xx"
                                    " is success'")


@pytest.mark.smoke
@pytest.mark.req("WH-RETRY-SCHEDULE", "WH-RETRY-SCHEDULE-ALT")
@pytest.mark.needs(*NEEDS)
def test_every_retry_gap_fits_a_described_schedule(timeline: Timeline, unique) -> None:
    """Every attempt failing: the clock is moved from edge to edge of the jitter bands (+/-20 percent) of the
    k-th gap of every schedule the earlier gaps fitted, so each retry is placed between two edges; the schedules
    whose band holds it stay. The retries must fit one schedule throughout and stop where that one ends: six
    attempts spaced as the ladder's first gaps fit neither. Each advance runs the dispatcher, so what is due has
    arrived when it returns."""
    register(timeline.org.api, timeline.contract, timeline.box)
    timeline.box.fail_next(1000, status=500)
    payout_id = timeline.payout(unique)
    timeline.first_delivery(payout_id)
    schedules = list(run_contract().events["retry_schedules"].items())
    fitting = dict(schedules)
    for retry in range(max(len(s["delays_seconds"]) for _, s in schedules)):
        bands = {name: (0.8 * s["delays_seconds"][retry] - SLACK - 1, 1.2 * s["delays_seconds"][retry] + TICK + SLACK)
                 for name, s in fitting.items() if retry < len(s["delays_seconds"])}
        if not bands:
            break
        before, moved, after, came = len(timeline.about(payout_id)), 0.0, 0.0, None
        for edge in sorted({e for band in bands.values() for e in band}):
            timeline.advance(edge - moved)
            moved = edge
            if len(timeline.settle(payout_id, before + 1, timeout=0.3)) > before:
                came = edge
                break
            after = edge
        if came is None:
            break
        fitting = {name: fitting[name] for name, (low, high) in bands.items() if low < came and after < high}
        expect(fitting, f"retry {retry + 1} came between {after:.0f} and {came:.0f} s after the previous attempt on"
                        " the organization's clock: outside the +/-20 percent band of every described schedule the"
                        f" earlier retries fitted ({_texts(dict(schedules), bands)})")
    timeline.advance(1.2 * max(max(s["delays_seconds"]) for _, s in schedules) + TICK + SLACK)
    attempts = len(timeline.settle(payout_id, len(timeline.about(payout_id)) + 1, timeout=0.3))
    expect(any(s["attempts"] == attempts for s in fitting.values()),
           f"the event was attempted {attempts} times, but its retry gaps fit only {_texts(fitting, fitting)}"
           f" ({sorted({s['attempts'] for s in fitting.values()})} attempts)")


@pytest.mark.req("WH-DEAD-DELIVERY", "WH-DELIVERY-FIELDS", "FEED-IS-RECORD", "WH-RETRY-SCHEDULE-ALT")
@pytest.mark.needs(*NEEDS)
def test_dead_delivery_stays_in_the_log_with_last_error(timeline: Timeline, unique) -> None:
    endpoint, _ = register(timeline.org.api, timeline.contract, timeline.box)
    timeline.box.fail_next(1000, status=503)
    payout_id = timeline.payout(unique)
    first = timeline.first_delivery(payout_id)
    for delay in ladder():
        timeline.advance(1.2 * delay + TICK + SLACK)
        timeline.settle(payout_id, len(timeline.about(payout_id)) + 1, timeout=0.3)
    attempts = len(timeline.about(payout_id))
    allowed = {s["attempts"] for s in run_contract().events["retry_schedules"].values()}
    expect(attempts in allowed, f"the event was attempted {attempts} times, not {sorted(allowed)} (either schedule)")
    timeline.advance(86400 * 7)
    later = timeline.settle(payout_id, attempts + 1, timeout=1.0)
    expect(len(later) == attempts, f"a dead delivery was retried again ({len(later) - attempts} more attempts)")
    event_id = first.header("whk-id")
    rows = [d for d in _deliveries(timeline, endpoint["id"]) if d.get("eventType") == "payout.pending"]
    expect(rows, f"the dead delivery of event {event_id} is gone from the delivery log")
    expect(all(d.get("lastError") for d in rows), f"a dead delivery has no `lastError`: {rows}")
    expect(all(isinstance(d.get(k), str) and d.get(k) for d in rows for k in ("id", "status", "createdAt")),
           f"a delivery row lacks `id`, `status` or `createdAt`: {rows}")
    expect(event_id in {e.get("id") for e in feed(timeline.org.api)}, f"event {event_id} left the feed")


@pytest.mark.req("WH-REPLAY-ONE", "EVT-HEADER-ID")
@pytest.mark.needs(*NEEDS)
def test_replay_resends_the_same_event_id(timeline: Timeline, operator, unique) -> None:
    endpoint, secret = register(timeline.org.api, timeline.contract, timeline.box)
    timeline.box.fail_next(1, status=500)
    payout_id = timeline.payout(unique)
    first = timeline.first_delivery(payout_id)
    timeline.advance(1.2 * ladder()[0] + TICK + SLACK)
    retried = timeline.settle(payout_id, 2)  # "at least once": the accepted retry may arrive twice
    expect(len(retried) >= 2 and all(d.header("whk-id") == first.header("whk-id") for d in retried),
           f"the retry carries whk-id {[d.header('whk-id') for d in retried]}, not the first attempt's")
    delivery = next(d for d in _deliveries(timeline, endpoint["id"]) if d.get("eventType") == "payout.pending")
    before = len(retried)
    operator.replay_webhook_delivery(timeline.org.org_id, endpoint["id"], delivery["id"])
    replayed = timeline.settle(payout_id, before + 1)
    expect(len(replayed) > before, "the replayed delivery was not re-sent")
    expect(replayed[before].header("whk-id") == first.header("whk-id"),
           f"the replay carries whk-id {replayed[before].header('whk-id')!r}, not {first.header('whk-id')!r}")
    verified(replayed[before], secret)


@pytest.mark.req("WH-REPLAY-BULK")
@pytest.mark.needs(*NEEDS)
def test_bulk_replay_requeues_failed_deliveries(timeline: Timeline, operator, unique) -> None:
    """Two deliveries answered 500 and a third accepted, all in the window: a bulk replay of the failed ones
    requeues the two, not the accepted one, and re-sends them with their `whk-id`."""
    endpoint, _ = register(timeline.org.api, timeline.contract, timeline.box)
    timeline.box.fail_next(2, status=500)
    payouts = [timeline.payout(unique) for _ in range(2)]
    for payout_id in payouts:
        timeline.first_delivery(payout_id)
    timeline.first_delivery(timeline.payout(unique))  # accepted: not `failed`
    answer, status = _bulk_replay(timeline, operator, endpoint["id"])
    requeued = answer.get("requeued")
    expect(isinstance(requeued, int) and (requeued == 2 or status == "all" and requeued >= 2),
           f"bulk replay of the window with `status: {status}` answered {answer}, not {{requeued: 2}}: of its three "
           "deliveries two failed and one was accepted (`all`, asked where deliveries awaiting a retry do not count "
           "as failed, may requeue other deliveries too)")
    for payout_id in payouts:
        again = timeline.settle(payout_id, 2)
        expect(len(again) >= 2 and len({d.header("whk-id") for d in again}) == 1,  # an accepted one may come twice
               f"payout {payout_id}: the bulk replay was not re-sent with the same whk-id")


def _hours_after(instant: Any, timestamp: str | None) -> float | None:
    """Hours from the Unix `timestamp` to the ISO 8601 `instant` (UTC when it names no offset); None when
    either is unreadable."""
    try:
        moment = datetime.fromisoformat(str(instant))
        return ((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp() - float(timestamp or "")) / 3600
    except ValueError:
        return None


def _expect_deadline_a_day_on(until: Any, during: Delivery) -> None:
    """`previousValidUntil` is when the old secret stops signing, 24 hours after the rotation: read against the
    `whk-timestamp` of the first delivery after it, with minutes of slack for that delivery's own wait."""
    hours = _hours_after(until, during.header("whk-timestamp"))
    expect(hours is not None and 24 - ROTATION_SLACK <= hours <= 24 + CLOCK_SLACK,
           f"WH-ROTATE-SECRET: \"the old secret keeps signing for 24 hours\", but rotation answered "
           f"`previousValidUntil: {until!r}`, " + (f"{hours:.2f} hours after" if hours is not None else
                                                    "no instant to compare with") +
           f" the first delivery after it (whk-timestamp {during.header('whk-timestamp')!r})")


@pytest.mark.smoke
@pytest.mark.req("WH-ROTATE-SECRET", "EVT-HEADER-SIGNATURE", "ROT-WEBHOOK-SECRET-OVERLAP")
@pytest.mark.needs(*NEEDS)
def test_rotation_signs_with_both_secrets_for_24_hours(timeline: Timeline, operator, unique) -> None:
    """"New secret, returned once with `previousValidUntil`; the old secret keeps signing for 24 hours, so every
    delivery carries two signatures": the new secret is not listed afterwards, `previousValidUntil` is 24 hours
    on, deliveries carry both signatures 23 hours on and only the new one past the 24 hours."""
    endpoint, old = register(timeline.org.api, timeline.contract, timeline.box)
    rotated = operator.rotate_webhook_secret(timeline.org.org_id, endpoint["id"])
    new = rotated.get("secret")
    expect(isinstance(new, str) and new.startswith("whsec_") and new != old,
           "rotation answered no new `whsec_` secret")
    expect(rotated.get("previousValidUntil"), "rotation answered no `previousValidUntil`")
    _, listed = endpoints_listed(timeline.org.api, timeline.contract)
    expect(new not in listed.text, "WH-ROTATE-SECRET: the new secret is \"returned once\", but the endpoint list "
                                   "shows it after the rotation", listed)
    during = timeline.first_delivery(timeline.payout(unique))
    _expect_deadline_a_day_on(rotated["previousValidUntil"], during)
    entries = (during.header("whk-signature") or "").split()
    expect(len([e for e in entries if e.startswith("v1,")]) == 2, f"during the overlap a delivery carries {entries}")
    expect(verified(during, [new, old]) == [new, old], "the two signatures are not by the new and the old secret")
    timeline.advance(23 * 3600)
    late = timeline.first_delivery(timeline.payout(unique))
    expect(verified(late, [new, old]) == [new, old], "23 hours after rotation the old secret no longer signs")
    timeline.advance(3600 + 120)
    after = timeline.first_delivery(timeline.payout(unique))
    expect(verified(after, [new, old]) == [new],
           "WH-ROTATE-SECRET: \"the old secret keeps signing for 24 hours\", but past the 24 hours a delivery is "
           f"still signed with it (whk-signature {after.header('whk-signature')!r})")


@pytest.mark.req("WH-ENABLED-PAUSED", "WH-ENABLED", "FEED-IS-RECORD")
@pytest.mark.needs(*NEEDS)
def test_paused_endpoint_receives_nothing_and_resumes_with_its_secret(timeline: Timeline, operator, unique) -> None:
    """The organization's only endpoint is paused: the payout's event reaches nobody, yet it is in the feed."""
    endpoint, secret = register(timeline.org.api, timeline.contract, timeline.box)
    operator.set_webhook_endpoint_enabled(timeline.org.org_id, endpoint["id"], False)
    paused = timeline.payout(unique)
    expect(not timeline.settle(paused, 1, timeout=1.0), "a paused endpoint received a delivery")
    fed = [e.get("type") for e in feed(timeline.org.api)
           if isinstance(e.get("data"), dict) and e["data"].get("payoutId") == paused]
    expect("payout.pending" in fed, f"FEED-IS-RECORD: the `payout.pending` of payout {paused}, recorded while the"
                                    f" only endpoint was paused, is not in the feed (its events there: {fed}): 'The"
                                    " feed is the record; a delivery can go missing, the feed cannot.'")
    operator.set_webhook_endpoint_enabled(timeline.org.org_id, endpoint["id"], True)
    verified(timeline.first_delivery(timeline.payout(unique)), secret)


@pytest.mark.req("WH-DELETE")
@pytest.mark.needs(*NEEDS)
def test_deleted_endpoint_is_gone(timeline: Timeline, operator, unique) -> None:
    endpoint, _ = register(timeline.org.api, timeline.contract, timeline.box)
    operator.delete_webhook_endpoint(timeline.org.org_id, endpoint["id"])
    listed, ex = endpoints_listed(timeline.org.api, timeline.contract)
    expect(endpoint["id"] not in listed, "a deleted endpoint is still listed", ex)
    gone = timeline.payout(unique)
    expect(not timeline.settle(gone, 1, timeout=1.0), "a deleted endpoint still received a delivery")


@pytest.mark.req("WH-BULK-REPLAY-LIMIT")
@pytest.mark.needs(*NEEDS)
def test_bulk_replay_requeues_at_most_1000(timeline: Timeline, operator, unique) -> None:
    """1,001 failed deliveries in the window (one failed attempt and 1,000 back-office copies of it, on a paused
    endpoint so nothing is sent): a bulk replay requeues at most 1,000."""
    endpoint, _ = register(timeline.org.api, timeline.contract, timeline.box)
    timeline.box.fail_next(1, status=500)
    timeline.first_delivery(timeline.payout(unique))
    limit = run_contract().events["bulk_replay_max"]
    operator.seed_webhook_deliveries(timeline.org.org_id, endpoint["id"], limit)
    operator.set_webhook_endpoint_enabled(timeline.org.org_id, endpoint["id"], False)
    answer, _ = _bulk_replay(timeline, operator, endpoint["id"])
    requeued = answer.get("requeued")
    expect(isinstance(requeued, int) and 0 < requeued <= limit,
           f"bulk replay of {limit + 1} failed deliveries answered {answer}, not up to {limit}")
