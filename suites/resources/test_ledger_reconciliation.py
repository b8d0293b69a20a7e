"""Balance and ledger reconciliation after a scripted run of top-ups and payouts that complete, fail and are
returned (Resources > Balance history entry, Balance transaction row; Endpoints > Balance and ledger rules).

"A debited payout that fails or is canceled with money returning keeps its debit and gains a separate
`reversal` entry (`RETURNED` or `CANCELED`)". The payout scenarios (last four characters of the account
identifier) and their timing come from the profile (`sandbox.payout_scenarios`); the organization's clock is
moved past `settle_seconds` and each payout is read so its outcome is recorded. Cancels are not scripted:
only a payout awaiting the organization's own funds can be canceled, and such a payout "adds nothing".
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from itertools import pairwise
from typing import Any, NamedTuple

import pytest

from payconform.client import Api
from payconform.contract import Contract
from payconform.expect import expect
from payconform.paging import Pager

from ..endpoints.test_balance import CACHE_SECONDS, provider_figure, read_balance
from ..states.payout_support import DEFAULT, create, read, timeline

SCENARIOS = {"completed": DEFAULT, "failed": "0003", "returned": "0004"}


class Run(NamedTuple):
    api: Api
    payouts: dict[str, dict[str, Any]]  # outcome -> the payout as created
    balance: Decimal


def _scripted(fresh_org, clock, contract: Contract, unique) -> Run:
    handle = fresh_org()
    payouts = {outcome: create(handle.api, contract, unique, scenario).json for outcome, scenario in SCENARIOS.items()}
    clock.advance(handle.org_id, float(timeline(contract)["settle_seconds"]) + 1)
    for payout in payouts.values():
        read(handle.api, payout["payoutId"])
    clock.advance(handle.org_id, CACHE_SECONDS)
    return Run(handle.api, payouts, provider_figure(read_balance(handle.api)))


def _all(api: Api, contract: Contract, op_id: str, limit: int) -> list[dict[str, Any]]:
    return Pager(api, contract, op_id).walk(limit).items


@pytest.mark.req("HIST-ENTRY-PAYOUT-DEBITED", "HIST-REVERSAL")
@pytest.mark.needs("operator", "clock")
def test_history_keeps_debits_and_adds_reversals(fresh_org, clock, contract: Contract, unique) -> None:
    """Three payouts from the balance: three `payout` `DEBITED` entries, kept; the failed and the returned
    one each gain a `reversal` `RETURNED` entry."""
    run = _scripted(fresh_org, clock, contract, unique)
    kinds = Counter((e.get("type"), e.get("status")) for e in _all(run.api, contract, "getBalanceHistory", 500))
    expect(kinds[("payout", "DEBITED")] == 3, f"three payouts from the balance left entries {dict(kinds)}")
    expect(kinds[("reversal", "RETURNED")] == 2, f"a failed and a returned payout left entries {dict(kinds)}")


@pytest.mark.req("BTX-TYPES-SEEN", "BTX-COVERAGE", "HIST-BALANCE-AFTER-RECONCILES")
@pytest.mark.needs("operator", "clock")
def test_transactions_and_history_reconcile_with_the_balance(fresh_org, clock, contract: Contract, unique) -> None:
    """Rows `payout` for each payout and `payout_return` for the failed and the returned one; every row's
    `balanceAfter` is the one before plus its amount; the newest equals the balance, and so does the
    history's last published `balanceAfter`."""
    run = _scripted(fresh_org, clock, contract, unique)
    rows = _all(run.api, contract, "listBalanceTransactions", 100)
    by_order = Counter((r.get("orderId"), r.get("type")) for r in rows if r.get("orderId"))
    for outcome, payout in run.payouts.items():
        pid = payout["payoutId"]
        expect(by_order[(pid, "payout")] == 1, f"the {outcome} payout {pid} has rows {dict(by_order)}")
        want = 0 if outcome == "completed" else 1
        expect(by_order[(pid, "payout_return")] == want, f"the {outcome} payout {pid} has rows {dict(by_order)}")
    oldest_first = list(reversed(rows))
    for before, row in pairwise(oldest_first):
        if isinstance(row.get("amount"), str):
            step = Decimal(row["balanceAfter"]) - Decimal(before["balanceAfter"])
            expect(step == Decimal(row["amount"]), f"row {row.get('id')}: balanceAfter moves by {step}, "
                   f"its amount is {row['amount']}")
    expect(Decimal(rows[0]["balanceAfter"]) == run.balance,
           f"the newest row's balanceAfter {rows[0]['balanceAfter']} is not the balance {run.balance}")
    published = [e["balanceAfter"] for e in _all(run.api, contract, "getBalanceHistory", 500)
                 if isinstance(e.get("balanceAfter"), str)]
    expect(not published or Decimal(published[-1]) == run.balance or Decimal(published[0]) == run.balance,
           f"the history's balanceAfter values {published} end away from the balance {run.balance}")
