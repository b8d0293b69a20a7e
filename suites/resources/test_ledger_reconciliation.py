"""Balance and ledger reconciliation after a scripted run of top-ups, a completed deposit and payouts that
complete, fail, are returned or canceled (Resources > Balance history entry, Balance transaction row, Audit
event row; Endpoints > Balance and ledger rules).

"A debited payout that fails or is canceled with money returning keeps its debit and gains a separate
`reversal` entry (`RETURNED` or `CANCELED`)". The payout scenarios (last four characters of the account
identifier) and their timing come from the profile (`sandbox.payout_scenarios`); the organization's clock is
moved past `settle_seconds` and each payout is read so its outcome is recorded. Only a payout awaiting the
organization's own funds can be canceled (profile `sandbox.self_funded`), and such a payout "adds nothing";
a cancel of a payout from the balance is refused. The audit trail holds one row per audited mutation of the
run, refused ones included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from itertools import pairwise
from typing import Any, NamedTuple

import pytest

from payconform.suite import Api, Contract, Exchange, OperatorError, Pager, Target, expect, static_reason

from .._support.approvals import hold
from .._support.balance import CACHE_SECONDS, provider_figure, read_balance
from .._support.payouts import DEFAULT, cancel_payout, create_payout, create_self_funded, read_payout, timeline
from .._support.scenario_outcomes import mismatch_unless_in_scenario, one_reading
from .._support.recipients import create_recipient, refused_recipient_update

SCENARIOS = {"completed": DEFAULT, "failed": "0003", "returned": "0004"}
CRYPTO_SCOPES = ("read", "write", "crypto_payouts")


class Run(NamedTuple):
    api: Api
    org_id: str
    payouts: dict[str, dict[str, Any]]  # outcome -> the payout as created
    canceled: str                       # a wallet-funded payout canceled before funding
    audited: list[Exchange]             # the API calls of audited mutations, refused ones included
    balance: Decimal


def _scripted(fresh_org, operator, clock, contract: Contract, unique) -> Run:
    handle = fresh_org(scopes=CRYPTO_SCOPES)
    operator.complete_deposit(handle.org_id, operator.create_deposit(handle.org_id, "70.00"))
    created = {outcome: create_payout(handle.api, contract, unique, scenario)
               for outcome, scenario in SCENARIOS.items()}
    own = create_self_funded(handle.api, contract, unique)
    cancel = cancel_payout(handle.api, own.json["payoutId"], "canceling a payout awaiting own funds")
    refused = handle.api.op("cancelPayout", payoutId=created["completed"].json["payoutId"])
    expect(refused.status >= 400, f"canceling a payout drawn from the balance answered {refused.status}", refused)
    clock.advance(handle.org_id, float(timeline(contract)["settle_seconds"]) + 1)
    for outcome, ex in created.items():
        settled = one_reading(read_payout(handle.api, ex.json["payoutId"]))
        mismatch_unless_in_scenario(handle.api, clock, handle.org_id, contract, unique, SCENARIOS[outcome], settled)
    clock.advance(handle.org_id, CACHE_SECONDS)
    return Run(handle.api, handle.org_id, {outcome: ex.json for outcome, ex in created.items()},
               own.json["payoutId"], [*created.values(), own, cancel, refused],
               provider_figure(read_balance(handle.api)))
def _all(api: Api, contract: Contract, op_id: str, limit: int) -> list[dict[str, Any]]:
    return Pager(api, contract, op_id).walk(limit).items


@pytest.mark.req("HIST-ENTRY-PAYOUT-DEBITED", "HIST-REVERSAL")
@pytest.mark.needs("operator", "clock")
def test_history_keeps_debits_and_adds_reversals(fresh_org, operator, clock, contract: Contract, unique) -> None:
    """Three payouts from the balance: three `payout` `DEBITED` entries, kept; the failed and the returned
    one each gain a `reversal` `RETURNED` entry; the canceled wallet-funded payout adds nothing."""
    run = _scripted(fresh_org, operator, clock, contract, unique)
    kinds = Counter((e.get("type"), e.get("status")) for e in _all(run.api, contract, "getBalanceHistory", 500))
    expect(kinds[("payout", "DEBITED")] == 3, f"three payouts from the balance left entries {dict(kinds)}")
    expect(kinds[("reversal", "RETURNED")] == 2, f"a failed and a returned payout left entries {dict(kinds)}")


@pytest.mark.req("BTX-TYPES-SEEN", "BTX-COVERAGE", "HIST-BALANCE-AFTER-RECONCILES")
@pytest.mark.needs("operator", "clock")
def test_transactions_and_history_reconcile_with_the_balance(fresh_org, operator, clock, contract: Contract,
                                                            unique) -> None:
    """Rows `payout` for each payout from the balance and `payout_return` for the returned one, a row of another
    type for the failed one (its money coming back: `payout_return`, or a type of its own, as "the full list of
    `type` values is not shown"), none for the canceled wallet-funded payout; every row's `balanceAfter` is the
    one before plus its amount
    (or its `net`);
    the newest equals the balance, and so does the history's last published `balanceAfter`, every one of
    which is a running figure of the transactions."""
    run = _scripted(fresh_org, operator, clock, contract, unique)
    rows = _all(run.api, contract, "listBalanceTransactions", 100)
    by_order = Counter((r.get("orderId"), r.get("type")) for r in rows if r.get("orderId"))
    for outcome, payout in run.payouts.items():
        pid = payout["payoutId"]
        expect(by_order[(pid, "payout")] == 1, f"the {outcome} payout {pid} has rows {dict(by_order)}")
        if outcome == "failed":
            back = sum(n for (order, kind), n in by_order.items() if order == pid and kind != "payout")
            expect(back >= 1, f"the failed payout {pid}, its funds returned, has rows {dict(by_order)}: no row of "
                              "its money coming back (of any type other than `payout`)")
            continue
        want = 0 if outcome == "completed" else 1
        expect(by_order[(pid, "payout_return")] == want, f"the {outcome} payout {pid} has rows {dict(by_order)}")
    canceled = {key: n for key, n in by_order.items() if key[0] == run.canceled}
    expect(not canceled, f"the canceled wallet-funded payout {run.canceled} has rows {canceled}")
    oldest_first = list(reversed(rows))
    for before, row in pairwise(oldest_first):
        moves = [Decimal(row[name]) for name in ("amount", "net") if isinstance(row.get(name), str)]
        if moves:
            step = Decimal(row["balanceAfter"]) - Decimal(before["balanceAfter"])
            expect(step in moves, f"row {row.get('id')}: balanceAfter moves by {step}; its amount and net "
                   f"(where given; a fee may stand between them) are {moves}")
    expect(Decimal(rows[0]["balanceAfter"]) == run.balance,
           f"the newest row's balanceAfter {rows[0]['balanceAfter']} is not the balance {run.balance}")
    published = [e["balanceAfter"] for e in _all(run.api, contract, "getBalanceHistory", 500)
                 if isinstance(e.get("balanceAfter"), str)]
    expect(not published or Decimal(published[-1]) == run.balance or Decimal(published[0]) == run.balance,
           f"the history's balanceAfter values {published} end away from the balance {run.balance}")
    running = {Decimal(r["balanceAfter"]) for r in rows if isinstance(r.get("balanceAfter"), str)}
    strays = [value for value in published if Decimal(value) not in running]
    expect(not strays, f"history balanceAfter values {strays} are no running figure of the balance transactions")


def _naming(api: Api, contract: Contract, resource_id: str) -> int:
    return len(Pager(api, contract, "listAuditEvents", params={"resourceId": resource_id}).walk(100).items)


def _unused_endpoint_url(target: Target, webhook_server) -> str:
    """Where the endpoint the audit test registers and deletes points: a mailbox of the run's receiver where the
    target can reach it (the target's sender then calls no host outside the run's), else a reserved name
    (RFC 2606) that a remote target's check of the URL accepts."""
    if static_reason(target) is None:
        return webhook_server.mailbox().url
    return "https://example.com/payconform-audit"


@pytest.mark.req("AUDIT-ROW-PER-MUTATION", "AUDIT-REFUSED-RECORDED")
@pytest.mark.needs("operator", "clock")
def test_every_mutation_of_the_run_is_audited(fresh_org, operator, clock, contract: Contract, unique,
                                              target: Target, webhook_server) -> None:
    """Each API call of the run that created or canceled a payout or changed a recipient, refused or not, has
    exactly one audit row with its `requestId`; each dashboard action (deciding an approval, revoking a key,
    deleting a webhook endpoint; the operator's) adds one row naming its resource, refused ones too."""
    run = _scripted(fresh_org, operator, clock, contract, unique)
    recipient = create_recipient(run.api, contract, unique)
    changed = run.api.op("updateBeneficiary", recipientId=recipient["id"], json={"name": unique("name")})
    calls = [*run.audited, changed, refused_recipient_update(run.api, unique)]
    rows = Pager(run.api, contract, "listAuditEvents").walk(100).items
    for ex in calls:
        mine = [r for r in rows if r.get("requestId") == ex.request_id] if ex.request_id else []
        expect(len(mine) == 1, f"{ex.request.method} {ex.request.url} answered {ex.status}; {len(mine)} audit "
               "rows carry its requestId", ex)
    approval = hold(run.api, contract, unique).approval_id
    key = operator.issue_key(run.org_id)["id"]
    endpoint = operator.register_webhook_endpoint(run.org_id, _unused_endpoint_url(target, webhook_server))["id"]
    missing_key = unique("key-missing")
    actions: list[tuple[str, Callable[[], Any], str, bool]] = [
        ("rejecting a held payout", lambda: operator.reject_payout(run.org_id, approval), approval, True),
        ("approving it once rejected", lambda: operator.approve_payout(run.org_id, approval), approval, False),
        ("revoking a key", lambda: operator.revoke_key(run.org_id, key), key, True),
        ("revoking a key that does not exist", lambda: operator.revoke_key(run.org_id, missing_key), missing_key,
         False),
        ("deleting a webhook endpoint", lambda: operator.delete_webhook_endpoint(run.org_id, endpoint), endpoint, True),
        ("deleting it again", lambda: operator.delete_webhook_endpoint(run.org_id, endpoint), endpoint, False),
    ]
    for what, act, resource, succeeds in actions:
        before = _naming(run.api, contract, resource)
        if succeeds:
            act()
        else:
            with pytest.raises(OperatorError):
                act()
        after = _naming(run.api, contract, resource)
        expect(after == before + 1, f"{what} ({'done' if succeeds else 'refused'}) took the audit rows naming "
               f"{resource} from {before} to {after}; one row per mutation, refused ones included")
