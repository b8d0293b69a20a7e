"""States and transitions > Payout: the table walked row by row, on the organization's clock.

Each payout is made in a fresh organization whose clock the test moves (or, where the walk is short and its
requirement needs no clock, on the target's own organization in real time: a row walked until its move is
seen, read every profile step), and read through
`GET /orders/{payoutId}` after every step. The sandbox scenario that drives a row (the last four characters of
the account identifier) and the timing come from the profile, since the spec shows neither; the rows, the
states and the moves a reader may see come from `contract/catalog/transitions.yaml`.
"""

from __future__ import annotations

import itertools

import pytest

from payconform.suite import Contract, expect, expect_status

from .._support.machines import (
    REREAD,
    RETURNED,
    expect_forward_only,
    first,
    path,
    scenario_rows,
    scenario_walk,
    unseen_state,
)
from .._support.payouts import (
    DEFAULT,
    as_created,
    cancel_payout,
    create_payout,
    create_self_funded,
    read_payout,
    timeline,
    tx_hash,
)
from .._support.realtime import REAL_TIME, Timed
from .._support.scenario_outcomes import mismatch_unless_in_scenario, one_reading
from .._support.types import Unique

ROWS = scenario_rows()
# the tests that read a walk of their scenario (`scenario_walk`) run on one worker, so that each scenario is
# walked once in real time: the first to read one walks every scenario the selected tests name (`payout_walk`)
# side by side, and may wait out the longest (a bank return comes 90 s after creation, read three times a step
# for the repeated reads, on a key other tests are spending too)
WALKS = pytest.mark.xdist_group("payout-scenario-walks")
WALK = pytest.mark.payout_walk
WALK_TIME = pytest.mark.timeout(300)


def _case_id(case: tuple[dict, str, bool]) -> str:
    row, scenario, expected = case
    return f"{row['id']}-{scenario}" + ("" if expected else "-skipped")


@WALKS
@WALK_TIME
@pytest.mark.req("ORDER-READ", "PAYOUT-ONLY-FORWARD-FROM-COMPLETED")
@pytest.mark.needs("profile")
@pytest.mark.parametrize("scenario", [pytest.param(s, marks=WALK(s, reads=REREAD)) for s in (DEFAULT, RETURNED)])
def test_repeated_reads_never_go_backwards(scenario: str, timed: Timed, contract: Contract, unique: Unique) -> None:
    """Read three times after every step, the payout is never seen in an earlier state than before (in real
    time, until it has completed, and for scenario 0004 come back: the worker's walk of the scenario). A run on
    one key that is not deep reads once a step (`machines.plan_walks`): every read still follows the last."""
    _, readings = scenario_walk(timed, contract, unique, scenario, reads_per_step=REREAD)
    expect_forward_only(readings, contract)


@WALKS
@WALK_TIME
@pytest.mark.smoke(ids=[
    "PAYOUT-T-RETURNED-0004", "PAYOUT-T-PROCESSING-default", "PAYOUT-T-FAILED-0003", "PAYOUT-T-COMPLETED-default"
])
@pytest.mark.parametrize("case", [
    pytest.param(c, marks=[pytest.mark.req(c[0]["id"], "PAYOUT-STATES"),
                           *([WALK(c[1])] if c[2] else [pytest.mark.needs("operator", "clock")])], id=_case_id(c))
    for c in ROWS])
@pytest.mark.needs("profile")
def test_transition_row(case: tuple[dict, str, bool], timed: Timed, contract: Contract, unique: Unique) -> None:
    """The row's move is seen in its scenario (or, for a scenario that skips it, its state never is, which takes
    the whole settle time: on the clock only); every state seen is one of the spec's and every change is a move
    of the table. In real time the walk is the worker's one of the scenario (`machines.scenario_walk`). A move
    into a state the spec lets a payout skip or hold briefly that the walk did not see is judged by
    `machines.unseen_state`: not observed in real time, read again finely on the clock."""
    row, scenario, expected = case

    def moved(readings: list) -> bool:
        return any(a in row["from"] and b == row["to"] for a, b in itertools.pairwise(path(readings)))

    _, readings = scenario_walk(timed, contract, unique, scenario)
    mismatch_unless_in_scenario(timed.api, timed.clock, timed.org_id, contract, unique, scenario, readings)
    seen = path(readings)
    states = contract.machine("payout")["states"]
    expect(all(s in states for s in seen), f"statuses seen {seen} include one outside {states}", readings[-1].ex)
    expect_forward_only(readings, contract)
    if expected:
        if not moved(readings) and any(r.late for r in readings):
            pytest.skip(f"the walk's reads of scenario {scenario!r} were answered more than a profile step after "
                        "their instants, counted from the payout's creation (the key's minute was spent by other "
                        f"tests): a {row['to']!r} held for a step may have gone unseen, so the row is not judged in "
                        "this run")
        if not moved(readings) and row.get("sandbox", {}).get("skipped_by"):
            unseen_state(timed, contract, unique, scenario, row, readings)
        expect(moved(readings),
               f"in sandbox scenario {scenario!r} the payout went {' -> '.join(map(str, seen))}; the row "
               f"{row['from']} -> {row['to']!r} was never seen", readings[-1].ex)
    else:
        expect(row["to"] not in seen,
               f"sandbox scenario {scenario!r} skips {row['to']!r}, but the payout went {' -> '.join(map(str, seen))}",
               readings[-1].ex)


@pytest.mark.smoke
@pytest.mark.req("PAYOUT-T-CREATE")
@pytest.mark.needs("profile")
def test_accepted_payout_is_pending(api, contract: Contract, unique: Unique) -> None:
    """A payout accepted without approval starts `pending`, with `completedAt` still null (read from the create
    answer where it says so, else from GET /orders/{payoutId}: the create answer's body is not shown)."""
    ex = create_payout(api, contract, unique)
    payout = as_created(api, ex)
    expect(payout.get("status") == "pending", f"the accepted payout is {payout.get('status')!r}, not 'pending'", ex)
    expect(payout.get("completedAt") is None, "a pending payout already has a `completedAt`", ex)


@WALKS
@WALK_TIME
@WALK(DEFAULT)
@pytest.mark.req("PAYOUT-COMPLETED-AT", "PAYOUT-T-COMPLETED")
@pytest.mark.needs("profile")
def test_completed_at_is_null_until_completed(timed: Timed, contract: Contract, unique: Unique) -> None:
    """`completedAt` is null on every read before `completed` and an instant from then on: a payout on
    the target's organization, read every step in real time until two reads find it completed (the worker's walk
    of the default scenario, `machines.scenario_walk`)."""
    _, readings = scenario_walk(timed, contract, unique, DEFAULT,
                                until=lambda rs: sum(r.status == "completed" for r in rs) >= 2)
    done = first(readings, "completed")
    expect(done is not None, f"the payout never completed: {path(readings)}", readings[-1].ex)
    for r in readings:
        stamp = r.body.get("completedAt")
        if r.status == "completed":
            expect(isinstance(stamp, str) and stamp, f"a completed payout has completedAt {stamp!r}", r.ex)
        else:
            expect(stamp is None, f"a {r.status!r} payout has completedAt {stamp!r}; it is null until completed", r.ex)


@WALKS
@WALK_TIME
@WALK("0003")
@pytest.mark.req("PAYOUT-T-FAILED", "PAYOUT-FAILURE-CODE", "PAYOUT-FUNDS-RETURNED", "PAYOUT-COMPLETED-AT-FAILED-CANCELED")
@pytest.mark.needs("profile")
def test_failed_payout_names_its_failure(timed: Timed, contract: Contract, unique: Unique) -> None:
    """A payout that cannot be paid ends `failed` with a `failureCode`, a boolean `fundsReturned` and no
    `completedAt` (in real time, read until it has failed: the worker's walk of scenario 0003)."""
    _, readings = scenario_walk(timed, contract, unique, "0003")
    mismatch_unless_in_scenario(timed.api, timed.clock, timed.org_id, contract, unique, "0003", readings)
    last = readings[-1]
    expect(last.status == "failed", f"scenario 0003 went {path(readings)}; it does not end 'failed'", last.ex)
    code = last.body.get("failureCode")
    expect(isinstance(code, str) and code, f"the failed payout has failureCode {code!r}", last.ex)
    expect(isinstance(last.body.get("fundsReturned"), bool),
           f"the failed payout has fundsReturned {last.body.get('fundsReturned')!r}, not a boolean", last.ex)
    expect(last.body.get("completedAt") is None,
           f"the failed payout has completedAt {last.body.get('completedAt')!r}; it stays null", last.ex)


@WALKS
@WALK_TIME
@WALK("0003")
@pytest.mark.req("ERR-ACCEPTED-FAILED-NOT-ERROR")
@pytest.mark.needs("profile")
def test_a_failed_payout_is_not_an_error_response(timed: Timed, contract: Contract, unique: Unique) -> None:
    """The failed payout is read with a 2xx answer carrying `status: failed` and `failureCode`, never an error body
    (in real time, once the worker's walk of scenario 0003 has seen it fail)."""
    api, clock = timed.api, timed.clock
    if clock is REAL_TIME:
        payout_id, _ = scenario_walk(timed, contract, unique, "0003")
    else:
        payout_id = create_payout(api, contract, unique, "0003").json["payoutId"]
        clock.advance(api.org_id, float(timeline(contract)["settle_seconds"]))
    ex = api.op("getOrder", payoutId=payout_id)
    expect_status(ex, {200}, "reading a payout that failed after it was accepted")
    mismatch_unless_in_scenario(api, clock, timed.org_id, contract, unique, "0003", one_reading(ex))
    expect(isinstance(ex.json, dict) and ex.json.get("status") == "failed" and ex.json.get("failureCode"),
           "the read of a failed payout does not carry `status: failed` with a `failureCode`", ex)


@WALKS
@WALK_TIME
@WALK(RETURNED)
@pytest.mark.req("PAYOUT-T-RETURNED", "PAYOUT-RETURN-BODY", "PAYOUT-COMPLETED-AT-RETURNED",
                 "PAYOUT-COMPLETED-NOT-TERMINAL", "PAYOUT-FAILURE-CODE")
@pytest.mark.needs("profile")
def test_bank_return_after_completion(timed: Timed, contract: Contract, unique: Unique) -> None:
    """A completed payout the bank sends back reads `status: failed`, `failureCode: returned_by_bank`,
    `fundsReturned: true`, and keeps the `completedAt` it had (in real time, read until it has come back: the
    worker's walk of scenario 0004)."""
    _, readings = scenario_walk(timed, contract, unique, RETURNED)
    mismatch_unless_in_scenario(timed.api, timed.clock, timed.org_id, contract, unique, RETURNED, readings)
    done, last = first(readings, "completed"), readings[-1]
    expect(done is not None, f"scenario 0004 went {path(readings)}; it never completed", last.ex)
    returned = contract.machine("payout")["returned"]
    got = {k: last.body.get(k) for k in returned}
    expect(got == returned, f"after the bank return the payout reads {got}, expected {returned}", last.ex)
    expect(last.body.get("completedAt") == done.body.get("completedAt"),
           f"completedAt was {done.body.get('completedAt')!r} when completed and is "
           f"{last.body.get('completedAt')!r} after the return; a returned payload keeps it", last.ex)


@pytest.mark.req("PAYOUT-TERMINAL")
@pytest.mark.needs("operator", "clock", "profile")
@pytest.mark.parametrize("scenario", ["0003", "0004"])
def test_failed_and_returned_are_final(scenario: str, fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """Days after a payout failed or was returned, it still reads the same final state."""
    org = fresh_org()
    payout_id = create_payout(org.api, contract, unique, scenario).json["payoutId"]
    tl = timeline(contract)
    clock.advance(org.org_id, float(tl["settle_seconds"]))
    settled = read_payout(org.api, payout_id)
    mismatch_unless_in_scenario(org.api, clock, org.org_id, contract, unique, scenario, one_reading(settled))
    before = settled.json
    clock.advance(org.org_id, float(tl["terminal_check_seconds"]))
    after = read_payout(org.api, payout_id)
    keys = ("status", "failureCode", "fundsReturned")
    expect(before.get("status") in contract.machine("payout")["terminal"],
           f"scenario {scenario} reads {before.get('status')!r} once settled, not a final state", after)
    expect({k: after.json.get(k) for k in keys} == {k: before.get(k) for k in keys},
           f"a final payout changed: {[before.get(k) for k in keys]} became {[after.json.get(k) for k in keys]}",
           after)


@pytest.mark.req("PAYOUT-TERMINAL")
@pytest.mark.needs("crypto_key", "profile")
def test_a_canceled_payout_stays_canceled_when_funds_arrive(api_as, contract: Contract, unique: Unique) -> None:
    """A payout canceled while awaiting the organization's own funds is final ("Terminal: `failed`, returned and
    `canceled`"): a funding confirmation sent afterwards (its answer is not judged: a refusal or a no-op) leaves
    it `canceled`."""
    api = api_as("crypto_key")
    payout_id = as_created(api, create_self_funded(api, contract, unique))["payoutId"]
    cancel_payout(api, payout_id, "canceling a payout awaiting the organization's own funds")
    funding = api.op("confirmPayoutFunding", payoutId=payout_id, json={"transactionHash": tx_hash()})
    after = read_payout(api, payout_id)
    expect(after.json.get("status") == "canceled",
           f"PAYOUT-TERMINAL: a canceled payout is final (\"Terminal: `failed`, returned and `canceled`\"), but after "
           f"a funding confirmation (answered {funding.status}) it reads {after.json.get('status')!r}", after)
