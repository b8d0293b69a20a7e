"""Endpoints > Balance and ledger, the balance history rules, beyond top-ups and payouts from the balance.

"Entries are added for a completed deposit to the funding account (never while pending) ... a payout rejected
by compliance stays debited. A payout funded from the own wallet, including one canceled before funding, adds
nothing; movements on networks whose balance is not tracked add nothing, and `balanceAfter` is then withheld
under a `note`. If `available` on the balance is lower than movements explain, the difference is a hold
listed in the balance transactions." Entries are counted by `type` and `status` ("Other entry fields: not
shown"). The sandbox inputs are the operator's (a deposit that completes later, a movement on an untracked
network, a hold) and the profile's (`sandbox.payout_scenarios`: the scenario rejected by compliance;
`sandbox.self_funded`: a crypto payout made with a key holding `crypto_payouts`).
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest

from payconform.suite import Api, Contract, Pager, Walk, expect, expect_status

from .._support.answers import null_or_absent
from .._support.balance import CACHE_SECONDS, figures, read_balance, top_up
from .._support.money import as_decimal
from .._support.payouts import cancel_payout, create_payout, create_self_funded, read_payout, timeline, tx_hash
from .._support.scenario_outcomes import mismatch_unless_in_scenario, one_reading
from .._support.types import Unique

CRYPTO_SCOPES = ("read", "write", "crypto_payouts")


def _history(api: Api, contract: Contract) -> Walk:
    return Pager(api, contract, "getBalanceHistory").walk(500)


def _kinds(api: Api, contract: Contract) -> Counter:
    return Counter((e.get("type"), e.get("status")) for e in _history(api, contract).items)


def _compliance_scenario(contract: Contract) -> str:
    outcomes = contract.profile["sandbox"]["payout_scenarios"]["outcomes"]
    found = [key for key, text in outcomes.items() if "compliance" in str(text)]
    if not found:
        pytest.skip("the profile names no sandbox scenario for a payout rejected by compliance")
    return found[0]


@pytest.mark.req("HIST-ENTRY-DEPOSIT")
@pytest.mark.needs("operator")
def test_deposit_enters_once_completed(fresh_org, operator, contract: Contract) -> None:
    """A deposit to the funding account: no entry while it is pending, one `funding` `COMPLETED` once done."""
    handle = fresh_org()
    deposit = operator.create_deposit(handle.org_id, "31.00")
    pending = _kinds(handle.api, contract)
    expect(not pending, f"a pending deposit already left history entries {dict(pending)}")
    operator.complete_deposit(handle.org_id, deposit)
    done = _kinds(handle.api, contract)
    expect(done == Counter({("funding", "COMPLETED"): 1}), f"a completed deposit left entries {dict(done)}; "
           "one `funding` `COMPLETED` entry is expected")


@pytest.mark.req("HIST-COMPLIANCE-STAYS-DEBITED")
@pytest.mark.needs("operator", "clock", "profile")
def test_compliance_rejection_stays_debited(fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """A payout from the balance rejected by compliance: its `payout` `DEBITED` entry stays, no `reversal`."""
    scenario = _compliance_scenario(contract)
    handle = fresh_org()
    payout_id = create_payout(handle.api, contract, unique, scenario).json["payoutId"]
    clock.advance(handle.org_id, float(timeline(contract)["settle_seconds"]) + 1)
    final = read_payout(handle.api, payout_id)
    mismatch_unless_in_scenario(handle.api, clock, handle.org_id, contract, unique, scenario, one_reading(final))
    expect(final.json.get("status") == "failed",
           f"the payout in scenario {scenario} (rejected by compliance) reads {final.json.get('status')!r}", final)
    kinds = _kinds(handle.api, contract)
    expect(kinds[("payout", "DEBITED")] == 1, f"the rejected payout left entries {dict(kinds)}, not one DEBITED")
    reversals = {k: n for k, n in kinds.items() if k[0] == "reversal"}
    expect(not reversals, f"a payout rejected by compliance gained reversal entries {reversals}: it stays debited")


@pytest.mark.req("HIST-WALLET-PAYOUT-NOTHING")
@pytest.mark.needs("operator", "clock", "profile")
def test_wallet_payouts_add_nothing(fresh_org, clock, contract: Contract, unique: Unique) -> None:
    """Two payouts funded from the own wallet, one funded and settled, one canceled before funding: the
    history is what it was before them."""
    handle = fresh_org(scopes=CRYPTO_SCOPES)
    top_up(handle.api, contract, "12.00")
    before = _kinds(handle.api, contract)
    funded = create_self_funded(handle.api, contract, unique).json["payoutId"]
    canceled = create_self_funded(handle.api, contract, unique).json["payoutId"]
    expect_status(handle.api.op("confirmPayoutFunding", payoutId=funded, json={"transactionHash": tx_hash()}), 200,
                  "funding the first payout from the own wallet")
    cancel_payout(handle.api, canceled, "canceling a payout before funding")
    clock.advance(handle.org_id, float(timeline(contract)["settle_seconds"]) + 1)
    read_payout(handle.api, funded)
    after = _kinds(handle.api, contract)
    expect(after == before, f"wallet-funded payouts changed the history from {dict(before)} to {dict(after)}")


@pytest.mark.req("HIST-UNTRACKED-NETWORK", "HIST-NOTE")
@pytest.mark.needs("operator")
def test_untracked_movement_adds_nothing_and_withholds(fresh_org, operator, contract: Contract) -> None:
    """After a movement on an untracked network: the same entries, `balanceAfter` withheld, and every page
    that withholds it carries a `note`."""
    handle = fresh_org()
    for amount in ("14.10", "14.20"):
        top_up(handle.api, contract, amount)
    before = _kinds(handle.api, contract)
    operator.record_untracked_movement(handle.org_id, "5.00")
    walk = Pager(handle.api, contract, "getBalanceHistory").walk(1)
    after = Counter((e.get("type"), e.get("status")) for e in walk.items)
    expect(after == before, f"a movement on an untracked network changed the entries from {dict(before)} to "
           f"{dict(after)}", walk.last)
    withheld = [page for page in walk.pages if any(null_or_absent(e, "balanceAfter") for e in page.items)]
    expect(bool(withheld), "after a movement on an untracked network every entry still publishes `balanceAfter`",
           walk.last)
    for page in withheld:
        note = page.ex.json.get("note")
        expect(isinstance(note, str) and note.strip() != "",
               f"a page withholding `balanceAfter` carries `note` {note!r}", page.ex)


@pytest.mark.req("HIST-HOLD-IN-BTX")
@pytest.mark.needs("operator", "clock")
def test_hold_is_listed_in_balance_transactions(fresh_org, operator, clock, contract: Contract) -> None:
    """A top-up of 40.00 then a hold: `available` (where the balance names it) is below 40.00 and the
    difference is a balance transaction other than the top-up."""
    handle = fresh_org()
    top_up(handle.api, contract, "40.00")
    operator.place_hold(handle.org_id, "15.00")
    clock.advance(handle.org_id, CACHE_SECONDS)
    ex = read_balance(handle.api)
    available = figures(ex, "available")
    if not available:
        pytest.skip("the balance names no `available` figure (its place in the balance is not shown)")
    gap = Decimal("40.00") - available[0]
    expect(gap > 0, f"`available` is {available[0]} after a hold on a 40.00 balance", ex)
    walk = Pager(handle.api, contract, "listBalanceTransactions").walk(100)
    others = [_decimals(r) for r in walk.items if Decimal("40.00") not in _decimals(r)]
    expect(any(gap in {abs(a) for a in values} for values in others),
           f"`available` is {gap} below what the movements explain, but no balance transaction of {gap} is listed "
           f"(decimal values of the rows besides the top-up, under any field but `balanceAfter`: {others})", walk.last)


def _decimals(row: object) -> list[Decimal]:
    """A row's decimal strings but its `balanceAfter`: the row fields are named (`net`, ...), not the amount's."""
    fields = row.items() if isinstance(row, dict) else []
    return [d for name, value in fields if name != "balanceAfter"
            for d in [as_decimal(value)] if d is not None]
