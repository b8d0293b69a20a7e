"""Events > Routing of events, Delivery and retries (rules 1 and 3); States > Payout (at-least-once events);
Endpoints > Webhook endpoint management (register through the dashboard).

Checkout-payment events reach only endpoints that list them; a new endpoint receives events recorded up to
about 10 minutes before its creation; without failures one endpoint receives a payout's events in increasing
`sequence`, each state change at least once; a delivery lands within about 15 seconds of the change.
"""

from __future__ import annotations

import time

import pytest

from payconform.suite import Contract, expect, expect_status

from .._support.answers import by_id, contains
from .._support.approvals import hold
from .._support.batches import cancel as cancel_run
from .._support.batches import create as create_run
from .._support.deliveries import endpoints_listed, kind, parsed, register, reused, verified, wait_for
from .._support.drive import Stage, Subject, settled
from .._support.events import feed, has
from .._support.payments import example_total, payment
from .._support.payouts import create_payout
from .._support.profile import success

NEEDS = ("api_key", "profile", "webhook_receiver")
BACKFILLED = 300  # seconds between the event and the endpoint's creation, well inside "about 10 minutes"
LANDS = 15  # "a dispatcher runs every 15 seconds, so a delivery lands within about 15 seconds"
SLACK = 10  # real seconds of tolerance for a delivery to cross the machine


def _paid(stage: Stage) -> Subject:
    _, paid = payment(stage.api, stage.contract, stage.unique, example_total(stage.contract, "paid"))
    return Subject("payment", paid["id"])


@pytest.mark.req("EVT-ROUTING-CHECKOUT-OPT-IN")
@pytest.mark.needs(*NEEDS)
def test_checkout_events_reach_only_endpoints_that_opted_in(stage: Stage, webhook_receiver_factory) -> None:
    """The stage's endpoint lists the checkout-payment events; a second one lists none and gets no
    `checkout_payment.paid`, though it gets the payout events of the same organization. The feed carries the
    paid event, filtered with `type` and without."""
    plain = webhook_receiver_factory()
    register(stage.api, stage.contract, plain)
    subject = _paid(stage)
    paid = parsed(stage.delivery_of("checkout_payment.paid", subject))
    payout_id = create_payout(stage.api, stage.contract, stage.unique).json["payoutId"]
    seen = wait_for(plain, lambda ds: any(Subject("payout", payout_id).delivered(d) for d in ds), stage.flush,
                    f"the `payout.pending` of payout {payout_id} at the endpoint that listed no events")
    leaked = [kind(d) for d in seen if subject.delivered(d)]
    expect(not leaked, f"an endpoint that listed no checkout-payment events received {leaked}")
    since = str(int(paid["sequence"]) - 1)
    typed = feed(stage.api, found=has(paid["id"]), since=since, type="checkout_payment.paid")
    expect(paid["id"] in by_id(typed), "the feed filtered with `type=checkout_payment.paid` lacks the paid event")
    # opt-in is for endpoints only: the feed is the record, so without a filter it carries the event as well
    expect(paid["id"] in by_id(feed(stage.api, found=has(paid["id"]), since=since)), "the feed without a `type` filter lacks the paid event")


@pytest.mark.req("EVT-ROUTING-DEFAULT")
@pytest.mark.needs(*NEEDS)
def test_approval_and_batch_events_reach_endpoints_that_did_not_list_them(stage: Stage) -> None:
    """The stage's endpoint lists only the checkout-payment events: a held payout's `payout_approval.pending`
    and a run's `payout_batch.canceled` (the run canceled as soon as it is made) reach it all the same
    ('Payout, batch, approval and endpoint events go to every endpoint by default')."""
    held = hold(stage.api, stage.contract, stage.unique)
    run = create_run(stage.api, stage.contract, stage.unique)
    expect_status(cancel_run(stage.api, run.id), success(stage.contract, "cancelPayoutBatch"),
                  "canceling a run just made")
    stage.delivery_of("payout_approval.pending", Subject("approval", held.approval_id))
    stage.delivery_of("payout_batch.canceled", Subject("batch", run.id))


@pytest.mark.smoke
@pytest.mark.req("EVT-BACKFILL")
@pytest.mark.needs(*NEEDS)
def test_a_new_endpoint_receives_recent_events(stage: Stage, webhook_receiver_factory) -> None:
    """An event recorded five minutes (on the clock; seconds without one) before an endpoint is registered
    still reaches it."""
    payout_id = create_payout(stage.api, stage.contract, stage.unique).json["payoutId"]
    if stage.clock is not None:
        stage.advance(BACKFILLED)
    late = webhook_receiver_factory()
    _, secret = register(stage.api, stage.contract, late)
    subject = Subject("payout", payout_id)
    seen = wait_for(late, lambda ds: any(subject.delivered(d) and kind(d) == "payout.pending" for d in ds),
                    stage.flush, f"the `payout.pending` of payout {payout_id}, recorded before the endpoint existed")
    verified(next(d for d in seen if subject.delivered(d)), secret)


@pytest.mark.req("WH-REGISTER")
@pytest.mark.needs("operator", "webhook_receiver", "api_key", "profile")
def test_dashboard_registration_returns_the_secret_once(stage: Stage, webhook_receiver_factory) -> None:
    """Registered through the dashboard (operator) with `events: [checkout_payment.paid]`: the secret comes
    once, the list shows the endpoint without it, and the opted-in event arrives signed with it."""
    box = webhook_receiver_factory()
    endpoint = stage.need_operator().register_webhook_endpoint(stage.org_id, box.url, ["checkout_payment.paid"])
    secret = endpoint.get("secret")
    expect(isinstance(secret, str) and secret.startswith("whsec_"), "the registration returned no `whsec_` secret")
    listed, ex = endpoints_listed(stage.api, stage.contract)
    expect(endpoint.get("id") in listed, f"the registered endpoint {endpoint.get('id')} is not listed", ex)
    expect(secret not in ex.text, "the endpoint list shows the signing secret again", ex)
    subject = _paid(stage)
    seen = wait_for(box, lambda ds: any(subject.delivered(d) for d in ds), stage.flush,
                    "the opted-in `checkout_payment.paid`")
    verified(next(d for d in seen if subject.delivered(d)), secret)


@pytest.mark.req("WH-AT-LEAST-ONCE", "PAYOUT-EVENTS-AT-LEAST-ONCE", "EVT-NO-NETWORK-NAMES", "CONV-MONEY-FEE-OBJECT",
                  "EVT-DATA-IMMUTABLE")
@pytest.mark.needs(*NEEDS)
@pytest.mark.timeout(300)  # without a clock: two delivery waits and the payout's walk in real time
def test_payout_events_arrive_once_each_in_sequence_order(stage: Stage, contract: Contract) -> None:
    """A payout walks its sandbox lifecycle with nothing failing (on the clock, or read in real time until it
    completes): every event of it in the feed reaches the endpoint, in increasing `sequence`, with the `data`
    the feed shows, built when the event was recorded; each payload's `status` is a word of the payout table and
    `fee` is `{amount, currency}`."""
    payout_id = create_payout(stage.api, contract, stage.unique).json["payoutId"]
    subject = Subject("payout", payout_id)
    stage.delivery_of("payout.pending", subject)
    settled(stage, subject, "completed")
    stage.delivery_of("payout.completed", subject)
    arrived = [parsed(d) for d in stage.box.snapshot() if subject.delivered(d)]
    since = min(int(b["sequence"]) for b in arrived) - 1
    fed = [e for e in feed(stage.api, found=has(*by_id(arrived)), since=str(since)) if subject.matches(e)]
    missing = [e.get("type") for e in fed if e.get("id") not in by_id(arrived)]
    expect(not missing, f"state changes of payout {payout_id} in the feed never reached the endpoint: {missing}")
    # the payout has moved on since its first events were recorded: their `data` stays as it was built then
    rebuilt = [e.get("type") for e in fed if e.get("id") in by_id(arrived)
               and not contains(e.get("data"), by_id(arrived)[e["id"]].get("data"))]
    expect(not rebuilt, f"EVT-DATA-IMMUTABLE: the feed's `data` of {rebuilt} of payout {payout_id} differs from the"
                        " delivered one: '`data` | Payload, built once when the event is recorded; the feed returns"
                        " the same object for the same id'")
    # "at least once": a duplicate may follow a later event, so the order is that of each event's first arrival
    order = [int(b["sequence"]) for b in by_id(arrived).values()]
    expect(order == sorted(order), f"without failures the events of payout {payout_id} first arrived in sequence "
                                   f"order {order}, not increasing (duplicates after later events are accepted)")
    states = contract.machine("payout")["states"]
    for body in arrived:
        data = body["data"]
        expect(data.get("status") in states, f"`{body['type']}` carries `status: {data.get('status')!r}`, not a"
                                             f" status of the payout table {states}")
        fee = data.get("fee")
        expect(isinstance(fee, dict) and isinstance(fee.get("amount"), str) and isinstance(fee.get("currency"), str),
               f"`{body['type']}` carries `fee: {fee!r}`, not an object with `amount` and `currency`")


@pytest.mark.req("WH-DISPATCH-15S")
@pytest.mark.needs(*NEEDS, "operator", "clock")
def test_a_delivery_lands_within_15_seconds_on_the_clock(stage: Stage) -> None:
    """Fifteen seconds on the organization's clock after a payout is created, its event has been sent (the
    wait that follows moves no clock)."""
    payout_id = create_payout(stage.api, stage.contract, stage.unique).json["payoutId"]
    subject = Subject("payout", payout_id)
    stage.advance(LANDS)
    seen = stage.box.wait_for(lambda ds: any(subject.delivered(d) for d in ds), 3)
    expect(any(subject.delivered(d) for d in seen), f"{LANDS} s on the clock after payout {payout_id} was created,"
                                                    " no delivery about it had landed")


@pytest.mark.smoke
@pytest.mark.req("WH-DISPATCH-15S")
@pytest.mark.needs(*NEEDS, "real_time")
def test_a_delivery_lands_within_15_seconds_in_real_time(api, contract: Contract, unique, webhook_receiver,
                                                         webhook_server) -> None:
    """Without touching any clock: the event of a new payout arrives within about 15 seconds."""
    _, _, box = reused(api, contract, webhook_server)
    payout_id = create_payout(api, contract, unique).json["payoutId"]
    subject, start = Subject("payout", payout_id), time.monotonic()
    seen = box.wait_for(lambda ds: any(subject.delivered(d) for d in ds), LANDS + SLACK)
    expect(any(subject.delivered(d) for d in seen),
           f"no delivery about payout {payout_id} within {time.monotonic() - start:.0f} s (about {LANDS} s promised)")
