"""States > Webhook endpoint: "After three dead deliveries and five days with no accepted delivery it is
disabled with `disabledReason: auto_disabled_after_failures`", on the operator clock.

Both clauses are checked, each where the other holds: an endpoint with fewer than three dead deliveries is not
disabled however long no delivery is accepted, and one with three or more is not disabled before five days
have passed; once both hold it is. The spec does not say when the five days start; every reading is accepted:
three dead deliveries are read as "not yet disabled" less than five days after the endpoint was registered,
and as "disabled" five days after the last delivery died, when the five days have passed on any reading
(since registration, since the first failure, or since the third delivery died). A delivery is dead once
every attempt of its schedule failed; the tests take every delivery made so far through the whole primary
schedule (the alternative one ends sooner).
"""

from __future__ import annotations

import pytest

from payconform.suite import Mailbox, expect

from .._support.answers import by_id
from .._support.clocked import DAY, SLACK, TICK, Timeline, ladder
from .._support.deliveries import about, awaited, checked, endpoints_listed, kind, register
from .._support.events import feed
from .._support.scenario_outcomes import SKIPS_PROCESSING

NEEDS = ("api_key", "profile", "webhook_receiver", "operator", "clock")
QUIET = 5 * DAY  # "five days with no accepted delivery"
BEFORE_QUIET = QUIET - DAY / 4  # when the endpoint is read before the five days have passed on any reading
DISABLED = "auto_disabled_after_failures"


def _through_the_schedule(timeline: Timeline) -> None:
    """Move the clock through every retry delay of the primary schedule at its longest (+20 percent jitter, a
    dispatcher period): each delivery made before is dead once the dispatcher has run after the last move."""
    for delay in ladder():
        timeline.advance(1.2 * delay + TICK + SLACK)
        timeline.flush()


def _events_refused(box: Mailbox) -> set[str | None]:
    """The events (`whk-id`) whose attempts the mailbox refused, each counted once however many attempts it had:
    those whose deliveries can die. (An event of a type the spec does not name is answered 2xx, as a receiver
    must: an accepted delivery.)"""
    return {d.header("whk-id") for d in box.snapshot() if not 200 <= d.answered < 300}


def _disabled_reason(timeline: Timeline, endpoint_id: str) -> object:
    endpoints, _ = endpoints_listed(timeline.org.api, timeline.contract)
    return endpoints.get(endpoint_id, {}).get("disabledReason")


@pytest.mark.req("WH-AUTO-DISABLE")
@pytest.mark.needs(*NEEDS)
def test_fewer_than_three_dead_deliveries_never_disable(timeline: Timeline, unique) -> None:
    """A payout of scenario 0002 (pending, completed: two events) to an endpoint that answers every attempt 500:
    both deliveries die, and no delivery is accepted for more than eight days after the endpoint was registered.
    The endpoint is not disabled, and a later event still reaches it. A target that sent the endpoint three
    events or more cannot show this clause with that payout: the test is skipped, saying so."""
    endpoint, _ = register(timeline.org.api, timeline.contract, timeline.box)
    timeline.box.fail_next(10_000, status=500)
    timeline.first_delivery(timeline.payout(unique, SKIPS_PROCESSING))
    _through_the_schedule(timeline)
    timeline.advance(QUIET + TICK + SLACK)
    timeline.flush()
    dead = _events_refused(timeline.box)
    if len(dead) >= 3:
        pytest.skip(f"the endpoint was sent {len(dead)} events for one payout of scenario {SKIPS_PROCESSING} "
                    "(pending, completed): fewer than three dead deliveries cannot be arranged with it")
    days = timeline.advanced / DAY
    reason = _disabled_reason(timeline, endpoint["id"])
    expect(not reason, f"{days:.1f} days after registration, with {len(dead)} dead deliveries, the endpoint reads "
                       f"`disabledReason: {reason!r}`; it is disabled only after three dead deliveries")
    later = timeline.payout(unique, SKIPS_PROCESSING)
    seen = awaited(timeline.box, lambda ds: any(about(d, "payoutId", later) for d in ds), timeline.flush)
    expect(any(about(d, "payoutId", later) for d in seen),
           f"{days:.1f} days after registration, with {len(dead)} dead deliveries, the endpoint no longer receives "
           f"deliveries (the event of payout {later} did not reach it): it was switched off before three dead "
           "deliveries")


@pytest.mark.smoke
@pytest.mark.req("WH-AUTO-DISABLE", "EVT-ENDPOINT-DISABLED", "WH-DISABLED-EVENT-OTHERS",
                 "WH-DISABLED-EVENTS-RECORDED", "WH-RESUME-CLEARS-HEALTH", "WH-ENABLED")
@pytest.mark.needs(*NEEDS)
def test_auto_disable_after_three_dead_deliveries_and_five_days(timeline: Timeline, operator, unique,
                                                                 webhook_receiver_factory) -> None:
    """Three payouts to an endpoint that answers every attempt 500: their deliveries die within four days, and
    the endpoint is not disabled before five days have passed; five days after the last died it is, the other
    endpoint receives `webhook_endpoint.disabled` (in the feed too), events of the disabled period are recorded
    but not sent, and resuming clears the endpoint's health."""
    api = timeline.org.api
    failing, _ = register(api, timeline.contract, timeline.box)
    other_box = webhook_receiver_factory()
    _, other_secret = register(api, timeline.contract, other_box)
    timeline.box.fail_next(10_000, status=500)
    payouts = [timeline.payout(unique) for _ in range(3)]
    for payout_id in payouts:
        timeline.first_delivery(payout_id)
    _through_the_schedule(timeline)
    timeline.advance(BEFORE_QUIET - timeline.advanced)
    timeline.flush()
    early, dead = _disabled_reason(timeline, failing["id"]), len(_events_refused(timeline.box))
    expect(not early, f"{timeline.advanced / DAY:.2f} days after registration, with the deliveries of {dead} events "
                      f"dead, the endpoint reads `disabledReason: {early!r}`; it is disabled only after five days with "
                      "no accepted delivery")
    timeline.advance(QUIET + TICK + SLACK)
    timeline.flush()
    disabled = _disabled_reason(timeline, failing["id"])
    expect(disabled == DISABLED, f"{timeline.advanced / DAY:.1f} days after registration, with the deliveries of "
                                 f"{len(_events_refused(timeline.box))} events dead, the endpoint reads "
                                 f"`disabledReason: {disabled!r}`, not `{DISABLED}`")
    notice = other_box.wait_for(lambda ds: any(b"webhook_endpoint.disabled" in d.body for d in ds), 5,
                                flush=timeline.flush)
    announced = [d for d in notice if kind(d) == "webhook_endpoint.disabled"]
    expect(announced, "the other endpoint received no `webhook_endpoint.disabled`")
    body = checked(announced[0], other_secret, "webhook_endpoint.disabled")
    expect(body["id"] in by_id(feed(api, type="webhook_endpoint.disabled")),
           "the feed has no row for the delivered `webhook_endpoint.disabled`")
    sent_before = len(timeline.box.snapshot())
    quiet = timeline.payout(unique)
    other_box.wait_for(lambda ds: any(about(d, "payoutId", quiet) for d in ds), 5, flush=timeline.flush)
    expect(len(timeline.box.snapshot()) == sent_before, "the disabled endpoint still received deliveries")
    expect(any(isinstance(e.get("data"), dict) and e["data"].get("payoutId") == quiet for e in feed(api)),
           "an event of the disabled period is missing from the feed")
    resumed = operator.set_webhook_endpoint_enabled(timeline.org.org_id, failing["id"], True)
    expect(not resumed.get("disabledReason") and not resumed.get("consecutiveFailures"),
           f"resuming did not clear the endpoint's health: {resumed}")
