"""States and transitions > Checkout payment: every row, parametrized from
`contract/catalog/transitions.yaml` (machine `checkout_payment`), and the rule that a forced outcome goes
through the same status-guarded transition as the sandbox timeline.

Time-driven rows (`.02` settles within twenty seconds, `.04` is charged back after one minute) run against
a fresh organization whose clock the operator moves (without one, a delay short enough is waited out on the
target's own organization). The full list of status values is not shown, so only
`pending` and `paid` are required by name; a forced outcome must answer `moved: true` and leave `paid` or
`pending` (and a full refund must bring `refundedBase` to `amountBase`).

"Charged back one minute later (`checkout_payment.reversed`)" is read as about a minute: the `.04` payment
must still read `paid` `ABOUT` seconds before the minute and have left it `ABOUT` seconds after, its
`checkout_payment.reversed` recorded (the feed on the clock, a delivery in real time).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from payconform.suite import Api, Contract, expect, expect_status, run_contract

from .._support.deliveries import kind, reused, wait_for
from .._support.drive import Subject
from .._support.events import feed
from .._support.payments import example_total, force, forced, payment, read_payment
from .._support.realtime import REAL_WAIT, Timed, next_step, waits_minutes

SEEN = ("pending", "paid")
SLACK = 8  # seconds of tolerance around the sandbox delays for real-time runs (reads, scheduling)
ABOUT = 15  # "one minute later": a quarter-minute either side, the dispatcher's period (a chargeback at 45-75 s)
CHARGED_BACK = 60 + ABOUT + 1  # seconds after which the `.04` timeline has run on any reading of "one minute"


def _rows() -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in run_contract().machine("checkout_payment")["rows"]}


def _scenarios() -> list[Any]:
    """Each scenario of the row; one whose delay is longer than a test may wait in real time needs the clock."""
    row = _rows()["PAY-T-SIMULATE"]
    return [pytest.param(s, id=s["total"], marks=[] if 0 < _timeline_delay(s) <= REAL_WAIT
                         else [pytest.mark.needs("operator", "clock")]) for s in row["scenarios"]]


def _forced() -> list[Any]:
    """The forced rows, each also PAY-FORCE's ("Body: `action` in `chargeback`, `refund`, `fail`")."""
    return [pytest.param(row, id=row["id"], marks=pytest.mark.req(row["id"], "PAY-FORCE"))
            for row in _rows().values() if row.get("action")]


def _timeline_delay(scenario: dict) -> float:
    return float(scenario.get("within_seconds") or scenario.get("after_seconds") or 0)


@pytest.mark.req("PAY-T-SIMULATE", "SBX-PAYMENT-TIMING")
@pytest.mark.parametrize("scenario", _scenarios())
def test_simulated_payment_timeline(scenario: dict, timed: Timed, contract: Contract, unique) -> None:
    """Simulate on a link whose total picks the scenario: the status at once; before the delay is over
    unchanged, and after it the `then` status (or unchanged). The `.02` payment may settle at any moment of its
    twenty seconds; the `.04` chargeback comes about a minute later (`ABOUT`), recorded as its event. A short
    delay passes in real time on the target's own organization where there is no clock."""
    org, clock = timed, timed.clock
    link_id, paid = payment(org.api, contract, unique, example_total(contract, scenario["total"]))
    expect(paid.get("status") == scenario["to"],
           f"a payment on a {scenario['total']} total answered status {paid.get('status')!r}, not `{scenario['to']}`")
    delay, then = _timeline_delay(scenario) or 60.0, scenario.get("then")
    if then == "paid":  # "over the next twenty seconds" allows settling at any moment
        clock.advance(org.org_id, delay + 1)
        later = read_payment(org.api, contract, link_id, paid["id"])
        expect(later.get("status") == "paid", f"{delay + 1:.0f} s after it was simulated the `.02` payment reads"
               f" {later.get('status')!r}; it settles to `paid` within {delay:.0f} s")
        return
    early, late = (delay - ABOUT, delay + ABOUT + 1) if then else (delay / 2, delay + 1)
    clock.advance(org.org_id, early)
    before = read_payment(org.api, contract, link_id, paid["id"])
    rule = f"the spec moves it only after about {delay:.0f} s" if then else "an ordinary payment stays where it is"
    expect(before.get("status") == scenario["to"], f"{early:.0f} s later the payment reads {before.get('status')!r};"
           f" {rule}")
    clock.advance(org.org_id, late - early)
    later = read_payment(org.api, contract, link_id, paid["id"])
    if not then:
        expect(later.get("status") == "paid", f"an ordinary payment moved to {later.get('status')!r} on its own")
        return
    expect(later.get("status") not in SEEN, f"{late:.0f} s after a `.04` payment it still reads"
           f" {later.get('status')!r}; it is charged back about one minute later")
    expect(_recorded(org.api, scenario["event"], paid["id"]),
           f"{late:.0f} s after a `.04` payment it reads {later.get('status')!r} but the feed holds no"
           f" `{scenario['event']}` about it; the chargeback is announced as `{scenario['event']}`")


def _recorded(api: Api, type_: str, payment_id: str) -> bool:
    """Whether the event feed (the record) holds a `type_` event about the payment: its id anywhere in `data`,
    whose shape is not shown. Read on a fresh organization, whose feed is short."""
    subject = Subject("payment", payment_id)
    return any(subject.matches(e) for e in feed(api, type=type_, found=lambda rows: any(map(subject.matches, rows))))


@pytest.mark.smoke
@pytest.mark.parametrize("row", _forced())
def test_forced_outcome(row: dict, api: Api, contract: Contract, unique) -> None:
    """Force the row's outcome on a payment in its `from` state: `moved: true`, the payment leaves that
    state, and the authoritative read agrees (a forced refund refunds in full)."""
    link_id, paid, ex = forced(api, contract, unique, example_total(contract, row["from_total"]), row["action"])
    origin = paid.get("status")
    expect_status(ex, 200, f"forcing `{row['action']}` on a {origin} payment")
    expect(ex.json.get("moved") is True, f"forcing `{row['action']}` answered moved {ex.json.get('moved')!r}", ex)
    after = read_payment(api, contract, link_id, paid["id"])
    expect(after.get("status") not in SEEN,
           f"after a forced `{row['action']}` the payment reads {after.get('status')!r}, still a live status", ex)
    if row["action"] == "refund":
        expect(after.get("refundedBase") == after.get("amountBase"), f"a forced refund left refundedBase"
               f" {after.get('refundedBase')!r} of amountBase {after.get('amountBase')!r}; it refunds in full", ex)


@pytest.mark.req("PAY-FORCE-SAME-GUARD", "PAY-FORCE-MOVED")
@waits_minutes
def test_forced_chargeback_and_timeline_move_once(slow_timed, contract: Contract, unique) -> None:
    """A `.04` payment charged back by force, then the minute passes: the timeline does not move it again
    (a second forced chargeback answers `moved: false`, status unchanged). On a fresh organization's clock, or
    in real time on the target's own organization (the payment is on the test's own link)."""
    org = slow_timed(CHARGED_BACK)
    _, paid = payment(org.api, contract, unique, example_total(contract, "charged_back"))
    first = force(org.api, paid["id"], "chargeback")
    expect_status(first, 200, "forcing a chargeback on a paid `.04` payment")
    expect(first.json.get("moved") is True, f"the forced chargeback answered moved {first.json.get('moved')!r}", first)
    next_step(org.clock, org.org_id, CHARGED_BACK, time.monotonic(), CHARGED_BACK)
    again = force(org.api, paid["id"], "chargeback")
    expect_status(again, 200, "forcing a chargeback again after the timeline's minute")
    expect(again.json.get("moved") is False, "after a forced chargeback and the timeline's minute, another chargeback"
           f" answered moved {again.json.get('moved')!r}: the payment was reversed twice", again)
    expect(again.json.get("status") == first.json.get("status"),
           f"the status moved from {first.json.get('status')!r} to {again.json.get('status')!r}", again)
    subject = Subject("payment", paid["id"])
    reversed_ids = {e.get("id") for e in feed(org.api, type="checkout_payment.reversed") if subject.matches(e)}
    expect(len(reversed_ids) == 1,
           f"PAY-FORCE-SAME-GUARD: \"forcing a chargeback and letting the timeline run yields exactly one "
           f"`checkout_payment.reversed`\", but the event feed holds {len(reversed_ids)} about the payment", again)


@pytest.mark.req("PAY-FORCE-SAME-GUARD", "PAY-FORCE-MOVED")
@waits_minutes
def test_timeline_chargeback_then_forced_does_not_move(slow_timed, contract: Contract, unique) -> None:
    """A `.04` payment left to the timeline for a minute is charged back; a forced chargeback afterwards
    answers `moved: false` and changes nothing. On a fresh organization's clock, or in real time on the
    target's own organization (the payment is on the test's own link)."""
    org = slow_timed(CHARGED_BACK)
    link_id, paid = payment(org.api, contract, unique, example_total(contract, "charged_back"))
    next_step(org.clock, org.org_id, CHARGED_BACK, time.monotonic(), CHARGED_BACK)
    before = read_payment(org.api, contract, link_id, paid["id"])
    ex = force(org.api, paid["id"], "chargeback")
    expect_status(ex, 200, "forcing a chargeback after the timeline's")
    expect(ex.json.get("moved") is False,
           f"a chargeback forced after the timeline's chargeback answered moved {ex.json.get('moved')!r}", ex)
    expect(ex.json.get("status") == before.get("status"),
           f"the status moved from {before.get('status')!r} to {ex.json.get('status')!r}", ex)


def _poll(api: Api, contract: Contract, link_id: str, payment_id: str, until: float, stop: Any) -> dict[str, Any]:
    """Read the payment every two seconds until `stop(payment)` or `until` (monotonic seconds) passes."""
    while True:
        got = read_payment(api, contract, link_id, payment_id)
        if stop(got) or time.monotonic() >= until:
            return got
        time.sleep(2)


@pytest.mark.smoke
@pytest.mark.needs("real_time")
@pytest.mark.req("PAY-T-SIMULATE", "SBX-PAYMENT-TIMING")
def test_pending_settles_in_real_time(api: Api, contract: Contract, unique) -> None:
    """Without a clock: a `.02` payment is `pending`, then `paid` within twenty seconds (plus a read's slack)."""
    start = time.monotonic()
    link_id, paid = payment(api, contract, unique, example_total(contract, "settles_later"))
    expect(paid.get("status") == "pending", f"a `.02` payment answered status {paid.get('status')!r}")
    got = _poll(api, contract, link_id, paid["id"], start + 20 + SLACK, lambda p: p.get("status") == "paid")
    expect(got.get("status") == "paid", f"{time.monotonic() - start:.0f} s later the `.02` payment reads"
           f" {got.get('status')!r}; it settles to `paid` within twenty seconds")


@pytest.mark.needs("real_time", "webhook_receiver")
@pytest.mark.req("PAY-T-SIMULATE", "SBX-PAYMENT-TIMING")
@pytest.mark.timeout(300)  # up to a minute and a quarter of real time, then a delivery wait
def test_chargeback_after_a_minute_in_real_time(api: Api, contract: Contract, unique, webhook_receiver,
                                                webhook_server) -> None:
    """Without a clock: a `.04` payment stays `paid` until about a minute has passed, then is charged back
    and its `checkout_payment.reversed` is delivered (to the worker's endpoint: on the target's own
    organization the feed is too long to read whole)."""
    _, _, box = reused(api, contract, webhook_server)
    start = time.monotonic()
    link_id, paid = payment(api, contract, unique, example_total(contract, "charged_back"))
    early = _poll(api, contract, link_id, paid["id"], start + 60 - ABOUT, lambda p: p.get("status") != "paid")
    expect(early.get("status") == "paid", f"{time.monotonic() - start:.0f} s after it was paid the `.04` payment"
           f" reads {early.get('status')!r}; the chargeback comes about one minute later")
    late = _poll(api, contract, link_id, paid["id"], start + 60 + ABOUT + SLACK, lambda p: p.get("status") not in SEEN)
    expect(late.get("status") not in SEEN, f"{time.monotonic() - start:.0f} s after it was paid the `.04` payment"
           f" still reads {late.get('status')!r}; it is charged back about one minute later")
    subject = Subject("payment", paid["id"])
    wait_for(box, lambda ds: any(subject.delivered(d) and kind(d) == "checkout_payment.reversed" for d in ds),
             None, f"the `checkout_payment.reversed` of the charged-back `.04` payment {paid['id']}")
